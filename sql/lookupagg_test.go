package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// varConn returns a connection of db, closed when t ends, and a function
// that sets the user variable name on it (the switches of percdb's paths
// the differential tests compare).
func varConn(t *testing.T, ctx context.Context, db *sql.DB, name string) (*sql.Conn, func(v string)) {
	t.Helper()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, func(v string) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, "SET @"+name+" = "+v); err != nil {
			t.Fatal(err)
		}
	}
}

// lookupAggQueries are aggregates over lookup joins (lookupJoinSetup's
// tables); agg says whether the aggregation per join key must serve it.
var lookupAggQueries = []struct {
	q   string
	agg bool
}{
	// Prefixes of l's primary key: DECIMAL and integer sums, averages,
	// counts of rows and of values with NULLs, MIN and MAX, grouped by
	// outer columns and expressions, in the order GMS meets the groups.
	{"SELECT o.w, COUNT(*), SUM(l.amount), AVG(l.amount), COUNT(l.v), SUM(l.v), AVG(l.v), MIN(l.v), MAX(l.n) FROM o JOIN l ON l.w = o.w AND l.oid = o.k GROUP BY o.w", true},
	{"SELECT o.x, SUM(l.amount), COUNT(*) FROM o JOIN l ON l.w = o.w AND l.oid = o.k GROUP BY o.x", true},
	{"SELECT o.k % 7, o.w, SUM(l.amount) FROM o JOIN l ON l.w = o.w AND l.oid = o.k GROUP BY o.k % 7, o.w", true},
	{"SELECT o.s, COUNT(*), MAX(l.v) FROM o JOIN l ON l.w = o.w AND l.oid = o.k GROUP BY o.s", true},
	{"SELECT o.id, SUM(l.amount) FROM o JOIN l ON l.w = o.w AND l.oid = o.k GROUP BY o.id HAVING SUM(l.amount) > 100", true},
	// Conditions on the inner side (compiled into the program), on the
	// outer side, and an equality beyond the lookup's key.
	{"SELECT o.w, SUM(l.amount), COUNT(*) FROM o JOIN l ON l.w = o.w AND l.oid = o.k WHERE l.v IS NOT NULL AND l.n < 4 GROUP BY o.w", true},
	{"SELECT o.w, SUM(l.amount) FROM o JOIN l ON l.w = o.w AND l.oid = o.k WHERE l.v IS NULL GROUP BY o.w", true},
	{"SELECT o.x, COUNT(*) FROM o JOIN l ON l.w = o.w AND l.oid = o.k WHERE o.x > 3 AND o.d > 100 GROUP BY o.x", true},
	{"SELECT o.w, COUNT(*), SUM(l.v) FROM o JOIN l ON l.w = o.w AND l.oid = o.k AND l.n = o.x GROUP BY o.w", true},
	{"SELECT o.w, COUNT(*), SUM(i.v) FROM o JOIN i ON i.w = o.w AND i.id = o.k AND i.q = o.x GROUP BY o.w", true},
	// A constant key, a whole primary key, one group over every row,
	// over no row (still one row), a key of another integer width.
	{"SELECT o.x, SUM(l.amount) FROM o JOIN l ON l.w = 2 AND l.oid = o.k GROUP BY o.x", true},
	{"SELECT o.x, COUNT(*), SUM(i.q), MIN(i.v) FROM o JOIN i ON i.w = o.w AND i.id = o.k GROUP BY o.x", true},
	{"SELECT COUNT(*), SUM(l.amount), MIN(l.v) FROM o JOIN l ON l.w = o.w AND l.oid = o.k", true},
	{"SELECT COUNT(*), SUM(l.amount), MIN(l.v) FROM o JOIN l ON l.w = o.w AND l.oid = o.k WHERE o.id < 0", false}, // no outer row, no program
	{"SELECT o.w, COUNT(*), SUM(i2.v) FROM o JOIN i2 ON i2.id = o.k GROUP BY o.w", true},
	// The grouped run of a correlated aggregate subquery (3.3.2.12's
	// shape).
	{"SELECT o.id, (SELECT SUM(l.amount) FROM i JOIN l ON l.w = i.w AND l.oid = i.id WHERE i.w = o.w AND i.id = o.k) FROM o WHERE o.id < 300", true},
	{"SELECT COUNT(*), SUM(sm) FROM (SELECT o.id, o.d, (SELECT SUM(l.amount) FROM i JOIN l ON l.w = i.w AND l.oid = i.id WHERE l.v IS NOT NULL AND i.w = 1 AND i.q = o.x) sm FROM o) t WHERE d <> sm", true},
	{"SELECT o.id, o.x, (SELECT SUM(l.amount) FROM i, l WHERE l.w = i.w AND l.oid = i.id AND l.v IS NOT NULL AND i.w = 2 AND i.q = o.x AND i.v = o.k) sm FROM o WHERE o.id < 400", true},
	// A merge join (both sides read whole in key order): GMS's.
	{"SELECT COUNT(*), SUM(sm) FROM (SELECT o.id, o.d, (SELECT SUM(l.amount) FROM i JOIN l ON l.w = i.w AND l.oid = i.id WHERE l.v IS NOT NULL AND i.w = o.w AND i.q = o.x) sm FROM o) t WHERE d <> sm", false},
	// Left to GMS: a key that converts inexactly or is a string, a left
	// join, an aggregate of an outer column, DISTINCT, a condition over
	// both sides, a secondary index.
	{"SELECT o.w, SUM(l.amount) FROM o JOIN l ON l.w = o.w AND l.oid = o.d GROUP BY o.w", false},
	{"SELECT o.w, SUM(n.v) FROM o JOIN n ON n.name = o.s GROUP BY o.w", false},
	{"SELECT o.id, COUNT(l.n), SUM(l.v) FROM o LEFT JOIN l ON l.w = o.w AND l.oid = o.k WHERE o.id < 40 GROUP BY o.id", false},
	{"SELECT o.w, SUM(o.x), COUNT(*) FROM o JOIN l ON l.w = o.w AND l.oid = o.k GROUP BY o.w", false},
	{"SELECT o.w, COUNT(DISTINCT l.v) FROM o JOIN l ON l.w = o.w AND l.oid = o.k GROUP BY o.w", false},
	{"SELECT o.w, COUNT(*) FROM o JOIN l ON l.w = o.w AND l.oid = o.k AND l.n > o.x GROUP BY o.w", false},
	{"SELECT o.w, COUNT(*) FROM o JOIN l ON l.v = o.k GROUP BY o.w", false},
}

// TestLookupAggregateDifferential checks that aggregates over lookup
// joins computed per join key in the coprocessor answer exactly what
// GMS's aggregation of the joined rows answers (@percdb_lookup_agg = 0),
// row for row and in the same order, that the coprocessor served the
// shapes it takes (Percdb_lookup_aggregates) and no other, and that a
// transaction's own writes, which the store cannot see, are aggregated.
func TestLookupAggregateDifferential(t *testing.T) {
	db := lookupJoinSetup(t)
	ctx := context.Background()
	conn, setVar := varConn(t, ctx, db, "percdb_lookup_agg")
	for _, c := range lookupAggQueries {
		setVar("0")
		want := lookupJoinAnswers(t, ctx, conn, []string{c.q})[0]
		setVar("1")
		before := serverStatus(t, db, "Percdb_lookup_aggregates")
		got := lookupJoinAnswers(t, ctx, conn, []string{c.q})[0]
		programs := serverStatus(t, db, "Percdb_lookup_aggregates") - before
		t.Logf("%d programs: %s", programs, c.q)
		if got != want {
			t.Errorf("%s:\nper key %.600s\nGMS     %.600s", c.q, got, want)
		}
		if strings.Contains(want, "[] ") || strings.Contains(want, "Error") {
			t.Errorf("%s: no rows or an error (%.200s): the case tests nothing", c.q, want)
		}
		if (programs > 0) != c.agg {
			t.Errorf("%s: %d programs, want the aggregation per key %v", c.q, programs, c.agg)
		}
	}
	// EXPLAIN tells it on the inner table, and only when it runs.
	for _, v := range []string{"1", "0"} {
		setVar(v)
		rows, err := conn.QueryContext(ctx, "EXPLAIN SELECT o.w, SUM(l.amount) FROM o JOIN l ON l.w = o.w AND l.oid = o.k GROUP BY o.w")
		if err != nil {
			t.Fatal(err)
		}
		got := readRows(rows)
		rows.Close()
		perKey := len(got) == 2 && strings.Contains(got[1][11], "Using coprocessor (aggregation per join key)")
		batched := len(got) == 2 && strings.Contains(got[1][11], "Using join buffer (Batched Key Access)")
		if perKey != (v == "1") || batched == (v == "1") {
			t.Errorf("@percdb_lookup_agg = %s: EXPLAIN: %v", v, got)
		}
	}
	// In a transaction that changed, added and deleted lines.
	write := []string{
		"UPDATE l SET amount = amount + 1, v = NULL WHERE w = 1 AND oid < 900 AND n = 2",
		"INSERT INTO l VALUES (1, 5, 9, 7, 10.25), (2, 6, 9, NULL, 0.50), (3, 3399, 9, 1, 99.99)",
		"DELETE FROM l WHERE w = 2 AND oid BETWEEN 100 AND 300",
		"SELECT o.w, COUNT(*), SUM(l.amount), COUNT(l.v) FROM o JOIN l ON l.w = o.w AND l.oid = o.k GROUP BY o.w",
		"SELECT o.x, AVG(l.amount), MAX(l.v) FROM o JOIN l ON l.w = o.w AND l.oid = o.k WHERE l.n > 1 GROUP BY o.x",
	}
	var answers [2]string
	for n, v := range []string{"0", "1"} {
		setVar(v)
		if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		before := serverStatus(t, db, "Percdb_lookup_aggregates")
		answers[n] = fmt.Sprint(lookupJoinAnswers(t, ctx, conn, write))
		if programs := serverStatus(t, db, "Percdb_lookup_aggregates") - before; (programs > 0) != (v == "1") {
			t.Errorf("@percdb_lookup_agg = %s: %d programs in the transaction", v, programs)
		}
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	}
	if answers[0] != answers[1] {
		t.Errorf("in a transaction:\nper key %.900s\nGMS     %.900s", answers[1], answers[0])
	}
}
