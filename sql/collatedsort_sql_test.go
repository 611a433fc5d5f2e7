package sql_test

import (
	"strings"
	"testing"
)

// TestCollatedSortSQL checks the sort's answers through SQL: ORDER BY over
// a case-insensitive string column and an integer, ASC and DESC, with
// NULLs, DISTINCT and LIMIT, against the order MySQL gives.
func TestCollatedSortSQL(t *testing.T) {
	srv := startServer(t, true)
	mustExec(t, openDB(t, srv, ""), "CREATE DATABASE ks")
	db := openDB(t, srv, "ks")
	mustExec(t, db, "CREATE TABLE ks (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, b VARCHAR(20) COLLATE utf8mb4_bin, n INT)",
		"INSERT INTO ks VALUES (1, 'b', 'b', 1), (2, 'A', 'A', 2), (3, 'á', 'á', 1), (4, NULL, NULL, 2), (5, 'a', 'a', 1), (6, 'B', 'B', NULL), (7, '', '', 3)")
	for _, c := range []struct{ query, want string }{
		{"SELECT id FROM ks ORDER BY s, id", "4 7 2 3 5 1 6"},
		{"SELECT id FROM ks ORDER BY s", "4 7 2 3 5 1 6"},
		{"SELECT id FROM ks ORDER BY s DESC", "1 6 2 3 5 7 4"},
		{"SELECT id FROM ks ORDER BY b", "4 7 2 6 5 1 3"},
		{"SELECT id FROM ks ORDER BY b DESC", "3 1 5 6 2 7 4"},
		{"SELECT id FROM ks ORDER BY n DESC, s, id DESC", "7 4 2 5 3 1 6"},
		{"SELECT DISTINCT s FROM ks WHERE id > 0 ORDER BY s", "NULL  A b"},
		{"SELECT id FROM ks WHERE id BETWEEN 2 AND 6 ORDER BY s DESC, id LIMIT 3", "6 2 3"},
	} {
		got := strings.Join(queryRows(t, db, c.query), " ")
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.query, got, c.want)
		}
	}
}
