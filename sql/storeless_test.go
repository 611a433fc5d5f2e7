package sql_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	percsql "github.com/percdb/percdb/sql"
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

// TestGuardedCatalogSkipsVersionRead checks that an autocommit statement
// that reads a table through the plan caches takes the node's cached
// catalog at its start_ts when the SchemaGuard proves it the one there,
// without a read of the schema version key (no kv get: the statement's
// own read is a coprocessor request), also after a DDL once a statement
// has found the new catalog the latest; and that it answers under the
// new catalog.
func TestGuardedCatalogSkipsVersionRead(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0", AutoAnalyzeInterval: time.Hour})
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE g", "CREATE TABLE g.t (id INT PRIMARY KEY, q INT NOT NULL)",
		"INSERT INTO g.t VALUES (1, 11), (2, 12), (3, 21)")
	db := openDB(t, srv, "g")
	db.SetMaxOpenConns(1)
	gets := func() float64 {
		return metricValue(t, scrape(t, srv), "percdb_kv_requests_total", "command=get", "result=ok")
	}
	check := func(round int, q, want string) {
		t.Helper()
		for range 2 { // cached, and the catalog found the latest
			if got := strings.Join(queryRowsArgs(t, db, q), "|"); got != want {
				t.Fatalf("round %d: %s: %q, want %q", round, q, got, want)
			}
		}
		quiesce(t, srv)
		g0 := gets()
		for range 5 {
			if got := strings.Join(queryRowsArgs(t, db, q), "|"); got != want {
				t.Fatalf("round %d: %s: %q, want %q", round, q, got, want)
			}
		}
		if n := gets() - g0; n != 0 {
			t.Errorf("round %d: %s: %v kv gets in 5 executions, want none", round, q, n)
		}
	}
	check(0, "SELECT q % 10 AS m, count(*) FROM t GROUP BY q % 10 ORDER BY m", "1 2|2 1")
	mustExec(t, admin, "ALTER TABLE g.t ADD COLUMN z INT NOT NULL DEFAULT 3")
	check(1, "SELECT q % 10 AS m, count(*) FROM t GROUP BY q % 10 ORDER BY m", "1 2|2 1")
	check(1, "SELECT q % 10 AS m, sum(z) FROM t GROUP BY q % 10 ORDER BY m", "1 6|2 3")
}
