package e2e

import (
	"strings"
	"testing"
)

// TestNodeMySQL2PreparedAccounts runs testdata/prepared_accounts.js:
// node's mysql2 prepares SHOW CREATE USER and ALTER USER ... ACCOUNT
// LOCK | UNLOCK with execute() (COM_STMT_PREPARE), as it prepares every
// statement. Before, both were 1064 when prepared: vitess parses every
// COM_STMT_PREPARE and knows neither.
func TestNodeMySQL2PreparedAccounts(t *testing.T) {
	got := runNodeScript(t, "mysql2", "prepared_accounts.js")
	const tail = " REQUIRE NONE PASSWORD EXPIRE DEFAULT %s PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT"
	lines := strings.Split(got, "\n")
	want := []string{
		"column CREATE USER for app@%",
		"text CREATE USER `app`@`%` IDENTIFIED WITH 'mysql_native_password' AS '*",
		"locked, affected rows 0",
		"column CREATE USER for app@%",
		"text CREATE USER `app`@`%` IDENTIFIED WITH 'mysql_native_password' AS '*",
		"column CREATE USER for root@localhost",
		"text CREATE USER `root`@`localhost` IDENTIFIED WITH 'mysql_native_password'",
		"nosuch 1396",
		"app logs in 1",
	}
	if len(lines) != len(want) {
		t.Fatalf("prepared_accounts.js printed\n%s\nwant %d lines like\n%s", got, len(want), strings.Join(want, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want it to start with %q", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[1], strings.Replace(tail, "%s", "ACCOUNT UNLOCK", 1)) ||
		!strings.Contains(lines[4], strings.Replace(tail, "%s", "ACCOUNT LOCK", 1)) {
		t.Errorf("SHOW CREATE USER before and after ACCOUNT LOCK:\n%s\n%s", lines[1], lines[4])
	}
}
