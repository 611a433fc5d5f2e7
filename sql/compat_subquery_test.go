package sql_test

import (
	"database/sql"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// tri is a value of SQL's three-valued logic.
type tri int

const (
	triFalse tri = iota
	triTrue
	triNull
)

// triEq is x = y.
func triEq(x, y *int) tri {
	switch {
	case x == nil || y == nil:
		return triNull
	case *x == *y:
		return triTrue
	}
	return triFalse
}

// triLess is x < y.
func triLess(x, y *int) tri {
	switch {
	case x == nil || y == nil:
		return triNull
	case *x < *y:
		return triTrue
	}
	return triFalse
}

// triAnd is x AND y.
func triAnd(x, y tri) tri {
	switch {
	case x == triFalse || y == triFalse:
		return triFalse
	case x == triNull || y == triNull:
		return triNull
	}
	return triTrue
}

// triIn is x IN (set), as MySQL evaluates it: TRUE when some member
// equals x, else NULL when x or some member is NULL (and the set is not
// empty), else FALSE.
func triIn(x *int, set []*int) tri {
	res := triFalse
	for _, s := range set {
		switch triEq(x, s) {
		case triTrue:
			return triTrue
		case triNull:
			res = triNull
		}
	}
	return res
}

// triNot is NOT x.
func triNot(x tri) tri {
	switch x {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triNull
}

// TestCorrelatedSubqueries checks [NOT] EXISTS and [NOT] IN subqueries,
// correlated or not, against answers computed here with SQL's
// three-valued logic, on tables with NULLs in the compared columns, with
// and without an index on the inner column (nested-loop, hash and lookup
// plans) and with an empty inner table. GMS plans a NOT EXISTS as an anti
// join that drops an outer row when the join condition is NULL for some
// inner row (NOT IN's rule): a NULL in the inner column made NOT EXISTS
// return nothing (sql/compat/subquery.go). [NOT] IN (SELECT expression
// ...) is here too: GMS joins on the expression.
func TestCorrelatedSubqueries(t *testing.T) {
	db, mustExec := compatDB(t)

	// o is the outer table; i and ix hold the same rows, ix with an index
	// on a; e is empty.
	type row struct{ a, b *int }
	r := rand.New(rand.NewSource(11))
	val := func() *int {
		if r.Intn(6) == 0 {
			return nil
		}
		v := r.Intn(6)
		return &v
	}
	var outer, inner []row
	mustExec("CREATE TABLE o (id INT PRIMARY KEY, a INT, b INT)")
	mustExec("CREATE TABLE i (id INT PRIMARY KEY, a INT, b INT)")
	mustExec("CREATE TABLE ix (id INT PRIMARY KEY, a INT, b INT, KEY ka (a))")
	mustExec("CREATE TABLE e (id INT PRIMARY KEY, a INT, b INT)")
	for k := 0; k < 14; k++ {
		x := row{val(), val()}
		outer = append(outer, x)
		mustExec("INSERT INTO o VALUES (?, ?, ?)", k, x.a, x.b)
	}
	// Both NULL cases are present whatever the seed gives.
	outer = append(outer, row{nil, outer[0].b})
	mustExec("INSERT INTO o VALUES (?, ?, ?)", len(outer)-1, nil, outer[0].b)
	for k := 0; k < 10; k++ {
		x := row{val(), val()}
		if k == 0 {
			x.a = nil
		}
		inner = append(inner, x)
		mustExec("INSERT INTO i VALUES (?, ?, ?)", k, x.a, x.b)
		mustExec("INSERT INTO ix VALUES (?, ?, ?)", k, x.a, x.b)
	}

	// keepID lists the ids of the outer rows for which where is TRUE.
	keepID := func(where func(id int, x row) tri) (out []string) {
		for id, x := range outer {
			if where(id, x) == triTrue {
				out = append(out, fmt.Sprint(id))
			}
		}
		return out
	}
	keep := func(where func(x row) tri) []string {
		return keepID(func(_ int, x row) tri { return where(x) })
	}
	// exists reports whether some inner row makes cond TRUE.
	exists := func(rows []row, cond func(y row) tri) tri {
		for _, y := range rows {
			if cond(y) == triTrue {
				return triTrue
			}
		}
		return triFalse
	}
	// column lists the a values of the inner rows for which cond is TRUE.
	column := func(rows []row, cond func(y row) tri) (set []*int) {
		for _, y := range rows {
			if cond(y) == triTrue {
				set = append(set, y.a)
			}
		}
		return set
	}
	always := func(row) tri { return triTrue }
	// absB2Outer lists abs(b - 2) of the outer rows whose id < 5 or > 10.
	absB2Outer := func() (set []*int) {
		for id, y := range outer {
			if id >= 5 && id <= 10 {
				continue
			}
			if y.b == nil {
				set = append(set, nil)
				continue
			}
			d := *y.b - 2
			if d < 0 {
				d = -d
			}
			set = append(set, intp(d))
		}
		return set
	}
	// absB2 lists abs(b - 2) of the rows whose a < 3.
	absB2 := func(rows []row) (set []*int) {
		for _, y := range rows {
			if triLess(y.a, intp(3)) != triTrue {
				continue
			}
			if y.b == nil {
				set = append(set, nil)
			} else {
				d := *y.b - 2
				if d < 0 {
					d = -d
				}
				set = append(set, intp(d))
			}
		}
		return set
	}

	type tcase struct {
		name, query string
		want        func(inner []row) []string
	}
	var tests []tcase
	for _, in := range []string{"i", "ix", "e"} {
		in := in
		rowsOf := func(rows []row) []row {
			if in == "e" {
				return nil
			}
			return rows
		}
		tests = append(tests, []tcase{{
			name:  "EXISTS equality",
			query: "SELECT id FROM o WHERE EXISTS (SELECT 1 FROM " + in + " WHERE " + in + ".a = o.a)",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					return exists(rowsOf(inner), func(y row) tri { return triEq(y.a, x.a) })
				})
			},
		}, {
			name:  "NOT EXISTS equality",
			query: "SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM " + in + " WHERE " + in + ".a = o.a)",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					return triNot(exists(rowsOf(inner), func(y row) tri { return triEq(y.a, x.a) }))
				})
			},
		}, {
			name: "NOT EXISTS equality and inequality",
			query: "SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM " + in + " AS s WHERE s.a = o.a AND s.b < o.b) " +
				"AND o.id > 1",
			want: func(inner []row) []string {
				return keepID(func(id int, x row) tri {
					if id <= 1 {
						return triFalse
					}
					return triNot(exists(rowsOf(inner), func(y row) tri { return triAnd(triEq(y.a, x.a), triLess(y.b, x.b)) }))
				})
			},
		}, {
			name:  "NOT EXISTS inequality only",
			query: "SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM " + in + " WHERE " + in + ".b < o.a)",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					return triNot(exists(rowsOf(inner), func(y row) tri { return triLess(y.b, x.a) }))
				})
			},
		}, {
			name:  "NOT EXISTS with an uncorrelated filter",
			query: "SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM " + in + " WHERE " + in + ".a = o.b AND " + in + ".b IS NOT NULL)",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					return triNot(exists(rowsOf(inner), func(y row) tri {
						if y.b == nil {
							return triFalse
						}
						return triEq(y.a, x.b)
					}))
				})
			},
		}, {
			name:  "NOT EXISTS in a disjunction",
			query: "SELECT id FROM o WHERE o.b = 1 OR NOT EXISTS (SELECT 1 FROM " + in + " WHERE " + in + ".a = o.a)",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					if triEq(x.b, intp(1)) == triTrue {
						return triTrue
					}
					return triNot(exists(rowsOf(inner), func(y row) tri { return triEq(y.a, x.a) }))
				})
			},
		}, {
			name:  "NOT EXISTS nested",
			query: "SELECT id FROM o WHERE NOT EXISTS (SELECT 1 FROM " + in + " AS s WHERE s.a = o.a AND NOT EXISTS (SELECT 1 FROM o AS p WHERE p.b = s.b))",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					return triNot(exists(rowsOf(inner), func(y row) tri {
						none := triNot(exists(outer, func(p row) tri { return triEq(p.b, y.b) }))
						return triAnd(triEq(y.a, x.a), none)
					}))
				})
			},
		}, {
			name:  "NOT EXISTS in the select list",
			query: "SELECT id FROM o WHERE (NOT EXISTS (SELECT 1 FROM " + in + " WHERE " + in + ".a = o.a)) = 1",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					return triNot(exists(rowsOf(inner), func(y row) tri { return triEq(y.a, x.a) }))
				})
			},
		}, {
			name:  "IN correlated",
			query: "SELECT id FROM o WHERE o.a IN (SELECT a FROM " + in + " WHERE " + in + ".b = o.b)",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					return triIn(x.a, column(rowsOf(inner), func(y row) tri { return triEq(y.b, x.b) }))
				})
			},
		}, {
			name:  "NOT IN correlated",
			query: "SELECT id FROM o WHERE o.a NOT IN (SELECT a FROM " + in + " WHERE " + in + ".b = o.b)",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					return triNot(triIn(x.a, column(rowsOf(inner), func(y row) tri { return triEq(y.b, x.b) })))
				})
			},
		}, {
			name:  "NOT IN uncorrelated, NULLs excluded",
			query: "SELECT id FROM o WHERE o.a NOT IN (SELECT a FROM " + in + " WHERE a IS NOT NULL)",
			want: func(inner []row) []string {
				return keep(func(x row) tri {
					return triNot(triIn(x.a, column(rowsOf(inner), func(y row) tri {
						if y.a == nil {
							return triFalse
						}
						return triTrue
					})))
				})
			},
		}, {
			name:  "IN an expression",
			query: "SELECT id FROM o WHERE o.a IN (SELECT abs(s.b - 2) FROM " + in + " AS s WHERE s.a < 3)",
			want: func(inner []row) []string {
				return keep(func(x row) tri { return triIn(x.a, absB2(rowsOf(inner))) })
			},
		}, {
			name:  "NOT IN an expression",
			query: "SELECT id FROM o WHERE o.a NOT IN (SELECT abs(s.b - 2) FROM " + in + " AS s WHERE s.a < 3)",
			want: func(inner []row) []string {
				return keep(func(x row) tri { return triNot(triIn(x.a, absB2(rowsOf(inner)))) })
			},
		}, {
			name:  "IN an expression of the same table",
			query: "SELECT id FROM o AS x WHERE x.a IN (SELECT abs(b - 2) FROM o WHERE id < 5 OR id > 10)",
			want: func([]row) []string {
				return keep(func(x row) tri { return triIn(x.a, absB2Outer()) })
			},
		}, {
			name:  "NOT IN uncorrelated",
			query: "SELECT id FROM o WHERE o.a NOT IN (SELECT a FROM " + in + ")",
			want: func(inner []row) []string {
				return keep(func(x row) tri { return triNot(triIn(x.a, column(rowsOf(inner), always))) })
			},
		}}...)
		for k := range tests[len(tests)-15:] {
			tests[len(tests)-15+k].name += " from " + in
		}
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want(inner)
			sort.Strings(want)
			if got := sortedRows(t, db, tc.query); strings.Join(got, ",") != strings.Join(want, ",") {
				plan := strings.Join(queryRows(t, db, "EXPLAIN PLAN "+tc.query), "\n")
				t.Errorf("%s\ngot  %q\nwant %q\nplan:\n%s", tc.query, got, want, plan)
			}
		})
	}
}

func intp(v int) *int { return &v }

// compatDB starts percdb and returns a connection to a new database of
// its own, and a function that runs a statement there, failing the test
// when it fails.
func compatDB(t *testing.T) (*sql.DB, func(q string, args ...any)) {
	t.Helper()
	db := openDB(t, startServer(t, true), "")
	db.SetMaxOpenConns(1) // USE holds for the one connection
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("CREATE DATABASE compat")
	exec("USE compat")
	return db, exec
}

// queryRows runs q on db and returns its rows, each with its values
// separated by spaces (NULL for NULL).
func queryRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	return collectRows(t, q, rows, err)
}

// collectRows returns the rows of the answer (rows, err) to q, each with
// its values separated by spaces (NULL for NULL), and fails t on an error.
func collectRows(t *testing.T, q string, rows *sql.Rows, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for _, r := range readRows(rows) {
		out = append(out, strings.Join(r, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// sortedRows is queryRows, sorted.
func sortedRows(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	out := queryRows(t, db, q)
	sort.Strings(out)
	return out
}

// TestNotExistsNotNullDifferential checks NOT EXISTS whose correlation is
// an equality of NOT NULL columns, which sql/compat leaves unwrapped so
// that GMS can read the inner table by an index (a LEFT JOIN lookup),
// against the same subquery counted, (SELECT COUNT(*) ...) = 0, which no
// anti join answers: over random rows, with the outer query's NOT NULL
// columns NULL on the inner side of its LEFT JOIN and the subquery's on
// the inner side of its own, and with nullable columns beside them.
func TestNotExistsNotNullDifferential(t *testing.T) {
	db, mustExec := compatDB(t)
	mustExec("CREATE TABLE p (id INT PRIMARY KEY, a INT NOT NULL, b INT)")
	mustExec("CREATE TABLE q (id INT PRIMARY KEY, a INT NOT NULL, b INT NOT NULL, c INT, KEY ka (a))")
	mustExec("CREATE TABLE z (id INT PRIMARY KEY, a INT NOT NULL)")
	r := rand.New(rand.NewSource(13))
	maybeNull := func(v int) any {
		if r.Intn(5) == 0 {
			return nil
		}
		return v
	}
	for k := 0; k < 40; k++ {
		mustExec("INSERT INTO p VALUES (?, ?, ?)", k, r.Intn(12), maybeNull(r.Intn(50)))
	}
	for k := 0; k < 30; k++ {
		mustExec("INSERT INTO q VALUES (?, ?, ?, ?)", k, r.Intn(12), r.Intn(40), maybeNull(r.Intn(12)))
	}
	outers := []string{
		"p",
		"p LEFT JOIN q AS l ON l.id = p.b",
		"p JOIN q AS l ON l.id = p.b",
	}
	subqueries := []string{
		"FROM q WHERE q.a = p.a",
		"FROM q WHERE q.a = p.a AND q.b = p.id",
		"FROM q WHERE q.id = p.b",
		"FROM q WHERE q.c = p.a",
		"FROM q WHERE q.a = l.a",
		"FROM q WHERE q.a = l.b AND q.id = p.a",
		"FROM q LEFT JOIN z ON z.id = q.b WHERE z.a = p.a",
		"FROM z WHERE z.a = p.a",
		"FROM q AS s WHERE s.a = p.a AND NOT EXISTS (SELECT 1 FROM z WHERE z.a = s.b)",
	}
	for _, from := range outers {
		for _, sub := range subqueries {
			if strings.Contains(sub, "l.") && !strings.Contains(from, " l ") {
				continue
			}
			where := "NOT EXISTS (SELECT 1 " + sub + ")"
			q := "SELECT p.id FROM " + from + " WHERE " + where + " ORDER BY p.id"
			want := "SELECT p.id FROM " + from + " WHERE (SELECT COUNT(*) " + sub + ") = 0 ORDER BY p.id"
			got, exp := queryRows(t, db, q), queryRows(t, db, want)
			if strings.Join(got, ",") != strings.Join(exp, ",") {
				t.Errorf("%s\n got %v\nwant %v (%s)", q, got, exp, want)
			}
		}
	}
	// The anti join of NOT NULL columns reads q by its index.
	plan := strings.Join(queryRows(t, db, "EXPLAIN FORMAT=TREE SELECT p.id FROM p WHERE NOT EXISTS (SELECT 1 FROM q WHERE q.a = p.a)"), "\n")
	if !strings.Contains(plan, "Lookup") {
		t.Errorf("NOT EXISTS on NOT NULL columns is not a lookup:\n%s", plan)
	}
}
