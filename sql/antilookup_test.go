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

// TestAntiLookupDifferential compares NOT EXISTS subqueries correlated
// on nullable columns, which percdb runs as anti lookup joins
// (antilookup.go), with the nested-loop anti join GMS plans
// (@percdb_anti_lookup = 0), batched and not (@percdb_lookup_batch = 0):
// NULLs on both sides, keys of other integer widths and signedness, of
// strings under a case-insensitive collation, of mixed types (left to
// the nested loop), a composite key pinned whole and by a prefix,
// secondary indexes, conditions beside the keys, NOT EXISTS in EXISTS,
// NOT IN (never a lookup: it must see every inner row), and reads of a
// transaction's own writes. It also checks that EXPLAIN shows the
// lookup for the shapes that have one.
func TestAntiLookupDifferential(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE ax",
		"CREATE TABLE ax.o (id INT NOT NULL PRIMARY KEY, a INT, b TINYINT, u INT UNSIGNED, s VARCHAR(8) COLLATE utf8mb4_0900_ai_ci, w INT)",
		"CREATE TABLE ax.i (w INT NOT NULL, id INT NOT NULL, k INT, b BIGINT, u BIGINT UNSIGNED, s VARCHAR(8) COLLATE utf8mb4_0900_ai_ci, q INT, PRIMARY KEY (w, id), KEY (k), KEY (s), KEY (b, q))",
		"CREATE TABLE ax.n (id INT PRIMARY KEY, k INT, KEY (k))")
	r := rand.New(rand.NewSource(13))
	null := func(v string) string {
		if r.Intn(5) == 0 {
			return "NULL"
		}
		return v
	}
	str := func() string { return fmt.Sprintf("'%s'", []string{"a", "A", "b", "ab", "B ", ""}[r.Intn(6)]) }
	var rows []string
	for id := 0; id < 600; id++ {
		rows = append(rows, fmt.Sprintf("(%d, %s, %s, %s, %s, %s)", id, null(fmt.Sprint(r.Intn(80))), null(fmt.Sprint(r.Intn(256)-128)),
			null(fmt.Sprint(r.Intn(60))), null(str()), null(fmt.Sprint(r.Intn(4)))))
	}
	mustExec(t, admin, "INSERT INTO ax.o VALUES "+strings.Join(rows, ","))
	rows = rows[:0]
	for id := 0; id < 800; id++ {
		rows = append(rows, fmt.Sprintf("(%d, %d, %s, %s, %s, %s, %s)", id%4, id%100, null(fmt.Sprint(r.Intn(90))), null(fmt.Sprint(r.Intn(300)-150)),
			null(fmt.Sprint(r.Intn(70))), null(str()), null(fmt.Sprint(r.Intn(10)))))
	}
	mustExec(t, admin, "INSERT IGNORE INTO ax.i VALUES "+strings.Join(rows, ","))
	mustExec(t, admin, "INSERT INTO ax.n VALUES (1, 5), (2, NULL), (3, 7)")

	conns := make([]*sql.Conn, 3)
	for i, set := range []string{"", "SET @percdb_anti_lookup = 0", "SET @percdb_lookup_batch = 0"} {
		c, err := openDB(t, srv, "ax").Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if set != "" {
			if _, err := c.ExecContext(ctx, set); err != nil {
				t.Fatal(err)
			}
		}
		conns[i] = c
	}
	// text is the answer to q, rows sorted unless it orders them.
	text := func(c *sql.Conn, q string) string {
		out, err := answer(ctx, c, q)
		if err != nil {
			return "error: " + err.Error()
		}
		if !strings.Contains(q, "ORDER BY") {
			sort.Strings(out)
		}
		return strings.Join(out, "\n")
	}
	lookups := 0
	same := func(q string, lookup bool) {
		t.Helper()
		want := text(conns[1], q)
		for i, c := range []*sql.Conn{conns[0], conns[2]} {
			if got := text(c, q); got != want {
				t.Errorf("%s (session %d):\nanti lookup: %.1500s\nnested loop: %.1500s", q, i, got, want)
			}
		}
		plan := text(conns[0], "EXPLAIN FORMAT=TREE "+q)
		if strings.Contains(plan, "AntiLookupJoin") {
			lookups++
		} else if lookup {
			t.Errorf("%s: no anti lookup join:\n%s", q, plan)
		}
	}
	for _, c := range []struct {
		q      string
		lookup bool
	}{
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a)", true},
		{"SELECT id, a FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a AND i.q > 4)", true},
		{"SELECT count(*) FROM o WHERE o.u < 30 AND NOT EXISTS (SELECT 1 FROM i WHERE i.w = o.w AND i.id = o.a)", true},
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.w = o.w AND i.k = o.a)", true},
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.w = o.w)", true},
		// Other integer widths and signedness on either side.
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.b = o.b)", true},
		// (A signed column against an unsigned one is compared by a
		// rule of percdb's, no plain equality: the nested loop.)
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.b = o.u AND i.q = 3)", false},
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.u)", false},
		// No index on i.u.
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.u = o.u)", false},
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.b = o.b AND i.q = o.w)", true},
		// A case-insensitive collation and trailing spaces.
		{"SELECT id, s FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.s = o.s)", true},
		// Mixed types: a string against an integer.
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.s)", false},
		// A condition that is not an equality beside one.
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a AND i.b > o.b)", true},
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a OR i.b = o.b)", false},
		// Under a LIMIT, ordered.
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a) ORDER BY id LIMIT 7", true},
		// Inside EXISTS, beside EXISTS, twice.
		{"SELECT id FROM o WHERE EXISTS (SELECT 1 FROM n WHERE n.id = o.w AND NOT EXISTS (SELECT 1 FROM i WHERE i.k = n.k))", false},
		{"SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a) AND NOT EXISTS (SELECT 1 FROM n WHERE n.k = o.w)", true},
		{"SELECT id FROM o WHERE EXISTS (SELECT 1 FROM n WHERE n.k = o.a) AND NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a)", true},
		// NOT IN keeps its nested loop (NULL in the list: no row).
		{"SELECT id FROM o WHERE o.a NOT IN (SELECT k FROM i)", false},
		{"SELECT id FROM o WHERE o.a NOT IN (SELECT k FROM n WHERE k IS NOT NULL)", false},
		// An empty inner side, an inner side of NULLs (read by a range
		// of an index of their own, which the lookup replaces).
		{"SELECT count(*) FROM o WHERE NOT EXISTS (SELECT 1 FROM n WHERE n.k = o.a AND n.id > 99)", true},
		{"SELECT count(*) FROM o WHERE NOT EXISTS (SELECT 1 FROM n WHERE n.k = o.a AND n.k IS NULL)", true},
		// A join on the outer side.
		{"SELECT o.id, n.id FROM o JOIN n ON n.id = o.w WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a AND i.w = n.id)", false},
	} {
		same(c.q, c.lookup)
	}
	// Random ones.
	cols := []string{"a", "b", "u", "w", "id"}
	inner := []string{"k", "b", "u", "w", "id", "q"}
	for n := 0; n < 40; n++ {
		q := fmt.Sprintf("SELECT id FROM o WHERE o.%s %s %d AND NOT EXISTS (SELECT 1 FROM i WHERE i.%s = o.%s%s)",
			cols[r.Intn(len(cols))], []string{"<", ">", "<>"}[r.Intn(3)], r.Intn(60),
			inner[r.Intn(len(inner))], cols[r.Intn(len(cols))],
			[]string{"", " AND i.q > 3", " AND i.b IS NULL", " AND i.u < o.u", fmt.Sprintf(" AND i.w = %d", r.Intn(4))}[r.Intn(5)])
		same(q, false)
	}
	// A transaction's own writes, which the store cannot see.
	for _, c := range conns {
		for _, s := range []string{"BEGIN OPTIMISTIC", "DELETE FROM i WHERE k < 20", "INSERT INTO i (w, id, k) VALUES (9, 1, 44), (9, 2, NULL)", "UPDATE o SET a = NULL WHERE id % 7 = 0"} {
			if _, err := c.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	same("SELECT id, a FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a)", true)
	// UPDATE and DELETE by NOT EXISTS.
	for _, c := range conns {
		for _, s := range []string{
			"UPDATE o SET b = 1 WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = o.a AND i.q > 2)",
			"DELETE FROM o WHERE id > 300 AND NOT EXISTS (SELECT 1 FROM i WHERE i.b = o.b)",
		} {
			if _, err := c.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	same("SELECT id, b FROM o", false)
	for _, c := range conns {
		if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d statements ran an anti lookup join", lookups)
}
