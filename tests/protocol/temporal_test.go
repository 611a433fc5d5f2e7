package protocol

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestTemporalValues reads DATE, DATETIME, TIMESTAMP and TIME values,
// zero dates among them, through go-sql-driver in the text protocol
// (interpolateParams) and the binary one (server-side prepared
// statements), with and without parseTime: every way must give the same
// values, a zero date as "0000-00-00…" or as time.Time{} (the binary
// protocol's zero date gave -0001-11-30 with parseTime), and TIME values
// of more than a day, negative or zero as MySQL writes them.
func TestTemporalValues(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		setup := []string{
			"SET SESSION sql_mode = ''",
			"CREATE TABLE tv (id INT PRIMARY KEY, d DATE, dt DATETIME, ts TIMESTAMP NULL, tm TIME, dt6 DATETIME(6))",
			"INSERT INTO tv VALUES " +
				"(1, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '00:00:00', '0000-00-00 00:00:00'), " +
				"(2, '2024-02-03', '2024-02-03 04:05:06', '2024-02-03 04:05:06', '-838:59:59', '2024-02-03 04:05:06.123456'), " +
				"(3, '1999-12-31', '1999-12-31 00:00:00', '2000-01-01 00:00:00', '25:00:01', '1999-12-31 23:59:59.5'), " +
				"(4, NULL, NULL, NULL, NULL, NULL)",
		}
		wantText := map[int]string{
			1: "0000-00-00|0000-00-00 00:00:00|0000-00-00 00:00:00|00:00:00|0000-00-00 00:00:00.000000",
			2: "2024-02-03|2024-02-03 04:05:06|2024-02-03 04:05:06|-838:59:59|2024-02-03 04:05:06.123456",
			3: "1999-12-31|1999-12-31 00:00:00|2000-01-01 00:00:00|25:00:01|1999-12-31 23:59:59.500000",
			4: "NULL|NULL|NULL|NULL|NULL",
		}
		wantParsed := map[int]string{
			1: "zero|zero|zero|00:00:00|zero",
			2: "2024-02-03 00:00:00|2024-02-03 04:05:06|2024-02-03 04:05:06|-838:59:59|2024-02-03 04:05:06.123456",
			3: "1999-12-31 00:00:00|1999-12-31 00:00:00|2000-01-01 00:00:00|25:00:01|1999-12-31 23:59:59.5",
			4: "NULL|NULL|NULL|NULL|NULL",
		}
		for i, opts := range []string{"", "interpolateParams=true", "parseTime=true", "parseTime=true&interpolateParams=true"} {
			t.Run(fmt.Sprintf("opts=%q", opts), func(t *testing.T) {
				db, err := sql.Open("mysql", withOptions(s.DSN, opts))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				db.SetMaxOpenConns(1)
				if i == 0 {
					for _, q := range setup {
						if _, err := db.Exec(q); err != nil {
							t.Fatalf("%s: %v", q, err)
						}
					}
				} else if _, err := db.Exec(setup[0]); err != nil {
					t.Fatal(err)
				}
				want := wantText
				if strings.Contains(opts, "parseTime") {
					want = wantParsed
				}
				// Twice: the second execution of a point select is the
				// fast path's.
				for range 2 {
					for id := 1; id <= 4; id++ {
						row := db.QueryRow("SELECT d, dt, ts, tm, dt6 FROM tv WHERE id = ?", id)
						vals := make([]any, 5)
						ptrs := make([]any, 5)
						for j := range vals {
							ptrs[j] = &vals[j]
						}
						if err := row.Scan(ptrs...); err != nil {
							t.Fatal(err)
						}
						if got := formatTemporal(vals); got != want[id] {
							t.Errorf("row %d: got %s, want %s", id, got, want[id])
						}
					}
				}
			})
		}
	})
}

// TestZeroDateBinary checks the bytes of zero dates in a binary result
// set: MySQL sends them as length 0.
func TestZeroDateBinary(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "SET SESSION sql_mode = ''", want: []uint16{ac}},
			{sql: "CREATE TABLE zd (id INT PRIMARY KEY, d DATE, dt DATETIME, ts TIMESTAMP NULL)", want: []uint16{ac}},
			{sql: "INSERT INTO zd VALUES (1, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00')", want: []uint16{ac}},
		})
		for _, q := range []string{"SELECT d, dt, ts FROM zd WHERE id = ?", "SELECT d, dt, ts FROM zd WHERE id >= ?"} {
			id, _, err := c.Prepare(q)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				res, err := c.Execute(id, int64(1))
				if err != nil {
					t.Fatal(err)
				}
				if len(res) != 1 || len(res[0].Binary) != 1 {
					t.Fatalf("%s: results %+v", q, res)
				}
				// Header 0x00, a NULL bitmap of one byte, then a zero
				// length for each of the three values.
				if got, want := fmt.Sprintf("%x", res[0].Binary[0]), "0000000000"; got != want {
					t.Errorf("%s: row %s, want %s", q, got, want)
				}
			}
		}
	})
}

// withOptions adds go-sql-driver options opts (a&b=c) to dsn.
func withOptions(dsn, opts string) string {
	switch {
	case opts == "":
		return dsn
	case strings.Contains(dsn, "?"):
		return dsn + "&" + opts
	default:
		return dsn + "?" + opts
	}
}

// formatTemporal writes scanned values joined by |: NULL, "zero" for
// time.Time{}, a time.Time without its zone, other values as text.
func formatTemporal(vals []any) string {
	out := make([]string, len(vals))
	for i, v := range vals {
		switch v := v.(type) {
		case nil:
			out[i] = "NULL"
		case time.Time:
			if v.IsZero() {
				out[i] = "zero"
			} else {
				out[i] = v.Format("2006-01-02 15:04:05.999999")
			}
		case []byte:
			out[i] = string(v)
		default:
			out[i] = fmt.Sprint(v)
		}
	}
	return strings.Join(out, "|")
}
