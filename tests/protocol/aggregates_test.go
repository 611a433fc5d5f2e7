package protocol

import (
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// aggSetup is the table the aggregate tests read.
var aggSetup = []string{
	"CREATE TABLE agg (id INT PRIMARY KEY, i INT, b BIGINT, t TINYINT, d DECIMAL(10,2), f DOUBLE, g INT)",
	"INSERT INTO agg VALUES (1, 25275, 9223372036854775807, 1, 1.25, 1.5, 1), (2, 25276, 9223372036854775807, 2, 2.50, 2.5, 1), (3, 25276, 1, 2, 3.10, 3.0, 2)",
}

// TestAggregateValues checks the values of SUM, AVG and the standard
// deviations as MySQL 8 computes them, in the text protocol and the
// binary one: SUM and AVG of exact numbers are exact DECIMALs (AVG with
// div_precision_increment = 4 more digits), of DOUBLEs DOUBLE.
func TestAggregateValues(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		for i, opts := range []string{"interpolateParams=true", ""} {
			db := openOne(t, s, opts)
			if i == 0 {
				mustExec(t, db, aggSetup...)
			}
			for _, c := range []struct{ query, want string }{
				{"SELECT AVG(i), SUM(i), AVG(t), SUM(b), AVG(b), SUM(d), AVG(d), AVG(f), SUM(f) FROM agg WHERE id > ?",
					"25275.6667|75827|1.6667|18446744073709551615|6148914691236517205.0000|6.85|2.283333|2.3333333333333335|7"},
				{"SELECT AVG(i), SUM(i) FROM agg WHERE id > ? + 100", "NULL|NULL"},
				{"SELECT g, AVG(i), SUM(d) + 1, COUNT(*) FROM agg WHERE id > ? GROUP BY g HAVING AVG(i) > 25275 ORDER BY AVG(i) DESC",
					"2|25276.0000|4.10|1\n1|25275.5000|4.75|2"},
				{"SELECT SUM(DISTINCT t), AVG(DISTINCT t) FROM agg WHERE id > ?", "3|1.5000"},
				{"SELECT id, AVG(i) OVER (), SUM(t) OVER (ORDER BY id) FROM agg WHERE id > ? ORDER BY id",
					"1|25275.6667|1\n2|25275.6667|3\n3|25275.6667|5"},
				// Over windows too: exact (GMS summed in doubles), and
				// NULL over NULLs (GMS: SUM 0, AVG a NaN that failed).
				{"SELECT id, SUM(b) OVER (ORDER BY id), AVG(NULLIF(g, g)) OVER (PARTITION BY g), SUM(NULLIF(d, d)) OVER () FROM agg WHERE id > ? ORDER BY id",
					"1|9223372036854775807|NULL|NULL\n2|18446744073709551614|NULL|NULL\n3|18446744073709551615|NULL|NULL"},
				{"SELECT a FROM (SELECT AVG(i) AS a FROM agg WHERE id > ?) x", "25275.6667"},
				{"SELECT ROUND(STD(g), 12), ROUND(VARIANCE(g), 12), ROUND(STDDEV_SAMP(g), 12), ROUND(VAR_SAMP(g), 12) FROM agg WHERE id > ?",
					"0.471404520791|0.222222222222|0.57735026919|0.333333333333"},
			} {
				rows, err := db.Query(c.query, 0)
				if err != nil {
					t.Fatalf("%s: %v", c.query, err)
				}
				got := scanRows(t, rows)
				if got != c.want {
					t.Errorf("%s (%s):\n%s\nwant\n%s", c.query, opts, got, c.want)
				}
			}
		}
	})
}

// TestAggregateColumns checks the column definitions of aggregates as
// MySQL 8 sends them, text and prepared: type, decimals, length, and
// that they may be NULL.
func TestAggregateColumns(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range aggSetup {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatal(err)
			}
		}
		const q = "SELECT AVG(i), SUM(i), AVG(t), SUM(b), SUM(d), AVG(d), AVG(f), STD(i), VAR_SAMP(d) FROM agg WHERE id > "
		// type/decimals/length, N for NOT NULL: NEWDECIMAL is 246, DOUBLE 5.
		want := "246/4/16 246/0/33 246/4/9 246/0/42 246/2/34 246/6/16 5/31/22 5/31/22 5/31/22"
		cols := columnTypes
		if s.Flavor == testserver.MariaDB {
			// MariaDB gives the DOUBLE results of AVG and the
			// variances its own lengths and decimals (23, 26; 4, 6):
			// compare the DECIMALs, where it agrees with MySQL 8.
			cols = func(res []wirefuzz.Result) string {
				return strings.Join(strings.Fields(columnTypes(res))[:6], " ")
			}
			want = strings.Join(strings.Fields(want)[:6], " ")
		}
		res, err := c.QueryAll(q + "0")
		if err != nil {
			t.Fatal(err)
		}
		if got := cols(res); got != want {
			t.Errorf("text: %s\nwant  %s", got, want)
		}
		id, _, err := c.Prepare(q + "?")
		if err != nil {
			t.Fatal(err)
		}
		res, err = c.Execute(id, int64(0))
		if err != nil {
			t.Fatal(err)
		}
		if got := cols(res); got != want {
			t.Errorf("prepared: %s\nwant      %s", got, want)
		}
	})
}

// columnTypes writes type/decimals/length of the columns of res's first
// result, with N after a column marked NOT NULL.
func columnTypes(res []wirefuzz.Result) string {
	if len(res) == 0 {
		return ""
	}
	var out []string
	for _, c := range res[0].Columns {
		s := fmt.Sprintf("%d/%d/%d", c.Type, c.Decimals, c.Length)
		if c.Flags&1 != 0 {
			s += "N"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestResultNullability checks the NOT_NULL flag of aggregates' columns,
// text and prepared, each twice (the fast path answers the second runs):
// COUNT is never NULL, MIN, MAX, SUM and expressions over them are NULL
// over no rows, so MySQL 8 and MariaDB send them without the flag (GMS
// marked MAX and MIN NOT NULL); COALESCE is NOT NULL when an argument
// is, IFNULL when its second is (GMS went by the first argument).
func TestResultNullability(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range aggSetup {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatal(err)
			}
		}
		notNull := columnFlags(1, "N")
		for q, want := range map[string]string{
			"SELECT COUNT(*) AS n, MAX(i) AS mx, MIN(d) AS mn, MAX(i) + 1 AS m1, SUM(i) AS s, MAX(CONCAT(t, 'x')) AS mc, COALESCE(SUM(i), 0) AS c0, IFNULL(MAX(d), 1) AS i1, COALESCE(MAX(i), MIN(i)) AS c2 FROM agg WHERE id > ": "n:N mx:- mn:- m1:- s:- mc:- c0:N i1:N c2:-",
			"SELECT g AS g, COUNT(i) AS n, MAX(t) AS mx FROM agg WHERE id > 0 GROUP BY g HAVING MAX(t) > 0 ORDER BY g LIMIT ":                                                                                                     "g:- n:N mx:-",
			// MySQL's maybe_null per kind (compat's maybeNull): IF and CASE
			// ask their values, IS NULL and <=> are never NULL.
			"SELECT IF(i > 1, 1, 2) AS i2, CASE WHEN i > 0 THEN 1 ELSE 2 END AS c1, CASE WHEN id > 0 THEN 1 END AS c2, i IS NULL AS n1, i <=> NULL AS n2 FROM agg WHERE id > ": "i2:N c1:N c2:- n1:N n2:N",
			// A number's column made nullable too: /, DIV and MOD may be
			// NULL (division by zero) whatever their operands, an IF
			// whose value if false may be.
			"SELECT id / 1 AS d1, id DIV 1 AS d2, id MOD 2 AS d3, IF(id > 100, 0.0, i) AS f1, id + 1 AS p FROM agg WHERE id > ": "d1:- d2:- d3:- f1:- p:N",
		} {
			checkColumns(t, c, q, notNull, want)
		}
	})
}

// TestResultBinaryFlag checks the BINARY flag of numeric and temporal
// result columns as MySQL sets it: an expression's carries it (its
// character set is binary), a numeric column of a table does not.
func TestResultBinaryFlag(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range aggSetup {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatal(err)
			}
		}
		binary := columnFlags(128, "B")
		checkColumns(t, c, "SELECT d, i, d + 0, i + 1, f * 2, SUM(d) FROM agg WHERE id > 0 GROUP BY d, i, f HAVING COUNT(*) >= ", binary, "d:- i:- d + 0:B i + 1:B f * 2:B SUM(d):B")
	})
}

// columnFlags describes a result's columns as name:mark where the column
// definition carries flag (NOT_NULL 1, BINARY 128), name:- where not.
func columnFlags(flag uint32, mark string) func([]wirefuzz.Result) string {
	return func(res []wirefuzz.Result) string {
		if len(res) == 0 {
			return ""
		}
		var out []string
		for _, col := range res[0].Columns {
			if uint32(col.Flags)&flag != 0 {
				out = append(out, col.Name+":"+mark)
			} else {
				out = append(out, col.Name+":-")
			}
		}
		return strings.Join(out, " ")
	}
}
