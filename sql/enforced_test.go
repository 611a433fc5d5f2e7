package sql_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestDropEnforcedFilters checks planrules.DropEnforcedFilters: a
// filter's conjuncts that a static index read's ranges enforce exactly
// (integer bounds on an integer column after columns pinned to one
// integer, inclusive or, read as the inclusive ones next to them,
// exclusive) are no longer evaluated over the read (EXPLAIN FORMAT=TREE
// shows no Filter with them), and the others are; and that every answer
// is the answer of a table without indexes, whose rows are filtered one
// by one: NULLs, the type's edges, bounds of other types, exclusive
// bounds at the type's edges, ORs.
func TestDropEnforcedFilters(t *testing.T) {
	srv := startServer(t, true)
	mustExec(t, openDB(t, srv, ""), "CREATE DATABASE x")
	db := openDB(t, srv, "x")
	cols := "w INT NOT NULL, id INT NOT NULL, k INT, u TINYINT UNSIGNED, s VARCHAR(8), d DOUBLE"
	mustExec(t, db, "CREATE TABLE tk ("+cols+", PRIMARY KEY (w, id), KEY k_idx (k), KEY wu (w, u), KEY s_idx (s))")
	mustExec(t, db, "CREATE TABLE tn ("+cols+")")
	r := rand.New(rand.NewSource(7))
	var rows []string
	for w := 1; w <= 3; w++ {
		for id := 1; id <= 40; id++ {
			k := fmt.Sprint(r.Intn(12) - 3)
			switch r.Intn(12) {
			case 0:
				k = "NULL"
			case 1:
				k = []string{"-2147483648", "2147483647"}[r.Intn(2)]
			}
			u := fmt.Sprint(r.Intn(6))
			if r.Intn(8) == 0 {
				u = []string{"NULL", "255", "0"}[r.Intn(3)]
			}
			rows = append(rows, fmt.Sprintf("(%d, %d, %s, %s, '%c', %d.5)", w, id, k, u, 'a'+r.Intn(3), r.Intn(5)))
		}
	}
	for _, tb := range []string{"tk", "tn"} {
		mustExec(t, db, "INSERT INTO "+tb+" VALUES "+strings.Join(rows, ", "))
	}
	mustExec(t, db, "ANALYZE TABLE tk, tn")
	for _, c := range []struct {
		where string
		// kept are the conjuncts the filter over the read keeps, as
		// EXPLAIN FORMAT=TREE prints them ("" for no filter).
		kept string
	}{
		{"k BETWEEN 2 AND 5", ""},
		{"k >= 3", ""},
		{"k <= 3", ""},
		{"3 <= k", ""},
		{"k = 4", ""},
		{"k IN (1, 3, 5)", ""},
		{"k IN (1, NULL, 5)", ""},
		{"k BETWEEN -2147483648 AND 0", ""},
		{"w = 2 AND u BETWEEN 1 AND 3", ""},
		{"w IN (1, 3) AND u = 2", ""},
		{"w = 1 AND id >= 30", ""},
		{"k BETWEEN 2 AND 5 AND s > 'b'", "(tk.s > 'b')"},
		{"k >= 4 AND d > 1", "(tk.d > 1)"},
		// Exclusive bounds on an integer column, read as the inclusive
		// ones next to them (k > 3 as k >= 4), at the type's edges
		// (nothing past them) and after a pinned column.
		{"k > 3", ""},
		{"k < 3", ""},
		{"3 < k", ""},
		{"3 > k", ""},
		{"k > 2 AND k < 5", ""},
		{"k > 2 AND k < 3", ""},
		{"k > 2147483646", ""},
		{"k < -2147483647", ""},
		{"w = 2 AND u > 254", ""},
		{"w = 3 AND u < 1", ""},
		{"w = 1 AND id > 35", ""},
		{"w = 1 AND id < 3", ""},
		{"k > 2 AND k <= 4 AND s = 'b'", "*"},
		{"k > 2.5", "*"},
		{"k < '3'", "*"},
		{"k BETWEEN 2 AND 5 AND k <> 3", "*"},
		// Read through another index (s): the bounds on k stay.
		{"k BETWEEN 2 AND 5 AND s = 'b'", "*"},
		// w IN pins the primary key's first column, which GMS reads:
		// u is no column of its ranges.
		{"w IN (1, 3) AND u >= 2", "(tk.u >= 2)"},
		// Values of other types, NULL-safe and NULL tests, ORs, a
		// range over a column not after pinned ones, a value out of
		// the column's range.
		{"k BETWEEN 1.5 AND 4", "*"},
		{"k >= '2'", "*"},
		{"k <=> 3", "*"},
		{"k IS NULL", "*"},
		{"k < 2 OR k > 5", "*"},
		{"(k = 2 OR k = 4)", "*"},
		{"w BETWEEN 1 AND 2 AND u = 3", "*"},
		{"u >= 300 AND w = 1", "*"},
		{"k >= 9007199254740993", "*"},
	} {
		for _, shape := range []string{
			"SELECT w, id, k, u FROM {t} WHERE %s ORDER BY w, id",
			"SELECT k, count(*), sum(u) FROM {t} WHERE %s GROUP BY k ORDER BY k",
			"SELECT count(*), min(id), max(k) FROM {t} WHERE %s",
		} {
			q := fmt.Sprintf(shape, c.where)
			got := strings.Join(queryRows(t, db, strings.ReplaceAll(q, "{t}", "tk")), "\n")
			want := strings.Join(queryRows(t, db, strings.ReplaceAll(q, "{t}", "tn")), "\n")
			if got != want {
				t.Errorf("%s\nthrough the index:\n%s\nfrom every row:\n%s", q, got, want)
			}
		}
		q := "SELECT w, id FROM tk WHERE " + c.where
		plan := strings.Join(queryRows(t, db, "EXPLAIN FORMAT=TREE "+q), "\n")
		if !strings.Contains(plan, "IndexedTableAccess") {
			t.Errorf("%s reads no index:\n%s", q, plan)
			continue
		}
		filter := filterOf(plan)
		switch {
		case c.kept == "*" && filter == "":
			t.Errorf("%s: the filter was dropped:\n%s", q, plan)
		case c.kept != "*" && filter != c.kept:
			t.Errorf("%s: filter %q, want %q:\n%s", q, filter, c.kept, plan)
		}
	}
}

// filterOf returns the condition of the Filter of a plan EXPLAIN FORMAT=TREE
// printed, "" when it has none.
func filterOf(plan string) string {
	lines := strings.Split(plan, "\n")
	for i, l := range lines {
		if strings.HasSuffix(strings.TrimSpace(l), "Filter") && i+1 < len(lines) {
			return strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[i+1]), "├─└│ "))
		}
	}
	return ""
}

// TestExplainGroupByRange: EXPLAIN of a GROUP BY over an index range
// (scanbench's GROUP BY k on a k range, which the fast path runs) shows
// the index read as a range, covering, and no WHERE left to evaluate over
// it (DropEnforcedFilters).
func TestExplainGroupByRange(t *testing.T) {
	srv := startServer(t, true)
	mustExec(t, openDB(t, srv, ""), "CREATE DATABASE x")
	db := openDB(t, srv, "x")
	mustExec(t, db, "CREATE TABLE t (w INT NOT NULL, id INT NOT NULL, k INT NOT NULL, q INT NOT NULL, PRIMARY KEY (w, id), KEY k (k))")
	mustExec(t, db, "INSERT INTO t VALUES (1, 1, 1000, 1), (1, 2, 1050, 2), (2, 1, 1000, 3), (2, 2, 7, 4)")
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for q, want := range map[string]string{
		"SELECT k, count(*) FROM t WHERE k BETWEEN 1000 AND 1100 GROUP BY k ORDER BY k": "t range k Using index; Using temporary; Using filesort",
		// An exclusive bound on an integer column: the key range is
		// read from 1001, and no filter checks it.
		"SELECT k, count(*) FROM t WHERE k > 1000 GROUP BY k ORDER BY k": "t range k Using index; Using temporary; Using filesort",
		// A fraction: read inclusively, and the filter checks it.
		"SELECT k, count(*) FROM t WHERE k > 1000.5 GROUP BY k ORDER BY k": "t range k Using index; Using where; Using temporary; Using filesort",
	} {
		if got := explainText(context.Background(), t, conn, q); got != want {
			t.Errorf("EXPLAIN %s:\n%s\nwant\n%s", q, got, want)
		}
	}
}
