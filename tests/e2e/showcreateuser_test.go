package e2e

import (
	"context"
	"database/sql"
	"strings"
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

// TestAccountLock locks and unlocks accounts: CREATE USER ... ACCOUNT LOCK
// (GMS dropped the clause: the account logged in) and ALTER USER ...
// ACCOUNT LOCK | UNLOCK (a syntax error before). A locked account's login
// is refused (3118 with the right password, 1045 with a wrong one; see
// also TestLockedAccountLogin), a session already open goes on, the lock survives a restart, and SHOW
// CREATE USER and mysql.user show it.
func TestAccountLock(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	db := s.Open("")
	mustExec(t, db,
		"CREATE USER 'lk'@'%' IDENTIFIED BY 'p' ACCOUNT LOCK",
		"CREATE USER 'open'@'%' IDENTIFIED BY 'o'",
		"CREATE USER IF NOT EXISTS 'open'@'%' IDENTIFIED BY 'o' ACCOUNT LOCK")
	login := func(s interface {
		OpenAs(user, password, db string) *sql.DB
	}, user, password string) error {
		_, err := s.OpenAs(user, password, "").Exec("DO 1")
		return err
	}
	wantError(t, login(s, "lk", "p"), 3118, "HY000")
	wantError(t, login(s, "lk", "wrong"), 1045, "28000")
	// IF NOT EXISTS left the existing account as it was.
	if err := login(s, "open", "o"); err != nil {
		t.Fatalf("open, which CREATE USER IF NOT EXISTS ... ACCOUNT LOCK found existing: %v", err)
	}
	if got := queryRows(t, db, "SELECT user, account_locked FROM mysql.user WHERE user IN ('lk', 'open') ORDER BY user"); len(got) != 2 || got[0][1] != "Y" || got[1][1] != "N" {
		t.Errorf("mysql.user account_locked: %v", got)
	}
	if got := queryRows(t, db, "SHOW CREATE USER 'lk'@'%'"); len(got) != 1 || !strings.Contains(got[0][0], " ACCOUNT LOCK ") {
		t.Errorf("SHOW CREATE USER of a locked account: %v", got)
	}
	mustExec(t, db, "ALTER USER 'lk'@'%' ACCOUNT UNLOCK")
	if err := login(s, "lk", "p"); err != nil {
		t.Fatalf("lk after ACCOUNT UNLOCK: %v", err)
	}
	// A session open before the lock goes on.
	open := s.OpenAs("open", "o", "")
	open.SetMaxOpenConns(1)
	mustExec(t, open, "DO 1")
	mustExec(t, db, "ALTER USER 'open'@'%', 'lk' ACCOUNT LOCK")
	mustExec(t, open, "DO 1")
	wantError(t, login(s, "lk", "p"), 3118, "HY000")
	// An unknown account: 1396 and nothing changed; IF EXISTS: a note
	// and the others changed.
	_, err := db.Exec("ALTER USER 'lk'@'%', 'nosuch'@'%' ACCOUNT UNLOCK")
	wantError(t, err, 1396, "HY000")
	wantError(t, login(s, "lk", "p"), 3118, "HY000")
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "ALTER USER IF EXISTS 'nosuch'@'%', 'lk'@'%' ACCOUNT UNLOCK")
	if got := queryRows(t, conn, "SHOW WARNINGS"); len(got) != 1 || got[0][1] != "3162" {
		t.Errorf("ALTER USER IF EXISTS of an unknown account: warnings %v", got)
	}
	// Without the CREATE USER privilege: 1227.
	_, err = s.OpenAs("lk", "p", "").Exec("ALTER USER 'open'@'%' ACCOUNT UNLOCK")
	wantError(t, err, 1227, "42000")
	// The lock survives a restart.
	s.Stop()
	s = startServer(t, dir)
	wantError(t, login(s, "open", "o"), 3118, "HY000")
	if err := login(s, "lk", "p"); err != nil {
		t.Fatalf("lk after a restart: %v", err)
	}
}
