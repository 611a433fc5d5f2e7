package slowlog

import (
	"testing"
	"time"
)

// TestSlowEntryLayout checks one entry's bytes: the layout slowlog.go
// documents, the statement's own trailing semicolon not doubled, and a
// database name that is not a plain word quoted on the use line.
func TestSlowEntryLayout(t *testing.T) {
	e := &Entry{
		Written: time.Date(2026, 11, 25, 16, 4, 5, 0, time.UTC), Start: time.Unix(1795622645, 0),
		QueryTime: 391 * time.Microsecond, User: "app", Host: "localhost", IP: "127.0.0.1", ConnID: 8,
		RowsSent: 1, RowsExamined: 3, StartTS: 12, CommitTS: 13, Errno: 1213, DB: "my-db", Query: "SELECT 1;\n",
	}
	want := "# Time: 261125 16:04:05\n" +
		"# User@Host: app[app] @ localhost [127.0.0.1]  Id:      8\n" +
		"# Query_time: 0.000391  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 3\n" +
		"# Rows_affected: 0  Percdb_start_ts: 12  Percdb_commit_ts: 13  Percdb_errno: 1213\n" +
		"use `my-db`;\n" +
		"SET timestamp=1795622645;\n" +
		"SELECT 1;\n"
	if got := string(appendSlowEntry(nil, e)); got != want {
		t.Errorf("entry:\n%s\nwant:\n%s", got, want)
	}
}
