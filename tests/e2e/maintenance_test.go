package e2e

import (
	"reflect"
	"strings"
	"testing"
)

// OPTIMIZE TABLE compacts and analyzes, REPAIR TABLE answers InnoDB's
// note, each with MySQL's result set (Table, Op, Msg_type, Msg_text);
// vitess's grammar refused both (1064). mariadb-check --optimize and --repair go through.
func TestOptimizeRepairTable(t *testing.T) {
	s := startServer(t, "")
	db := s.Open("")
	mustExec(t, db, "CREATE DATABASE mt",
		"CREATE TABLE mt.a (id INT PRIMARY KEY, v INT, KEY kv (v))", "INSERT INTO mt.a VALUES (1, 1), (2, 2)",
		"CREATE TABLE mt.b (x VARCHAR(10))")
	for _, c := range []struct {
		q    string
		want [][]string
	}{
		{"OPTIMIZE TABLE mt.a", [][]string{{"mt.a", "optimize", "status", "OK"}}},
		{"optimize no_write_to_binlog table mt.a, mt.b", [][]string{{"mt.a", "optimize", "status", "OK"}, {"mt.b", "optimize", "status", "OK"}}},
		{"REPAIR TABLE mt.a, mt.b QUICK EXTENDED", [][]string{
			{"mt.a", "repair", "note", "The storage engine for the table doesn't support repair"},
			{"mt.b", "repair", "note", "The storage engine for the table doesn't support repair"},
		}},
		{"ANALYZE TABLE mt.a", [][]string{{"mt.a", "analyze", "status", "OK"}}},
	} {
		if got := queryRows(t, db, c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %v, want %v", c.q, got, c.want)
		}
	}
	// A missing table: MySQL's Error and status rows, as ANALYZE TABLE's
	// (sql/analyzemissing.go).
	if got, want := queryRows(t, db, "OPTIMIZE LOCAL TABLE mt.nope"), [][]string{
		{"mt.nope", "optimize", "Error", "Table 'mt.nope' doesn't exist"},
		{"mt.nope", "optimize", "status", "Operation failed"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("OPTIMIZE LOCAL TABLE mt.nope = %v, want %v", got, want)
	}
	if got := queryRows(t, db, "SELECT v FROM mt.a ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1"}, {"2"}}) {
		t.Fatalf("rows after OPTIMIZE = %v", got)
	}
	check := tool(t, "mariadb-check", "mysqlcheck")
	host, port := s.HostPort()
	for _, op := range []string{"--optimize", "--repair"} {
		out := runTool(t, check, host, port, "", op, "mt")
		if !strings.Contains(out, "mt.a") || !strings.Contains(out, "mt.b") {
			t.Errorf("mariadb-check %s mt:\n%s", op, out)
		}
	}
}
