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

// TestTemporalFunctions checks MySQL's date and time functions that GMS
// lacks (SEC_TO_TIME, MAKETIME, ADDTIME, SUBTIME, MAKEDATE: "function
// not found") and the type of CURDATE() and CURRENT_DATE, which GMS sent
// as a string column where MySQL sends a DATE, in the text protocol and
// the binary one (a parameter makes go-sql-driver prepare the query).
func TestTemporalFunctions(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db, err := sql.Open("mysql", s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, c := range []struct{ q, want string }{
			{"SELECT SEC_TO_TIME(3661), SEC_TO_TIME(-1), SEC_TO_TIME(0), SEC_TO_TIME(9999999), SEC_TO_TIME(NULL)", "01:01:01|-00:00:01|00:00:00|838:59:59|NULL"},
			{"SELECT MAKETIME(1, 2, 3), MAKETIME(-1, 2, 3), MAKETIME(1, 60, 0), MAKETIME(1, 0, 60), MAKETIME(900, 0, 0)", "01:02:03|-01:02:03|NULL|NULL|838:59:59"},
			{"SELECT ADDTIME('01:00:00', '00:30:00'), ADDTIME('2007-12-31 23:59:59.999999', '1 1:1:1.000002'), ADDTIME('01:00:00.999999', '02:00:00.999998')", "01:30:00|2008-01-02 01:01:01.000001|03:00:01.999997"},
			{"SELECT ADDTIME(CAST('2020-01-01 10:00:00' AS DATETIME), '01:30:00'), SUBTIME('2020-01-01 00:00:00', '00:00:01'), SUBTIME('01:00:00', '02:00:00')", "2020-01-01 11:30:00|2019-12-31 23:59:59|-01:00:00"},
			{"SELECT MAKEDATE(2020, 60), MAKEDATE(2011, 0), MAKEDATE(11, 32), MAKEDATE(99, 1), MAKEDATE(2011, 365)", "2020-02-29|NULL|2011-02-01|1999-01-01|2011-12-31"},
			{"SELECT CURDATE() = CURRENT_DATE, CURDATE() = DATE(NOW()), CURDATE() + 0 > 20200101", "1|1|1"},
		} {
			for _, args := range [][]any{nil, {1}} {
				q, want := c.q, c.want
				if args != nil {
					q, want = q+", ?", want+"|1"
				}
				got, err := queryRowText(db, q, args...)
				if err != nil {
					t.Errorf("%s: %v", q, err)
				} else if got != want {
					t.Errorf("%s: got %s, want %s", q, got, want)
				}
			}
		}
		for _, args := range [][]any{nil, {1}} {
			q := "SELECT CURDATE(), CURRENT_DATE"
			if args != nil {
				q += ", ?"
			}
			rows, err := db.Query(q, args...)
			if err != nil {
				t.Fatal(err)
			}
			cols, err := rows.ColumnTypes()
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cols[:2] {
				if c.DatabaseTypeName() != "DATE" {
					t.Errorf("%s: column %s is %s, want DATE", q, c.Name(), c.DatabaseTypeName())
				}
			}
			rows.Close()
		}
	})
}

// queryRowText returns the one row of q, its values as text joined by
// "|" (NULL for NULL).
func queryRowText(db *sql.DB, q string, args ...any) (string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	if !rows.Next() {
		return "", fmt.Errorf("no row: %v", rows.Err())
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return "", err
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "NULL"
		if v.Valid {
			out[i] = v.String
		}
	}
	return strings.Join(out, "|"), rows.Err()
}
