package sql_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestUpsertReadsSelectedColumns runs INSERT … SELECT … ON DUPLICATE KEY
// UPDATE assignments that read the SELECT's columns (sql/compat/odku.go)
// as prepared statements, executed more than once with other arguments
// (each execution reads its own rows, not a cached plan's), and counts
// the rows affected with and without CLIENT_FOUND_ROWS (an unchanged
// row: 0, or 1 when found rows are counted). Without the rule every
// statement fails with 1054.
func TestUpsertReadsSelectedColumns(t *testing.T) {
	srv := startServer(t, true)
	setup := openDB(t, srv, "")
	for _, q := range []string{
		"CREATE DATABASE odku",
		"CREATE TABLE odku.t (a INT PRIMARY KEY, b INT, c VARCHAR(10))",
		"CREATE TABLE odku.o (k INT PRIMARY KEY, a INT, x INT, s VARCHAR(10))",
		"INSERT INTO odku.t VALUES (1, 10, 'p'), (2, 20, 'q')",
		// Three rows of o meet t's row 1, one each row 2 and a new row 3.
		"INSERT INTO odku.o VALUES (1, 1, 5, 'u'), (2, 1, 6, 'v'), (3, 1, 7, 'w'), (4, 2, 8, 'x'), (5, 3, 9, 'y')",
	} {
		if _, err := setup.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, found := range []bool{false, true} {
		cfg := mysql.NewConfig()
		cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", srv.Addr().String(), "odku"
		cfg.ClientFoundRows = found
		connector, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(connector)
		t.Cleanup(func() { db.Close() })
		ctx := context.Background()
		exec := func(q string, args ...any) int64 {
			t.Helper()
			stmt, err := db.PrepareContext(ctx, q)
			if err != nil {
				t.Fatalf("prepare %s: %v", q, err)
			}
			defer stmt.Close()
			res, err := stmt.ExecContext(ctx, args...)
			if err != nil {
				t.Fatalf("%s %v: %v", q, args, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		contents := func() string {
			t.Helper()
			return strings.Join(queryRows(t, db, "SELECT a, b, c FROM t ORDER BY a"), "; ")
		}
		reset := func() {
			t.Helper()
			for _, q := range []string{"DELETE FROM t", "INSERT INTO t VALUES (1, 10, 'p'), (2, 20, 'q')"} {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
		}
		reset()

		// Each of o's rows updates t's row with its own x: row 1 is
		// updated three times (5, then 6, then 7: 2+2+2), row 2 once
		// (2), row 3 inserted (1).
		upsert := "INSERT INTO t (a, b, c) SELECT o.a, o.x, o.s FROM o WHERE o.x >= ? ORDER BY o.k ON DUPLICATE KEY UPDATE b = o.x + t.b + ?, c = CONCAT(VALUES(c), s)"
		if n := exec(upsert, 0, 0); n != 9 {
			t.Errorf("found=%v: first upsert: %d rows affected, want 9", found, n)
		}
		if got, want := contents(), "1 28 ww; 2 28 xx; 3 9 y"; got != want {
			t.Errorf("found=%v: after the first upsert: %s, want %s", found, got, want)
		}
		// The same prepared shape again, other arguments: o's rows with
		// x >= 8 only, plus 100.
		if n := exec(upsert, 8, 100); n != 4 {
			t.Errorf("found=%v: second upsert: %d rows affected, want 4", found, n)
		}
		if got, want := contents(), "1 28 ww; 2 136 xx; 3 118 yy"; got != want {
			t.Errorf("found=%v: after the second upsert: %s, want %s", found, got, want)
		}

		// An update to the values the row holds: 0 rows affected, or 1
		// a row with CLIENT_FOUND_ROWS.
		same := "INSERT INTO t (a, b) SELECT o.a, o.x FROM o WHERE o.k = ? ON DUPLICATE KEY UPDATE b = o.x * 0 + t.b"
		want := int64(0)
		if found {
			want = 1
		}
		if n := exec(same, 4); n != want {
			t.Errorf("found=%v: unchanged row: %d rows affected, want %d", found, n, want)
		}
		// A derived table's columns by its alias.
		derived := "INSERT INTO t (a, b) SELECT * FROM (SELECT a, x + ? AS e FROM o WHERE k = 5) AS n ON DUPLICATE KEY UPDATE b = n.e"
		if n := exec(derived, 1000); n != 2 {
			t.Errorf("found=%v: derived: %d rows affected, want 2", found, n)
		}
		if got, want := contents(), "1 28 ww; 2 136 xx; 3 1009 yy"; got != want {
			t.Errorf("found=%v: after the derived upsert: %s, want %s", found, got, want)
		}
		reset()
	}
}
