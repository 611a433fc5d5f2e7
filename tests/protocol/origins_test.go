package protocol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// origins describes the columns of res's first result set as
// name:table/org_table/org_name, with "db" when the column names a
// database and "B" when it is flagged BINARY.
func origins(res []wirefuzz.Result) string {
	if len(res) == 0 {
		return ""
	}
	var out []string
	for _, c := range res[0].Columns {
		s := fmt.Sprintf("%s:%s/%s/%s", c.Name, c.Table, c.OrgTable, c.OrgName)
		if c.Schema != "" {
			s += " db"
		}
		if c.Flags&0x80 != 0 {
			s += " B"
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// TestColumnOrigins reads the table, org_table, org_name and schema of
// result columns read from a table, aliased or not, from a table under
// an alias, a derived table and a view: MySQL's Field::make_send_field
// names the table by the query's alias, the table's own name and the
// column's own name whatever the column's alias, and an aliased number
// column is not BINARY (percdb sent an aliased column's table and
// org_table empty and its alias as org_name, and the alias of a table as
// its org_table). Text and prepared, each twice (the fast path's from
// its second run); MariaDB 10.11 answers the same
// (PERCDB_TEST_MARIADB=1).
func TestColumnOrigins(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range []string{
			"DROP VIEW IF EXISTS origv",
			"DROP TABLE IF EXISTS orig",
			"CREATE TABLE orig (id INT PRIMARY KEY, s VARCHAR(20), n INT)",
			"INSERT INTO orig VALUES (1, 'x', 2)",
			"CREATE VIEW origv AS SELECT id, s AS vs FROM orig",
		} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		for q, want := range map[string]string{
			"SELECT s AS c, e.n, n AS m, id FROM orig e WHERE id = ":               "c:e/orig/s db, n:e/orig/n db, m:e/orig/n db, id:e/orig/id db",
			"SELECT s AS c FROM orig WHERE id = ":                                  "c:orig/orig/s db",
			"SELECT x.s AS c FROM orig x JOIN orig y ON x.id = y.id WHERE x.id = ": "c:x/orig/s db",
		} {
			checkColumns(t, c, q, origins, want)
		}
		for q, want := range map[string]string{
			"SELECT z.s AS c, z.n FROM (SELECT s, n FROM orig) z": "c:z/z/s db, n:z/z/n db",
			"SELECT vs AS c, id FROM origv":                       "c:origv/origv/vs db, id:origv/origv/id db",
			"SELECT s AS c FROM orig ORDER BY c LIMIT 1":          "c:orig/orig/s db",
		} {
			res, err := c.QueryAll(q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if got := origins(res); got != want {
				t.Errorf("%s: %s, want %s", q, got, want)
			}
		}
	})
}
