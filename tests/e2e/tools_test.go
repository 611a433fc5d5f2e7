package e2e

import (
	"strings"
	"testing"
)

// The administration tools of the mariadb-client package, run against
// percdb as an operator runs them.

// TestMariadbSlap runs mariadb-slap's generated load: it creates its own
// schema (CREATE SCHEMA, with no current database), loads a table, runs
// concurrent clients and drops the schema.
func TestMariadbSlap(t *testing.T) {
	slap := tool(t, "mariadb-slap", "mysqlslap")
	s := startServer(t, "")
	host, port := s.HostPort()
	out := runTool(t, slap, host, port, "", "--auto-generate-sql", "--auto-generate-sql-load-type=mixed",
		"--concurrency=3", "--iterations=2", "--number-of-queries=60")
	if !strings.Contains(out, "Number of clients running queries: 3") {
		t.Fatalf("mariadb-slap output:\n%s", out)
	}
	if got := queryRows(t, s.Open(""), "SHOW DATABASES LIKE 'mysqlslap'"); len(got) != 0 {
		t.Errorf("mariadb-slap left its schema: %v", got)
	}
}

// TestMariadbAdmin runs the mariadb-admin commands an operator uses
// first.
func TestMariadbAdmin(t *testing.T) {
	admin := tool(t, "mariadb-admin", "mysqladmin")
	s := startServer(t, "")
	host, port := s.HostPort()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ping"}, "mysqld is alive"},
		{[]string{"version"}, "8.0.36-percdb"},
		{[]string{"variables"}, "| version_comment"},
		{[]string{"extended-status"}, "| Uptime"},
		{[]string{"processlist"}, "| Id"},
		{[]string{"create", "admindb"}, ""},
		{[]string{"flush-logs", "flush-hosts", "flush-tables", "flush-privileges", "flush-status"}, ""},
		{[]string{"status"}, "Uptime: "},   // COM_STATISTICS
		{[]string{"refresh", "debug"}, ""}, // COM_REFRESH, COM_DEBUG
		{[]string{"-f", "drop", "admindb"}, `Database "admindb" dropped`},
	} {
		if out := runTool(t, admin, host, port, "", c.args...); !strings.Contains(out, c.want) {
			t.Errorf("mariadb-admin %v:\n%s\nwant %q in it", c.args, out, c.want)
		}
	}
}

// TestMariadbCheck runs mariadb-check's CHECK TABLE and ANALYZE TABLE
// over a database.
func TestMariadbCheck(t *testing.T) {
	check := tool(t, "mariadb-check", "mysqlcheck")
	s := startServer(t, "")
	host, port := s.HostPort()
	mustExec(t, s.Open(""), "CREATE DATABASE chk",
		"CREATE TABLE chk.a (id INT PRIMARY KEY, v INT, KEY kv (v))", "INSERT INTO chk.a VALUES (1, 1), (2, 2)",
		"CREATE TABLE chk.b (x VARCHAR(10))")
	for _, args := range [][]string{{"chk"}, {"--analyze", "chk"}, {"--databases", "chk"}} {
		out := runTool(t, check, host, port, "", args...)
		for _, table := range []string{"chk.a", "chk.b"} {
			if !strings.Contains(out, table) || strings.Count(out, "OK") != 2 {
				t.Errorf("mariadb-check %v:\n%s\nwant %s OK", args, out, table)
			}
		}
	}
}
