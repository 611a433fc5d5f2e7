package sql_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/percdb/percdb/sql/sqltest"
)

// TestOwnStatementsWithMultiStatements runs the statements percdb serves
// itself (CHECK TABLE, ADMIN ..., BEGIN PESSIMISTIC) from a client that
// allows multi-statements, as the mariadb client and mysqlcheck do: the
// server gets them through COM_QUERY's multi-statement path, where they
// were syntax errors.
func TestOwnStatementsWithMultiStatements(t *testing.T) {
	srv := sqltest.Start(t, "")
	setup := srv.Open("")
	mustExec(t, setup, "CREATE DATABASE m", "CREATE TABLE m.t (id INT PRIMARY KEY, v INT, KEY kv (v))", "INSERT INTO m.t VALUES (1, 1), (2, 2)")
	db, err := sql.Open("mysql", srv.DSN("m")+"?multiStatements=true")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{"CHECK TABLE t", "ADMIN CHECK TABLE t;", "ADMIN SHOW DDL JOBS", "ADMIN SHOW LOCK WAITS"} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		rows.Close()
	}
	mustExec(t, db, "BEGIN PESSIMISTIC", "UPDATE t SET v = 3 WHERE id = 1", "COMMIT")
	var v int
	if err := db.QueryRow("SELECT v FROM t WHERE id = 1").Scan(&v); err != nil || v != 3 {
		t.Fatalf("after BEGIN PESSIMISTIC ... COMMIT: v = %d, %v", v, err)
	}
	// An action's semicolons do not cut ADMIN WATCH ... DO BEGIN ... END.
	mustExec(t, db, "ADMIN WATCH t (v) FOR OBSERVER multi DO BEGIN DELETE FROM t WHERE id = -NEW.id; DELETE FROM t WHERE id < -100; END")
	if a := observerRows(t, db)["multi"]["ACTION"]; !strings.HasPrefix(a, "BEGIN DELETE") || !strings.HasSuffix(a, "END") {
		t.Fatalf("the action recorded through a multi-statement connection: %q", a)
	}
}
