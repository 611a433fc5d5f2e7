package sql_test

import (
	"database/sql"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// explainRow is what TestExplainSargable checks of an EXPLAIN row.
type explainRow struct {
	table, typ, key string
}

// explainRows returns the table, type and key of each row of EXPLAIN q.
func explainRows(t *testing.T, db *sql.DB, q string) []explainRow {
	t.Helper()
	rows, err := db.Query("EXPLAIN " + q)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer rows.Close()
	var out []explainRow
	for _, r := range readRows(rows) {
		if len(r) != 12 {
			t.Fatalf("EXPLAIN %s: %d columns, want 12: %v", q, len(r), r)
		}
		out = append(out, explainRow{table: r[2], typ: r[4], key: r[6]})
	}
	return out
}

// planCase is a statement and the rows EXPLAIN must show for it.
type planCase struct {
	q    string
	want []explainRow
}

// checkPlans checks the EXPLAIN rows of each case.
func checkPlans(t *testing.T, db *sql.DB, cases []planCase) {
	t.Helper()
	for _, c := range cases {
		if got := explainRows(t, db, c.q); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("EXPLAIN %s:\n got %v\nwant %v", c.q, got, c.want)
		}
	}
}

// TestExplainSargable checks that every sargable shape is read through
// the index it names, as EXPLAIN in MySQL's format tells: row
// constructors on a composite key, IN lists and ranges on a prefix of
// one, ORs of ranges, IS NULL, in SELECT, SELECT ... FOR UPDATE, UPDATE
// and DELETE, and lookups per outer row in joins and correlated
// subqueries.
func TestExplainSargable(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	for _, q := range []string{
		"CREATE DATABASE x",
		"USE x",
		"CREATE TABLE t (w INT NOT NULL, id INT NOT NULL, k INT, n INT, s VARCHAR(10), q INT, " +
			"PRIMARY KEY (w, id), KEY k_idx (k), KEY kn_idx (n, k), KEY s_idx (s))",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.SetMaxOpenConns(1)
	var vals []string
	for i := 0; i < 2000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, %d, %s, 's%d', %d)", i%4, i, i%50, nullEvery(i, 7, i%9), i%30, i%10))
	}
	// ANALYZE TABLE gives the planner the table's size at once (its
	// row counts are kept for a second), so that it joins by lookups.
	for _, q := range []string{"INSERT INTO t VALUES " + strings.Join(vals, ","), "ANALYZE TABLE t"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q[:20], err)
		}
	}
	checkPlans(t, db, []planCase{
		{"SELECT * FROM t WHERE (w, id) IN ((1, 5), (1, 77), (2, 90))", []explainRow{{"t", "range", "PRIMARY"}}},
		{"SELECT * FROM t WHERE (w, id) IN ((1, 5), (1, 77)) FOR UPDATE", []explainRow{{"t", "range", "PRIMARY"}}},
		{"SELECT * FROM t WHERE (w, id) = (3, 77)", []explainRow{{"t", "const", "PRIMARY"}}},
		{"SELECT * FROM t WHERE (id, w) = (77, 3)", []explainRow{{"t", "const", "PRIMARY"}}},
		{"SELECT * FROM t WHERE (w, id) IN ((1, '5'), (1, 7.0))", []explainRow{{"t", "range", "PRIMARY"}}},
		{"SELECT * FROM t WHERE (w, id) IN ((1, 5)) AND q > 2", []explainRow{{"t", "const", "PRIMARY"}}},
		{"SELECT * FROM t WHERE (n, k) IN ((1, 5), (2, 6))", []explainRow{{"t", "range", "kn_idx"}}},
		{"SELECT * FROM t WHERE (n, k) IN ((1, 5), (2, NULL))", []explainRow{{"t", "ref", "kn_idx"}}},
		{"SELECT * FROM t WHERE w = 1 AND id IN (5, 77, 90)", []explainRow{{"t", "range", "PRIMARY"}}},
		{"SELECT * FROM t WHERE w = 1 AND id > 150", []explainRow{{"t", "range", "PRIMARY"}}},
		{"SELECT * FROM t WHERE w = 1", []explainRow{{"t", "ref", "PRIMARY"}}},
		{"SELECT * FROM t WHERE w IN (1, 2) AND id = 3", []explainRow{{"t", "range", "PRIMARY"}}},
		{"SELECT * FROM t WHERE w = 1 OR w = 3", []explainRow{{"t", "range", "PRIMARY"}}},
		{"SELECT * FROM t WHERE k < 3 OR k > 47", []explainRow{{"t", "range", "k_idx"}}},
		{"SELECT * FROM t WHERE n IS NULL", []explainRow{{"t", "ref", "kn_idx"}}},
		{"SELECT * FROM t WHERE n IS NOT NULL AND n < 2", []explainRow{{"t", "range", "kn_idx"}}},
		{"SELECT * FROM t WHERE s = 's7'", []explainRow{{"t", "ref", "s_idx"}}},
		{"SELECT * FROM t WHERE q = 5", []explainRow{{"t", "ALL", "NULL"}}},
		{"SELECT * FROM t WHERE (k = 5 AND q = 1) OR (k = 7 AND q = 2)", []explainRow{{"t", "range", "k_idx"}}},
		{"SELECT * FROM t WHERE (w = 1 AND q = 1) OR (w = 2 AND id > 100)", []explainRow{{"t", "range", "PRIMARY"}}},
		{"SELECT * FROM t WHERE (k, q) IN ((5, 5), (7, 7))", []explainRow{{"t", "range", "k_idx"}}},
		{"UPDATE t SET q = q + 1 WHERE (k = 5 AND q = 1) OR (k = 7 AND q = 2)", []explainRow{{"t", "range", "k_idx"}}},
		{"SELECT * FROM t WHERE s = 7", []explainRow{{"t", "ALL", "NULL"}}},
		{"UPDATE t SET q = q + 1 WHERE (w, id) IN ((1, 5), (1, 77))", []explainRow{{"t", "range", "PRIMARY"}}},
		{"UPDATE t SET q = q + 1 WHERE (w, id) = (1, 5)", []explainRow{{"t", "const", "PRIMARY"}}},
		{"DELETE FROM t WHERE (w, id) IN ((1, 999), (2, 998))", []explainRow{{"t", "range", "PRIMARY"}}},
		{"DELETE FROM t WHERE w = 1 AND id > 190", []explainRow{{"t", "range", "PRIMARY"}}},
		{"INSERT INTO t SELECT w + 10, id, k, n, s, q FROM t WHERE (w, id) IN ((1, 5), (1, 9))",
			[]explainRow{{"t", "ALL", "NULL"}, {"t", "range", "PRIMARY"}}},
		{"SELECT count(*) FROM t a JOIN t b ON b.w = a.w AND b.id = a.k WHERE a.w = 1 AND a.id < 10",
			[]explainRow{{"a", "range", "PRIMARY"}, {"b", "eq_ref", "PRIMARY"}}},
		{"SELECT a.id, (SELECT b.q FROM t b WHERE b.w = a.w AND b.id = a.q) FROM t a WHERE a.w = 1 AND a.id < 20",
			[]explainRow{{"a", "range", "PRIMARY"}, {"b", "eq_ref", "PRIMARY"}}},
		{"SELECT a.id, (SELECT b.q FROM t b WHERE (b.w, b.id) = (a.w, a.q)) FROM t a WHERE a.w = 1 AND a.id < 20",
			[]explainRow{{"a", "range", "PRIMARY"}, {"b", "eq_ref", "PRIMARY"}}},
		{"SELECT count(*) FROM t a WHERE a.w = 1 AND a.id < 10 AND (a.w, a.k) IN (SELECT b.w, b.id FROM t b)",
			[]explainRow{{"a", "range", "PRIMARY"}, {"b", "eq_ref", "PRIMARY"}}},
	})
	// The plan text stays available.
	var text []string
	rows, err := db.Query("EXPLAIN FORMAT=TREE UPDATE t SET q = q + 1 WHERE (w, id) IN ((1, 5), (1, 77))")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readRows(rows) {
		text = append(text, r[0])
	}
	rows.Close()
	if plan := strings.Join(text, "\n"); !strings.Contains(plan, "IndexedTableAccess(t)") {
		t.Errorf("EXPLAIN FORMAT=TREE of a row constructor UPDATE reads no index:\n%s", plan)
	}
}

// nullEvery returns "NULL" for every m-th i, else v.
func nullEvery(i, m, v int) string {
	if i%m == 0 {
		return "NULL"
	}
	return fmt.Sprint(v)
}

// TestSargableDifferential runs random row constructor, IN list, range
// and IS NULL predicates over random data twice: on a table with a
// composite primary key and composite secondary indexes, read through
// them, and on a copy without any index, read by full scans. SELECT,
// SELECT ... FOR UPDATE, UPDATE and DELETE must see and change exactly the
// same rows.
func TestSargableDifferential(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	const cols = "a INT NOT NULL, b VARCHAR(8) NOT NULL, c INT, d DECIMAL(6,2), e BIGINT"
	for _, q := range []string{
		"CREATE DATABASE x",
		"USE x",
		"CREATE TABLE tk (" + cols + ", PRIMARY KEY (a, b), KEY cd (c, d), KEY ec (e, c))",
		"CREATE TABLE tn (" + cols + ")",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r := rand.New(rand.NewSource(13))
	strs := []string{"'a'", "'A'", "'b'", "'ab'", "'b '", "''", "'1'", "'2'"}
	ints := func() string { return fmt.Sprint(r.Intn(7) - 1) }
	value := func(col string) string {
		switch r.Intn(12) {
		case 0:
			return "NULL"
		case 1:
			return fmt.Sprintf("%d.5", r.Intn(5))
		case 2:
			return fmt.Sprintf("'%d'", r.Intn(5))
		case 3:
			return "9223372036854775807"
		case 4:
			return "-1.00"
		}
		if col == "b" {
			return strs[r.Intn(len(strs))]
		}
		return ints()
	}
	seen := map[string]bool{}
	var rows []string
	for len(rows) < 120 {
		a, b := fmt.Sprint(r.Intn(40)-1), strs[r.Intn(len(strs))]
		if seen[a+strings.ToLower(strings.TrimRight(b, " '"))] {
			continue
		}
		seen[a+strings.ToLower(strings.TrimRight(b, " '"))] = true
		c, d, e := ints(), fmt.Sprintf("%d.%d", r.Intn(4), r.Intn(2)*5), ints()
		if r.Intn(5) == 0 {
			c = "NULL"
		}
		if r.Intn(5) == 0 {
			d = "NULL"
		}
		if r.Intn(6) == 0 {
			e = "NULL"
		}
		rows = append(rows, fmt.Sprintf("(%s, %s, %s, %s, %s)", a, b, c, d, e))
	}
	for _, tbl := range []string{"tk", "tn"} {
		if _, err := db.Exec("INSERT INTO " + tbl + " VALUES " + strings.Join(rows, ",")); err != nil {
			t.Fatal(err)
		}
	}
	row := func(cs ...string) string {
		vs := make([]string, len(cs))
		for i, c := range cs {
			vs[i] = value(c)
		}
		return "(" + strings.Join(vs, ", ") + ")"
	}
	pairs := [][]string{{"a", "b"}, {"b", "a"}, {"c", "d"}, {"e", "c"}, {"a", "c"}, {"a", "b", "c"}}
	predicate := func() string {
		p := pairs[r.Intn(len(pairs))]
		left := "(" + strings.Join(p, ", ") + ")"
		switch r.Intn(10) {
		case 0:
			return left + " = " + row(p...)
		case 1, 2, 3:
			n := 1 + r.Intn(5)
			items := make([]string, n)
			for i := range items {
				items[i] = row(p...)
			}
			return left + " IN (" + strings.Join(items, ", ") + ")"
		case 4:
			return fmt.Sprintf("%s = %s AND %s IN (%s, %s)", p[0], value(p[0]), p[1], value(p[1]), value(p[1]))
		case 5:
			return fmt.Sprintf("%s = %s AND %s > %s", p[0], value(p[0]), p[1], value(p[1]))
		case 6:
			return fmt.Sprintf("%s < %s OR %s > %s", p[0], value(p[0]), p[0], value(p[0]))
		case 7:
			return fmt.Sprintf("%s IS NULL OR %s IS NOT NULL AND %s = %s", p[0], p[1], p[1], value(p[1]))
		case 8:
			return fmt.Sprintf("(%s = %s AND %s = %s) OR (%s IN (%s, %s) AND e > %s)", p[0], value(p[0]), p[1], value(p[1]), p[0], value(p[0]), value(p[0]), value("e"))
		}
		return fmt.Sprintf("(%s) AND NOT %s IN (%s)", left+" IN ("+row(p...)+", "+row(p...)+")", p[0], value(p[0]))
	}
	query := func(q string) string {
		rs, err := db.Query(q)
		if err != nil {
			return "error: " + err.Error()
		}
		defer rs.Close()
		var out []string
		for _, r := range readRows(rs) {
			out = append(out, strings.Join(r, "|"))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	exec := func(q string) string {
		res, err := db.Exec(q)
		if err != nil {
			// Which string that is not a number a strict UPDATE or
			// DELETE meets first (1292, Truncated incorrect DOUBLE
			// value: 'x') depends on the order it reads rows in.
			if strings.Contains(err.Error(), "Error 1292") {
				return "error 1292"
			}
			return "error: " + err.Error()
		}
		n, _ := res.RowsAffected()
		return fmt.Sprint(n)
	}
	same := func(what, k, n string) {
		t.Helper()
		if k != n {
			t.Errorf("%s:\nindexed: %s\n   scan: %s", what, k, n)
		}
	}
	const sel = "SELECT a, b, c, d, e FROM %s WHERE %s"
	for i := 0; i < 400 && !t.Failed(); i++ {
		p := predicate()
		switch i % 8 {
		case 6:
			set := fmt.Sprintf("e = %d", r.Intn(5))
			same("UPDATE "+p, exec(fmt.Sprintf("UPDATE tk SET %s WHERE %s", set, p)), exec(fmt.Sprintf("UPDATE tn SET %s WHERE %s", set, p)))
		case 7:
			if i%32 == 7 {
				same("DELETE "+p, exec("DELETE FROM tk WHERE "+p), exec("DELETE FROM tn WHERE "+p))
			}
		case 4:
			// Lookups per outer row: a join and a correlated subquery
			// on the composite keys.
			for _, q := range []string{
				"SELECT %[1]s.a, %[1]s.b, y.c FROM %[1]s JOIN %[1]s y ON (y.a, y.b) = (%[1]s.e, %[1]s.b) WHERE %[1]s.c > " + value("c"),
				"SELECT %[1]s.a, y.b FROM %[1]s JOIN %[1]s y ON y.c = %[1]s.c AND y.d = %[1]s.d WHERE y.e IN (" + value("e") + ", " + value("e") + ")",
				"SELECT a, b FROM %[1]s WHERE " + p + " AND EXISTS (SELECT 1 FROM %[1]s y WHERE (y.c, y.d) = (%[1]s.c, %[1]s.d) AND y.a <> %[1]s.a)",
				"SELECT a, b, (SELECT max(y.e) FROM %[1]s y WHERE y.a = %[1]s.c AND y.b = %[1]s.b) FROM %[1]s WHERE " + p,
				"SELECT a, b FROM %[1]s WHERE " + p + " AND (e, b) IN (SELECT y.a, y.b FROM %[1]s y WHERE y.c IS NOT NULL)",
				"SELECT a, b FROM %[1]s WHERE (c, d) IN (SELECT y.e, y.d FROM %[1]s y WHERE " + p + ")",
				"SELECT a, b FROM %[1]s WHERE c IN (SELECT y.e FROM %[1]s y WHERE " + p + ")",
				"SELECT a, b FROM %[1]s WHERE EXISTS (SELECT 1 FROM %[1]s y WHERE y.e = %[1]s.c AND y.d > %[1]s.d)",
			} {
				same(q, query(fmt.Sprintf(q, "tk")), query(fmt.Sprintf(q, "tn")))
			}
		case 5:
			same(p+" FOR UPDATE", query(fmt.Sprintf(sel+" FOR UPDATE", "tk", p)), query(fmt.Sprintf(sel+" FOR UPDATE", "tn", p)))
		default:
			same(p, query(fmt.Sprintf(sel, "tk", p)), query(fmt.Sprintf(sel, "tn", p)))
		}
		same("contents after "+p, query(fmt.Sprintf(sel, "tk", "1")), query(fmt.Sprintf(sel, "tn", "1")))
	}
}
