package sql

import (
	"strings"
	"testing"
)

func TestShowProcessListStatement(t *testing.T) {
	for q, want := range map[string][2]bool{
		"SHOW PROCESSLIST":           {false, true},
		"show full processlist;":     {true, true},
		"  SHOW  FULL\tPROCESSLIST ": {true, true},
		"SHOW PROCESSLIST LIKE 'x'":  {false, false},
		"SHOW FULL TABLES":           {false, false},
		"SELECT 1":                   {false, false},
	} {
		full, ok := isShowProcessList(q)
		if full != want[0] || ok != want[1] {
			t.Errorf("isShowProcessList(%q) = %v, %v, want %v", q, full, ok, want)
		}
	}
	long := "SELECT '" + strings.Repeat("é", 150) + "'"
	ps := []processInfo{{ID: 7, User: "u", Host: "h", Command: "Query", State: stateExecuting, Info: long}, {ID: 8, Command: commandSleep}}
	short := showProcessList(ps, false)
	if got := short.Rows[0][7].ToString(); got != long[:len("SELECT '")+2*92] {
		t.Errorf("Info without FULL = %q (%d characters), want the first 100", got, len([]rune(got)))
	}
	if got := showProcessList(ps, true).Rows[0][7].ToString(); got != long {
		t.Errorf("Info with FULL cut: %q", got)
	}
	if !short.Rows[1][7].IsNull() || !short.Rows[1][3].IsNull() {
		t.Errorf("an idle connection's Info and db = %v, %v, want NULL", short.Rows[1][7], short.Rows[1][3])
	}
}
