package protocol

import (
	"database/sql"
	"errors"
	"slices"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
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
		res, err := c2.QueryAll("SHOW CREATE FUNCTION twice")
		if err != nil || len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) < 3 || res[0].Rows[0][0] != "twice" || res[0].Rows[0][2] != text {
			t.Errorf("SHOW CREATE FUNCTION twice: %v (%v), want twice and %q", res, err, text)
		}
		// MySQL's and MariaDB's column names, which clients read the text
		// by (a procedure's are Procedure and Create Procedure).
		want := []string{"Function", "sql_mode", "Create Function", "character_set_client", "collation_connection", "Database Collation"}
		if err == nil && len(res) == 1 {
			var got []string
			for _, c := range res[0].Columns {
				got = append(got, c.Name)
			}
			if !slices.Equal(got, want) {
				t.Errorf("SHOW CREATE FUNCTION columns: %q, want %q", got, want)
			}
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

// TestStoredFunctionQualified calls a stored function of another
// database by its qualified name, as MySQL allows (GMS dropped the
// qualifier: 1305 for the current database's); the column is named as
// written; a missing one is 1305 naming it.
func TestStoredFunctionQualified(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range []string{"CREATE DATABASE IF NOT EXISTS qf", "CREATE FUNCTION qf.thrice(a INT) RETURNS INT DETERMINISTIC RETURN a * 3"} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		res, err := c.QueryAll("SELECT qf.thrice(2)")
		if err != nil || len(res) != 1 || len(res[0].Rows) != 1 || res[0].Rows[0][0] != "6" || res[0].Columns[0].Name != "qf.thrice(2)" {
			t.Errorf("SELECT qf.thrice(2): %v (%v)", res, err)
		}
		_, err = c.QueryAll("SELECT qf.nosuch(2)")
		var se *wirefuzz.ServerError
		if !errors.As(err, &se) || se.Code != 1305 || se.Message != "FUNCTION qf.nosuch does not exist" {
			t.Errorf("SELECT qf.nosuch(2): %v, want 1305 FUNCTION qf.nosuch does not exist", err)
		}
	})
}
