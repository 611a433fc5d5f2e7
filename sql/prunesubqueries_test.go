package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// pruneSubqueryQueries are statements with subqueries over random tables
// with NULLs and duplicates; pruned says the plan must read o without
// its wide column pad (prunesubqueries.go), the others being shapes the
// rule leaves alone or where every column is read.
var pruneSubqueryQueries = []struct {
	q      string
	pruned bool
}{
	// A select list with a subquery; the outer column only the
	// subquery reads (o.b) must stay.
	{"SELECT o.id, (SELECT SUM(v) FROM i WHERE i.a = o.b) FROM o ORDER BY o.id", true},
	{"SELECT o.id, (SELECT COUNT(*) FROM i WHERE i.a = o.a AND i.v > o.b) AS c FROM o WHERE o.id > 10 ORDER BY c, o.id", true},
	{"SELECT o.id, (SELECT MAX(i.v) FROM i) FROM o ORDER BY o.id", true},
	// TPC-C 3.3.2.12's shape: a derived table filtered on its aliases.
	{"SELECT COUNT(*), SUM(sm) FROM (SELECT o.id, o.a AS a1, o.b, (SELECT SUM(v) FROM i WHERE i.a = o.a) sm FROM o WHERE o.id > 5) t WHERE a1 + b <> sm", true},
	{"SELECT t.id, t.sm FROM (SELECT o.id, o.pad, (SELECT SUM(v) FROM i WHERE i.a = o.a) sm FROM o) t WHERE t.sm > 100 ORDER BY t.id", false},
	// WHERE and HAVING with subqueries, EXISTS, IN, comparisons.
	{"SELECT o.id, o.a FROM o WHERE o.b < (SELECT COUNT(*) FROM i WHERE i.b = o.a) ORDER BY o.id", true},
	// GMS unnests this EXISTS into a semi join: no subquery is left.
	{"SELECT o.id FROM o WHERE EXISTS (SELECT 1 FROM i WHERE i.a = o.a AND i.v > 50) ORDER BY o.id", false},
	{"SELECT o.id FROM o WHERE o.a IN (SELECT i.b FROM i WHERE i.v > o.b) ORDER BY o.id", true},
	{"SELECT o.a, COUNT(*) FROM o GROUP BY o.a HAVING COUNT(*) > (SELECT COUNT(*) FROM i WHERE i.a = 3) ORDER BY o.a", true},
	{"SELECT o.a, SUM((SELECT COUNT(*) FROM i WHERE i.a = o.b)) FROM o GROUP BY o.a ORDER BY o.a", true},
	// DISTINCT, LIMIT, ORDER BY a column not selected.
	{"SELECT DISTINCT o.a, (SELECT COUNT(*) FROM i WHERE i.a = o.a) FROM o ORDER BY o.a", true},
	{"SELECT o.id, (SELECT SUM(v) FROM i WHERE i.a = o.a) FROM o ORDER BY o.b DESC, o.id LIMIT 7", true},
	// Every column read: nothing to prune.
	{"SELECT o.*, (SELECT COUNT(*) FROM i WHERE i.a = o.a) FROM o ORDER BY o.id", false},
	{"SELECT o.id, o.pad FROM o WHERE o.a = (SELECT MIN(a) FROM i) ORDER BY o.id", false},
	// A join stops the rule.
	{"SELECT o.id, (SELECT COUNT(*) FROM i WHERE i.a = o.a) FROM o JOIN i ON i.id = o.id ORDER BY o.id", false},
	// An outer column read two subqueries deep, one read in ORDER BY
	// by a subquery, a column read by a user variable's assignment.
	{"SELECT o.id, (SELECT MAX((SELECT COUNT(*) FROM i i2 WHERE i2.a = o.b AND i2.b = i.b)) FROM i WHERE i.v < 30) FROM o ORDER BY o.id", true},
	{"SELECT o.id FROM o ORDER BY (SELECT COUNT(*) FROM i WHERE i.a = o.a), o.id", true},
	{"SELECT o.id, @ps_x := o.b, (SELECT COUNT(*) FROM i WHERE i.a = o.a) FROM o ORDER BY o.id", true},
	// A subquery's error is kept: more than one row.
	{"SELECT o.id, (SELECT v FROM i WHERE i.a = o.a) FROM o ORDER BY o.id", true},
}

// unnestedSubqueryQueries are IN and EXISTS subqueries GMS unnests into
// joins: no subquery is left for the rule, whose plans must be GMS's own
// (pruned before the unnesting, the IN subquery's outer table lost its
// lookup join on k and became a nested loop).
var unnestedSubqueryQueries = []string{
	"SELECT COUNT(*), SUM(o.a) FROM o WHERE o.a IN (SELECT i.id FROM i WHERE i.b = 1 AND i.v > 5)",
	"SELECT COUNT(*) FROM o WHERE o.b = 2 AND EXISTS (SELECT 1 FROM i WHERE i.id = o.a)",
	"SELECT COUNT(*) FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.id = o.a)",
}

// TestPruneSubqueriesDifferential checks that statements with
// subqueries answer the same with their tables pruned as whole
// (@percdb_prune_subqueries = 0), errors included, and that the pruned
// shapes read o without pad.
func TestPruneSubqueriesDifferential(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE ps", "USE ps",
		"CREATE TABLE o (id INT PRIMARY KEY, a INT, b INT, pad VARCHAR(300), KEY (a))",
		"CREATE TABLE i (id INT PRIMARY KEY, a INT, b INT, v INT)")
	r := rand.New(rand.NewSource(41))
	maybe := func(v string) string {
		if r.Intn(6) == 0 {
			return "NULL"
		}
		return v
	}
	var ov, iv []string
	for id := 1; id <= 150; id++ {
		ov = append(ov, fmt.Sprintf("(%d, %s, %s, %s)", id, maybe(fmt.Sprint(r.Intn(10))), maybe(fmt.Sprint(r.Intn(8)-2)),
			maybe(fmt.Sprintf("'%s'", strings.Repeat(string(rune('a'+r.Intn(3))), 280)))))
	}
	for id := 1; id <= 300; id++ {
		iv = append(iv, fmt.Sprintf("(%d, %s, %s, %s)", id, maybe(fmt.Sprint(r.Intn(12))), maybe(fmt.Sprint(r.Intn(9)-3)), maybe(fmt.Sprint(r.Intn(100)))))
	}
	mustExec(t, db, "INSERT INTO ps.o VALUES "+strings.Join(ov, ","), "INSERT INTO ps.i VALUES "+strings.Join(iv, ","))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	set := func(v string) {
		if _, err := conn.ExecContext(ctx, "SET @percdb_prune_subqueries = "+v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(ctx, "USE ps"); err != nil {
		t.Fatal(err)
	}
	for _, q := range unnestedSubqueryQueries {
		set("0")
		want, _ := answer(ctx, conn, "EXPLAIN FORMAT=TREE "+q)
		set("1")
		got, err := answer(ctx, conn, "EXPLAIN FORMAT=TREE "+q)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: plan changed (%v):\n%s\nGMS's:\n%s", q, err, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	for _, c := range pruneSubqueryQueries {
		set("0")
		want, wantCols, wantErr := answerWithColumns(ctx, conn, c.q)
		set("1")
		got, gotCols, gotErr := answerWithColumns(ctx, conn, c.q)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s: error %v, whole tables %v", c.q, gotErr, wantErr)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotCols) != fmt.Sprint(wantCols) {
			t.Errorf("%s:\npruned %v %.600v\nwhole  %v %.600v", c.q, gotCols, got, wantCols, want)
		}
		if wantErr == nil && len(want) == 0 {
			t.Errorf("%s: no rows: the case tests nothing", c.q)
		}
		if p := readsPad(t, ctx, conn, c.q); p == c.pruned {
			t.Errorf("%s: o read with pad %v, want pruned %v", c.q, p, c.pruned)
		}
	}
}

// readsPad reports whether q's plan reads table o's column pad: some
// access of o is read whole (its tree shows no columns), or with pad
// among its columns.
func readsPad(t *testing.T, ctx context.Context, conn *sql.Conn, q string) bool {
	t.Helper()
	plan, err := answer(ctx, conn, "EXPLAIN FORMAT=TREE "+q)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	lines := strings.Split(strings.Join(plan, "\n"), "\n")
	for i, l := range lines {
		if !strings.HasSuffix(strings.TrimSpace(l), "name: o") && !strings.Contains(l, "IndexedTableAccess(o)") {
			continue
		}
		cols := ""
		// The node's own attributes follow it; the next node ends them.
		for _, next := range lines[i+1:] {
			attr := strings.TrimLeft(next, " │├└─")
			if strings.HasPrefix(attr, "columns: [") {
				cols = attr
				break
			}
			if !strings.HasPrefix(attr, "index:") && !strings.HasPrefix(attr, "filters:") && !strings.HasPrefix(attr, "keys:") {
				break
			}
		}
		if cols == "" || strings.Contains(cols, "pad") {
			return true
		}
	}
	return false
}
