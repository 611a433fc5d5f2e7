package protocol

import (
	"database/sql"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestShowCreateFunction: SHOW CREATE FUNCTION answers the function's
// name and its text as written (third column, which mariadb-dump
// --routines reads), after a reconnect too; a missing one is 1305.
// (testdata/procs/functions.txt has the rest of stored functions, as
// MariaDB answers.)
func TestShowCreateFunction(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		const text = "CREATE FUNCTION twice(a INT) RETURNS INT DETERMINISTIC RETURN a * 2"
		c, _ := dial(t, s)
		if _, err := c.QueryAll(text); err != nil {
			t.Fatal(err)
		}
		c2, _ := dial(t, s)
		rows, err := c2.Query("SHOW CREATE FUNCTION twice")
		if err != nil || len(rows) != 1 || len(rows[0]) < 3 || rows[0][0] != "twice" || rows[0][2] != text {
			t.Errorf("SHOW CREATE FUNCTION twice: %v (%v), want twice and %q", rows, err, text)
		}
		if rows, err := c2.Query("SELECT twice(21)"); err != nil || len(rows) != 1 || rows[0][0] != "42" {
			t.Errorf("SELECT twice(21): %v (%v)", rows, err)
		}
		run(t, c2, []step{{sql: "SHOW CREATE FUNCTION nosuch", err: 1305}})
		// Prepared, with the argument a placeholder, in a WHERE.
		db, err := sql.Open("mysql", s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRow("SELECT twice(?) FROM (SELECT 1 AS one) AS d WHERE twice(one) = ?", 4, 2).Scan(&n); err != nil || n != 8 {
			t.Errorf("prepared SELECT twice(?): %d (%v), want 8", n, err)
		}
	})
}
