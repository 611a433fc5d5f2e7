package protocol

import (
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestWindowOffsetParameter checks LEAD and LAG with the offset a
// parameter of a server-side prepared statement, as MySQL 8 takes it
// (GMS took a literal only: "offset must be a non-negative integer;
// found: BindVar(v1)"), and in the text protocol.
func TestWindowOffsetParameter(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		for i, opts := range []string{"interpolateParams=true", ""} {
			db := openOne(t, s, opts)
			if i == 0 {
				mustExec(t, db, "CREATE TABLE wo (id INT PRIMARY KEY, p INT, v INT)",
					"INSERT INTO wo VALUES (1, 1, 10), (2, 2, 20), (3, 1, 30), (4, 2, 40)")
			}
			checkQueries(t, db, opts, []queryCase{
				{"SELECT id, LEAD(v, ?) OVER (ORDER BY id) FROM wo ORDER BY id", []any{2}, "1|30\n2|40\n3|NULL\n4|NULL"},
				{"SELECT id, LAG(v, ?, ?) OVER (PARTITION BY p ORDER BY id) FROM wo ORDER BY id", []any{1, -5}, "1|-5\n2|-5\n3|10\n4|20"},
			})
		}
	})
}
