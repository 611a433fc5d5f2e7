package protocol

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestFractionalSeconds checks TIME(n), DATETIME(n) and TIMESTAMP(n)
// columns: CREATE TABLE takes TIME(3) (GMS refused TIME(0) to TIME(5)),
// values are rounded to the column's digits as MySQL rounds them (MariaDB
// truncates), both protocols send them with exactly those digits, and the
// column definitions announce them: decimals n and length 20+n for
// DATETIME(n) and TIMESTAMP(n) (19 without digits), 11+n for TIME(n) (GMS announced 0
// decimals for every TIMESTAMP and TIME column, so go-sql-driver wrote a
// TIMESTAMP(6) of the binary protocol without its fraction). SHOW CREATE
// TABLE and information_schema.COLUMNS give the precision.
func TestFractionalSeconds(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE fs (id INT PRIMARY KEY, t0 TIME(0), t3 TIME(3), dt2 DATETIME(2), ts6 TIMESTAMP(6) NULL, ts3 TIMESTAMP(3) NULL, dt DATETIME, ts TIMESTAMP NULL)", want: []uint16{ac}},
			{sql: "INSERT INTO fs VALUES (1, '12:00:00.5', '-01:02:03.4567', '2024-01-02 03:04:05.678', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.1235', NULL, NULL), " +
				"(2, '00:00:00', '00:00:00', '2024-01-02 00:00:00', '2024-01-02 00:00:00', '2024-01-02 00:00:00', NULL, NULL)", want: []uint16{ac}},
		})
		want := map[int]string{
			1: "12:00:01|-01:02:03.457|2024-01-02 03:04:05.68|2024-01-02 03:04:05.123456|2024-01-02 03:04:05.124",
			2: "00:00:00|00:00:00.000|2024-01-02 00:00:00.00|2024-01-02 00:00:00.000000|2024-01-02 00:00:00.000",
		}
		if s.Flavor == testserver.MariaDB {
			// MariaDB truncates where MySQL rounds.
			want[1] = "12:00:00|-01:02:03.456|2024-01-02 03:04:05.67|2024-01-02 03:04:05.123456|2024-01-02 03:04:05.123"
		}

		// The column definitions, from the raw client.
		res, err := c.QueryAll("SELECT t0, t3, dt2, ts6, ts3, dt, ts FROM fs WHERE id = 1")
		if err != nil {
			t.Fatal(err)
		}
		var defs []string
		for _, col := range res[0].Columns {
			defs = append(defs, fmt.Sprintf("%s:%d/%d", col.Name, col.Decimals, col.Length))
		}
		if got, wantDefs := strings.Join(defs, " "), "t0:0/10 t3:3/14 dt2:2/22 ts6:6/26 ts3:3/23 dt:0/19 ts:0/19"; got != wantDefs {
			t.Errorf("column definitions (decimals/length): %s, want %s", got, wantDefs)
		}
		// A time.Time written to a TIME(3) through go-sql-driver's
		// binary protocol (a DATETIME parameter) keeps its time.
		db, err := sql.Open("mysql", s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("INSERT INTO fs (id, t3) VALUES (?, ?)", 3, time.Date(2024, 1, 2, 3, 4, 5, 678900000, time.UTC)); err != nil {
			t.Fatalf("time.Time into TIME(3): %v", err)
		}
		wantT3 := "03:04:05.679"
		if s.Flavor == testserver.MariaDB {
			wantT3 = "03:04:05.678"
		}
		if got, err := queryRowText(db, "SELECT t3 FROM fs WHERE id = ?", 3); err != nil || got != wantT3 {
			t.Errorf("time.Time into TIME(3): %s (%v), want %s", got, err, wantT3)
		}

		// YEAR: unsigned and zero-filled, as MySQL says.
		run(t, c, []step{{sql: "CREATE TABLE fy (id INT PRIMARY KEY, y YEAR)", want: []uint16{ac}}})
		if res, err = c.QueryAll("SELECT y FROM fy"); err != nil {
			t.Fatal(err)
		}
		if f := res[0].Columns[0].Flags; f&0x60 != 0x60 {
			t.Errorf("YEAR column flags %#x, want UNSIGNED (0x20) and ZEROFILL (0x40)", f)
		}

		for _, opts := range []string{"interpolateParams=true", ""} {
			t.Run(fmt.Sprintf("opts=%q", opts), func(t *testing.T) {
				db, err := sql.Open("mysql", withOptions(s.DSN, opts))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				// Twice: the second execution of a point select is the
				// fast path's.
				for range 2 {
					for id := 1; id <= 2; id++ {
						got, err := queryRowText(db, "SELECT t0, t3, dt2, ts6, ts3 FROM fs WHERE id = ?", id)
						if err != nil {
							t.Fatal(err)
						}
						if got != want[id] {
							t.Errorf("row %d: %s, want %s", id, got, want[id])
						}
					}
				}
			})
		}

		rows, err := c.Query("SHOW CREATE TABLE fs")
		if err != nil {
			t.Fatal(err)
		}
		for _, col := range []string{"`t0` time", "`t3` time(3)", "`dt2` datetime(2)", "`ts6` timestamp(6)", "`ts3` timestamp(3)"} {
			if !strings.Contains(rows[0][1], col+" ") && !strings.Contains(rows[0][1], col+",") {
				t.Errorf("SHOW CREATE TABLE lacks %s:\n%s", col, rows[0][1])
			}
		}
		run(t, c, []step{{
			sql:  "SELECT COLUMN_NAME, DATETIME_PRECISION, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'fs' AND COLUMN_NAME <> 'id' ORDER BY ORDINAL_POSITION",
			want: []uint16{ac},
			rows: "[[t0 0 time] [t3 3 time(3)] [dt2 2 datetime(2)] [ts6 6 timestamp(6)] [ts3 3 timestamp(3)] [dt 0 datetime] [ts 0 timestamp]]",
		}})
		// A lookup through an index on a TIME(3) column by a value of more
		// digits compares them all, as MySQL does (the bound is not
		// rounded to the column's digits); MariaDB converts the value to
		// the column's type first.
		found, stored := "[]", "-01:02:03.457"
		if s.Flavor == testserver.MariaDB {
			found, stored = "[[1]]", "-01:02:03.456"
		}
		run(t, c, []step{
			{sql: "CREATE INDEX t3 ON fs (t3)", want: []uint16{ac}},
			{sql: "SELECT id FROM fs WHERE t3 = '-01:02:03.4567'", want: []uint16{ac}, rows: found},
			{sql: "SELECT id FROM fs WHERE t3 = '" + stored + "'", want: []uint16{ac}, rows: "[[1]]"},
			// DATE_ADD of a TIME(n) is a TIME (GMS's was a DATETIME of
			// today for any TIME type but its own).
			{sql: "SELECT DATE_ADD(t0, INTERVAL 1 SECOND) FROM fs WHERE id = 2", want: []uint16{ac}, rows: "[[00:00:01]]"},
		})

		// Fractional defaults: NOW(6), CURRENT_TIMESTAMP(3) and ON UPDATE,
		// a TIME(2) literal (its default did not parse back: 1105).
		c2 := "01:02:03.46"
		if s.Flavor == testserver.MariaDB {
			c2 = "01:02:03.45"
		}
		run(t, c, []step{
			{sql: "CREATE TABLE fd (id INT PRIMARY KEY, v INT, a DATETIME(6) DEFAULT NOW(6), b TIMESTAMP(3) NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3), c TIME(2) DEFAULT '01:02:03.456')", want: []uint16{ac}},
			{sql: "INSERT INTO fd (id, v) VALUES (1, 1)", want: []uint16{ac}},
		})
		rows, err = c.Query("SELECT a, b, c FROM fd")
		if err != nil {
			t.Fatal(err)
		}
		if r := rows[0]; len(r[0]) != 26 || len(r[1]) != 23 || r[2] != c2 {
			t.Errorf("defaults NOW(6), CURRENT_TIMESTAMP(3), TIME(2): %q, want 6 and 3 digits and %s", r, c2)
		}
		rows, err = c.Query("SHOW CREATE TABLE fd")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rows[0][1], "`c` time(2) DEFAULT '"+c2) {
			t.Errorf("SHOW CREATE TABLE fd:\n%s", rows[0][1])
		}
	})
}
