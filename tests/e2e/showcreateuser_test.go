package e2e

import (
	"database/sql"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestShowCreateUserRecreates reads accounts with SHOW CREATE USER, as
// mariadb-dump --system=users, Ansible's mysql_user and Terraform's MySQL
// provider do, and runs its answer on another server: the account logs
// in there with its password (the statement carries the password's hash,
// for mysql_native_password and caching_sha2_password alike). Reading
// another account needs SELECT on mysql or CREATE USER (1142); one's own
// needs nothing; an unknown account is 1396. Before, SHOW CREATE USER was
// a syntax error (1064).
func TestShowCreateUserRecreates(t *testing.T) {
	s := startServer(t, "")
	db := s.Open("")
	mustExec(t, db,
		"CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'",
		"CREATE USER 'sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'sha-pw'",
		"CREATE USER 'nopw'@'localhost'",
		"CREATE USER 'o''k`'@'localhost' IDENTIFIED BY 'q'",
		"CREATE USER 'reader'@'%' IDENTIFIED BY 'r'",
		"GRANT SELECT ON mysql.* TO 'reader'@'%'",
		"CREATE USER 'admin'@'%' IDENTIFIED BY 'a'",
		"GRANT CREATE USER ON *.* TO 'admin'@'%'")
	restored := startServer(t, "")
	rdb := restored.Open("")
	for _, account := range []struct{ user, host, column string }{
		{"app", "%", "CREATE USER for app@%"},
		{"sha", "%", "CREATE USER for sha@%"},
		{"nopw", "localhost", "CREATE USER for nopw@localhost"},
		{"o''k`", "localhost", "CREATE USER for o'k`@localhost"},
	} {
		q := "SHOW CREATE USER '" + account.user + "'@'" + account.host + "'"
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, err := rows.Columns()
		if err != nil || len(cols) != 1 || cols[0] != account.column {
			t.Errorf("%s: columns %q (%v), want [%q]", q, cols, err, account.column)
		}
		var text string
		if !rows.Next() {
			t.Fatalf("%s: no row (%v)", q, rows.Err())
		}
		if err := rows.Scan(&text); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if _, err := rdb.Exec(text); err != nil {
			t.Fatalf("run %q on another server: %v", text, err)
		}
	}
	// The accounts log in to the other server with their passwords.
	if got := queryRows(t, restored.OpenAs("app", "app-pw", ""), "SELECT CURRENT_USER()"); len(got) != 1 || got[0][0] != "app@%" {
		t.Errorf("app on the other server: %v", got)
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.TLSConfig = "sha", "sha-pw", "tcp", restored.Addr(), "skip-verify"
	sha, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer sha.Close()
	if got := queryRows(t, sha, "SELECT CURRENT_USER()"); len(got) != 1 || got[0][0] != "sha@%" {
		t.Errorf("sha on the other server: %v", got)
	}
	cfg.Passwd = "wrong"
	bad, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	_, err = bad.Exec("DO 1")
	wantError(t, err, 1045, "28000")

	// Privileges: one's own account, yes; another's, not without SELECT
	// on mysql or CREATE USER.
	app := s.OpenAs("app", "app-pw", "")
	if got := queryRows(t, app, "SHOW CREATE USER CURRENT_USER()"); len(got) != 1 {
		t.Errorf("SHOW CREATE USER CURRENT_USER() as app: %v", got)
	}
	_, err = app.Exec("SHOW CREATE USER 'sha'@'%'")
	wantError(t, err, 1142, "42000")
	if got := queryRows(t, restored.OpenAs("app", "app-pw", ""), "SHOW CREATE USER 'app'"); len(got) != 1 {
		t.Errorf("SHOW CREATE USER 'app' (host %%) as app: %v", got)
	}
	for _, user := range [][2]string{{"reader", "r"}, {"admin", "a"}} {
		if got := queryRows(t, s.OpenAs(user[0], user[1], ""), "SHOW CREATE USER 'app'@'%'"); len(got) != 1 {
			t.Errorf("SHOW CREATE USER 'app'@'%%' as %s: %v", user[0], got)
		}
	}
	_, err = db.Exec("SHOW CREATE USER 'nosuch'@'%'")
	wantError(t, err, 1396, "HY000")
}
