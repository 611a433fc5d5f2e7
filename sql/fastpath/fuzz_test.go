package fastpath

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
)

// FuzzFastPathShape feeds arbitrary statement text through the fast path's
// classifier exactly as the handler does (candidate check, digest, TiDB
// parse, shape) and checks that it never panics and that every shape it
// accepts is well formed: a table to act on, a key condition for the
// statements that need one, assignments for an UPDATE, rows of one width
// for an INSERT. A shape is what the plan cache keeps per digest, so a
// malformed one would be replayed for every statement of that digest.
//
//	go test ./sql/fastpath -run '^$' -fuzz '^FuzzFastPathShape$' -fuzztime 5m
func FuzzFastPathShape(f *testing.F) {
	for _, q := range []string{
		"SELECT c FROM sbtest1 WHERE id=1",
		"SELECT c FROM sbtest1 WHERE id=?",
		"select a, b from db.t where id in (1, 2, 3)",
		"SELECT * FROM t WHERE u = 'x'",
		"SELECT c FROM t WHERE id = -9223372036854775808",
		"UPDATE sbtest1 SET k=k+1 WHERE id=?",
		"UPDATE t SET c = 'a', k = k - 2 WHERE id = 7",
		"DELETE FROM sbtest1 WHERE id=?",
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
		"INSERT INTO t (a, b) VALUES (1, 'x'), (2, NULL), (3, -4.5)",
		"INSERT INTO t VALUES (1)",
		"BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK",
		"START TRANSACTION READ ONLY",
		"SELECT c FROM t WHERE id = 1 FOR UPDATE",
		"SELECT c FROM t, u WHERE t.id = 1",
		"UPDATE t SET c = c WHERE id = 1 AND k = 2",
		"select 1", "", ";", "SELECT", "/* c */ SELECT c FROM t WHERE id=1",
		"SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
		"SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c",
		"SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
		"SELECT * FROM t WHERE id > 3 AND (a < 2 OR b IS NULL) LIMIT 2, 5",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, query string) {
		if !Candidate(query) {
			return
		}
		normalized, _ := parser.NormalizeDigest(query)
		stmt, err := parser.New().ParseOneStmt(query, "", "")
		if err != nil {
			return
		}
		s := ShapeOf(stmt, normalized)
		if s == nil {
			return
		}
		switch s.Kind {
		case Begin, Commit, Rollback:
			return
		case Scan:
			if s.Table == "" || s.Scan == nil || len(s.Scan.Where) == 0 {
				t.Fatalf("%q: range SELECT shape without a table or conditions", query)
			}
			return
		case Select, Update, Delete, Insert:
		default:
			t.Fatalf("%q: shape of unknown kind %d", query, s.Kind)
		}
		if s.Table == "" {
			t.Fatalf("%q: shape without a table", query)
		}
		switch s.Kind {
		case Select, Update, Delete:
			if s.Where == "" || len(s.Keys) == 0 || (!s.In && len(s.Keys) != 1) {
				t.Fatalf("%q: shape without a key condition: where %q, %d keys, in %v", query, s.Where, len(s.Keys), s.In)
			}
			if s.Kind == Update && len(s.Sets) == 0 {
				t.Fatalf("%q: UPDATE shape without assignments", query)
			}
		case Insert:
			if len(s.Rows) == 0 {
				t.Fatalf("%q: INSERT shape without rows", query)
			}
			for i, row := range s.Rows {
				if len(row) != len(s.Rows[0]) || (len(s.Cols) > 0 && len(row) != len(s.Cols)) {
					t.Fatalf("%q: INSERT row %d has %d values (columns %d, first row %d)", query, i, len(row), len(s.Cols), len(s.Rows[0]))
				}
			}
		}
	})
}
