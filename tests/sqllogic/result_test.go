package sqllogic

import (
	"crypto/md5"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		v      Value
		letter byte
		want   string
	}{
		{Value{Null: true}, 'I', "NULL"},
		{Value{Null: true}, 'R', "NULL"},
		{Value{Null: true}, 'T', "NULL"},
		{Value{Text: "42"}, 'I', "42"},
		{Value{Text: "-9223372036854775808"}, 'I', "-9223372036854775808"},
		{Value{Text: "18446744073709551615"}, 'I', "18446744073709551615"},
		{Value{Text: "3.9"}, 'I', "3"},
		{Value{Text: "-3.9"}, 'I', "-3"},
		{Value{Text: "abc"}, 'I', "abc"},
		{Value{Text: "1"}, 'R', "1.000"},
		{Value{Text: "-0.0004"}, 'R', "-0.000"},
		{Value{Text: "2.0005"}, 'R', "2.001"},
		{Value{Text: "12.345678"}, 'R', "12.346"},
		{Value{Text: "-1.5e10"}, 'R', "-15000000000.000"},
		{Value{Text: "x"}, 'R', "x"},
		{Value{Text: ""}, 'T', "(empty)"},
		{Value{Text: "a b"}, 'T', "a b"},
		{Value{Text: "two\nlines\ttab"}, 'T', "two@lines@tab"},
		{Value{Text: "café"}, 'T', "café"},
		{Value{Text: "NULL"}, 'T', "NULL"},
	} {
		if got := FormatValue(tc.v, tc.letter); got != tc.want {
			t.Errorf("FormatValue(%+v, %c) = %q, want %q", tc.v, tc.letter, got, tc.want)
		}
	}
}

func TestHashValues(t *testing.T) {
	values := []string{"1", "NULL", "(empty)"}
	sum := md5.Sum([]byte("1\nNULL\n(empty)\n"))
	if got, want := HashValues(values), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("HashValues = %s, want %s", got, want)
	}
	if got, want := HashLine(values), "3 values hashing to "+hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("HashLine = %q, want %q", got, want)
	}
	// Value boundaries count: "1","2" and "1\n2" as one value must differ
	// from "12".
	if HashValues([]string{"1", "2"}) == HashValues([]string{"12"}) {
		t.Fatal("hash ignores value boundaries")
	}
}

func TestSortValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		cols int
		mode SortMode
		want []string
	}{
		{"nosort keeps order", []string{"b", "a", "c"}, 1, NoSort, []string{"b", "a", "c"}},
		{"valuesort ignores rows", []string{"b", "a", "d", "c"}, 2, ValueSort, []string{"a", "b", "c", "d"}},
		{"rowsort keeps rows whole", []string{"2", "x", "1", "y", "1", "a"}, 2, RowSort, []string{"1", "a", "1", "y", "2", "x"}},
		// Column by column, as SQLite's runner does: ("a", "z") sorts
		// before ("a b", "c"), though "a b c" < "a z" as joined lines.
		{"rowsort by column", []string{"a b", "c", "a", "z"}, 2, RowSort, []string{"a", "z", "a b", "c"}},
		{"rowsort byte order", []string{"b", "B", "NULL", "-1"}, 1, RowSort, []string{"-1", "B", "NULL", "b"}},
		{"rowsort ragged left alone", []string{"b", "a", "c"}, 2, RowSort, []string{"b", "a", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := append([]string(nil), tc.in...)
			SortValues(got, tc.cols, tc.mode)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	vals := func(s ...string) []Value {
		out := make([]Value, len(s))
		for i, v := range s {
			if v == "<null>" {
				out[i] = Value{Null: true}
			} else {
				out[i] = Value{Text: v}
			}
		}
		return out
	}
	listed := func(types string, sort SortMode, expected ...string) *Record {
		return &Record{Kind: Query, Types: types, Sort: sort, Expected: expected}
	}
	hashed := func(types string, sort SortMode, values ...string) *Record {
		return &Record{Kind: Query, Types: types, Sort: sort, HashCount: len(values), Hash: HashValues(values)}
	}
	for _, tc := range []struct {
		name  string
		rec   *Record
		rows  *Rows
		types TypeCheck
		class string // "" when the rows must pass
	}{
		{"listed match", listed("IT", NoSort, "1", "a", "2", "(empty)"), &Rows{"IT", vals("1", "a", "2", "")}, StrictTypes, ""},
		{"listed order matters", listed("I", NoSort, "1", "2"), &Rows{"I", vals("2", "1")}, StrictTypes, "wrong values"},
		{"rowsort", listed("IT", RowSort, "1", "a", "2", "b"), &Rows{"IT", vals("2", "b", "1", "a")}, StrictTypes, ""},
		{"valuesort", listed("II", ValueSort, "1", "2", "3", "4"), &Rows{"II", vals("4", "1", "3", "2")}, StrictTypes, ""},
		{"real formatting", listed("R", NoSort, "0.500", "NULL"), &Rows{"R", vals("0.5", "<null>")}, StrictTypes, ""},
		{"too few rows", listed("I", NoSort, "1", "2"), &Rows{"I", vals("1")}, StrictTypes, "wrong row count"},
		{"empty expected", listed("I", NoSort), &Rows{"I", nil}, StrictTypes, ""},
		{"column count", listed("II", NoSort, "1", "2"), &Rows{"I", vals("1")}, StrictTypes, "wrong column count"},
		{"integer satisfies R", listed("R", NoSort, "3.000"), &Rows{"I", vals("3")}, StrictTypes, ""},
		{"NULL type satisfies I", listed("I", NoSort, "NULL"), &Rows{"?", vals("<null>")}, StrictTypes, ""},
		{"real does not satisfy I", listed("I", NoSort, "3"), &Rows{"R", vals("3")}, StrictTypes, "wrong column type"},
		{"text does not satisfy I", listed("I", NoSort, "3"), &Rows{"T", vals("3")}, StrictTypes, "wrong column type"},
		{"loose formats by letter", listed("I", NoSort, "3"), &Rows{"R", vals("3.000")}, LooseTypes, ""},
		{"hashed match", hashed("I", RowSort, "1", "2", "3"), &Rows{"I", vals("3", "1", "2")}, StrictTypes, ""},
		{"hashed wrong count", hashed("I", RowSort, "1", "2", "3"), &Rows{"I", vals("1", "2")}, StrictTypes, "wrong row count"},
		{"hashed wrong value", hashed("I", RowSort, "1", "2", "3"), &Rows{"I", vals("1", "2", "4")}, StrictTypes, "wrong values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := Check(tc.rec, tc.rows, tc.types)
			if out.Class != tc.class {
				t.Fatalf("class %q (%s), want %q", out.Class, out.Problem, tc.class)
			}
			if (out.Problem == "") != (tc.class == "") {
				t.Fatalf("problem %q with class %q", out.Problem, out.Class)
			}
		})
	}
}

func TestNormalizeMessage(t *testing.T) {
	a := normalizeMessage("Error 1146 (42S02): table 't1' doesn't exist at position 12")
	b := normalizeMessage("Error 1146 (42S02): table `t2` doesn't exist at position 99")
	if a != b {
		t.Fatalf("messages differing in names and numbers class apart: %q vs %q", a, b)
	}
	if !strings.HasPrefix(a, "Error 1146 (42S02): ") {
		t.Fatalf("error number lost: %q", a)
	}
	if c := normalizeMessage("Error 1064 (42000): syntax error"); c == a {
		t.Fatalf("different errors class together: %q", c)
	}
	long := normalizeMessage(strings.Repeat("word ", 100))
	if len(long) > maxClassLen+3 {
		t.Fatalf("class not bounded: %d bytes", len(long))
	}
}
