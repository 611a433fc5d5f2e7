package lexical

import (
	"testing"
)

// TestClassify checks the type label of statements: by first word,
// case-insensitively, after blanks, parentheses and comments.
func TestClassify(t *testing.T) {
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
		if got := Classify(q).String(); got != want {
			t.Errorf("Classify(%q) = %s, want %s", q, got, want)
		}
	}
}
