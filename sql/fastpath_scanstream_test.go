package sql_test

import "testing"

// TestFastPathRangeStreams checks range SELECTs whose results are longer
// than the fast path's row bound (4,096): those that need no sort,
// DISTINCT or aggregate are streamed in batches, with OFFSET and LIMIT
// across the batches' edges, conditions the SQL node evaluates, and the
// session's own writes; GMS answers the others. Every answer is compared
// with GMS's, byte for byte.
func TestFastPathRangeStreams(t *testing.T) {
	setup := []string{
		"USE d",
		"CREATE TABLE dg (i INT PRIMARY KEY)",
		"INSERT INTO dg VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)",
		"CREATE TABLE big (id INT PRIMARY KEY, v INT, s VARCHAR(8) COLLATE utf8mb4_0900_ai_ci)",
		"INSERT INTO big SELECT a.i*1000 + b.i*100 + c.i*10 + e.i, (a.i*1000 + b.i*100 + c.i*10 + e.i) % 7, " +
			"CASE e.i WHEN 0 THEN 'a' WHEN 1 THEN 'A' WHEN 2 THEN NULL ELSE 'b' END FROM dg a, dg b, dg c, dg e",
	}
	for _, prepared := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "prepared"}[prepared], func(t *testing.T) {
			d := newDiff(t, setup...)
			run := d.runner(prepared)
			for _, c := range []struct {
				q    string
				args []any
				fast bool
			}{
				{"SELECT * FROM big WHERE id >= ?", []any{0}, true},
				{"SELECT id, s FROM big WHERE id BETWEEN ? AND ? AND s = ?", []any{100, 9500, "a"}, true},
				{"SELECT v FROM big WHERE id > ? AND v <> ? LIMIT ?, ?", []any{-1, 3, 4090, 20}, true},
				{"SELECT id FROM big WHERE id < ? LIMIT ? OFFSET ?", []any{20000, 5000, 3000}, true},
				{"SELECT s FROM big WHERE id >= ? AND s IS NOT NULL LIMIT ?", []any{0, 8000}, true},
				{"SELECT id FROM big WHERE id >= ? LIMIT ?, ?", []any{0, 9999, 5}, true},
				{"SELECT id FROM big WHERE id >= ? LIMIT ?, ?", []any{0, 20000, 5}, true},
				// Sorted or made distinct: GMS's (size).
				{"SELECT id FROM big WHERE id >= ? ORDER BY v, id", []any{0}, false},
				{"SELECT DISTINCT v FROM big WHERE id >= ?", []any{0}, false},
			} {
				run(false, c.q, c.args...) // learns the column definitions
				run(c.fast, c.q, c.args...)
			}
			run(true, "BEGIN")
			run(true, "DELETE FROM big WHERE id = ?", 5000)
			run(true, "UPDATE big SET v = ? WHERE id = ?", 100, 6000)
			run(false, "SELECT * FROM big WHERE id >= ? AND v < ?", []any{0, 200}...)
			run(true, "SELECT * FROM big WHERE id >= ? AND v < ?", []any{0, 200}...)
			run(true, "ROLLBACK")
			d.finish("big")
		})
	}
}
