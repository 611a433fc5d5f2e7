package e2e

import (
	"strconv"
	"testing"
)

// FLUSH STATUS sets the session's status counters back to zero, as
// MySQL's does (GMS refused it with 1105); percdb's node counters stay.
func TestFlushStatus(t *testing.T) {
	s := startServer(t, "")
	c := conns(t, s.Open(""), 1)[0]
	count := func(name string) int {
		t.Helper()
		rows := queryRows(t, c, "SHOW SESSION STATUS LIKE '"+name+"'")
		if len(rows) != 1 {
			t.Fatalf("SHOW SESSION STATUS LIKE '%s' = %v", name, rows)
		}
		n, err := strconv.Atoi(rows[0][1])
		if err != nil {
			t.Fatalf("%s = %q", name, rows[0][1])
		}
		return n
	}
	for range 3 {
		queryRows(t, c, "SELECT 1")
	}
	if n := count("Com_select"); n < 3 {
		t.Fatalf("Com_select before FLUSH STATUS = %d, want at least 3", n)
	}
	mustExec(t, c, "FLUSH STATUS")
	if n := count("Com_select"); n != 0 {
		t.Fatalf("Com_select after FLUSH STATUS = %d, want 0", n)
	}
	queryRows(t, c, "SELECT 1")
	if n := count("Com_select"); n != 1 {
		t.Fatalf("Com_select after FLUSH STATUS and one SELECT = %d, want 1", n)
	}
	mustExec(t, c, "FLUSH LOCAL STATUS")
}
