package sql_test

import (
	"fmt"
	"strings"
	"testing"
)

// quantifiedOps are the comparisons a quantified subquery takes, each
// with its meaning over two non-NULL integers.
var quantifiedOps = []struct {
	op  string
	cmp func(x, y int) bool
}{
	{"=", func(x, y int) bool { return x == y }},
	{"<>", func(x, y int) bool { return x != y }},
	{"!=", func(x, y int) bool { return x != y }},
	{"<", func(x, y int) bool { return x < y }},
	{"<=", func(x, y int) bool { return x <= y }},
	{">", func(x, y int) bool { return x > y }},
	{">=", func(x, y int) bool { return x >= y }},
}

// triQuantified is x op ANY (set) (all false) or x op ALL (set) (all
// true) in MySQL's three-valued logic: ANY is TRUE when some member
// compares TRUE, else NULL when some compares NULL, else FALSE (empty:
// FALSE); ALL is FALSE when some compares FALSE, else NULL when some
// compares NULL, else TRUE (empty: TRUE).
func triQuantified(x *int, set []*int, cmp func(x, y int) bool, all bool) tri {
	sawNull := false
	for _, s := range set {
		if x == nil || s == nil {
			sawNull = true
			continue
		}
		if cmp(*x, *s) != all {
			if all {
				return triFalse
			}
			return triTrue
		}
	}
	switch {
	case sawNull:
		return triNull
	case all:
		return triTrue
	}
	return triFalse
}

// triString is t as the server writes it.
func triString(t tri) string {
	return [...]string{"0", "1", "NULL"}[t]
}

// TestQuantifiedSubqueries checks x op ANY|SOME|ALL (subquery) for
// every comparison, against answers computed here, over sets with and
// without NULLs, duplicates and the empty set, and x NULL: in a select
// list (the value, NULL included), in WHERE and WHERE NOT (the rows it
// keeps), correlated and not, as text and as a prepared statement with
// x and the set as parameters (sql/compat/quantified.go).
func TestQuantifiedSubqueries(t *testing.T) {
	db, mustExec := compatDB(t)
	// The sets by g; g 0 has no row (the empty set).
	sets := [][]*int{
		nil,
		{intp(3)},
		{intp(3), intp(7)},
		{intp(3), nil},
		{nil},
		{intp(5), intp(5)},
		{intp(1), intp(5), intp(9), nil},
	}
	xs := []*int{nil, intp(1), intp(3), intp(5), intp(7), intp(9)}
	mustExec("CREATE TABLE s (id INT PRIMARY KEY, g INT, c INT)")
	mustExec("CREATE TABLE o (id INT PRIMARY KEY, g INT, x INT)")
	id := 0
	for g, set := range sets {
		for _, c := range set {
			mustExec("INSERT INTO s VALUES (?, ?, ?)", id, g, c)
			id++
		}
	}
	type outerRow struct {
		g int
		x *int
	}
	var outer []outerRow
	for g := range sets {
		for _, x := range xs {
			mustExec("INSERT INTO o VALUES (?, ?, ?)", len(outer), g, x)
			outer = append(outer, outerRow{g, x})
		}
	}
	check := func(q string, got, want []string) {
		t.Helper()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s:\n got %v\nwant %v", q, got, want)
		}
	}
	for _, o := range quantifiedOps {
		for _, quant := range []string{"ANY", "SOME", "ALL"} {
			all := quant == "ALL"
			// Correlated: each outer row's own set.
			q := fmt.Sprintf("SELECT id, x %s %s (SELECT c FROM s WHERE s.g = o.g) FROM o ORDER BY id", o.op, quant)
			var want, keep, drop []string
			for i, r := range outer {
				v := triQuantified(r.x, sets[r.g], o.cmp, all)
				want = append(want, fmt.Sprintf("%d %s", i, triString(v)))
				if v == triTrue {
					keep = append(keep, fmt.Sprint(i))
				}
				if v == triFalse {
					drop = append(drop, fmt.Sprint(i))
				}
			}
			check(q, queryRows(t, db, q), want)
			q = fmt.Sprintf("SELECT id FROM o WHERE x %s %s (SELECT c FROM s WHERE s.g = o.g) ORDER BY id", o.op, quant)
			check(q, queryRows(t, db, q), keep)
			q = fmt.Sprintf("SELECT id FROM o WHERE NOT (x %s %s (SELECT c FROM s WHERE s.g = o.g)) ORDER BY id", o.op, quant)
			check(q, queryRows(t, db, q), drop)

			// Not correlated, as text and prepared.
			for g, set := range sets {
				q := fmt.Sprintf("SELECT id, x %s %s (SELECT c FROM s WHERE s.g = %d) FROM o WHERE g = 0 ORDER BY id", o.op, quant, g)
				var want []string
				for i, r := range outer {
					if r.g == 0 {
						want = append(want, fmt.Sprintf("%d %s", i, triString(triQuantified(r.x, set, o.cmp, all))))
					}
				}
				check(q, queryRows(t, db, q), want)

				p := fmt.Sprintf("SELECT ? %s %s (SELECT c FROM s WHERE s.g = ?)", o.op, quant)
				stmt, err := db.Prepare(p)
				if err != nil {
					t.Fatalf("prepare %s: %v", p, err)
				}
				for _, x := range xs {
					var arg any
					if x != nil {
						arg = *x
					}
					rows, err := stmt.Query(arg, g)
					got := collectRows(t, p, rows, err)
					check(fmt.Sprintf("%s [%v %d]", p, arg, g), got, []string{triString(triQuantified(x, set, o.cmp, all))})
				}
				stmt.Close()
			}
		}
	}
}

// TestQuantifiedSubqueryStatements checks quantified comparisons in
// HAVING, ON, UPDATE and DELETE, MySQL's errors for a LIMIT in the
// subquery (1235) and for a row compared with < ANY (1241), and that a
// quantified comparison's column is named as written. The answers are
// MySQL 8's (and MariaDB 10.11's, which agrees on each).
func TestQuantifiedSubqueryStatements(t *testing.T) {
	db, mustExec := compatDB(t)
	mustExec("CREATE TABLE t (a INT PRIMARY KEY, x INT)")
	mustExec("INSERT INTO t VALUES (1, 1), (2, 5), (3, NULL), (4, 10)")
	mustExec("CREATE TABLE s (a INT PRIMARY KEY, c INT)")
	mustExec("INSERT INTO s VALUES (1, 3), (2, 7)")
	mustExec("CREATE TABLE sn (a INT PRIMARY KEY, c INT)")
	mustExec("INSERT INTO sn VALUES (1, 3), (2, NULL)")
	for _, c := range []struct{ q, want string }{
		{"SELECT a, COUNT(*) FROM t GROUP BY a HAVING a >= ALL (SELECT a FROM s) ORDER BY a", "2 1,3 1,4 1"},
		{"SELECT t.a, s.a FROM t JOIN s ON t.x < ANY (SELECT c FROM sn WHERE sn.a = s.a) ORDER BY 1, 2", "1 1"},
		{"SELECT t.a, s.a FROM t LEFT JOIN s ON t.x > SOME (SELECT c FROM sn WHERE sn.a = s.a) ORDER BY 1, 2", "1 NULL,2 1,3 NULL,4 1"},
		{"SELECT a FROM t WHERE x > ALL (SELECT c FROM s WHERE s.a <= t.a) ORDER BY a", "4"},
		{"SELECT a FROM t WHERE x > ALL (SELECT c FROM s WHERE s.a > 5) ORDER BY a", "1,2,3,4"},
		{"SELECT a FROM t WHERE x <> ANY (SELECT c FROM s UNION ALL SELECT c FROM sn) ORDER BY a", "1,2,4"},
		{"SELECT a FROM t WHERE x < ANY ((SELECT c FROM s) UNION (SELECT 6)) ORDER BY a", "1,2"},
		{"SELECT a FROM t WHERE x >= ALL (SELECT MAX(c) FROM s) ORDER BY a", "4"},
		{"SELECT a FROM t WHERE x > ANY (SELECT c FROM s WHERE x < ANY (SELECT c FROM sn)) ORDER BY a", ""},
		{"SELECT a FROM t WHERE x <= ANY (SELECT c FROM s) AND x >= ALL (SELECT c FROM sn WHERE c IS NOT NULL) ORDER BY a", "2"},
	} {
		check := strings.Join(queryRows(t, db, c.q), ",")
		if check != c.want {
			t.Errorf("%s: got %q, want %q", c.q, check, c.want)
		}
	}
	res, err := db.Exec("UPDATE t SET x = x + 100 WHERE x < ALL (SELECT c FROM s)")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Errorf("UPDATE: %d rows affected, want 1", n)
	}
	res, err = db.Exec("DELETE FROM t WHERE x > ANY (SELECT c FROM s)")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 3 {
		t.Errorf("DELETE: %d rows affected, want 3", n)
	}
	if got := strings.Join(queryRows(t, db, "SELECT a, x FROM t ORDER BY a"), ","); got != "3 NULL" {
		t.Errorf("after UPDATE and DELETE: %q, want %q", got, "3 NULL")
	}
	for _, c := range []struct {
		q    string
		code string
	}{
		{"SELECT a FROM t WHERE x > ANY (SELECT c FROM s LIMIT 1)", "1235"},
		{"SELECT (1, 2) < ANY (SELECT a, c FROM s)", "1241"},
		{"SELECT 1 <> ALL (SELECT a, c FROM s)", "1241"},
	} {
		_, err := db.Query(c.q)
		if err == nil || !strings.Contains(err.Error(), "Error "+c.code) {
			t.Errorf("%s: %v, want error %s", c.q, err, c.code)
		}
	}
	rows, err := db.Query("SELECT 2 <  ANY (SELECT c FROM s), 9 >= ALL (SELECT c FROM s) AS y")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	got := collectRows(t, "names", rows, nil)
	if strings.Join(cols, "|") != "2 <  ANY (SELECT c FROM s)|y" || strings.Join(got, ",") != "1 1" {
		t.Errorf("columns %q, rows %q", cols, got)
	}
}
