package sql_test

import (
	"context"
	"database/sql"
	"testing"
)

// TestStorelessStatementsTakeNoTimestamp checks that an autocommit
// statement that reads nothing from the store (SELECT 1, a pool's
// validation query, and DO 1, text or prepared) takes no timestamp from
// the oracle once its plan is cached, also after a DDL, while a statement
// that reads a table through a subquery still takes one; and that each
// answers as before.
func TestStorelessStatementsTakeNoTimestamp(t *testing.T) {
	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)", "INSERT INTO d.t VALUES (1, 7)")
	db := openDB(t, srv, "d")
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	prepSelect, err := conn.PrepareContext(ctx, "SELECT ? + 1")
	if err != nil {
		t.Fatal(err)
	}
	defer prepSelect.Close()
	prepDo, err := conn.PrepareContext(ctx, "DO 1")
	if err != nil {
		t.Fatal(err)
	}
	defer prepDo.Close()
	type statement struct {
		name string
		run  func() (string, error)
		want string
	}
	query := func(q string, args ...any) func() (string, error) {
		return func() (string, error) {
			var s sql.NullString
			err := conn.QueryRowContext(ctx, q, args...).Scan(&s)
			return s.String, err
		}
	}
	exec := func(q string) func() (string, error) {
		return func() (string, error) {
			_, err := conn.ExecContext(ctx, q)
			return "", err
		}
	}
	storeless := []statement{
		{"SELECT 1", query("SELECT 1"), "1"},
		{"SELECT CONCAT", query("SELECT CONCAT('a', 1 + 2)"), "a3"},
		{"DO 1", exec("DO 1"), ""},
		{"DO 1 + 1", exec("DO 1 + 1"), ""},
		{"prepared SELECT ? + 1", func() (string, error) {
			var s string
			err := prepSelect.QueryRowContext(ctx, 41).Scan(&s)
			return s, err
		}, "42"},
		{"prepared DO 1", func() (string, error) {
			_, err := prepDo.ExecContext(ctx)
			return "", err
		}, ""},
	}
	reading := statement{"scalar subquery", query("SELECT (SELECT v FROM t WHERE id = 1)"), "7"}
	run := func(st statement, times int) {
		t.Helper()
		for range times {
			got, err := st.run()
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if got != st.want {
				t.Fatalf("%s: %q, want %q", st.name, got, st.want)
			}
		}
	}
	calls := func(st statement, times int) uint64 {
		t.Helper()
		quiesce(t, srv)
		c0 := serverStatus(t, admin, "Percdb_oracle_calls")
		own := serverStatus(t, admin, "Percdb_oracle_calls") - c0
		run(st, times)
		return serverStatus(t, admin, "Percdb_oracle_calls") - c0 - 2*own
	}
	for round, ddl := range []string{"", "CREATE TABLE d.u (id INT PRIMARY KEY)"} {
		if ddl != "" {
			mustExec(t, admin, ddl)
		}
		for _, st := range storeless {
			// The first executions cache the plan and find the node's
			// cached catalog the latest.
			run(st, 2)
			if n := calls(st, 5); n != 0 {
				t.Errorf("round %d: %s: %d timestamps in 5 executions, want none", round, st.name, n)
			}
		}
		run(reading, 2)
		if n := calls(reading, 5); n < 5 {
			t.Errorf("round %d: %s: %d timestamps in 5 executions, want one each", round, reading.name, n)
		}
	}
}
