package protocol

import (
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestMultiStatementOKPackets reads the answer to a multi-statement query
// (CLIENT_MULTI_STATEMENTS) of INSERTs, UPDATEs, a SELECT and a DELETE:
// each statement's OK packet carries its own affected rows, last insert
// id, warning count and info as a length-encoded string, as MySQL's
// net_send_ok writes them, and SERVER_MORE_RESULTS_EXISTS on all but the
// last answer. percdb rewrote only the first packet of an answer, so the
// later OK packets kept vitess's info (after a '#' byte, which the MySQL
// and MariaDB clients take for its length).
func TestMultiStatementOKPackets(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range []string{
			"SET SESSION sql_mode = ''",
			"DROP TABLE IF EXISTS multiok",
			"CREATE TABLE multiok (id INT AUTO_INCREMENT PRIMARY KEY, a TINYINT)",
		} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		type want struct {
			affected, insertID uint64
			warnings           uint16
			info               string
			more               bool
			rows               int // -1: an OK packet
		}
		for _, tc := range []struct {
			query string
			want  []want
		}{
			{
				"INSERT INTO multiok (a) VALUES (1), (2); UPDATE multiok SET a = 5 WHERE id = 1; " +
					"UPDATE multiok SET a = a WHERE id = 2; UPDATE multiok SET a = a + 1000; " +
					"SELECT id, a FROM multiok ORDER BY id; INSERT INTO multiok (a) VALUES (3); DELETE FROM multiok WHERE id > 2",
				[]want{
					{2, 1, 0, "Records: 2  Duplicates: 0  Warnings: 0", true, -1},
					{1, 0, 0, "Rows matched: 1  Changed: 1  Warnings: 0", true, -1},
					{0, 0, 0, "Rows matched: 1  Changed: 0  Warnings: 0", true, -1},
					{2, 0, 2, "Rows matched: 2  Changed: 2  Warnings: 2", true, -1},
					{0, 0, 0, "", true, 2},
					{1, 3, 0, "", true, -1},
					{1, 0, 0, "", false, -1},
				},
			},
			{
				// The first statement with no info, the later ones
				// with: each packet gets its own.
				"DELETE FROM multiok WHERE id = 1; INSERT INTO multiok (a) VALUES (7), (300); UPDATE multiok SET a = 9 WHERE id = 2",
				[]want{
					{1, 0, 0, "", true, -1},
					{2, 4, 1, "Records: 2  Duplicates: 0  Warnings: 1", true, -1},
					{1, 0, 0, "Rows matched: 1  Changed: 1  Warnings: 0", false, -1},
				},
			},
		} {
			res, err := c.QueryAll(tc.query)
			if err != nil {
				t.Fatalf("%s: %v", tc.query, err)
			}
			if len(res) != len(tc.want) {
				t.Fatalf("%s: %d results, want %d", tc.query, len(res), len(tc.want))
			}
			for i, w := range tc.want {
				r := res[i]
				info := w.info
				if info != "" {
					info = lenencInfo(info)
				}
				rows := -1
				if len(r.Columns) > 0 {
					rows = len(r.Rows)
				}
				if r.AffectedRows != w.affected || r.LastInsertID != w.insertID || r.Warnings != w.warnings ||
					r.Info != info || (r.Status&more != 0) != w.more || rows != w.rows {
					t.Errorf("%s: result %d: affected %d, insert id %d, warnings %d, info %q, status %s, rows %d; want %d, %d, %d, %q, more %v, rows %d",
						tc.query, i, r.AffectedRows, r.LastInsertID, r.Warnings, r.Info, flags(r.Status), rows,
						w.affected, w.insertID, w.warnings, info, w.more, w.rows)
				}
			}
		}
	})
}
