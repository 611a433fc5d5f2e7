package protocol

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// TestFloatScale checks FLOAT(M,D) and DOUBLE(M,D) columns as MySQL 8 has
// them: values rounded to D decimals when written (by INSERT, UPDATE and
// prepared statements), one beyond M digits refused with 1264 under the
// default strict sql_mode, D decimals and length M in the column
// definitions (text and prepared), and the types in SHOW CREATE TABLE,
// SHOW COLUMNS and information_schema.COLUMNS, also after an ALTER TABLE
// that does not name the columns.
func TestFloatScale(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE fs (id INT PRIMARY KEY, f FLOAT(7,4), d DOUBLE(10,2), p FLOAT, q DOUBLE)", want: []uint16{ac}},
			{sql: "INSERT INTO fs VALUES (1, 3.14159, 1234.5678, 1.5, 2.5), (2, -999.99994, 0.125, NULL, NULL)", want: []uint16{ac}},
			{sql: "SELECT id, f, d FROM fs ORDER BY id", want: []uint16{ac}, rows: "[[1 3.1416 1234.57] [2 -999.9999 0.12]]"},
			{sql: "UPDATE fs SET f = 2.71828 WHERE id = 1", want: []uint16{ac}},
			{sql: "SELECT f FROM fs WHERE id = 1", want: []uint16{ac}, rows: "[[2.7183]]"},
			{sql: "INSERT INTO fs (id, f) VALUES (3, 1000)", err: 1264},
			{sql: "INSERT INTO fs (id, d) VALUES (3, 123456789)", err: 1264},
			{sql: "SELECT COUNT(*) FROM fs", want: []uint16{ac}, rows: "[[2]]"},
		})
		ins, _, err := c.Prepare("INSERT INTO fs (id, f, d) VALUES (?, ?, ?)")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Execute(ins, int64(4), "0.00007", "-0.0071"); err != nil {
			t.Fatalf("prepared insert: %v", err)
		}
		run(t, c, []step{{sql: "SELECT f, d FROM fs WHERE id = 4", want: []uint16{ac}, rows: "[[0.0001 -0.01]]"}})
		var se *wirefuzz.ServerError
		if _, err := c.Execute(ins, int64(5), "-1000.5", nil); !errors.As(err, &se) || se.Code != 1264 {
			t.Errorf("prepared insert out of range: %v, want error 1264", err)
		}

		lengths := func(res []wirefuzz.Result) string {
			var out string
			for _, col := range res[0].Columns {
				out += fmt.Sprintf("%s:%d,%d ", col.Name, col.Length, col.Decimals)
			}
			return out
		}
		checkColumns(t, c, "SELECT f, d, p, q FROM fs WHERE id = ", lengths, "f:7,4 d:10,2 p:12,31 q:22,31 ")

		// An ALTER TABLE that copies the table keeps the types.
		run(t, c, []step{{sql: "ALTER TABLE fs ADD COLUMN extra INT FIRST", want: []uint16{ac}}})
		create, err := c.Query("SHOW CREATE TABLE fs")
		if err != nil || len(create) != 1 || len(create[0]) != 2 {
			t.Fatalf("SHOW CREATE TABLE: %v %v", create, err)
		}
		for _, want := range []string{"`f` float(7,4)", "`d` double(10,2)", "`p` float", "`q` double"} {
			if !strings.Contains(create[0][1], want) || strings.Contains(create[0][1], "`p` float(") {
				t.Errorf("SHOW CREATE TABLE without %q:\n%s", want, create[0][1])
			}
		}
		for q, want := range map[string]string{
			"SELECT COLUMN_NAME, COLUMN_TYPE, NUMERIC_PRECISION, NUMERIC_SCALE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'fs' AND COLUMN_NAME IN ('f', 'd', 'p') ORDER BY ORDINAL_POSITION": "[[f float(7,4) 7 4] [d double(10,2) 10 2] [p float 12 NULL]]",
			"SELECT f FROM fs WHERE id = 1": "[[2.7183]]",
		} {
			run(t, c, []step{{sql: q, want: []uint16{ac}, rows: want}})
		}
		res, err := c.Query("SHOW COLUMNS FROM fs")
		if err != nil {
			t.Fatal(err)
		}
		var typesOf []string
		for _, r := range res {
			typesOf = append(typesOf, r[0]+":"+r[1])
		}
		if got, want := fmt.Sprint(typesOf), "[extra:int id:int f:float(7,4) d:double(10,2) p:float q:double]"; got != want {
			t.Errorf("SHOW COLUMNS types %s, want %s", got, want)
		}
	})
}
