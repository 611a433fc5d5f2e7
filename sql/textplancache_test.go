package sql_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// textPlanQueries are text SELECTs over pc.t, each run several times on
// one connection: with subqueries (semi and anti joins, a scalar
// subquery by the primary key), ORDER BY read in the index's order,
// aggregates. cached says whether its plan must come from the text plan
// cache after its first execution.
var textPlanQueries = []struct {
	sql    string
	cached bool
}{
	{"SELECT a.id, (SELECT b.c FROM t b WHERE b.id = a.k) FROM t a WHERE a.id BETWEEN 20 AND 60 ORDER BY a.id", true},
	{"SELECT COUNT(*), SUM(n) FROM t WHERE k IN (SELECT b.id FROM t b WHERE b.n = 3)", true},
	{"SELECT id FROM t a WHERE NOT EXISTS (SELECT 1 FROM t b WHERE b.id = a.k AND b.n > 4) AND a.id < 50 ORDER BY id", true},
	{"SELECT k % 7, COUNT(*) FROM t WHERE id < 100 GROUP BY k % 7 ORDER BY 1", true},
	// The clock, random values, system variables: evaluated at the
	// analysis (a filter's NOW()), so never cached.
	{"SELECT COUNT(*) FROM t WHERE id < 10 AND NOW() > '2000-01-01'", false},
	{"SELECT COUNT(*) FROM t WHERE id < 10 AND UTC_TIMESTAMP() > '2000-01-01'", false},
	{"SELECT COUNT(*) FROM t WHERE id < RAND() * 0 + 10", false},
	{"SELECT COUNT(*) FROM t WHERE id < @@max_connections", false},
	// A correlated aggregate: grouped (decorrelate.go), not cached.
	{"SELECT a.id, (SELECT SUM(b.n) FROM t b WHERE b.k = a.k) FROM t a WHERE a.id < 20 ORDER BY a.id", false},
}

// TestTextPlanCache runs text SELECTs again and again on one session and
// compares each answer with a session's whose plan cache is off
// (@percdb_plan_cache = 0); the statements that qualify must run their
// cached plans after the first execution, and the others never. A
// schema change in between makes the cached plans stale: the answer
// must see the new column.
func TestTextPlanCache(t *testing.T) {
	ctx := context.Background()
	srv, admin := planCacheSetup(t)
	db := openDB(t, srv, "pc")
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	plain, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.ExecContext(ctx, "SET @percdb_plan_cache = 0"); err != nil {
		t.Fatal(err)
	}
	check := func(q string) {
		t.Helper()
		got, gerr := answer(ctx, conn, q)
		want, werr := answer(ctx, plain, q)
		if (gerr == nil) != (werr == nil) || gerr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ncached %v (%v)\nplain  %v (%v)", q, got, gerr, want, werr)
		}
	}
	for _, q := range textPlanQueries {
		check(q.sql)
		hits := serverStatus(t, admin, "Percdb_text_plan_cache_hit")
		const runs = 5
		for range runs {
			check(q.sql)
		}
		got := serverStatus(t, admin, "Percdb_text_plan_cache_hit") - hits
		if want := map[bool]uint64{true: runs, false: 0}[q.cached]; got != want {
			t.Errorf("%s: %d text plan cache hits in %d executions, want %d", q.sql, got, runs, want)
		}
	}
	const star = "SELECT a.*, (SELECT b.c FROM t b WHERE b.id = a.k) FROM t a WHERE a.id < 5 ORDER BY a.id"
	check(star)
	check(star)
	mustExec(t, admin, "ALTER TABLE pc.t ADD COLUMN z INT DEFAULT 7")
	check(star)
	rows, err := answer(ctx, conn, star)
	if err != nil || len(rows) == 0 || !strings.Contains(rows[0], " 7 ") {
		t.Errorf("after ADD COLUMN: %v %v, want rows with the new column's 7", rows, err)
	}
}
