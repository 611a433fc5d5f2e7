package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// keyWindowSetup creates database mo: a (1,600 rows, primary key (w, d,
// o), 4 values of d, a secondary index on x with NULLs) and b (300 rows),
// analyzed, and returns a connection using it with GMS's row estimates
// (@percdb_range_estimates = 0).
func keyWindowSetup(t testing.TB) *sql.Conn {
	t.Helper()
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE mo", "USE mo",
		"CREATE TABLE a (w INT NOT NULL, d INT NOT NULL, o INT NOT NULL, x INT, PRIMARY KEY (w, d, o), KEY (x))",
		"CREATE TABLE b (id INT PRIMARY KEY, q INT)")
	r := rand.New(rand.NewSource(41))
	var av, bv []string
	for d := 1; d <= 4; d++ {
		for o := 1; o <= 400; o++ {
			x := fmt.Sprint(r.Intn(300))
			if r.Intn(7) == 0 {
				x = "NULL"
			}
			av = append(av, fmt.Sprintf("(1, %d, %d, %s)", d, o, x))
		}
	}
	for id := 1; id <= 300; id++ {
		bv = append(bv, fmt.Sprintf("(%d, %d)", id, r.Intn(40)))
	}
	mustExec(t, db, "INSERT INTO mo.a VALUES "+strings.Join(av, ","), "INSERT INTO mo.b VALUES "+strings.Join(bv, ","),
		"ANALYZE TABLE mo.a, mo.b")
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, s := range []string{"USE mo", "SET @percdb_range_estimates = 0"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	return conn
}

// keyWindowJoin joins a window of 50 rows of a's primary key to b.
const keyWindowJoin = " FROM a JOIN b ON b.id = a.x WHERE a.w = 1 AND a.d = 4 AND a.o BETWEEN 54 AND 103"

// TestPinnedIndexKeepsMergeOrder: a merge join of a on a.x = b.id reads a
// through its index on x, the join key's order; the WHERE clause pins a
// prefix of a's primary key, and PreferPinnedIndex moved the read to the
// primary key, whose rows are not in x's order: the merge join dropped
// most matches (2 rows of 45). The answer must be the hash join's.
func TestPinnedIndexKeepsMergeOrder(t *testing.T) {
	conn := keyWindowSetup(t)
	ctx := context.Background()
	plan := explainText(ctx, t, conn, "SELECT a.o, b.q"+keyWindowJoin)
	if !strings.Contains(plan, "merge join") {
		t.Fatalf("no merge join planned, the test checks nothing:\n%s", plan)
	}
	got, err := answer(ctx, conn, "SELECT a.o, b.q"+keyWindowJoin)
	if err != nil {
		t.Fatal(err)
	}
	want, err := answer(ctx, conn, "SELECT /*+ HASH_JOIN(a, b) */ a.o, b.q"+keyWindowJoin)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	sort.Strings(want)
	if len(want) < 30 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("merge join: %d rows %v\nhash join: %d rows %v\n%s", len(got), got, len(want), want, plan)
	}
}

// explainText returns the plan EXPLAIN q shows, without its estimates:
// each row's table, type, key and extra.
func explainText(ctx context.Context, t *testing.T, conn *sql.Conn, q string) string {
	t.Helper()
	rows, err := conn.QueryContext(ctx, "EXPLAIN "+q)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for _, r := range readRows(rows) {
		if len(r) != 12 {
			t.Fatalf("EXPLAIN %s: %d columns", q, len(r))
		}
		out = append(out, strings.Join([]string{r[2], r[4], r[6], r[11]}, " "))
	}
	return strings.Join(out, "\n")
}
