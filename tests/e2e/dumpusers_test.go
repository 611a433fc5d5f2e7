package e2e

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestDumpSystemUsers moves accounts, roles and grants from one server to
// a fresh one with mariadb-dump --system=users and the mariadb client, as
// an administrator moves them: the dump reads mysql.user,
// mysql.default_roles (1146 before), SHOW CREATE USER and SHOW GRANTS;
// its reload runs CURRENT_ROLE() (1105 before), GRANT ... TO
// CURRENT_USER(), SET ROLE, version comments nested in version comments,
// MariaDB's /*M! comments holding them and ALTER USER ... DEFAULT ROLE
// (1064 before). After it the fresh server has the same accounts and
// grants, and the account logs in with its password and reads through its
// role.
func TestDumpSystemUsers(t *testing.T) {
	dump := tool(t, "mariadb-dump", "mysqldump")
	client := mariadbClient(t)
	src := startServer(t, "")
	db := src.Open("")
	mustExec(t, db,
		"CREATE DATABASE shop",
		"CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO shop.t VALUES (1, 'a'), (2, 'b')",
		"CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'",
		"CREATE USER 'sha'@'localhost' IDENTIFIED WITH caching_sha2_password BY 'sha-pw'",
		"GRANT INSERT ON shop.* TO 'app'@'%'",
		"CREATE ROLE reader, 'writer'@'%'",
		"GRANT SELECT ON shop.t TO reader",
		"GRANT UPDATE ON shop.* TO writer",
		"GRANT reader, writer TO 'app'@'%'",
		"GRANT reader TO 'sha'@'localhost'")
	host, port := src.HostPort()
	out := runTool(t, dump, host, port, "", "--system=users", "--insert-ignore", "--databases", "shop")
	dst := startServer(t, "")
	dhost, dport := dst.HostPort()
	runTool(t, client, dhost, dport, out)
	ddb := dst.Open("")
	accounts := "SELECT user, host FROM mysql.user WHERE user NOT LIKE 'mariadb_dump%' ORDER BY user, host"
	want := queryRows(t, db, accounts)
	if got := queryRows(t, ddb, accounts); !reflect.DeepEqual(got, want) {
		t.Errorf("accounts after the reload: %v, want %v", got, want)
	}
	for _, a := range want {
		q := fmt.Sprintf("SHOW GRANTS FOR '%s'@'%s'", a[0], a[1])
		if got, want := queryRows(t, ddb, q), queryRows(t, db, q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s after the reload:\n%v\nwant\n%v", q, got, want)
		}
	}
	app := dst.OpenAs("app", "app-pw", "")
	if got := queryRows(t, app, "SELECT CURRENT_ROLE()"); len(got) != 1 || got[0][0] != "`reader`@`%`,`writer`@`%`" {
		t.Errorf("CURRENT_ROLE() of app after the reload: %v", got)
	}
	if got := queryRows(t, app, "SELECT v FROM shop.t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"a"}, {"b"}}) {
		t.Errorf("app reads shop.t through its role: %v", got)
	}
	// The dump made its own role for the reload and dropped it.
	if got := queryRows(t, ddb, "SELECT user FROM mysql.user WHERE user LIKE 'mariadb_dump%'"); len(got) != 0 {
		t.Errorf("roles the reload left: %v", got)
	}
	if !strings.Contains(out, "CURRENT_ROLE()") {
		t.Logf("the dump no longer sets roles for its reload; the test covers less")
	}
}
