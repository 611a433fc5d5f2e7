package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// scalarLookupQueries are correlated scalar subqueries over random tables
// with NULLs in the outer key columns and keys with no inner row; joined
// says whether the subquery must be read as a left lookup join
// (scalarlookup.go), the others being shapes it must leave to GMS.
var scalarLookupQueries = []struct {
	q      string
	joined bool
}{
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w AND p.id = o.k) FROM o ORDER BY o.id", true},
	{"SELECT o.id, (SELECT p.s FROM p WHERE p.w = o.w AND p.id = o.k) AS s FROM o WHERE o.id > 20 ORDER BY o.id DESC", true},
	// Over no row the item is not evaluated: NULL, not 0.
	{"SELECT o.id, (SELECT COALESCE(p.v, 0) FROM p WHERE p.w = o.w AND p.id = o.k) FROM o ORDER BY o.id", true},
	{"SELECT o.id, o.k + (SELECT p.v * 2 + o.w FROM p WHERE p.w = o.w AND p.id = o.k) FROM o ORDER BY o.id", true},
	// A filter past the key: a row it rejects is no row.
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w AND p.id = o.k AND p.d > 0) FROM o ORDER BY o.id", true},
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w AND p.id = o.k AND p.s IS NULL) FROM o ORDER BY o.id", true},
	// Keys that convert inexactly (a DECIMAL and a string for an INT
	// column) may read a range: left to GMS.
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w AND p.id = o.dk) FROM o ORDER BY o.id", false},
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w AND p.id = o.sk) FROM o ORDER BY o.id", false},
	// A BIGINT key for the INT column: converted exactly or out of range.
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w AND p.id = o.bk) FROM o ORDER BY o.id", true},
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w AND p.id = o.k) FROM o ORDER BY o.id LIMIT 7", true},
	// Two subqueries in one Project: left to GMS (the second would see
	// the first's join).
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w AND p.id = o.k), (SELECT p.s FROM p WHERE p.w = o.k AND p.id = o.w) FROM o ORDER BY o.id", false},
	// The key's columns are NOT NULL: <=> matches what = matches.
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w <=> o.w AND p.id <=> o.k) FROM o ORDER BY o.id", true},
	{"SELECT o.id, (SELECT q.v FROM p AS q WHERE q.w = o.w AND q.id = o.k) FROM o JOIN j ON j.id = o.id WHERE j.x < 5 ORDER BY o.id", true},
	// Left to GMS: a static range GMS reads per row (its plan reads
	// index v), a prefix of the key (more than one row: error 1242), a
	// LIMIT, an aggregate (decorrelate.go), a derived table's item.
	{"SELECT o.id, (SELECT p.d FROM p WHERE p.w = o.w AND p.id = o.k AND p.v > 40) FROM o ORDER BY o.id", false},
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w) FROM o WHERE o.w IS NULL ORDER BY o.id", false},
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w) FROM o WHERE o.id < 5 ORDER BY o.id", false},
	{"SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w ORDER BY p.id LIMIT 1) FROM o ORDER BY o.id", false},
	{"SELECT o.id, (SELECT MAX(p.v) FROM p WHERE p.w = o.w AND p.id = o.k) FROM o ORDER BY o.id", false},
	{"SELECT id, x FROM (SELECT o.id, (SELECT p.v FROM p WHERE p.w = o.w AND p.id = o.k) AS x FROM o) d ORDER BY id", false},
}

// TestScalarLookupDifferential checks that correlated scalar subqueries
// on a primary key read as left lookup joins answer exactly what GMS's
// evaluation per outer row answers (@percdb_decorrelate = 0), column
// names included, with batched lookups and without
// (@percdb_lookup_batch = 0), and that the join served the queries it
// should (EXPLAIN shows it).
func TestScalarLookupDifferential(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE sl", "USE sl",
		"CREATE TABLE o (id INT PRIMARY KEY, w INT, k INT, dk DECIMAL(6,1), sk VARCHAR(8), bk BIGINT)",
		"CREATE TABLE p (w INT NOT NULL, id INT NOT NULL, v INT, d DECIMAL(6,2), s VARCHAR(5), PRIMARY KEY (w, id), KEY (v))",
		"CREATE TABLE j (id INT PRIMARY KEY, x INT)")
	r := rand.New(rand.NewSource(31))
	maybe := func(v string) string {
		if r.Intn(7) == 0 {
			return "NULL"
		}
		return v
	}
	var ov, pv, jv []string
	for id := 1; id <= 300; id++ {
		k := r.Intn(60) - 3
		dk := fmt.Sprintf("%d.%d", k, []int{0, 0, 0, 5}[r.Intn(4)])
		bk := fmt.Sprint(k)
		if r.Intn(8) == 0 {
			bk = fmt.Sprint(int64(k) + []int64{1 << 32, -1 << 40, 1 << 62}[r.Intn(3)])
		}
		ov = append(ov, fmt.Sprintf("(%d, %s, %s, %s, %s, %s)", id, maybe(fmt.Sprint(r.Intn(4))), maybe(fmt.Sprint(k)),
			maybe(dk), maybe(fmt.Sprintf("'%d%s'", k, []string{"", "", " ", "x"}[r.Intn(4)])), maybe(bk)))
		jv = append(jv, fmt.Sprintf("(%d, %d)", id, r.Intn(10)))
	}
	for w := 0; w < 4; w++ {
		for id := 0; id < 50; id++ {
			if r.Intn(4) == 0 {
				continue
			}
			pv = append(pv, fmt.Sprintf("(%d, %d, %s, %s, %s)", w, id, maybe(fmt.Sprint(r.Intn(100)-10)),
				maybe(fmt.Sprintf("%d.%02d", r.Intn(500)-250, r.Intn(100))), maybe(fmt.Sprintf("'%c%c'", 'a'+r.Intn(4), 'A'+r.Intn(4)))))
		}
	}
	mustExec(t, db, "INSERT INTO sl.o VALUES "+strings.Join(ov, ","),
		"INSERT INTO sl.p VALUES "+strings.Join(pv, ","),
		"INSERT INTO sl.j VALUES "+strings.Join(jv, ","))
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	set := func(v, to string) {
		if _, err := conn.ExecContext(ctx, "SET @"+v+" = "+to); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(ctx, "USE sl"); err != nil {
		t.Fatal(err)
	}
	for _, c := range scalarLookupQueries {
		set("percdb_decorrelate", "0")
		want, wantCols, wantErr := answerWithColumns(ctx, conn, c.q)
		if joined := explainsJoin(t, ctx, conn, c.q); joined {
			t.Errorf("%s: a join with @percdb_decorrelate = 0", c.q)
		}
		set("percdb_decorrelate", "1")
		if joined := explainsJoin(t, ctx, conn, c.q); joined != c.joined {
			t.Errorf("%s: read as a join %v, want %v", c.q, joined, c.joined)
		}
		for _, batch := range []string{"1", "0"} {
			set("percdb_lookup_batch", batch)
			got, gotCols, gotErr := answerWithColumns(ctx, conn, c.q)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%s (batch %s): error %v, per row %v", c.q, batch, gotErr, wantErr)
				continue
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotCols) != fmt.Sprint(wantCols) {
				t.Errorf("%s (batch %s):\njoined  %v %.600v\nper row %v %.600v", c.q, batch, gotCols, got, wantCols, want)
			}
		}
		set("percdb_lookup_batch", "1")
		if wantErr == nil && len(want) == 0 {
			t.Errorf("%s: no rows: the case tests nothing", c.q)
		}
	}
}

// answerWithColumns is answer with the answer's column names.
func answerWithColumns(ctx context.Context, conn *sql.Conn, q string) ([]string, []string, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out []string
	for _, r := range readRows(rows) {
		out = append(out, strings.Join(r, " "))
	}
	return out, cols, rows.Err()
}

// explainsJoin reports whether q's plan reads a subquery through a left
// lookup join.
func explainsJoin(t *testing.T, ctx context.Context, conn *sql.Conn, q string) bool {
	t.Helper()
	plan, err := answer(ctx, conn, "EXPLAIN FORMAT=TREE "+q)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	return strings.Contains(strings.Join(plan, "\n"), "LeftOuterLookupJoin")
}
