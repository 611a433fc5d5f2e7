package sql_test

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// TestCoveringDifferential reads random ranges of secondary indexes whose
// entries hold every column a query reads (covering reads, covering.go)
// and compares with the same queries over a copy of the table without
// secondary indexes: every integer width, signed and unsigned, NULLs,
// type edges, a composite primary key carried by the entries' handles,
// and the values' use in DISTINCT, GROUP BY, arithmetic and hash joins
// against rows read from the table.
func TestCoveringDifferential(t *testing.T) {
	srv := startServer(t, true)
	mustExec(t, openDB(t, srv, ""), "CREATE DATABASE x")
	db := openDB(t, srv, "x")
	db.SetMaxOpenConns(1)
	const cols = "w SMALLINT NOT NULL, id BIGINT NOT NULL, a TINYINT, b SMALLINT UNSIGNED, c MEDIUMINT, d INT UNSIGNED, e BIGINT UNSIGNED, f BIGINT, s VARCHAR(8)"
	for _, q := range []string{
		"CREATE TABLE tk (" + cols + ", PRIMARY KEY (w, id), KEY a_idx (a), KEY bc_idx (b, c), KEY de_idx (d, e), KEY f_idx (f), KEY s_idx (s))",
		"CREATE TABLE tn (" + cols + ", PRIMARY KEY (w, id))",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r := rand.New(rand.NewSource(7))
	edges := map[string][]string{
		"a": {"-128", "127", "0", "-1", "5"},
		"b": {"0", "65535", "7", "300"},
		"c": {"-8388608", "8388607", "0", "-7", "12"},
		"d": {"0", "4294967295", "3", "100000"},
		"e": {"0", "18446744073709551615", "9223372036854775808", "4", "9"},
		"f": {"-9223372036854775808", "9223372036854775807", "0", "-5", "6"},
		"s": {"'a'", "'A'", "'b '", "''"},
	}
	value := func(col string) string {
		if r.Intn(6) == 0 {
			return "NULL"
		}
		vs := edges[col]
		if r.Intn(3) == 0 {
			return vs[r.Intn(len(vs))]
		}
		return fmt.Sprint(r.Intn(10))
	}
	var rows []string
	for i := 0; i < 200; i++ {
		rows = append(rows, fmt.Sprintf("(%d, %d, %s, %s, %s, %s, %s, %s, %s)", i%3, i*7-300, value("a"), value("b"), value("c"), value("d"), value("e"), value("f"), value("s")))
	}
	for _, tbl := range []string{"tk", "tn"} {
		if _, err := db.Exec("INSERT INTO " + tbl + " VALUES " + strings.Join(rows, ",")); err != nil {
			t.Fatal(err)
		}
	}
	query := func(q string) string {
		rs, err := db.Query(q)
		if err != nil {
			// Errors name the table.
			return "error: " + strings.ReplaceAll(err.Error(), "`tk`", "`tn`")
		}
		defer rs.Close()
		var out []string
		for _, r := range readRows(rs) {
			out = append(out, strings.Join(r, "|"))
		}
		if err := rs.Err(); err != nil {
			// An error after some rows: how many came before it
			// depends on the order of the read.
			return "error: " + strings.ReplaceAll(err.Error(), "`tk`", "`tn`")
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	lead := map[string]string{"a": "a", "b": "b", "d": "d", "f": "f"}
	covered := map[string][]string{"a": {"a", "w", "id"}, "b": {"b", "c", "w", "id"}, "d": {"d", "e", "id"}, "f": {"f", "w"}}
	keys := []string{"a", "b", "d", "f"}
	predicate := func(col string) string {
		v := func() string { return value(strings.TrimPrefix(col, "{t}.")) }
		switch r.Intn(4) {
		case 0:
			return fmt.Sprintf("%s BETWEEN %s AND %s", col, v(), v())
		case 1:
			return fmt.Sprintf("%s < %s OR %s > %s", col, v(), col, v())
		case 2:
			return fmt.Sprintf("%s IS NULL OR %s = %s", col, col, v())
		}
		return fmt.Sprintf("%s >= %s", col, v())
	}
	for i := 0; i < 150; i++ {
		k := keys[r.Intn(len(keys))]
		cs := covered[k]
		sel := strings.Join(cs, ", ")
		p := predicate("{t}." + lead[k])
		shapes := []string{
			"SELECT " + sel + " FROM {t} WHERE " + p,
			"SELECT DISTINCT " + cs[0] + " FROM {t} WHERE " + p,
			"SELECT " + cs[0] + ", count(*), sum(" + cs[len(cs)-1] + "), min(" + cs[len(cs)-1] + ") FROM {t} WHERE " + p + " GROUP BY " + cs[0],
			"SELECT " + cs[0] + " DIV 2, " + cs[0] + " MOD 3, " + cs[0] + " * 0, " + cs[0] + " = 5 FROM {t} WHERE " + p,
			"SELECT count(*) FROM {t} WHERE " + p,
			"SELECT x." + cs[0] + ", y.w FROM {t} x JOIN tn y ON x." + cs[0] + " = y." + cs[0] + " AND x.w = y.w WHERE " + strings.ReplaceAll(p, "{t}.", "x."),
			"SELECT " + cs[0] + " FROM {t} WHERE " + p + " ORDER BY " + cs[0] + " DESC LIMIT 3",
		}
		for _, shape := range shapes {
			got := query(strings.ReplaceAll(shape, "{t}", "tk"))
			want := query(strings.ReplaceAll(shape, "{t}", "tn"))
			if got != want {
				t.Fatalf("%s\nthrough the index:\n%s\nfrom the rows:\n%s", strings.ReplaceAll(shape, "{t}", "tk"), got, want)
			}
		}
	}
}

// TestExplainCovering: EXPLAIN says "Using index" for a read whose columns
// all come from the index's entries, and not for one that reads rows.
func TestExplainCovering(t *testing.T) {
	srv := startServer(t, true)
	mustExec(t, openDB(t, srv, ""), "CREATE DATABASE x")
	db := openDB(t, srv, "x")
	mustExec(t, db, "CREATE TABLE t (w INT NOT NULL, id INT NOT NULL, k INT, s VARCHAR(8), PRIMARY KEY (w, id), KEY k_idx (k), KEY s_idx (s))")
	for q, want := range map[string]bool{
		"SELECT k, id, w FROM t WHERE k BETWEEN 1 AND 5": true,
		"SELECT count(*) FROM t WHERE k > 3":             true,
		"SELECT k, s FROM t WHERE k BETWEEN 1 AND 5":     false,
		"SELECT s FROM t WHERE s = 'a'":                  false, // strings are not decoded from keys
	} {
		rows, err := db.Query("EXPLAIN " + q)
		if err != nil {
			t.Fatal(err)
		}
		got := readRows(rows)
		rows.Close()
		if len(got) != 1 || len(got[0]) != 12 {
			t.Fatalf("EXPLAIN %s: %v", q, got)
		}
		if has := strings.Contains(got[0][11], "Using index"); has != want {
			t.Errorf("EXPLAIN %s: Extra %q, want Using index: %v", q, got[0][11], want)
		}
	}
}
