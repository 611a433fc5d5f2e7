package sql

import (
	"testing"
	"time"
)

// TestClassifyStmt checks the type label of statements: by first word,
// case-insensitively, after blanks, parentheses and comments.
func TestClassifyStmt(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT 1":                             "select",
		"  /* c */ (select 1) union select 2":  "select",
		"WITH x AS (SELECT 1) SELECT * FROM x": "select",
		"insert into t values (1)":             "insert",
		"Update t set a = 1":                   "update",
		"DELETE FROM t":                        "delete",
		"REPLACE INTO t VALUES (1)":            "replace",
		"BEGIN":                                "begin",
		"start transaction":                    "begin",
		"COMMIT":                               "commit",
		"rollback":                             "rollback",
		"SET autocommit = 0":                   "set",
		"SHOW STATUS":                          "show",
		"use db":                               "use",
		"CREATE TABLE t (a INT)":               "ddl",
		"alter table t add column b int":       "ddl",
		"DROP TABLE t":                         "ddl",
		"TRUNCATE t":                           "ddl",
		"RENAME TABLE a TO b":                  "ddl",
		"selectx 1":                            "other",
		"EXPLAIN SELECT 1":                     "other",
		"":                                     "other",
		"/* unterminated":                      "other",
		"\n\t((SELECT 1))":                     "select",
		"SELECT\n1":                            "select",
		"commit;":                              "commit",
		"Truncate Table t":                     "ddl",
		"rollbackx":                            "other",
		"set@a=1":                              "set",
		"s":                                    "other",
		"_select":                              "other",
		"transaction":                          "other",
		"(":                                    "other",
	} {
		if got := stmtTypeNames[classifyStmt(q)]; got != want {
			t.Errorf("classifyStmt(%q) = %s, want %s", q, got, want)
		}
	}
}

// TestSlowEntryLayout checks one entry's bytes: the layout slowlog.go
// documents, the statement's own trailing semicolon not doubled, and a
// database name that is not a plain word quoted on the use line.
func TestSlowEntryLayout(t *testing.T) {
	e := &slowEntry{
		written: time.Date(2026, 11, 25, 16, 4, 5, 0, time.UTC), start: time.Unix(1795622645, 0),
		queryTime: 391 * time.Microsecond, user: "app", host: "localhost", ip: "127.0.0.1", connID: 8,
		rowsSent: 1, rowsExamined: 3, startTS: 12, commitTS: 13, errno: 1213, db: "my-db", query: "SELECT 1;\n",
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
