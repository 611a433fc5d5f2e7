package e2e

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// accountsOf returns what a server's accounts are, to compare two
// servers by: mysql.user's rows (account, plugin, password hash, lock),
// the role edges, and SHOW GRANTS of each account.
func accountsOf(t *testing.T, db querier) [][]string {
	t.Helper()
	out := queryRows(t, db, "SELECT user, host, plugin, authentication_string, account_locked FROM mysql.user ORDER BY user, host")
	out = append(out, queryRows(t, db, "SELECT from_user, from_host, to_user, to_host, with_admin_option FROM mysql.role_edges ORDER BY 1, 2, 3, 4")...)
	for _, a := range queryRows(t, db, "SELECT user, host FROM mysql.user ORDER BY user, host") {
		out = append(out, queryRows(t, db, fmt.Sprintf("SHOW GRANTS FOR '%s'@'%s'", a[0], a[1]))...)
	}
	return out
}

// TestDumpAllDatabasesReload: mariadb-dump --all-databases of a server
// with accounts, roles and grants at every level, reloaded with the
// mariadb client into a fresh server, gives the same data, accounts and
// grants; they survive a restart, and loading the dump again (over what
// it loaded) changes nothing. Before, the dump had no rows of mysql's
// tables (information_schema.COLUMNS listed none: "it has no fields")
// and its reload failed at CREATE TABLE IF NOT EXISTS general_log and
// DROP TABLE db (1105), then at SHOW CREATE TABLE's timestamp defaults
// (1064). The variant without LOCK TABLES and with FLUSH PRIVILEGES
// applies the accounts at FLUSH PRIVILEGES instead of UNLOCK TABLES.
func TestDumpAllDatabasesReload(t *testing.T) {
	dump := tool(t, "mariadb-dump", "mysqldump")
	client := mariadbClient(t)
	src := startServer(t, "")
	sdb := src.Open("")
	mustExec(t, sdb,
		"CREATE DATABASE shop",
		"CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO shop.t VALUES (1, 'a'), (2, 'b')",
		"CREATE TABLE shop.u (id INT PRIMARY KEY)",
		"CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'",
		"CREATE USER 'sha'@'localhost' IDENTIFIED WITH caching_sha2_password BY 'sha-pw'",
		"CREATE USER 'old'@'%' IDENTIFIED BY 'old-pw' ACCOUNT LOCK",
		"GRANT INSERT, DELETE ON shop.* TO 'app'@'%' WITH GRANT OPTION",
		"GRANT PROCESS ON *.* TO 'sha'@'localhost'",
		"CREATE ROLE reader",
		"GRANT SELECT ON shop.t TO reader",
		"GRANT UPDATE ON shop.u TO 'app'@'%'",
		"GRANT reader TO 'app'@'%', 'sha'@'localhost'")
	want := accountsOf(t, sdb)
	host, port := src.HostPort()
	for _, v := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"skip-add-locks-flush-privileges", []string{"--skip-add-locks", "--flush-privileges"}},
	} {
		t.Run(v.name, func(t *testing.T) {
			out := runTool(t, dump, host, port, "", append([]string{"--all-databases"}, v.args...)...)
			if !strings.Contains(out, "INSERT INTO `user`") || !strings.Contains(out, "INSERT INTO `tables_priv`") {
				t.Fatalf("the dump has no rows of mysql.user or mysql.tables_priv:\n%s", out)
			}
			dir := t.TempDir()
			dst := startServer(t, dir)
			dh, dp := dst.HostPort()
			runTool(t, client, dh, dp, out)
			compare := func(when string) {
				t.Helper()
				ddb := dst.Open("")
				defer ddb.Close()
				if got := accountsOf(t, ddb); !reflect.DeepEqual(got, want) {
					t.Errorf("accounts %s:\n%v\nwant\n%v", when, got, want)
				}
				if got := queryRows(t, ddb, "SELECT id, v FROM shop.t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1", "a"}, {"2", "b"}}) {
					t.Errorf("shop.t %s: %v", when, got)
				}
				app := dst.OpenAs("app", "app-pw", "")
				defer app.Close()
				if got := queryRows(t, app, "SELECT v FROM shop.t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"a"}, {"b"}}) {
					t.Errorf("app reads shop.t through its role %s: %v", when, got)
				}
			}
			compare("after the reload")
			runTool(t, client, dh, dp, out)
			compare("after a second reload")
			dst.Stop()
			dst = startServer(t, dir)
			compare("after a restart")
		})
	}
}

// TestReloadGrantTableStatements: the statements of a reload of mysql's
// tables, one by one, with MySQL's answers. DROP and CREATE of a table
// of mysql keep it (a note where MySQL gives one: 1050 for CREATE ...
// IF NOT EXISTS of a table that exists, 1051 for DROP ... IF EXISTS of
// one dropped); the rows inserted into a grant table after its DROP
// replace the accounts' rows at UNLOCK TABLES, together, so that a db
// row inserted before its account's user row is kept until then; an
// account without DROP on mysql gets 1142.
func TestReloadGrantTableStatements(t *testing.T) {
	s := startServer(t, "")
	db := s.Open("")
	mustExec(t, db, "CREATE DATABASE shop", "CREATE TABLE shop.t (id INT PRIMARY KEY)",
		"CREATE USER 'gone'@'%' IDENTIFIED BY 'x'", "GRANT SELECT ON shop.* TO 'gone'@'%'",
		"CREATE USER 'weak'@'%' IDENTIFIED BY 'weak-pw'", "GRANT SELECT ON mysql.* TO 'weak'@'%'")
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	warnings := func(stmt string) [][]string {
		t.Helper()
		mustExec(t, c, stmt)
		return queryRows(t, c, "SHOW WARNINGS")
	}
	if got := warnings("CREATE TABLE IF NOT EXISTS mysql.general_log (event_time TIMESTAMP(6) NOT NULL)"); !reflect.DeepEqual(got, [][]string{{"Note", "1050", "Table 'general_log' already exists"}}) {
		t.Errorf("CREATE TABLE IF NOT EXISTS general_log: warnings %v", got)
	}
	if _, err := c.ExecContext(ctx, "CREATE TABLE mysql.db (Host CHAR(255))"); err == nil {
		t.Errorf("CREATE TABLE mysql.db without a DROP: no error")
	} else if code, _ := mysqlErrorCode(err); code != 1050 {
		t.Errorf("CREATE TABLE mysql.db without a DROP: %v, want 1050", err)
	}
	mustExec(t, c, "USE mysql", "DROP TABLE IF EXISTS `db`")
	if got := warnings("DROP TABLE IF EXISTS `db`"); !reflect.DeepEqual(got, [][]string{{"Note", "1051", "Unknown table 'mysql.db'"}}) {
		t.Errorf("a second DROP TABLE IF EXISTS db: warnings %v", got)
	}
	// The dump's order: db before user. The account 'new' exists only in
	// the user rows that come later; 'gone' is in neither.
	mustExec(t, c,
		"CREATE TABLE `db` (`Host` char(255), `Db` char(64), `User` char(32), `Select_priv` enum('N','Y'), `Insert_priv` enum('N','Y'))",
		"LOCK TABLES `db` WRITE",
		"/*!40000 ALTER TABLE `db` DISABLE KEYS */",
		"INSERT INTO `db` VALUES ('%','shop','new','Y','Y')",
		"UNLOCK TABLES")
	if got := queryRows(t, c, "SELECT user FROM mysql.db WHERE db = 'shop' ORDER BY user"); len(got) != 0 {
		t.Errorf("mysql.db after db was reloaded without gone's row, before user: %v", got)
	}
	cols := queryRows(t, c, "SELECT GROUP_CONCAT(CONCAT('`', column_name, '`') ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = 'mysql' AND table_name = 'user'")[0][0]
	// A write in place of another grant table while user is being
	// replaced changes that table alone.
	mustExec(t, c, "DROP TABLE IF EXISTS `user`", "DELETE FROM mysql.tables_priv WHERE user = 'nobody'",
		"CREATE TABLE `user` (`Host` char(255), `User` char(32))", "LOCK TABLES `user` WRITE",
		"INSERT INTO `user` ("+cols+") SELECT "+cols+" FROM mysql.user WHERE user <> 'gone'",
		"INSERT INTO `user` VALUES ('%', 'new')")
	if got := queryRows(t, c, "SELECT user FROM mysql.user WHERE user IN ('new', 'gone') ORDER BY user"); !reflect.DeepEqual(got, [][]string{{"gone"}}) {
		t.Errorf("accounts before UNLOCK TABLES: %v, want the old ones", got)
	}
	mustExec(t, c, "UNLOCK TABLES")
	if got := queryRows(t, c, "SELECT user FROM mysql.user WHERE user IN ('new', 'gone') ORDER BY user"); !reflect.DeepEqual(got, [][]string{{"new"}}) {
		t.Errorf("accounts after UNLOCK TABLES: %v", got)
	}
	if got := queryRows(t, c, "SELECT user, select_priv, insert_priv FROM mysql.db WHERE db = 'shop'"); !reflect.DeepEqual(got, [][]string{{"new", "Y", "Y"}}) {
		t.Errorf("mysql.db of shop after user was reloaded: %v", got)
	}
	weak := s.OpenAs("weak", "weak-pw", "")
	if _, err := weak.Exec("DROP TABLE IF EXISTS mysql.db"); err == nil {
		t.Errorf("DROP TABLE mysql.db by an account without DROP: no error")
	} else if code, _ := mysqlErrorCode(err); code != 1142 {
		t.Errorf("DROP TABLE mysql.db by an account without DROP: %v, want 1142", err)
	}
}

// TestGrantTableWritesPersist: an INSERT, UPDATE or DELETE on a grant
// table changes the accounts (at once: GMS's; MySQL's at FLUSH
// PRIVILEGES) and is stored when the statement ends. Before, GMS stored
// the accounts only at its next account statement, and a restart before
// one lost the change; and its UPDATE of mysql.user left a second row of
// the account, one of the two without the account's database grants.
func TestGrantTableWritesPersist(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, dir)
	db := s.Open("")
	mustExec(t, db, "CREATE DATABASE shop", "CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'",
		"INSERT INTO mysql.db (Host, Db, User, Select_priv) VALUES ('%', 'shop', 'app', 'Y')",
		"UPDATE mysql.user SET account_locked = 'Y' WHERE user = 'app'")
	want := [][]string{{"%", "shop", "app", "Y"}}
	if got := queryRows(t, db, "SELECT host, db, user, select_priv FROM mysql.db WHERE user = 'app'"); !reflect.DeepEqual(got, want) {
		t.Fatalf("mysql.db after the INSERT: %v", got)
	}
	db.Close()
	s.Stop()
	s = startServer(t, dir)
	db = s.Open("")
	if got := queryRows(t, db, "SELECT host, db, user, select_priv FROM mysql.db WHERE user = 'app'"); !reflect.DeepEqual(got, want) {
		t.Errorf("mysql.db after a restart: %v, want %v", got, want)
	}
	if got := queryRows(t, db, "SELECT account_locked FROM mysql.user WHERE user = 'app'"); !reflect.DeepEqual(got, [][]string{{"Y"}}) {
		t.Errorf("account_locked of app after a restart: %v (GMS's UPDATE left the old row beside the new)", got)
	}
	if got := queryRows(t, db, "SHOW GRANTS FOR 'app'@'%'"); !reflect.DeepEqual(got, [][]string{{"GRANT USAGE ON *.* TO `app`@`%`"}, {"GRANT SELECT ON `shop`.* TO `app`@`%`"}}) {
		t.Errorf("grants of app after the UPDATE of its user row and a restart: %v", got)
	}
	mustExec(t, db, "DELETE FROM mysql.db WHERE user = 'app'")
	db.Close()
	s.Stop()
	s = startServer(t, dir)
	if got := queryRows(t, s.Open(""), "SELECT db FROM mysql.db WHERE user = 'app'"); len(got) != 0 {
		t.Errorf("mysql.db after the DELETE and a restart: %v", got)
	}
}
