package e2e

import (
	"reflect"
	"testing"
)

// mariadb-dump --all-databases --ignore-database=mysql, every database
// but the accounts (a dump of MySQL 8's mysql database has tables percdb
// does not: docs/compatibility.md, Tools), restores every database into
// another server.
func TestDumpAllDatabasesIgnoringMysql(t *testing.T) {
	dump := tool(t, "mariadb-dump", "mysqldump")
	client := mariadbClient(t)
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE d1", "CREATE TABLE d1.t (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO d1.t VALUES (1, 'a')",
		"CREATE DATABASE d2", "CREATE TABLE d2.u (id INT PRIMARY KEY)", "INSERT INTO d2.u VALUES (7)")
	host, port := s.HostPort()
	out := runTool(t, dump, host, port, "", "--all-databases", "--ignore-database=mysql")
	restored := startServer(t, "")
	h2, p2 := restored.HostPort()
	runTool(t, client, h2, p2, out)
	db := restored.Open("")
	if got := queryRows(t, db, "SELECT id, v FROM d1.t"); !reflect.DeepEqual(got, [][]string{{"1", "a"}}) {
		t.Errorf("d1.t restored = %v", got)
	}
	if got := queryRows(t, db, "SELECT id FROM d2.u"); !reflect.DeepEqual(got, [][]string{{"7"}}) {
		t.Errorf("d2.u restored = %v", got)
	}
}

// A database's stored functions go through mariadb-dump --routines (SHOW
// FUNCTION STATUS lists them, SHOW CREATE FUNCTION gives their text, the
// dump wraps it in versioned comments) and load into another server,
// where they are called. Before stored functions the dump left them out,
// and a MySQL dump with them did not load (syntax error).
func TestDumpRestoreFunctions(t *testing.T) {
	dump := tool(t, "mariadb-dump", "mysqldump")
	client := mariadbClient(t)
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE fd", "CREATE TABLE fd.t (id INT PRIMARY KEY, v INT)", "INSERT INTO fd.t VALUES (1, 10), (2, 20)",
		"CREATE FUNCTION fd.plus(a INT, b INT) RETURNS INT DETERMINISTIC RETURN a + b",
		"CREATE FUNCTION fd.label(s VARCHAR(10)) RETURNS VARCHAR(20) CHARSET utf8mb4 NO SQL BEGIN DECLARE p VARCHAR(5) DEFAULT 'x-'; RETURN CONCAT(p, s); END",
		"CREATE FUNCTION fd.total() RETURNS BIGINT READS SQL DATA BEGIN DECLARE n BIGINT; SELECT SUM(v) INTO n FROM t; RETURN n; END")
	if got := queryRows(t, s.Open("fd"), "SELECT ROUTINE_NAME, ROUTINE_TYPE, DATA_TYPE, IS_DETERMINISTIC, SQL_DATA_ACCESS FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'fd' ORDER BY ROUTINE_NAME"); !reflect.DeepEqual(got, [][]string{
		{"label", "FUNCTION", "varchar", "NO", "NO SQL"}, {"plus", "FUNCTION", "int", "YES", "CONTAINS SQL"}, {"total", "FUNCTION", "bigint", "NO", "READS SQL DATA"}}) {
		t.Errorf("information_schema.ROUTINES of fd: %v", got)
	}
	host, port := s.HostPort()
	out := runTool(t, dump, host, port, "", "--routines", "--databases", "fd")
	restored := startServer(t, "")
	h2, p2 := restored.HostPort()
	runTool(t, client, h2, p2, out)
	if got := queryRows(t, restored.Open("fd"), "SELECT plus(2, 3), label('y'), total()"); !reflect.DeepEqual(got, [][]string{{"5", "x-y", "30"}}) {
		t.Errorf("functions restored: %v\ndump:\n%s", got, out)
	}
}
