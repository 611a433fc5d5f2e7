package e2e

import (
	"reflect"
	"testing"
)

// mariadb-dump --all-databases --ignore-database=mysql, the documented
// way to dump every database of percdb (the dump of the mysql database
// itself fails: docs/compatibility.md, Tools), restores every database
// into another server. A guard of the workaround, not a fix.
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
