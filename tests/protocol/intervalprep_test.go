package protocol

import (
	"database/sql"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestCompoundIntervalPrepared prepares statements with compound INTERVAL
// units (DAY_HOUR, HOUR_MINUTE, ...) and placeholders, through
// go-sql-driver's server-side prepared statements (COM_STMT_PREPARE):
// vitess, which parses a prepared statement before percdb sees it, refused
// them with 1064, where MySQL takes them. The values and the column names
// (the client's text) must be MySQL's; a compound unit in EXTRACT, which
// vitess always took, keeps working.
func TestCompoundIntervalPrepared(t *testing.T) {
	cases := []struct {
		query string
		args  []any
		name  string // the column's name
		want  string
	}{
		{"SELECT ? + INTERVAL ? DAY_HOUR", []any{"2020-01-01 00:00:00", "1 2"}, "? + INTERVAL ? DAY_HOUR", "2020-01-02 02:00:00"},
		{"SELECT DATE_ADD(?, INTERVAL ? HOUR_MINUTE)", []any{"2020-01-01 00:00:00", "1:30"}, "DATE_ADD(?, INTERVAL ? HOUR_MINUTE)", "2020-01-01 01:30:00"},
		{"SELECT date_sub(?, interval ? year_month)", []any{"2020-03-31", "1-1"}, "date_sub(?, interval ? year_month)", "2019-02-28"},
		{"SELECT ? - INTERVAL ? MINUTE_SECOND", []any{"2020-01-01 00:00:00", "1:2"}, "? - INTERVAL ? MINUTE_SECOND", "2019-12-31 23:58:58"},
		{"SELECT DATE_ADD(?, INTERVAL '1.5' SECOND_MICROSECOND)", []any{"2020-01-01"}, "DATE_ADD(?, INTERVAL '1.5' SECOND_MICROSECOND)", "2020-01-01 00:00:01.500000"},
		{"SELECT EXTRACT(DAY_HOUR FROM ?)", []any{"2020-01-02 03:04:05"}, "EXTRACT(DAY_HOUR FROM ?)", "203"},
	}
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db, err := sql.Open("mysql", s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, c := range cases {
			rows, err := db.Query(c.query, c.args...)
			if err != nil {
				t.Errorf("%s: %v", c.query, err)
				continue
			}
			cols, _ := rows.Columns()
			got := "no row"
			if rows.Next() {
				var v sql.NullString
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				got = v.String
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s: got %s, want %s", c.query, got, c.want)
			}
			if len(cols) != 1 || cols[0] != c.name {
				t.Errorf("%s: columns %q, want [%q]", c.query, cols, c.name)
			}
		}
		// In a prepared DO, and a prepared INSERT.
		if _, err := db.Exec("DO DATE_ADD(?, INTERVAL ? DAY_MINUTE)", "2020-01-01", "1 1:1"); err != nil {
			t.Errorf("DO: %v", err)
		}
		if _, err := db.Exec("CREATE TABLE ip (id INT PRIMARY KEY, d DATETIME)"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO ip VALUES (?, ? + INTERVAL ? DAY_SECOND)", 1, "2020-01-01", "1 01:02:03"); err != nil {
			t.Fatalf("INSERT: %v", err)
		}
		var d string
		if err := db.QueryRow("SELECT CAST(d AS CHAR) FROM ip WHERE id = ?", 1).Scan(&d); err != nil || d != "2020-01-02 01:02:03" {
			t.Errorf("inserted %q (%v), want 2020-01-02 01:02:03", d, err)
		}
	})
}
