package protocol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// decimals lists name:decimals of the columns of res.
func decimals(res []wirefuzz.Result) string {
	if len(res) == 0 {
		return ""
	}
	var out string
	for _, c := range res[0].Columns {
		out += fmt.Sprintf("%s:%d ", c.Name, c.Decimals)
	}
	return out
}

// TestColumnDecimals checks the decimals of column definitions, text and
// prepared: 31 (NOT_FIXED_DEC) for FLOAT and DOUBLE, the scale of a
// DECIMAL, the fractional digits of a DATETIME.
func TestColumnDecimals(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE n (id INT PRIMARY KEY, f FLOAT, d DOUBLE, dc DECIMAL(10,2), dt DATETIME(3))", want: []uint16{ac}},
			{sql: "INSERT INTO n VALUES (1, 1.5, 2.5, 3.25, '2024-01-02 03:04:05.678')", want: []uint16{ac}},
		})
		// The plain select is the fast path's from its second run on.
		for q, want := range map[string]string{
			"SELECT id, f, d, dc, dt FROM n WHERE id = ":                          "id:0 f:31 d:31 dc:2 dt:3 ",
			"SELECT id, f * 2 AS f2, d + 1 AS d1, AVG(d) AS a FROM n WHERE id = ": "id:0 f2:31 d1:31 a:31 ",
		} {
			checkColumns(t, c, q, decimals, want)
		}
	})
}

// TestColumnCharsets checks the character set of column definitions:
// binary (63) for numbers, dates and times, BIT and YEAR, as MySQL sends
// them; the connection's for strings. Text and prepared, each twice (the
// fast path's from its second run).
func TestColumnCharsets(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE cs (id INT PRIMARY KEY, d DECIMAL(5,2), f DOUBLE, dt DATE, ts DATETIME, tm TIME, b BIT(5), y YEAR, v VARCHAR(10))", want: []uint16{ac}},
			{sql: "INSERT INTO cs VALUES (1, 1.5, 2.5, '2024-01-02', '2024-01-02 03:04:05', '01:02:03', b'101', 2024, 'x')", want: []uint16{ac}},
		})
		const q = "SELECT id, d, f, dt, ts, tm, b, y, v FROM cs WHERE id = "
		const want = "63 63 63 63 63 63 63 63 text"
		charsets := func(res []wirefuzz.Result) string {
			var out []string
			for _, col := range res[0].Columns {
				if col.Charset == 63 {
					out = append(out, "63")
				} else {
					out = append(out, "text")
				}
			}
			return strings.Join(out, " ")
		}
		checkColumns(t, c, q, charsets, want)
	})
}

// checkColumns runs query q (which ends where its id goes) twice as text
// with id 1 and twice prepared with a parameter (the fast path answers
// the second runs), comparing describe of each answer with want.
func checkColumns(t *testing.T, c *wirefuzz.Conn, q string, describe func([]wirefuzz.Result) string, want string) {
	t.Helper()
	for i := range 2 {
		res, err := c.QueryAll(q + "1")
		if err != nil {
			t.Fatal(err)
		}
		if got := describe(res); got != want {
			t.Errorf("%s (text, run %d): %s, want %s", q, i, got, want)
		}
	}
	id, _, err := c.Prepare(q + "?")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		res, err := c.Execute(id, int64(1))
		if err != nil {
			t.Fatal(err)
		}
		if got := describe(res); got != want {
			t.Errorf("%s (prepared, run %d): %s, want %s", q, i, got, want)
		}
	}
}
