package sql_test

import (
	"fmt"
	"strings"
	"testing"
)

// TestJoinOrderByOuter runs random joins (inner, left, EXISTS, NOT
// EXISTS, three tables) ordered by columns of their outer table, with and
// without LIMIT, ascending and descending, over x.tk, whose primary key
// (a, b) gives the order when tk is the outer side (planrules'
// outerorder.go: no Sort), and over the index-less copy x.tn as the outer
// side, which GMS sorts: the sort keys must come in the same sequence
// and the rows must be the same. EXPLAIN of each tk query must show no
// filesort on the outer table when tk is read first.
func TestJoinOrderByOuter(t *testing.T) {
	db, r, pin := orderTables(t)
	// Each shape's %[1]s is the outer table, its WHERE clause's
	// conditions on x are added after it.
	shapes := []string{
		"SELECT %[2]s, y.a, y.b, y.c FROM %[1]s x JOIN tk y ON y.a = x.c + 30 AND y.b = x.b",
		"SELECT %[2]s, y.a, y.b, y.e FROM %[1]s x JOIN tk y ON y.a = x.a AND y.b = x.b",
		"SELECT %[2]s, y.a, y.e FROM %[1]s x LEFT JOIN tk y ON y.a = x.e AND y.b = x.b",
		"SELECT %[2]s, x.d FROM %[1]s x WHERE EXISTS (SELECT 1 FROM tk y WHERE y.a = x.a + 1 AND y.b = x.b)",
		"SELECT %[2]s, x.d FROM %[1]s x WHERE NOT EXISTS (SELECT 1 FROM tk y WHERE y.a = x.a + 1 AND y.b = x.b)",
		"SELECT %[2]s, x.d FROM %[1]s x WHERE x.a IN (SELECT y.c FROM tk y WHERE y.e > 0)",
		"SELECT %[2]s, y.b, z.b FROM %[1]s x JOIN tk y ON y.a = x.a AND y.b = x.b LEFT JOIN tk z ON z.a = y.e AND z.b = y.b",
		"SELECT %[2]s, y.a, y.b FROM %[1]s x JOIN tk y ON y.c = x.c AND y.e = x.e",
	}
	orders := [][]string{{"x.a", "x.b"}, {"x.a"}}
	noSort := 0
	for i := 0; i < 240 && !t.Failed(); i++ {
		order := orders[r.Intn(len(orders))]
		dir := []string{"", " ASC", " DESC"}[r.Intn(3)]
		var by []string
		for _, c := range order {
			by = append(by, c+dir)
		}
		var where []string
		switch r.Intn(4) {
		case 0:
			where = append(where, strings.Replace(pin("c"), "c", "x.c", 1))
		case 1:
			where = append(where, fmt.Sprintf("x.a > %d", r.Intn(30)))
		case 2:
			where = append(where, fmt.Sprintf("x.e <> %d", r.Intn(3)))
		}
		limit := ""
		if r.Intn(2) == 0 {
			limit = fmt.Sprintf(" LIMIT %d", 1+r.Intn(12))
		}
		shape := shapes[r.Intn(len(shapes))]
		q := fmt.Sprintf(shape, "%[1]s", strings.Join(order, ", "))
		if len(where) > 0 {
			if strings.Contains(q, " WHERE ") {
				q += " AND " + strings.Join(where, " AND ")
			} else {
				q += " WHERE " + strings.Join(where, " AND ")
			}
		}
		q += " ORDER BY " + strings.Join(by, ", ") + limit
		kq, nq := fmt.Sprintf(q, "tk"), fmt.Sprintf(q, "tn")
		k, n := queryOrdered(db, kq, len(order)), queryOrdered(db, nq, len(order))
		if strings.HasPrefix(k.keys, "error") || strings.HasPrefix(n.keys, "error") {
			t.Fatalf("%s: %s / %s", kq, k.keys, n.keys)
		}
		if k.keys != n.keys {
			t.Errorf("%s: sort keys differ\nouter indexed:\n%s\nouter sorted:\n%s", kq, k.keys, n.keys)
			continue
		}
		if limit == "" && k.rows != n.rows {
			t.Errorf("%s: rows differ\nouter indexed:\n%s\nouter sorted:\n%s", kq, k.rows, n.rows)
		}
		ex := explainKeyExtra(t, db, kq)
		if len(ex) > 0 && strings.HasPrefix(ex[0], "x ") && !strings.Contains(ex[0], "Using filesort") {
			noSort++
		}
	}
	// Many plans read the outer table through a secondary index (the
	// WHERE clause's) or join by merging, and sort, as they must.
	if noSort < 30 {
		t.Errorf("only %d of 240 joins read their outer table in order without a sort", noSort)
	}
	t.Logf("%d of 240 joins read their outer table in order", noSort)
}

// TestExplainJoinOrderByOuter checks that a join ordered by its outer
// table's primary key sorts nothing and that one ordered by a column of
// its inner table, or by an outer column the read does not order, sorts.
func TestExplainJoinOrderByOuter(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE DATABASE x", "USE x",
		"CREATE TABLE t (w INT NOT NULL, id INT NOT NULL, k INT, q INT, PRIMARY KEY (w, id), KEY k (k))")
	var vals []string
	for i := 0; i < 400; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, %d, %d)", 1+i%4, i, (i*7)%400, i%10))
	}
	mustExec(t, db, "INSERT INTO t VALUES "+strings.Join(vals, ","), "ANALYZE TABLE t")
	for _, c := range []struct {
		q    string
		want string // the first table's EXPLAIN row: table, type, key
		sort bool
	}{
		{"SELECT a.w, a.id, b.q FROM t b JOIN t a ON a.k = b.id AND b.w = a.w WHERE a.q = 3 ORDER BY a.w, a.id LIMIT 20", "a index PRIMARY", false},
		{"SELECT a.w, a.id, b.q FROM t a JOIN t b ON a.k = b.id AND b.w = a.w WHERE a.q = 3 ORDER BY a.w DESC, a.id DESC LIMIT 5", "a index PRIMARY", false},
		{"SELECT a.w, a.id FROM t a WHERE a.q = 3 AND EXISTS (SELECT 1 FROM t b WHERE b.w = a.w AND b.id = a.k) ORDER BY a.w LIMIT 5", "a index PRIMARY", false},
		{"SELECT a.w, a.id, b.q FROM t a LEFT JOIN t b ON b.w = a.w AND b.id = a.k WHERE a.w = 2 ORDER BY a.id LIMIT 5", "a ref PRIMARY", false},
		// Not the outer read's order: sorted.
		{"SELECT a.w, a.id, b.q FROM t a JOIN t b ON a.k = b.id AND b.w = a.w WHERE a.q = 3 ORDER BY a.id LIMIT 5", "a ALL ", true},
		{"SELECT a.w, a.id, b.q FROM t a JOIN t b ON a.k = b.id AND b.w = a.w WHERE a.q = 3 ORDER BY a.w, b.q LIMIT 5", "a ALL ", true},
	} {
		got := explainKeyExtra(t, db, c.q)
		sorted := len(got) > 0 && strings.Contains(got[0], "Using filesort")
		if len(got) != 2 || !strings.HasPrefix(got[0], c.want) || sorted != c.sort {
			t.Errorf("EXPLAIN %s:\n got %v\nwant %s, sorted %v", c.q, got, c.want, c.sort)
		}
	}
}
