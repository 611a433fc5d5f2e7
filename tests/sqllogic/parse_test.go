package sqllogic

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseRecords(t *testing.T) {
	const src = `# a comment line
hash-threshold 4

statement ok
CREATE TABLE t1(a INTEGER,
  b VARCHAR(8))

statement error
INSERT INTO t1 VALUES('#not a comment')

skipif mysql # why: a trailing comment
onlyif sqlite
# a comment between the conditions and the record
query IT rowsort label-7
SELECT a, b
# a comment line inside the SQL is dropped
FROM t1
----
1
(empty)
NULL
x y

query R valuesort
SELECT 1
----
3 values hashing to 0123456789abcdef0123456789abcdef

hash-threshold 0

query I nosort
SELECT a FROM t1 WHERE 0
----

query T
SELECT 'x'

onlyif mysql
halt

statement ok
SELECT 'after halt'`
	got, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{Kind: Statement, Line: 4, SQL: "CREATE TABLE t1(a INTEGER,\n  b VARCHAR(8))", HashThreshold: 4},
		{Kind: Statement, Line: 8, SQL: "INSERT INTO t1 VALUES('#not a comment')", ExpectError: true, HashThreshold: 4},
		{
			Kind: Query, Line: 14, Types: "IT", Sort: RowSort, Label: "label-7",
			Conditions: []Condition{{Only: false, Engine: "mysql"}, {Only: true, Engine: "sqlite"}},
			SQL:        "SELECT a, b\nFROM t1", Expected: []string{"1", "(empty)", "NULL", "x y"}, HashThreshold: 4,
		},
		{Kind: Query, Line: 24, Types: "R", Sort: ValueSort, SQL: "SELECT 1", HashCount: 3, Hash: "0123456789abcdef0123456789abcdef", HashThreshold: 4},
		{Kind: Query, Line: 31, Types: "I", Sort: NoSort, SQL: "SELECT a FROM t1 WHERE 0"},
		{Kind: Query, Line: 35, Types: "T", Sort: NoSort, SQL: "SELECT 'x'"},
		{Kind: Halt, Line: 39, Conditions: []Condition{{Only: true, Engine: "mysql"}}},
		{Kind: Statement, Line: 41, SQL: "SELECT 'after halt'"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestParseLineEndings(t *testing.T) {
	for name, src := range map[string]string{
		"crlf":            "statement ok\r\nSELECT 1\r\n\r\nquery I nosort\r\nSELECT 2\r\n----\r\n2\r\n",
		"no final break":  "statement ok\nSELECT 1\n\nquery I nosort\nSELECT 2\n----\n2",
		"extra blanks":    "\n\n\nstatement ok\nSELECT 1\n\n\n\nquery I nosort\nSELECT 2\n----\n2\n\n\n",
		"spaces in blank": "statement ok\nSELECT 1\n   \t\nquery I nosort\nSELECT 2\n----\n2\n",
	} {
		t.Run(name, func(t *testing.T) {
			recs, err := Parse(strings.NewReader(src))
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 2 || recs[0].SQL != "SELECT 1" || recs[1].SQL != "SELECT 2" ||
				!reflect.DeepEqual(recs[1].Expected, []string{"2"}) {
				t.Fatalf("got %+v", recs)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown directive", "statement ok\nSELECT 1\n\nexplain\nSELECT 1\n", `4: unknown directive "explain"`},
		{"statement mode", "statement maybe\nSELECT 1\n", `1: statement wants ok or error, got "maybe"`},
		{"statement without SQL", "statement ok\n\n", "1: statement has no SQL"},
		{"statement with results", "statement ok\nSELECT 1\n----\n1\n", "3: statement has a \"----\" results section"},
		{"query type letter", "query IX nosort\nSELECT 1, 2\n", `1: query type "IX": letter 'X' is not I, R or T`},
		{"query sort mode", "query I sideways\nSELECT 1\n", `1: unknown sort mode "sideways"`},
		{"query without types", "query\nSELECT 1\n", "1: query wants TYPES [SORT [LABEL]]"},
		{"query without SQL", "query I nosort\n----\n1\n", "1: query has no SQL"},
		{"hash-threshold value", "hash-threshold many\n", `1: bad hash-threshold "many"`},
		{"hash-threshold negative", "hash-threshold -1\n", `1: bad hash-threshold "-1"`},
		{"condition without engine", "skipif\nstatement ok\nSELECT 1\n", "1: skipif wants one engine name"},
		{"dangling condition", "statement ok\nSELECT 1\n\nonlyif mysql\n", "skipif/onlyif at the end of the file guards no record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.src))
			if err == nil {
				t.Fatalf("parsed without error, want %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestParseFileNamesTheFile(t *testing.T) {
	_, err := ParseFile("testdata/no-such-file.test")
	if err == nil {
		t.Fatal("no error for a missing file")
	}
	path := writeFile(t, "bad.test", "statement ok\nSELECT 1\n\nbogus\n")
	_, err = ParseFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":4: ") {
		t.Fatalf("error %v does not start with %q", err, path+":4: ")
	}
}

func TestParseHashLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		n    int
		ok   bool
	}{
		{"30 values hashing to 3c13dee48d9356ae19af2515e05e6b54", 30, true},
		{"1 value hashing to 3c13dee48d9356ae19af2515e05e6b54", 1, true},
		{"30 values hashing to 3c13", 0, false},
		{"x values hashing to 3c13dee48d9356ae19af2515e05e6b54", 0, false},
		{"30 values hash to 3c13dee48d9356ae19af2515e05e6b54", 0, false},
		{"30", 0, false},
	} {
		n, _, ok := parseHashLine(tc.line)
		if ok != tc.ok || n != tc.n {
			t.Errorf("parseHashLine(%q) = %d, %v; want %d, %v", tc.line, n, ok, tc.n, tc.ok)
		}
	}
}

func TestRunsOn(t *testing.T) {
	skip := func(e string) Condition { return Condition{Engine: e} }
	only := func(e string) Condition { return Condition{Only: true, Engine: e} }
	for _, tc := range []struct {
		conds []Condition
		want  bool
	}{
		{nil, true},
		{[]Condition{skip("mysql")}, false},
		{[]Condition{skip("sqlite")}, true},
		{[]Condition{only("mysql")}, true},
		{[]Condition{only("mssql")}, false},
		{[]Condition{skip("mssql"), only("mysql")}, true},
		{[]Condition{skip("mysql"), only("mysql")}, false},
		{[]Condition{only("mysql"), only("sqlite")}, false},
	} {
		rec := Record{Kind: Statement, Conditions: tc.conds}
		if got := rec.RunsOn("mysql"); got != tc.want {
			t.Errorf("RunsOn(mysql) with %+v = %v, want %v", tc.conds, got, tc.want)
		}
	}
}
