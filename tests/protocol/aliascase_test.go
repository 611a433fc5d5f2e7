package protocol

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestAliasSpelling checks that column definitions name a column's table
// by its alias as written: GMS lowercased table aliases, so
// go-sql-driver's columnsWithAlias named the column of SELECT * FROM
// (SELECT 1 AS one) AS A 'a.one', where MySQL's is 'A.one'. The text
// protocol is read raw; the binary one through go-sql-driver.
func TestAliasSpelling(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE al (id INT PRIMARY KEY, v INT)", want: []uint16{ac}},
			{sql: "INSERT INTO al VALUES (1, 10)", want: []uint16{ac}},
		})
		for q, want := range map[string]string{
			"SELECT * FROM (SELECT 1 AS one) AS A":                                          "A",
			"SELECT Tb.v FROM al AS Tb WHERE Tb.id = 1":                                     "Tb",
			"SELECT Dt.id, B.v FROM (SELECT id FROM al) AS Dt JOIN al AS B ON B.id = Dt.id": "Dt B",
			"SELECT al.v FROM al WHERE id = 1":                                              "al",
		} {
			res, err := c.QueryAll(q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			var tables []string
			for _, col := range res[0].Columns {
				tables = append(tables, col.Table)
			}
			if got := strings.Join(tables, " "); got != want {
				t.Errorf("%s: tables %q, want %q", q, got, want)
			}
		}
		db, err := sql.Open("mysql", withOptions(s.DSN, "columnsWithAlias=true"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.Query("SELECT Tb.v FROM al AS Tb WHERE Tb.id = ?", 1)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if cols, err := rows.Columns(); err != nil || len(cols) != 1 || cols[0] != "Tb.v" {
			t.Errorf("prepared: columns %q (%v), want [Tb.v]", cols, err)
		}
	})
}
