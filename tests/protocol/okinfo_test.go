package protocol

import (
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestUpdateInfoWarnings reads the OK packet of an UPDATE that raised
// warnings: its warning count and the info text's "Warnings: n" agree
// (GMS's info always said "Warnings: 0"), with the fast path and
// without. A prepared statement's OK packet is vitess's own, with no
// info and a warning count of 0 (left alone: docs/compatibility.md).
func TestUpdateInfoWarnings(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range []string{
			"SET SESSION sql_mode = ''",
			"DROP TABLE IF EXISTS okinfo",
			"CREATE TABLE okinfo (id INT PRIMARY KEY, a TINYINT)",
			"INSERT INTO okinfo VALUES (1, 1), (2, 2)",
		} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		res, err := c.QueryAll("UPDATE okinfo SET a = a + 1000")
		if err != nil || len(res) != 1 {
			t.Fatalf("UPDATE: %v, %d results", err, len(res))
		}
		const want = "Rows matched: 2  Changed: 2  Warnings: 2"
		if res[0].Warnings != 2 || !strings.HasSuffix(res[0].Info, want) {
			t.Errorf("UPDATE: warnings %d, info %q; want 2 and %q", res[0].Warnings, res[0].Info, want)
		}

	})
}
