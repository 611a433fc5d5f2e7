package protocol

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestTimeValues checks TIME values where GMS's functions did not expect
// them: a TIME in arithmetic, aggregates and numeric casts is its number
// HHMMSS[.fraction] (GMS's was 0), in string functions and CAST AS CHAR
// its text (GMS failed or gave NULL); a TIME plus an INTERVAL is a TIME
// that is not wrapped into a day (GMS's was a DATETIME of today, or
// wrapped); GREATEST and LEAST compare TIMEs (GMS failed); CAST(x AS
// TIME) takes the time of a date and time, of a number YYYYMMDDHHMMSS and
// of 'D HH:MM:SS' (GMS's NULL), and CAST(x AS TIME(n)) has n digits in
// both protocols and the column definition (go-sql-driver's TestDateTime).
// A TIME column without digits is MySQL's TIME(0). UPDATE ... SET, which
// GMS analyzes with rules of its own, reads TIMEs so too.
func TestTimeValues(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE tv (id INT PRIMARY KEY, t TIME, t3 TIME(3))", want: []uint16{ac}},
			{sql: "INSERT INTO tv VALUES (1, '01:02:03', '01:02:03.456'), (2, '-10:00:00', NULL), (3, '12:00:00.5', NULL)", want: []uint16{ac}},
		})
		db, err := sql.Open("mysql", s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()

		plainRounded := "12:00:01"
		if s.Flavor == testserver.MariaDB {
			plainRounded = "12:00:00" // MariaDB truncates where MySQL rounds
		}
		for _, tc := range []struct{ expr, where, want string }{
			{"t", "id = 3", plainRounded},
			{"t + 0", "id = 1", "10203"},
			{"t3 + 0", "id = 1", "10203.456"},
			{"SUM(t)", "id < 3", "-89797"},
			{"t * 2", "id = 1", "20406"},
			{"-t", "id = 2", "100000"},
			{"CAST(t AS SIGNED)", "id = 1", "10203"},
			{"CAST(t3 AS CHAR)", "id = 1", "01:02:03.456"},
			{"CONCAT(t, '|', t3)", "id = 1", "01:02:03|01:02:03.456"},
			{"LENGTH(t3)", "id = 1", "12"},
			{"DATE_SUB(t, INTERVAL 2 HOUR)", "id = 1", "-00:57:57"},
			{"t3 - INTERVAL 2 HOUR", "id = 1", "-00:57:56.544"},
			{"t + INTERVAL 30 HOUR", "id = 1", "31:02:03"},
			{"INTERVAL 1 DAY + t", "id = 2", "14:00:00"},
			{"GREATEST(t, t3)", "id = 1", "01:02:03.456"},
			{"LEAST(t, '00:00:01')", "id = 1", "00:00:01"},
			{"CAST('2020-01-01 03:25:45' AS TIME)", "id = 1", "03:25:45"},
			{"CAST('1 03:25:45' AS TIME)", "id = 1", "27:25:45"},
			{"CAST(20200101032545 AS TIME)", "id = 1", "03:25:45"},
			{"CAST('0000-00-00' AS TIME)", "id = 1", "00:00:00"},
			{"CAST('00:00:00.1' AS TIME(1)) = '00:00:00.1'", "id = 1", "1"},
			{"CAST('00:00:00' AS TIME(6))", "id = 1", "00:00:00.000000"},
			{"CAST('0000-00-00 00:00:00.0' AS DATETIME(1))", "id = 1", "0000-00-00 00:00:00.0"},
		} {
			q := fmt.Sprintf("SELECT %s FROM tv WHERE %s", tc.expr, tc.where)
			if got, err := queryRowText(db, q); err != nil || got != tc.want {
				t.Errorf("%s: %s (%v), want %s", q, got, err, tc.want)
			}
		}

		// The binary protocol: a time.Time parameter (go-sql-driver sends
		// '0001-01-01 01:02:03.456789') cast to TIME(n), whose column
		// definition carries n decimals for the driver to write them.
		for _, tc := range []struct {
			q    string
			want string
		}{
			{"SELECT CAST(? AS TIME(6))", "01:02:03.456789"},
			{"SELECT CAST(? AS TIME(2))", "01:02:03.46"},
			{"SELECT CAST(? AS TIME)", "01:02:03"},
		} {
			arg := time.Date(1, 1, 1, 1, 2, 3, 456789000, time.UTC)
			if s.Flavor == testserver.MariaDB && tc.want == "01:02:03.46" {
				tc.want = "01:02:03.45"
			}
			if got, err := queryRowText(db, tc.q, arg); err != nil || got != tc.want {
				t.Errorf("%s with %v: %s (%v), want %s", tc.q, arg, got, err, tc.want)
			}
		}
		// UPDATE of one table, which GMS analyzes with its own rules.
		if _, err := db.Exec("UPDATE tv SET t = t - INTERVAL 2 HOUR, t3 = CONCAT(t, '') WHERE id = 1"); err != nil {
			t.Fatalf("UPDATE with TIME values: %v", err)
		}
		if got, err := queryRowText(db, "SELECT t, t3 FROM tv WHERE id = 1"); err != nil || got != "-00:57:57|-00:57:57.000" {
			t.Errorf("after UPDATE SET t = t - INTERVAL 2 HOUR, t3 = CONCAT(t, ''): %s (%v), want -00:57:57|-00:57:57.000", got, err)
		}
		res, err := c.QueryAll("SELECT t, t3, CAST(t3 AS TIME(2)), CAST(t AS TIME(6)) FROM tv WHERE id = 2")
		if err != nil {
			t.Fatal(err)
		}
		var defs string
		for _, col := range res[0].Columns {
			defs += fmt.Sprintf(" %d/%d", col.Decimals, col.Length)
		}
		if want := " 0/10 3/14 2/13 6/17"; defs != want {
			t.Errorf("column definitions (decimals/length):%s, want%s", defs, want)
		}
	})
}
