package sql_test

import (
	"strings"
	"testing"
)

// TestRenameTablePrepared: a prepared RENAME TABLE (COM_STMT_PREPARE and
// EXECUTE) renames in the database its names carry, as the same statement
// sent as text does (TestRenameTableQualified); GMS's execution of the
// prepared statement renamed in the current database.
func TestRenameTablePrepared(t *testing.T) {
	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE pr", "CREATE DATABASE pother",
		"CREATE TABLE pr.u (id INT PRIMARY KEY)", "INSERT INTO pr.u VALUES (3)",
		"CREATE TABLE pother.u (id INT PRIMARY KEY)", "INSERT INTO pother.u VALUES (2)")

	for _, current := range []string{"pother", ""} {
		db := openDB(t, srv, current)
		db.SetMaxOpenConns(1)
		stmt, err := db.Prepare("RENAME TABLE pr.u TO pr.u2")
		if err != nil {
			t.Fatalf("prepare with current database %q: %v", current, err)
		}
		if _, err := stmt.Exec(); err != nil {
			t.Fatalf("execute with current database %q: %v", current, err)
		}
		stmt.Close()
		for q, want := range map[string]string{
			"SHOW TABLES FROM pr":     "u2",
			"SHOW TABLES FROM pother": "u",
			"SELECT id FROM pr.u2":    "3",
		} {
			if got := strings.Join(queryRows(t, db, q), "|"); got != want {
				t.Errorf("current database %q, %s: %s, want %s", current, q, got, want)
			}
		}
		mustExec(t, db, "RENAME TABLE pr.u2 TO pr.u")
	}
}
