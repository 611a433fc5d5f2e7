package protocol

import (
	"database/sql"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestExtremumParameter checks GREATEST and LEAST of a DECIMAL column and
// a parameter sent as a string, prepared on the server: MySQL types the
// parameter from the other argument and compares numbers (GMS failed with
// "unsupported type for greatest/least argument: decimal.Decimal").
func TestExtremumParameter(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db := openOne(t, s, "")
		mustExec(t, db, "CREATE TABLE ext (id INT PRIMARY KEY, d DECIMAL(6,2), i INT)",
			"INSERT INTO ext VALUES (1, 2.00, 2), (2, 7.25, 9), (3, NULL, NULL)")
		checkQueries(t, db, "prepared", []queryCase{
			{"SELECT id, LEAST(d, ?), GREATEST(d, ?) FROM ext ORDER BY id", []any{"10", "2.5"}, "1|2.00|2.50\n2|7.25|7.25\n3|NULL|NULL"},
			{"SELECT id FROM ext WHERE GREATEST(d, ?) > 3 ORDER BY id", []any{"2.5"}, "2"},
			// With integers the string is compared as a number still.
			{"SELECT id, LEAST(i, ?) FROM ext ORDER BY id", []any{"2.5"}, "1|2\n2|2.5\n3|NULL"},
		})
	})
}

// queryCase is a query, its parameters and its rows as scanRows writes
// them.
type queryCase struct {
	query string
	args  []any
	want  string
}

// checkQueries runs each case on db and compares its rows; label says how
// db sends parameters.
func checkQueries(t *testing.T, db *sql.DB, label string, cases []queryCase) {
	t.Helper()
	for _, c := range cases {
		rows, err := db.Query(c.query, c.args...)
		if err != nil {
			t.Fatalf("%s (%s): %v", c.query, label, err)
		}
		if got := scanRows(t, rows); got != c.want {
			t.Errorf("%s (%s):\n%s\nwant\n%s", c.query, label, got, c.want)
		}
	}
}
