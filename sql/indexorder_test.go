package sql_test

import (
	"database/sql"
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// explainKeyExtra returns the key and Extra of each row of EXPLAIN q.
func explainKeyExtra(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query("EXPLAIN " + q)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for _, r := range readRows(rows) {
		out = append(out, r[2]+" "+r[4]+" "+r[6]+" ["+r[11]+"]")
	}
	return out
}

// setupOrderTable creates x.t: a composite primary key, a secondary index
// whose leading columns a query pins, a nullable indexed column.
func setupOrderTable(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []string{
		"CREATE DATABASE x",
		"USE x",
		"CREATE TABLE t (w INT NOT NULL, d INT NOT NULL, id INT NOT NULL, last VARCHAR(16), first VARCHAR(16), n INT, " +
			"PRIMARY KEY (w, d, id), KEY name_idx (w, d, last, first), KEY n_idx (n))",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var vals []string
	for i := 0; i < 600; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, %d, 'L%d', 'F%d', %s)", 1+i%2, 1+i%3, i, i%7, i%11, nullEvery(i, 5, i%13)))
	}
	for _, q := range []string{"INSERT INTO t VALUES " + strings.Join(vals, ","), "ANALYZE TABLE t"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q[:20], err)
		}
	}
}

// TestExplainIndexChoice checks that a read goes through the index whose
// leading columns the WHERE clause pins the most of, not a unique index
// it pins less of (planrules.PreferPinnedIndex).
func TestExplainIndexChoice(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	setupOrderTable(t, db)
	for _, c := range []struct{ q, want string }{
		{"SELECT id FROM t WHERE w = 1 AND d = 2 AND last = 'L3'", "t ref name_idx"},
		{"SELECT id FROM t WHERE d = 2 AND last = 'L3' AND w = 1 AND first > 'F2'", "t range name_idx"},
		{"SELECT id FROM t WHERE w = 1 AND d = 2 AND last > 'L3'", "t range name_idx"},
		{"UPDATE t SET n = n + 1 WHERE w = 1 AND d = 2 AND last = 'L3'", "t ref name_idx"},
		{"DELETE FROM t WHERE w = 2 AND d = 2 AND last = 'L9'", "t ref name_idx"},
		// The primary key pinned whole is one row: it stays.
		{"SELECT id FROM t WHERE w = 1 AND d = 2 AND id = 5 AND last = 'L3'", "t const PRIMARY"},
		// As many pinned, and a bound on the primary key's next column.
		{"SELECT id FROM t WHERE w = 1 AND d = 2 AND id > 5", "t range PRIMARY"},
		{"SELECT id FROM t WHERE w = 1 AND d = 2", "t ref PRIMARY"},
	} {
		got := explainKeyExtra(t, db, c.q)
		if len(got) != 1 || !strings.HasPrefix(got[0], c.want+" [") {
			t.Errorf("EXPLAIN %s:\n got %v\nwant %s", c.q, got, c.want)
		}
	}
}

// TestExplainOrderByIndex checks that an ORDER BY the index read already
// gives, once the columns the WHERE clause pins are set aside, sorts
// nothing, and that a descending one reads the index backwards
// (planrules.OrderByIndex).
func TestExplainOrderByIndex(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	setupOrderTable(t, db)
	for _, c := range []struct {
		q    string
		want string
		sort bool
	}{
		{"SELECT id FROM t WHERE w = 1 AND d = 2 ORDER BY id LIMIT 1", "t ref PRIMARY", false},
		{"SELECT id FROM t WHERE w = 1 AND d = 2 ORDER BY id DESC LIMIT 1", "t ref PRIMARY", false},
		{"SELECT id FROM t WHERE w = 1 AND d = 2 ORDER BY id LIMIT 1 FOR UPDATE", "t ref PRIMARY", false},
		{"SELECT id FROM t WHERE w = 1 AND d = 2 ORDER BY d, id", "t ref PRIMARY", false},
		{"SELECT id FROM t WHERE w = 1 AND d = 2 AND id > 7 ORDER BY w DESC, id DESC", "t range PRIMARY", false},
		{"SELECT id FROM t WHERE w = 1 ORDER BY d, id", "t ref PRIMARY", false},
		{"SELECT id FROM t WHERE w = 1 AND d = 2 AND last = 'L3' ORDER BY first", "t ref name_idx", false},
		{"SELECT id FROM t WHERE w = 1 AND d = 2 AND last = 'L3' ORDER BY first DESC", "t ref name_idx", false},
		// An index of the same pinned columns that gives the order
		// (planrules.orderingIndex).
		{"SELECT id FROM t WHERE w = 1 AND d = 2 ORDER BY last, first LIMIT 3", "t ref name_idx", false},
		{"SELECT id FROM t WHERE n IS NULL ORDER BY n", "t ref n_idx", false},
		{"DELETE FROM t WHERE w = 2 AND d = 1 ORDER BY id LIMIT 1", "t ref PRIMARY", false},
		{"UPDATE t SET n = 1 WHERE w = 2 AND d = 1 ORDER BY id DESC LIMIT 2", "t ref PRIMARY", false},
		// Not the index's order: sorted.
		{"SELECT id FROM t WHERE w = 1 AND d = 2 ORDER BY id, last", "t ref PRIMARY", true},
		{"SELECT id FROM t WHERE w = 1 AND d = 2 ORDER BY id, w DESC", "t ref PRIMARY", false},
		// Sorted whichever index is read: with statistics GMS estimates
		// both alike and reads the covering one.
		{"SELECT id FROM t WHERE w = 1 AND d IN (1, 2) ORDER BY id", "t range name_idx", true},
		{"SELECT id FROM t WHERE w = 1 AND d > 1 ORDER BY id", "t range name_idx", true},
		{"SELECT id FROM t WHERE w = 1 AND d = 2 ORDER BY id + 1", "t ref PRIMARY", true},
		// A secondary index's entries end with the primary key, in its
		// order (planrules.primaryKeySuffix).
		{"SELECT id FROM t WHERE n = 3 ORDER BY n, w, d, id LIMIT 2", "t ref n_idx", false},
		{"SELECT id FROM t WHERE n > 3 ORDER BY n, w, d, id LIMIT 2", "t range n_idx", false},
		{"SELECT id FROM t WHERE n > 3 ORDER BY n DESC, w DESC, d DESC, id DESC LIMIT 2", "t range n_idx", false},
		{"SELECT id FROM t WHERE n > 3 ORDER BY n, w, id LIMIT 2", "t range n_idx", true},
		// No WHERE clause, a LIMIT: the whole of the index, in order.
		{"SELECT id FROM t ORDER BY n DESC, w DESC, d DESC, id DESC LIMIT 3", "t index n_idx", false},
		{"SELECT id FROM t ORDER BY n, w, d, id LIMIT 3 OFFSET 2", "t index n_idx", false},
	} {
		got := explainKeyExtra(t, db, c.q)
		sorted := len(got) == 1 && strings.Contains(got[0], "Using filesort")
		if len(got) != 1 || !strings.HasPrefix(got[0], c.want+" [") || sorted != c.sort {
			t.Errorf("EXPLAIN %s:\n got %v\nwant %s, sorted %v", c.q, got, c.want, c.sort)
		}
	}
}

// TestOrderByIndexDifferential runs random ORDER BY queries, with and
// without LIMIT, ascending and descending, over leading columns pinned by
// equalities, IS NULL and one-value IN lists, on a table with composite
// keys (read in index order where the rule applies) and on an index-less
// copy (sorted by GMS): the sort keys must come in the same sequence and
// the rows must be the same, as must the rows an UPDATE or DELETE ...
// ORDER BY ... LIMIT changes. Ties (many rows with one value of the sort
// columns), NULLs, collated strings and empty ranges are all in the data.
func TestOrderByIndexDifferential(t *testing.T) {
	db, r, pin := orderTables(t)
	// shapes are a WHERE clause pinning leading columns and the columns
	// an ORDER BY may use after them.
	shapes := []func() (string, []string){
		func() (string, []string) { return pin("a"), []string{"b"} },
		func() (string, []string) { return pin("c"), []string{"d"} },
		func() (string, []string) { return pin("e"), []string{"c", "d"} },
		func() (string, []string) { return pin("e") + " AND " + pin("c"), []string{"d"} },
		func() (string, []string) { return pin("e") + " AND c > " + fmt.Sprint(r.Intn(3)), []string{"c", "d"} },
		func() (string, []string) { return pin("a") + " AND b > 'a'", []string{"b"} },
		// Then the primary key's columns, which end every entry of a
		// secondary index (planrules.primaryKeySuffix).
		func() (string, []string) { return pin("c"), []string{"d", "a", "b"} },
		func() (string, []string) {
			return pin("e") + " AND c > " + fmt.Sprint(r.Intn(3)), []string{"c", "d", "a", "b"}
		},
	}
	query := func(q string, nkeys int) orderedResult { return queryOrdered(db, q, nkeys) }
	exec := func(q string) string {
		res, err := db.Exec(q)
		if err != nil {
			return "error: " + err.Error()
		}
		n, _ := res.RowsAffected()
		return fmt.Sprint(n)
	}
	const all = "SELECT a, b, c, d, e FROM %s"
	for i := 0; i < 300 && !t.Failed(); i++ {
		where, after := shapes[r.Intn(len(shapes))]()
		order := after[:1+r.Intn(len(after))]
		dir := []string{"", " ASC", " DESC"}[r.Intn(3)]
		var by []string
		for _, c := range order {
			by = append(by, c+dir)
		}
		limit := ""
		if r.Intn(2) == 0 {
			limit = fmt.Sprintf(" LIMIT %d", 1+r.Intn(4))
		}
		if i%10 == 9 && order[0] == "b" {
			// b is unique within a, so the rows changed are the same.
			set := fmt.Sprintf("UPDATE %%s SET e = %d WHERE %s ORDER BY %s%s", r.Intn(9), where, strings.Join(by, ", "), limit)
			if r.Intn(3) == 0 {
				set = fmt.Sprintf("DELETE FROM %%s WHERE %s ORDER BY %s%s", where, strings.Join(by, ", "), limit)
			}
			k, n := exec(fmt.Sprintf(set, "tk")), exec(fmt.Sprintf(set, "tn"))
			if k != n {
				t.Errorf("%s: indexed %s, scan %s", set, k, n)
			}
			if k, n := query(fmt.Sprintf(all, "tk"), 0), query(fmt.Sprintf(all, "tn"), 0); k.rows != n.rows {
				t.Errorf("contents after %s:\nindexed:\n%s\n   scan:\n%s", set, k.rows, n.rows)
			}
			continue
		}
		q := fmt.Sprintf("SELECT %s, a, b, c, d, e FROM %%s WHERE %s ORDER BY %s%s", strings.Join(order, ", "), where, strings.Join(by, ", "), limit)
		k, n := query(fmt.Sprintf(q, "tk"), len(order)), query(fmt.Sprintf(q, "tn"), len(order))
		if k.keys != n.keys {
			t.Errorf("%s: sort keys differ\nindexed:\n%s\n   scan:\n%s", q, k.keys, n.keys)
			continue
		}
		if limit == "" && k.rows != n.rows {
			t.Errorf("%s: rows differ\nindexed:\n%s\n   scan:\n%s", q, k.rows, n.rows)
		}
	}
}

// orderedResult is the answer of an ordered query: its rows' sort keys
// in their order, and the rows, sorted.
type orderedResult struct{ keys, rows string }

// queryOrdered runs q, whose first nkeys columns are its sort keys; an
// error is the keys' text.
func queryOrdered(db *sql.DB, q string, nkeys int) orderedResult {
	rs, err := db.Query(q)
	if err != nil {
		return orderedResult{keys: "error: " + err.Error()}
	}
	defer rs.Close()
	var keys, all []string
	for _, row := range readRows(rs) {
		keys = append(keys, strings.Join(row[:nkeys], "|"))
		all = append(all, strings.Join(row, "|"))
	}
	sort.Strings(all)
	return orderedResult{strings.Join(keys, "\n"), strings.Join(all, "\n")}
}

// orderTables creates x.tk, with composite keys, and x.tn, the same rows
// without any index: ties, NULLs and strings equal under the collation in
// the data. pin returns a condition that pins a column to one value.
func orderTables(t *testing.T) (db *sql.DB, r *rand.Rand, pin func(col string) string) {
	srv := startServer(t, true)
	db = openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	const cols = "a INT NOT NULL, b VARCHAR(8) NOT NULL, c INT, d DECIMAL(6,2), e BIGINT"
	for _, q := range []string{
		"CREATE DATABASE x",
		"USE x",
		"CREATE TABLE tk (" + cols + ", PRIMARY KEY (a, b), KEY cd (c, d), KEY ecd (e, c, d))",
		"CREATE TABLE tn (" + cols + ")",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	r = rand.New(rand.NewSource(29))
	strs := []string{"'a'", "'A'", "'b'", "'ab'", "'b '", "''", "'1'", "'2'", "'B'"}
	seen := map[string]bool{}
	var rows []string
	for len(rows) < 150 {
		a, b := fmt.Sprint(r.Intn(40)), strs[r.Intn(len(strs))]
		k := a + strings.ToLower(strings.TrimRight(b, " '"))
		if seen[k] {
			continue
		}
		seen[k] = true
		c, d, e := fmt.Sprint(r.Intn(4)), fmt.Sprintf("%d.%d", r.Intn(3), r.Intn(2)*5), fmt.Sprint(r.Intn(3))
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
	pin = func(col string) string {
		v := fmt.Sprint(r.Intn(6) - 1)
		switch r.Intn(6) {
		case 0:
			return col + " IS NULL"
		case 1:
			return fmt.Sprintf("%s IN (%s, %s)", col, v, v)
		case 2:
			return fmt.Sprintf("%s = '%s'", col, v)
		}
		return col + " = " + v
	}
	return db, r, pin
}

// TestMinMaxByIndex checks MIN and MAX answered from the first row of an
// index read (planrules.MinMaxByIndex) against GMS's aggregation over an
// index-less copy: pinned prefixes, nullable columns, empty reads.
func TestMinMaxByIndex(t *testing.T) {
	db, r, pin := orderTables(t)
	tree := func(q string) string {
		rows, err := db.Query("EXPLAIN FORMAT=TREE " + q)
		if err != nil {
			t.Fatalf("EXPLAIN %s: %v", q, err)
		}
		defer rows.Close()
		var text []string
		for _, row := range readRows(rows) {
			text = append(text, row[0])
		}
		return strings.Join(text, "\n")
	}
	for _, q := range []string{
		"SELECT MIN(b) FROM tk WHERE a = 3",
		"SELECT MAX(d) FROM tk WHERE c = 1",
		"SELECT MAX(d) FROM tk WHERE e = 1 AND c IS NULL",
		"SELECT MIN(c) + 1 FROM tk WHERE e = 2",
		// No WHERE clause: the whole of an index that leads with the
		// column.
		"SELECT MAX(c) FROM tk",
		"SELECT MIN(e) FROM tk",
		"SELECT MAX(a) FROM tk",
		// Several aggregates: one read of one row each.
		"SELECT MIN(c), MAX(c) FROM tk",
		"SELECT MAX(d) AS hi, MIN(d) lo, MAX(d) + 1 FROM tk WHERE c = 1",
		"SELECT MIN(a), MAX(a), MIN(e), MAX(c) FROM tk",
	} {
		plan := tree(q)
		// One read per distinct aggregate (GMS computes MAX(d) once).
		aggs := map[string]bool{}
		for _, m := range regexp.MustCompile(`M(IN|AX)\(\w+\)`).FindAllString(q, -1) {
			aggs[m] = true
		}
		if strings.Count(plan, "Limit(1)") != len(aggs) {
			t.Errorf("%s reads every row:\n%s", q, plan)
		}
	}
	shapes := [][2]string{{"a", "b"}, {"c", "d"}, {"e", "c"}, {"e", "d"}}
	for i := 0; i < 200 && !t.Failed(); i++ {
		sh := shapes[r.Intn(len(shapes))]
		where := pin(sh[0])
		if sh[1] == "d" && sh[0] == "e" {
			where += " AND " + pin("c")
		}
		agg := []string{"MIN", "MAX"}[r.Intn(2)]
		q := fmt.Sprintf("SELECT %s(%s), COUNT(*) FROM %%s WHERE %s", agg, sh[1], where)
		if r.Intn(2) == 0 {
			q = fmt.Sprintf("SELECT %s(%s) FROM %%s WHERE %s", agg, sh[1], where)
		}
		if r.Intn(4) == 0 {
			// The whole table, by an index that leads with the column
			// (or by none: b, d).
			q = fmt.Sprintf("SELECT %s(%s) FROM %%s", agg, []string{"a", "b", "c", "d", "e"}[r.Intn(5)])
		}
		if r.Intn(3) == 0 {
			// Several aggregates, of the pinned shape's column or of
			// the whole table's, some of which no index serves.
			var aggs []string
			for k := 1 + r.Intn(4); k > 0; k-- {
				c := sh[1]
				if r.Intn(3) == 0 {
					c = []string{"a", "b", "c", "d", "e"}[r.Intn(5)]
				}
				aggs = append(aggs, fmt.Sprintf("%s(%s)", []string{"MIN", "MAX"}[r.Intn(2)], c))
			}
			if r.Intn(2) == 0 {
				q = fmt.Sprintf("SELECT %s FROM %%s WHERE %s", strings.Join(aggs, ", "), where)
			} else {
				q = fmt.Sprintf("SELECT %s FROM %%s", strings.Join(aggs, ", "))
			}
		}
		var got [2]string
		for j, tbl := range []string{"tk", "tn"} {
			rows, err := db.Query(fmt.Sprintf(q, tbl))
			if err != nil {
				got[j] = "error: " + err.Error()
				continue
			}
			got[j] = fmt.Sprint(readRows(rows))
			rows.Close()
		}
		if got[0] != got[1] {
			t.Errorf("%s: indexed %s, scan %s", q, got[0], got[1])
		}
	}
}
