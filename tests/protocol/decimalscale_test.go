package protocol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestDecimalResultScale checks that a DECIMAL result is written with
// its type's scale, the scale its column metadata announces, in the text
// protocol (interpolateParams) and the binary one (server-side prepared
// statements): COALESCE(d, 1.500) of a DECIMAL(10,2) d of 2 is 2.000 as
// in MySQL (GMS wrote an expression's DECIMAL with the value's own scale,
// 2.00, under metadata of 3 decimals), IF and CASE over DECIMALs are
// typed as MySQL types them (GMS: IF as its first value, 1.50; CASE with
// a scale of 10), ROUND(x, D) of a DECIMAL as a DECIMAL of scale D (GMS:
// as x).
func TestDecimalResultScale(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		for i, opts := range []string{"interpolateParams=true", ""} {
			db := openOne(t, s, opts)
			if i == 0 {
				mustExec(t, db, "CREATE TABLE ds (id INT PRIMARY KEY, d DECIMAL(10,2), e DECIMAL(8,4))",
					"INSERT INTO ds VALUES (1, 2.00, 1.5), (2, NULL, NULL)")
			}
			for _, c := range []struct {
				expr  string
				scale int64
				want  string // the values of rows 1 and 2
			}{
				{"COALESCE(d, 1.500)", 3, "2.000|1.500"},
				{"IFNULL(d, 1.500)", 3, "2.000|1.500"},
				{"CASE WHEN id = ? THEN d ELSE 1.500 END", 3, "2.000|1.500"},
				{"IF(id = ?, d, 1.500)", 3, "2.000|1.500"},
				{"COALESCE(d, e)", 4, "2.0000|NULL"},
				{"d + e", 4, "3.5000|NULL"},
				{"d * 2", 2, "4.00|NULL"},
				{"d / 3", 6, "0.666667|NULL"},
				{"ROUND(e, 2)", 2, "1.50|NULL"},
				{"ROUND(e)", 0, "2|NULL"},
				{"(SELECT MAX(x.d) FROM ds x) - ROUND(e, 1)", 2, "0.50|NULL"},
			} {
				var args []any
				if strings.Contains(c.expr, "?") {
					args = []any{1}
				}
				q := fmt.Sprintf("SELECT %s FROM ds ORDER BY id", c.expr)
				rows, err := db.Query(q, args...)
				if err != nil {
					t.Fatalf("%s (%s): %v", q, opts, err)
				}
				cts, err := rows.ColumnTypes()
				if err != nil {
					t.Fatal(err)
				}
				if _, scale, ok := cts[0].DecimalSize(); !ok || scale != c.scale {
					t.Errorf("%s (%s): column scale %d (%v), want %d", q, opts, scale, ok, c.scale)
				}
				if got := strings.ReplaceAll(scanRows(t, rows), "\n", "|"); got != c.want {
					t.Errorf("%s (%s): %s, want %s", q, opts, got, c.want)
				}
			}
		}
	})
}
