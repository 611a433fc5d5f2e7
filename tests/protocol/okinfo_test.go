package protocol

import (
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// lenencInfo is info as MySQL writes it in an OK packet, a
// length-encoded string (the reader's Info is the rest of the packet).
func lenencInfo(info string) string {
	return string(rune(len(info))) + info
}

// TestUpdateInfoWarnings reads the OK packet of an UPDATE that raised
// warnings: its warning count and the info text's "Warnings: n" agree
// (GMS's info always said "Warnings: 0"), with the fast path and
// without, and of the same UPDATE prepared (vitess wrote a
// COM_STMT_EXECUTE's OK packet with no info and a warning count of 0);
// the info is a length-encoded string, as MySQL writes it (vitess wrote
// a '#' before it, which the mariadb client took for its length).
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
		if res[0].Warnings != 2 || res[0].Info != lenencInfo(want) {
			t.Errorf("UPDATE: warnings %d, info %q; want 2 and %q", res[0].Warnings, res[0].Info, want)
		}

		id, _, err := c.Prepare("UPDATE okinfo SET a = a + ? WHERE id >= ?")
		if err != nil {
			t.Fatalf("prepare: %v", err)
		}
		for _, tc := range []struct {
			delta, from int64
			want        string
			warnings    uint16
		}{
			{1000, 1, "Rows matched: 2  Changed: 0  Warnings: 2", 2}, // both already 127: clipped again
			{-1, 2, "Rows matched: 1  Changed: 1  Warnings: 0", 0},
		} {
			res, err := c.Execute(id, tc.delta, tc.from)
			if err != nil || len(res) != 1 {
				t.Fatalf("execute (%d, %d): %v, %d results", tc.delta, tc.from, err, len(res))
			}
			if res[0].Warnings != tc.warnings || res[0].Info != lenencInfo(tc.want) {
				t.Errorf("prepared UPDATE (%d, %d): warnings %d, info %q; want %d and %q", tc.delta, tc.from, res[0].Warnings, res[0].Info, tc.warnings, tc.want)
			}
		}

	})
}
