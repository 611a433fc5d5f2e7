package sql_test

import (
	"context"
	"strings"
	"testing"
)

// TestViewReadDoesNotCommit: reading a view inside a transaction (SELECT,
// INSERT … SELECT, SHOW CREATE TABLE, SHOW COLUMNS, SHOW CREATE VIEW of
// it) neither commits the transaction nor loses its savepoints, as in
// MySQL; GMS took the view's stored CREATE VIEW for a DDL of the statement
// and committed, so the ROLLBACK after it undid nothing (and
// mariadb-dump --single-transaction failed with 1305 on ROLLBACK TO
// SAVEPOINT after a view). A CREATE VIEW still commits.
func TestViewReadDoesNotCommit(t *testing.T) {
	srv := startServer(t, true)
	mustExec(t, openDB(t, srv, ""), "CREATE DATABASE vc",
		"CREATE TABLE vc.t (id INT PRIMARY KEY, a INT)", "INSERT INTO vc.t VALUES (1, 10)",
		"CREATE TABLE vc.log (n INT)", "CREATE VIEW vc.v AS SELECT id, a FROM vc.t")
	ctx := context.Background()
	db := openDB(t, srv, "vc")
	for _, read := range []string{
		"SELECT * FROM v",
		"SELECT COUNT(*) FROM t JOIN v USING (id)",
		"INSERT INTO log SELECT a FROM v",
		"SHOW CREATE TABLE v",
		"SHOW CREATE VIEW v",
		"SHOW FULL COLUMNS FROM v",
		"SHOW FIELDS FROM v",
	} {
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		connExec(t, conn, "START TRANSACTION", "INSERT INTO log VALUES (1)", "SAVEPOINT sp")
		rows, err := conn.QueryContext(ctx, read)
		if err != nil {
			t.Fatalf("%s: %v", read, err)
		}
		for rows.Next() {
		}
		rows.Close()
		if _, err := conn.ExecContext(ctx, "ROLLBACK TO SAVEPOINT sp"); err != nil {
			t.Errorf("ROLLBACK TO SAVEPOINT after %s: %v", read, err)
		}
		connExec(t, conn, "INSERT INTO log VALUES (2)", "ROLLBACK")
		if got := strings.Join(queryRows(t, db, "SELECT COUNT(*) FROM log"), "|"); got != "0" {
			t.Errorf("after %s, ROLLBACK left %s rows: the read committed the transaction", read, got)
		}
		conn.Close()
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	connExec(t, conn, "START TRANSACTION", "INSERT INTO log VALUES (3)", "CREATE VIEW w AS SELECT * FROM v", "ROLLBACK")
	if got := strings.Join(queryRows(t, db, "SELECT n FROM log"), "|"); got != "3" {
		t.Errorf("CREATE VIEW did not commit the transaction: log has %q", got)
	}
}
