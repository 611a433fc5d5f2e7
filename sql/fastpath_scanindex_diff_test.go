package sql_test

import (
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Range SELECTs over secondary indexes on the fast path against GMS's
// path: random tables with an integer or composite primary key and one
// or two secondary indexes (unique or not, of one to three columns,
// integers and strings under four collations, NULLs among the values),
// and random queries pinning a prefix of an index by equalities and IN
// lists and bounding the next column, with other conditions, orders
// (none, the index's own, the primary key's, any), LIMIT and aggregates.
// Every answer must be GMS's, byte for byte (fastpath_diff_test.go's
// harness); what the fast path cannot answer as every plan of GMS's
// would (scanindex.go) must go to GMS.

// indexTable is one random table of the test.
type indexTable struct {
	name    string
	keys    []string   // the primary key's columns
	indexes [][]string // the secondary indexes' columns
	create  string
}

// ixCols are the columns of an indexTable besides the key.
var ixCols = []string{"a", "b", "s", "t", "v", "m"}

// newIndexTable returns a random table named name.
func newIndexTable(r *rand.Rand, name string) indexTable {
	t := indexTable{name: name}
	cols := []string{}
	if r.Intn(2) == 0 {
		t.keys = []string{"id"}
		cols = append(cols, "id INT NOT NULL")
	} else {
		t.keys = []string{"w", "id"}
		cols = append(cols, "w SMALLINT NOT NULL", "id INT NOT NULL")
	}
	coll := []string{"utf8mb4_0900_ai_ci", "utf8mb4_bin", "utf8mb4_general_ci", "latin1_swedish_ci"}[r.Intn(4)]
	charset := "utf8mb4"
	if strings.HasPrefix(coll, "latin1") {
		charset = "latin1"
	}
	cols = append(cols, "a INT", "b TINYINT UNSIGNED", "s VARCHAR(8) CHARACTER SET "+charset+" COLLATE "+coll,
		"t CHAR(4)", "v BIGINT", "m DECIMAL(6,2)")
	cols = append(cols, "PRIMARY KEY ("+strings.Join(t.keys, ", ")+")")
	shapes := [][]string{{"a"}, {"a", "b"}, {"s"}, {"s", "a"}, {"b", "s", "a"}, {"t", "b"}, {"a", "s"}}
	if len(t.keys) == 2 {
		shapes = append(shapes, []string{"w", "s", "a"}, []string{"w", "a", "id"}, []string{"w", "b"})
	}
	n := 1 + r.Intn(2)
	for i := 0; i < n; i++ {
		ix := shapes[r.Intn(len(shapes))]
		if i > 0 && ix[0] == t.indexes[0][0] {
			continue // GMS's choice between the two: not the fast path's
		}
		kind := "KEY"
		if r.Intn(3) == 0 {
			kind = "UNIQUE KEY"
		}
		t.indexes = append(t.indexes, ix)
		cols = append(cols, fmt.Sprintf("%s ix%d (%s)", kind, i, strings.Join(ix, ", ")))
	}
	t.create = "CREATE TABLE " + name + " (" + strings.Join(cols, ", ") + ")"
	return t
}

// strs are string values: case and accent variants, trailing spaces.
var ixStrs = []string{"'a'", "'A'", "'b'", "'ab '", "''", "'å'", "'B '", "'ab'"}

// rows returns the INSERT IGNOREs of the table's random rows (a unique
// index's duplicates are dropped).
func (t *indexTable) rows(r *rand.Rand) []string {
	var out []string
	for i := 0; i < 80; i++ {
		var vals []string
		if len(t.keys) == 2 {
			vals = append(vals, strconv.Itoa(1+r.Intn(2)))
		}
		vals = append(vals, strconv.Itoa(r.Intn(60)))
		nullable := func(s string) string {
			if r.Intn(6) == 0 {
				return "NULL"
			}
			return s
		}
		vals = append(vals, nullable(strconv.Itoa(r.Intn(5)-1)), nullable(strconv.Itoa(r.Intn(4))),
			nullable(ixStrs[r.Intn(len(ixStrs))]), nullable(ixStrs[r.Intn(len(ixStrs))]),
			nullable(strconv.Itoa(r.Intn(9)-4)), nullable([]string{"0.00", "-1.50", "2.25", "3"}[r.Intn(4)]))
		out = append(out, "INSERT IGNORE INTO "+t.name+" VALUES ("+strings.Join(vals, ", ")+")")
	}
	return out
}

// value returns a value compared with column c.
func (t *indexTable) value(r *rand.Rand, c string) any {
	if r.Intn(20) == 0 {
		return []any{nil, "2", 1.5, -1}[r.Intn(4)]
	}
	switch c {
	case "s", "t":
		return []any{"a", "A", "b", "ab ", "", "å", "B", "ab"}[r.Intn(8)]
	case "w":
		return 1 + r.Intn(2)
	case "id":
		return r.Intn(60)
	case "b":
		return r.Intn(4)
	}
	return r.Intn(5) - 1
}

// cond returns a condition on column c: pinning (=, <=>, IN) when pin,
// else a range or a pin.
func (t *indexTable) cond(r *rand.Rand, c string, pin bool) (string, []any) {
	v := func() any { return t.value(r, c) }
	choice := []int{0, 1, 2, 3, 4, 5, 9, 8, 10, 11}[r.Intn(10)]
	if pin {
		choice = []int{0, 0, 0, 0, 0, 1, 2}[r.Intn(7)]
	}
	return condOn(c, choice, v)
}

// query returns a random range SELECT over one of the table's indexes.
func (t *indexTable) query(r *rand.Rand) (string, []any) {
	ix := t.indexes[r.Intn(len(t.indexes))]
	all := append(append([]string(nil), t.keys...), ixCols...)
	type term struct {
		cond string
		args []any
	}
	var terms []term
	pinned := r.Intn(len(ix) + 1)
	for i := 0; i < len(ix) && i <= pinned; i++ {
		c, a := t.cond(r, ix[i], i < pinned)
		terms = append(terms, term{c, a})
	}
	for r.Intn(3) == 0 {
		c, a := t.cond(r, all[r.Intn(len(all))], false)
		terms = append(terms, term{c, a})
	}
	r.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
	var conds []string
	var args []any
	for _, tm := range terms {
		conds = append(conds, tm.cond)
		args = append(args, tm.args...)
	}
	aggs := []string{"COUNT(*)", "SUM(v)", "AVG(a)", "MIN(b)", "MAX(id)", "count(a)", "SUM(m)", "SUM(b)"}
	if r.Intn(5) == 0 {
		// Grouped, mostly by the index's column after those pinned
		// (NULLs among its values, strings among its columns).
		group := ix[min(pinned, len(ix)-1)]
		if r.Intn(3) == 0 {
			group = all[r.Intn(len(all))]
		}
		return appendLimit(r, randomGroupBy(r, t.name, group, aggs, conds), args)
	}
	q, _, aggregate, distinct := randomSelect(r, t.name, all, aggs, conds, 8, 5)
	if !aggregate {
		var order []string
		switch r.Intn(6) {
		case 0:
			// The index's columns after those pinned.
			order = append(order, ix[min(pinned, len(ix)):]...)
		case 4:
			// Then the primary key's: the entries' own order, which a
			// LIMIT stops reading.
			order = append(order, ix[min(pinned, len(ix)):]...)
			for _, k := range t.keys {
				if !slices.Contains(order, k) {
					order = append(order, k)
				}
			}
		case 1:
			// Ties broken by the primary key.
			order = append(append(order, all[r.Intn(len(all))]), t.keys...)
		case 2:
			for i := 0; i < 1+r.Intn(2); i++ {
				o := all[r.Intn(len(all))]
				if r.Intn(2) == 0 {
					o += " DESC"
				}
				order = append(order, o)
			}
		case 3:
			order = append(order, t.keys[len(t.keys)-1]+" DESC")
		}
		if distinct && len(order) > 0 {
			order = nil
		}
		if len(order) > 0 {
			q += " ORDER BY " + strings.Join(order, ", ")
		}
	}
	return appendLimit(r, q, args)
}

// write returns a random REPLACE or DELETE of the table's rows.
func (t *indexTable) write(r *rand.Rand) string {
	rows := t.rows(r)
	q := strings.Replace(rows[r.Intn(len(rows))], "INSERT IGNORE", "REPLACE", 1)
	if r.Intn(2) == 0 {
		c, a := t.cond(r, t.indexes[0][0], true)
		q = fill("DELETE FROM "+t.name+" WHERE "+c, a)
	}
	return q
}

// TestFastPathIndexRangeDifferential compares range SELECTs over
// secondary indexes on the fast path with GMS's answers, over random
// tables. PERCDB_RANGE_DIFF_N sets the number of statements (default 600,
// 200 with -short), PERCDB_RANGE_DIFF_SEED the seed.
func TestFastPathIndexRangeDifferential(t *testing.T) {
	n, seed := rangeDiffSize(t, 600, 200, 41)
	r := rand.New(rand.NewSource(seed))
	tables := []indexTable{newIndexTable(r, "ia"), newIndexTable(r, "ib"), newIndexTable(r, "ic")}
	setup := []string{"USE d"}
	for i := range tables {
		t.Log(tables[i].create)
		setup = append(setup, tables[i].create)
		setup = append(setup, tables[i].rows(r)...)
	}
	setup = append(setup, "ANALYZE TABLE ia, ib, ic")
	d := newDiff(t, setup...)
	steps := runRandomSteps(d, r, n, []randomTable{&tables[0], &tables[1], &tables[2]})
	d.checkHits(t, steps, 15)
	d.finish("ia", "ib", "ic")
}

// TestFastPathIndexRangeRuns checks that the fast path runs the range
// SELECTs over secondary indexes it should (TPC-C's among them), and
// leaves to GMS those whose row order depends on the index GMS reads;
// as text and prepared, each answer compared with GMS's.
func TestFastPathIndexRangeRuns(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "prepared"}[prepared], func(t *testing.T) {
			d := newDiff(t, "USE d",
				`CREATE TABLE customer (c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id SMALLINT NOT NULL,
					c_first VARCHAR(16), c_last VARCHAR(16), c_balance DECIMAL(12,2),
					PRIMARY KEY (c_w_id, c_d_id, c_id), INDEX idx_customer (c_w_id, c_d_id, c_last, c_first))`,
				`CREATE TABLE orders (o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id SMALLINT NOT NULL,
					o_c_id INT, o_entry_d DATETIME, o_carrier_id TINYINT,
					PRIMARY KEY (o_w_id, o_d_id, o_id), INDEX idx_orders (o_w_id, o_d_id, o_c_id, o_id))`,
				`CREATE TABLE order_line (ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id SMALLINT NOT NULL,
					ol_number TINYINT NOT NULL, ol_i_id INT, ol_amount DECIMAL(6,2), ol_delivery_d DATETIME,
					PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))`,
				`CREATE TABLE k (id INT PRIMARY KEY, a INT, b INT, s VARCHAR(8), KEY a_idx (a), UNIQUE KEY s_idx (s, b))`,
				`INSERT INTO customer VALUES (1, 1, 1, 'ann', 'SMITH', 1.00), (2, 1, 1, 'bob', 'SMITH', 2.00),
					(3, 1, 1, 'ann', 'SMITH', 3.00), (4, 1, 1, 'al', 'JONES', 4.00), (5, 2, 1, 'cy', 'SMITH', 5.00),
					(6, 1, 1, NULL, 'SMITH', 6.00), (7, 1, 1, 'Ann', 'SMITH', 7.00)`,
				`INSERT INTO orders VALUES (1, 1, 1, 3, '2024-01-01 00:00:00', 1), (2, 1, 1, 2, '2024-01-02 00:00:00', NULL),
					(3, 1, 1, 3, '2024-01-03 00:00:00', NULL), (4, 2, 1, 3, '2024-01-04 00:00:00', 2)`,
				`INSERT INTO order_line VALUES (3, 1, 1, 1, 10, 1.50, NULL), (3, 1, 1, 2, 11, 2.25, NULL), (2, 1, 1, 1, 12, 9.99, NULL)`,
				`INSERT INTO k VALUES (1, 5, 1, 'x'), (2, 5, 2, 'x'), (3, NULL, 3, 'y'), (4, 7, NULL, NULL), (5, 5, 1, NULL), (6, -1, 9, 'X')`,
				"ANALYZE TABLE customer, orders, order_line, k")
			run := d.runner(prepared)
			for _, c := range []struct {
				q    string
				args []any
			}{
				// TPC-C Payment and Order-Status: customers by last name.
				{"SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first", []any{1, 1, "SMITH"}},
				// Order-Status: the customer's last order; its lines.
				{"SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1", []any{1, 1, 3}},
				{"SELECT ol_i_id, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", []any{1, 1, 3}},
				// Aggregates over an index range.
				{"SELECT COUNT(*), MAX(o_id), MIN(o_carrier_id) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ?", []any{1, 1, 3}},
				{"SELECT COUNT(*), SUM(b) FROM k WHERE a BETWEEN ? AND ?", []any{0, 6}},
				// Delivery's SUM of DECIMALs over a key prefix, and
				// aggregates under conditions on strings.
				{"SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", []any{1, 1, 3}},
				{"SELECT SUM(ol_amount), COUNT(*) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", []any{1, 1, 7}},
				{"SELECT COUNT(*), SUM(c_balance), COUNT(c_first) FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?", []any{1, 1, "SMITH"}},
				// A non-unique index pinned whole: rows in key order.
				{"SELECT id, b FROM k WHERE a = ?", []any{5}},
				{"SELECT * FROM k WHERE a IN (?, ?) ORDER BY id", []any{5, 7}},
				{"SELECT id FROM k WHERE a > ? ORDER BY a, id LIMIT ?", []any{-5, 3}},
				{"SELECT id, a FROM k WHERE a < ? ORDER BY a", []any{7}},
				// Strings by =, under the column's collation.
				{"SELECT id, s FROM k WHERE s = ? AND b = ?", []any{"x", 1}},
				{"SELECT id FROM k WHERE s = ? ORDER BY b", []any{"x"}},
				// The index backwards under a LIMIT (NULLs last), a
				// range of it or the whole index, read from its end.
				{"SELECT id, a FROM k WHERE a > ? ORDER BY a DESC, id DESC LIMIT ?", []any{-5, 3}},
				{"SELECT id, a FROM k WHERE a IN (?, ?, ?) ORDER BY a DESC, id DESC LIMIT ?", []any{5, 7, -1, 3}},
				{"SELECT id, a, b FROM k ORDER BY a DESC, id DESC LIMIT ?", []any{10}},
				{"SELECT id, a FROM k ORDER BY a, id LIMIT ?, ?", []any{1, 2}},
				{"SELECT o_id, o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? ORDER BY o_c_id DESC, o_id DESC LIMIT ?", []any{1, 1, 2}},
				// MIN and MAX of the index's column, read from one end
				// past its NULLs.
				{"SELECT MIN(a), MAX(a) FROM k", nil},
				{"SELECT MAX(a) FROM k WHERE a < ?", []any{6}},
				{"SELECT MIN(a) FROM k WHERE a IN (?, ?)", []any{7, 5}},
				{"SELECT MIN(a), MAX(a) FROM k WHERE a > ?", []any{100}},
				// ORs of ranges of the index's column (past its NULLs),
				// or of a primary key's: the union of the branches'
				// ranges, those that meet merged, read in key order.
				{"SELECT COUNT(*), SUM(b) FROM k WHERE a < ? OR a > ?", []any{0, 6}},
				{"SELECT id, a FROM k WHERE a < ? OR a >= ? ORDER BY id", []any{0, 7}},
				{"SELECT id FROM k WHERE a < ? OR a > ? ORDER BY id", []any{nil, 6}},
				{"SELECT COUNT(*) FROM k WHERE a < ? OR a IN (?, ?) OR (a > ? AND a < ?)", []any{6, 5, 7, 4, 6}},
				{"SELECT MIN(a), MAX(a) FROM k WHERE a < ? OR a BETWEEN ? AND ?", []any{6, 7, 9}},
				{"SELECT id, a FROM k WHERE (a <= ? OR a > ?) ORDER BY a DESC, id DESC LIMIT ?", []any{-1, 5, 3}},
				{"SELECT id, a FROM k WHERE (a <= ? OR a > ?) AND (a < ? OR a = ?) ORDER BY a, id", []any{-1, 4, 0, 5}},
				{"SELECT ol_o_id, ol_number FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND (ol_o_id < ? OR ol_o_id > ?)", []any{1, 1, 3, 2}},
				{"SELECT ol_o_id, ol_number FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND (ol_o_id = ? OR ol_o_id >= ?) ORDER BY ol_o_id DESC, ol_number DESC LIMIT ?", []any{1, 1, 2, 3, 2}},
			} {
				run(false, c.q, c.args...) // learns the column definitions
				run(true, c.q, c.args...)
				run(true, c.q, c.args...)
			}
			// Orders whose ties GMS's choice of access or its top-N
			// settle: GMS's.
			for _, c := range []struct {
				q    string
				args []any
			}{
				{"SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first LIMIT 2", []any{1, 1, "SMITH"}},
				{"SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?", []any{1, 1, "SMITH"}},
				{"SELECT id FROM k WHERE a > ? ORDER BY a DESC", []any{-5}},
				{"SELECT DISTINCT a FROM k WHERE a > ?", []any{0}},
				{"SELECT id FROM k WHERE a <=> ?", []any{nil}},
				{"SELECT id FROM k ORDER BY a DESC LIMIT ?", []any{2}},
				{"SELECT id, a FROM k WHERE b > ? ORDER BY a DESC, id DESC LIMIT ?", []any{1, 2}},
			} {
				for i := 0; i < 3; i++ {
					before := d.status("Percdb_fastpath_hits")
					run(false, c.q, c.args...)
					if d.status("Percdb_fastpath_hits") != before {
						t.Errorf("%s %v ran on the fast path", c.q, c.args)
					}
				}
			}
			run(true, "BEGIN")
			run(false, "INSERT INTO k VALUES (?, ?, ?, ?)", 9, 5, 0, "z")
			run(true, "SELECT id, b FROM k WHERE a = ?", 5)
			run(true, "SELECT COUNT(*), SUM(b) FROM k WHERE a BETWEEN ? AND ?", 0, 6)
			run(true, "ROLLBACK")
			run(true, "SELECT id, b FROM k WHERE a = ?", 5)
			d.finish("customer", "orders", "order_line", "k")
		})
	}
}
