package sql_test

import "testing"

// TestFastPathGroupByRuns checks that the fast path runs the GROUP BYs
// of one integer column over a key's ranges (scanshape.go, scanplan.go:
// ScanPlan.Grouped), over a secondary index or the primary key, with
// pinned prefixes, NULLs in the group column, ORDER BY the column either
// way or none, OFFSET and LIMIT, empty ranges and IN lists; and that it
// leaves to GMS the GROUP BYs whose answer or order it does not know
// (HAVING, a string column, another index's column, an order GMS's read
// would not give, conditions the SQL node evaluates). As text and
// prepared, each answer compared with GMS's, byte for byte.
func TestFastPathGroupByRuns(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "prepared"}[prepared], func(t *testing.T) {
			d := newDiff(t, "USE d",
				`CREATE TABLE g (w SMALLINT NOT NULL, id INT NOT NULL, k INT, q TINYINT UNSIGNED, v BIGINT,
					s VARCHAR(8) COLLATE utf8mb4_0900_ai_ci, m DECIMAL(6,2),
					PRIMARY KEY (w, id), KEY k_idx (k), KEY sq_idx (s, q))`,
				`CREATE TABLE u (id BIGINT UNSIGNED PRIMARY KEY, a TINYINT, b INT UNSIGNED, KEY ab (a, b))`,
				`INSERT INTO g VALUES (1, 1, 5, 1, 10, 'a', 1.50), (1, 2, 5, 2, NULL, 'A', 2.25), (1, 3, 7, 1, -4, 'b', NULL),
					(1, 4, NULL, 3, 8, NULL, 0.00), (1, 5, NULL, NULL, 2, 'a', 3.00), (2, 1, 7, 2, 1, 'B', 1.00),
					(2, 2, 9, 2, 6, 'b', -1.50), (2, 3, -2, NULL, NULL, 'ab', 2.00), (2, 4, 5, 9, 3, 'a', 1.00),
					(3, 1, 100, 4, 4, 'c', 5.00)`,
				`INSERT INTO u VALUES (1, -1, 3), (2, -1, NULL), (3, 0, 3), (18446744073709551615, NULL, 7),
					(9223372036854775808, 4, 4294967295), (5, 4, 0), (6, 4, 4294967295)`,
				"ANALYZE TABLE g, u")
			run := d.runner(prepared)
			for _, c := range []struct {
				q    string
				args []any
			}{
				// scanbench's GROUP BY k on a k range, over the index.
				{"SELECT k, count(*) FROM g WHERE k BETWEEN ? AND ? GROUP BY k ORDER BY k", []any{0, 10}},
				{"SELECT k, count(*) FROM g WHERE k BETWEEN ? AND ? GROUP BY k", []any{0, 10}},
				{"SELECT COUNT(*), k, SUM(v), AVG(q), MIN(id), MAX(w), COUNT(v) FROM g WHERE k > ? GROUP BY k ORDER BY k DESC", []any{-5}},
				{"SELECT k, SUM(v) FROM g WHERE k < ? OR k > ? GROUP BY k ORDER BY k DESC LIMIT ?, ?", []any{6, 8, 1, 2}},
				{"SELECT k, COUNT(*) FROM g WHERE k IN (?, ?, ?) GROUP BY k", []any{9, 5, 7}},
				{"SELECT k FROM g WHERE k >= ? GROUP BY k LIMIT ?", []any{5, 2}},
				{"SELECT COUNT(*) FROM g WHERE k BETWEEN ? AND ? GROUP BY k", []any{8, 2}},
				{"SELECT k, COUNT(*) FROM g WHERE k = ? GROUP BY k", []any{5}},
				{"SELECT k, COUNT(*) FROM g WHERE k = ? GROUP BY k", []any{nil}},
				// The primary key: its second column after the first
				// pinned, or its first, ranged.
				{"SELECT id, COUNT(*), SUM(k) FROM g WHERE w = ? AND id > ? GROUP BY id", []any{1, 1}},
				{"SELECT w, COUNT(*), MAX(id), MIN(k) FROM g WHERE w BETWEEN ? AND ? GROUP BY w", []any{1, 3}},
				{"SELECT w, COUNT(*) FROM g WHERE w IN (?, ?) GROUP BY w ORDER BY w DESC", []any{1, 3}},
				{"SELECT w, COUNT(*) FROM g WHERE w = ? GROUP BY w", []any{2}},
				// Any integer column under ORDER BY it, NULLs one group
				// (first, or last DESC), and conditions beside the key's.
				{"SELECT q, COUNT(*), SUM(v) FROM g WHERE w = ? GROUP BY q ORDER BY q", []any{1}},
				{"SELECT v, COUNT(*) FROM g WHERE w >= ? AND q < ? GROUP BY v ORDER BY v DESC", []any{1, 3}},
				// Unsigned and signed columns at their edges.
				{"SELECT b, COUNT(*), MIN(id) FROM u WHERE a = ? GROUP BY b", []any{4}},
				{"SELECT a, COUNT(*), SUM(b), MAX(id) FROM u WHERE a > ? GROUP BY a ORDER BY a DESC", []any{-5}},
				{"SELECT id, COUNT(*) FROM u WHERE id > ? GROUP BY id", []any{2}},
				// Nothing in the range: no group.
				{"SELECT k, COUNT(*) FROM g WHERE k > ? GROUP BY k", []any{1000}},
			} {
				run(false, c.q, c.args...) // learns the column definitions
				run(true, c.q, c.args...)
				run(true, c.q, c.args...)
			}
			for _, c := range []struct {
				q    string
				args []any
			}{
				{"SELECT k, COUNT(*) FROM g WHERE k > ? GROUP BY k HAVING COUNT(*) > 1", []any{0}},
				{"SELECT s, COUNT(*) FROM g WHERE s = ? GROUP BY s", []any{"a"}},
				{"SELECT q, COUNT(*) FROM g WHERE s = ? GROUP BY q", []any{"a"}},
				// Without ORDER BY, GMS's groups come in its read's order.
				{"SELECT q, COUNT(*) FROM g WHERE w = ? GROUP BY q", []any{1}},
				{"SELECT id, COUNT(*) FROM g WHERE w IN (?, ?) GROUP BY id", []any{1, 2}},
				// An OR of ranges of the index beside a condition on
				// the primary key's second column: GMS reads the whole
				// table, its groups in primary-key order.
				{"SELECT k, COUNT(*) FROM g WHERE (k < ? OR k > ?) AND id BETWEEN ? AND ? GROUP BY k", []any{6, 8, 0, 100}},
				// A column leading another index.
				{"SELECT k, COUNT(*) FROM g WHERE w = ? GROUP BY k ORDER BY k", []any{1}},
				// DECIMAL sums, and conditions on strings: the SQL
				// node would group.
				{"SELECT k, SUM(m) FROM g WHERE k > ? GROUP BY k ORDER BY k", []any{0}},
				{"SELECT id, COUNT(*) FROM g WHERE w = ? AND s > ? GROUP BY id", []any{1, "a"}},
				// ONLY_FULL_GROUP_BY (1055).
				{"SELECT k, v FROM g WHERE k > ? GROUP BY k", []any{0}},
			} {
				for i := 0; i < 3; i++ {
					before := d.status("Percdb_fastpath_hits")
					run(false, c.q, c.args...)
					if d.status("Percdb_fastpath_hits") != before {
						t.Errorf("%s %v ran on the fast path", c.q, c.args)
					}
				}
			}
			// The transaction's own writes, which the store does not
			// see: evaluated in process.
			run(false, "SELECT k, COUNT(*), SUM(v) FROM g WHERE k BETWEEN ? AND ? GROUP BY k", 0, 10)
			run(true, "BEGIN")
			run(false, "INSERT INTO g VALUES (?, ?, ?, ?, ?, ?, ?)", 1, 9, 5, 1, 100, "z", 0)
			run(true, "SELECT k, COUNT(*), SUM(v) FROM g WHERE k BETWEEN ? AND ? GROUP BY k", 0, 10)
			run(true, "ROLLBACK")
			run(true, "SELECT k, COUNT(*), SUM(v) FROM g WHERE k BETWEEN ? AND ? GROUP BY k", 0, 10)
			d.finish("g", "u")
		})
	}
}
