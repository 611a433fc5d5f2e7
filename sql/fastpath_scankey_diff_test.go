package sql_test

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Range SELECTs over composite primary keys on the fast path against
// GMS's path: random tables whose primary key is two or three integer
// columns of random widths and signedness (with secondary indexes on some
// columns, which the fast path leaves to GMS), random rows with NULLs in
// the other columns, and random queries pinning a prefix of the key by
// equalities and IN lists and bounding the next column by a range, with
// conditions on the key's later columns and on the other columns. Every
// answer must be GMS's, byte for byte (fastpath_diff_test.go's harness).

// keyTable is one random table of the test.
type keyTable struct {
	name   string
	keys   []string // the primary key's columns, in key order
	signed []bool
	create string
}

// newKeyTable returns a random table named name.
func newKeyTable(r *rand.Rand, name string) keyTable {
	t := keyTable{name: name}
	n := 2 + r.Intn(2)
	var cols []string
	for i := 0; i < n; i++ {
		col := fmt.Sprintf("k%d", i)
		typ := []string{"INT", "BIGINT", "SMALLINT", "INT UNSIGNED", "BIGINT UNSIGNED", "TINYINT UNSIGNED"}[r.Intn(6)]
		t.keys = append(t.keys, col)
		t.signed = append(t.signed, !strings.HasSuffix(typ, "UNSIGNED"))
		cols = append(cols, col+" "+typ+" NOT NULL")
	}
	coll := []string{"utf8mb4_0900_ai_ci", "utf8mb4_bin", "utf8mb4_general_ci", "latin1_swedish_ci"}[r.Intn(4)]
	charset := "utf8mb4"
	if strings.HasPrefix(coll, "latin1") {
		charset = "latin1"
	}
	cols = append(cols, "v INT", "u BIGINT UNSIGNED", "s VARCHAR(10) CHARACTER SET "+charset+" COLLATE "+coll, "m DECIMAL(8,2)",
		"d DATETIME", "c CHAR(4)")
	// Key orders that are not declaration orders, now and then.
	keys := append([]string(nil), t.keys...)
	cols = append(cols, "PRIMARY KEY ("+strings.Join(keys, ", ")+")")
	switch r.Intn(7) {
	case 0:
		cols = append(cols, "KEY v_idx (v)")
	case 1:
		cols = append(cols, "KEY k1_idx ("+t.keys[1]+")")
	case 2:
		cols = append(cols, "KEY s_idx (s, v)")
	case 3:
		cols = append(cols, "KEY d_idx (d)")
	}
	t.create = "CREATE TABLE " + name + " (" + strings.Join(cols, ", ") + ")"
	return t
}

// keyValue returns a value for key column i: small, mostly in the rows'
// range, negative only for a signed column.
func (t *keyTable) keyValue(r *rand.Rand, i int) int {
	if t.signed[i] {
		return r.Intn(8) - 3
	}
	return r.Intn(6)
}

// rows returns the INSERTs of the table's random rows.
func (t *keyTable) rows(r *rand.Rand) []string {
	seen := map[string]bool{}
	var out []string
	strs := []string{"'a'", "'A'", "'b'", "'ab '", "''", "NULL", "'å'", "'ä'", "'B '"}
	for i := 0; i < 60; i++ {
		var vals []string
		for k := range t.keys {
			vals = append(vals, strconv.Itoa(t.keyValue(r, k)))
		}
		key := strings.Join(vals, ",")
		if seen[key] {
			continue
		}
		seen[key] = true
		nullable := func(s string) string {
			if r.Intn(5) == 0 {
				return "NULL"
			}
			return s
		}
		vals = append(vals, nullable(strconv.Itoa(r.Intn(11)-5)), nullable(strconv.Itoa(r.Intn(4))), strs[r.Intn(len(strs))],
			nullable([]string{"0.00", "-1.50", "2.25", "3"}[r.Intn(4)]),
			nullable([]string{"'2024-01-01 00:00:00'", "'2024-01-01 10:30:00'", "'2023-12-31'", "'2024-02-29 23:59:59'"}[r.Intn(4)]),
			strs[r.Intn(len(strs))])
		out = append(out, "INSERT INTO "+t.name+" VALUES ("+strings.Join(vals, ", ")+")")
	}
	return out
}

// keyCond returns a condition on key column i: pinning (=, <=>, IN) when
// pin, else a range or a pin.
func (t *keyTable) keyCond(r *rand.Rand, i int, pin bool) (string, []any) {
	c := t.keys[i]
	v := func() any {
		if r.Intn(15) == 0 {
			return []any{nil, -1, "2", 2.5, uint64(1) << 63}[r.Intn(5)]
		}
		return t.keyValue(r, i)
	}
	choice := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11}[r.Intn(11)]
	if pin {
		choice = r.Intn(3)
	}
	return condOn(c, choice, v)
}

// condOn returns condition number choice on column c, its values drawn
// by v: 0 to 2 pin the column (=, IN, <=>), 3 to 7 bound it, 8 is <>,
// 9 IS NULL, 10 and 11 are ORs of ranges and points of it (the union of
// their ranges; they may meet or overlap).
func condOn(c string, choice int, v func() any) (string, []any) {
	switch choice {
	case 0:
		return c + " = ?", []any{v()}
	case 1:
		return c + " IN (?, ?, ?)", []any{v(), v(), v()}
	case 2:
		return c + " <=> ?", []any{v()}
	case 3:
		return c + " BETWEEN ? AND ?", []any{v(), v()}
	case 4:
		return c + " > ?", []any{v()}
	case 5:
		return c + " <= ?", []any{v()}
	case 6:
		return "? < " + c, []any{v()}
	case 7:
		return c + " >= ? AND " + c + " < ?", []any{v(), v()}
	case 9:
		return c + " IS NULL", nil
	case 10:
		return "(" + c + " < ? OR " + c + " > ?)", []any{v(), v()}
	case 11:
		return "(" + c + " BETWEEN ? AND ? OR " + c + " = ? OR (" + c + " > ? AND " + c + " <= ?) OR " + c + " IN (?, ?))", []any{v(), v(), v(), v(), v(), v(), v()}
	}
	return c + " <> ?", []any{v()}
}

// keyOrderQuery returns a random range SELECT over the table in the
// key's order: a prefix of the key pinned by = (or <=>, or IN), the next
// column bounded or not, conditions on nothing else, ORDER BY the key's
// later columns (some of the pinned ones among them) or none, a LIMIT
// or none, FOR UPDATE or not: TPC-C Delivery's oldest new order and its
// relatives, which the fast path reads (and locks) up to the LIMIT.
func (t *keyTable) keyOrderQuery(r *rand.Rand) (string, []any) {
	var conds, order []string
	var args []any
	pinned := r.Intn(len(t.keys))
	for i := 0; i < pinned; i++ {
		c, a := t.keyCond(r, i, true)
		conds = append(conds, c)
		args = append(args, a...)
		if r.Intn(4) == 0 {
			order = append(order, t.keys[i])
		}
	}
	if r.Intn(2) == 0 || pinned == 0 {
		c, a := t.keyCond(r, pinned, false)
		conds = append(conds, c)
		args = append(args, a...)
	}
	for i := pinned; i < len(t.keys) && r.Intn(4) != 0; i++ {
		order = append(order, t.keys[i])
	}
	r.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	sel := []string{"*", t.keys[len(t.keys)-1], "v, s", t.keys[0] + ", m"}[r.Intn(4)]
	q := "SELECT " + sel + " FROM " + t.name + " WHERE " + strings.Join(conds, " AND ")
	if len(order) > 0 {
		q += " ORDER BY " + strings.Join(order, ", ")
	}
	q, args = appendLimit(r, q, args)
	if r.Intn(2) == 0 {
		q += " FOR UPDATE"
	}
	return q, args
}

// query returns a random range SELECT over the table and its arguments.
func (t *keyTable) query(r *rand.Rand) (string, []any) {
	if r.Intn(4) == 0 {
		return t.keyOrderQuery(r)
	}
	cols := append(append([]string(nil), t.keys...), "v", "u", "s", "m", "d", "c")
	var conds []string
	var args []any
	// A prefix of the key pinned, then a range, then conditions on
	// anything (the key's later columns included).
	pinned := r.Intn(len(t.keys))
	for i := 0; i <= pinned; i++ {
		c, a := t.keyCond(r, i, i < pinned)
		conds = append(conds, c)
		args = append(args, a...)
	}
	for r.Intn(2) == 0 {
		str := func() any { return []any{"a", "A", "b", "ab", "ab ", "", "å", "B", nil}[r.Intn(9)] }
		switch x := r.Intn(12); x {
		case 6:
			conds = append(conds, []string{"s = ?", "s < ?", "s >= ?", "s <> ?", "c = ?", "c > ?", "s <=> ?"}[r.Intn(7)])
			args = append(args, str())
		case 7:
			conds = append(conds, []string{"s IN (?, ?)", "s BETWEEN ? AND ?", "NOT (c IN (?, ?))", "(s = ? OR c = ?)"}[r.Intn(4)])
			args = append(args, str(), str())
		case 8:
			conds = append(conds, []string{"m > ?", "m = ?", "m BETWEEN ? AND ?", "(m < ? OR v > ?)"}[r.Intn(4)])
			args = append(args, r.Intn(7)-3)
			if strings.Contains(conds[len(conds)-1], "AND") || strings.Contains(conds[len(conds)-1], "OR") {
				args = append(args, r.Intn(7)-3)
			}
		case 9:
			conds = append(conds, []string{"d > ?", "d <= ?", "d = ?", "d BETWEEN ? AND '2024-02-01'"}[r.Intn(4)])
			args = append(args, []any{"2024-01-01", "2024-01-01 10:30:00", "2023-12-31 00:00:00", "2024-02-29 23:59:59", "x", nil}[r.Intn(6)])
		case 10:
			conds = append(conds, []string{"s IS NULL", "m IS NOT NULL", "d IS NULL", "NOT (s > 'a')"}[r.Intn(4)])
		case 11:
			// Values the SQL node does not compare: GMS's.
			conds = append(conds, []string{"s = ?", "m > ?", "d < ?"}[r.Intn(3)])
			args = append(args, []any{5, "1.5", 20240101}[r.Intn(3)])
		case 0, 1:
			c, a := t.keyCond(r, r.Intn(len(t.keys)), false)
			conds = append(conds, c)
			args = append(args, a...)
		case 2:
			conds = append(conds, "v > ?")
			args = append(args, r.Intn(9)-4)
		case 3:
			conds = append(conds, "(u = ? OR v IS NULL)")
			args = append(args, r.Intn(4))
		case 4:
			conds = append(conds, "NOT (v BETWEEN ? AND ?)")
			args = append(args, r.Intn(5)-3, r.Intn(5))
		default:
			conds = append(conds, t.keys[len(t.keys)-1]+" < v")
		}
	}
	r.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	aggs := []string{"COUNT(*)", "SUM(v)", "AVG(" + t.keys[1] + ")", "MIN(u)", "MAX(" + t.keys[0] + ")", "count(v)", "SUM(m)"}
	if r.Intn(5) == 0 {
		// Grouped, mostly by the key's column after those pinned.
		group := t.keys[min(pinned, len(t.keys)-1)]
		if r.Intn(3) == 0 {
			group = cols[r.Intn(len(cols))]
		}
		q := randomGroupBy(r, t.name, group, aggs, conds)
		return appendLimit(r, q, args)
	}
	q, sel, aggregate, distinct := randomSelect(r, t.name, cols, aggs, conds, 5, 6)
	if !aggregate && r.Intn(2) == 0 {
		pool := cols
		if distinct || sel[0] == "*" && r.Intn(2) == 0 {
			pool = sel
			if sel[0] == "*" {
				pool = cols
			}
		}
		var order []string
		for i := 0; i < 1+r.Intn(3); i++ {
			o := pool[r.Intn(len(pool))]
			if r.Intn(2) == 0 {
				o += " DESC"
			}
			order = append(order, o)
		}
		if !distinct && r.Intn(2) == 0 {
			// The whole key: an order without ties.
			order = append(order, t.keys...)
		}
		q += " ORDER BY " + strings.Join(order, ", ")
	}
	q, args = appendLimit(r, q, args)
	if r.Intn(4) == 0 {
		// Locking reads: inside the test's transactions they lock
		// what they read (one session: no one waits), and their
		// answers are GMS's all the same.
		q += " FOR UPDATE"
	}
	return q, args
}

// TestFastPathKeyRangeDifferential compares range SELECTs over composite
// primary keys on the fast path with GMS's answers, over random tables.
// PERCDB_RANGE_DIFF_N sets the number of statements (default 600, 200
// with -short), PERCDB_RANGE_DIFF_SEED the seed.
func TestFastPathKeyRangeDifferential(t *testing.T) {
	n, seed := rangeDiffSize(t, 600, 200, 31)
	r := rand.New(rand.NewSource(seed))
	tables := []keyTable{newKeyTable(r, "ka"), newKeyTable(r, "kb"), newKeyTable(r, "kc")}
	setup := []string{"USE d"}
	for i := range tables {
		t.Log(tables[i].create)
		setup = append(setup, tables[i].create)
		setup = append(setup, tables[i].rows(r)...)
	}
	d := newDiff(t, setup...)
	steps := runRandomSteps(d, r, n, []randomTable{&tables[0], &tables[1], &tables[2]})
	// Each query runs twice, the first learning the column definitions
	// (in text or binary), and many are near misses left to GMS (an
	// indexed column, a top-N with ties, no bound on the key's first
	// column).
	d.checkHits(t, steps, 15)
	d.finish("ka", "kb", "kc")
}

// write returns a random REPLACE or DELETE of the table's rows.
func (t *keyTable) write(r *rand.Rand) string {
	rows := t.rows(r)
	q := strings.Replace(rows[r.Intn(len(rows))], "INSERT", "REPLACE", 1)
	if r.Intn(2) == 0 {
		c, a := t.keyCond(r, 0, true)
		q = fill("DELETE FROM "+t.name+" WHERE "+c, a)
	}
	return q
}

// randomTable is a table of a random differential test: its random
// queries and writes.
type randomTable interface {
	query(r *rand.Rand) (string, []any)
	write(r *rand.Rand) string
}

// runRandomSteps runs at least n random statements over tables through
// d and returns how many it ran: transactions begun and ended, writes of
// the session's own (seen by the reads after them), and queries, each
// run twice (the first learning the column definitions).
func runRandomSteps(d *diff, r *rand.Rand, n int, tables []randomTable) int {
	steps := 0
	inTxn := false
	for steps < n {
		tb := tables[r.Intn(len(tables))]
		switch x := r.Intn(20); {
		case x == 0:
			if inTxn {
				d.step([]string{"COMMIT", "ROLLBACK"}[r.Intn(2)])
			} else {
				d.step("BEGIN")
			}
			inTxn = !inTxn
		case x < 3:
			d.step(tb.write(r))
			steps++
		default:
			q, args := tb.query(r)
			d.stepAnyHow(r, q, args)
			d.stepAnyHow(r, q, args)
			steps += 2
		}
	}
	if inTxn {
		d.step("COMMIT")
	}
	return steps
}

// randomSelect returns the start of a random SELECT from table where
// conds: its select list (columns of cols, one in star of them *, or
// aggregates of aggs, one in five), DISTINCT one in distinct of them
// without aggregates.
func randomSelect(r *rand.Rand, table string, cols, aggs, conds []string, distinctOneIn, star int) (q string, sel []string, aggregate, distinct bool) {
	aggregate = r.Intn(5) == 0
	distinct = !aggregate && r.Intn(distinctOneIn) == 0
	switch {
	case aggregate:
		for i := 0; i < 1+r.Intn(3); i++ {
			sel = append(sel, aggs[r.Intn(len(aggs))])
		}
	case r.Intn(star) == 0:
		sel = []string{"*"}
	default:
		for i := 0; i < 1+r.Intn(3); i++ {
			sel = append(sel, cols[r.Intn(len(cols))])
		}
	}
	q = "SELECT "
	if distinct {
		q += "DISTINCT "
	}
	q += strings.Join(sel, ", ") + " FROM " + table + " WHERE " + strings.Join(conds, " AND ")
	return q, sel, aggregate, distinct
}

// randomGroupBy returns a random SELECT from table where conds, grouped
// by column group: its select list the column (or not) and aggregates of
// aggs, in any order, ORDER BY the column (ASC, DESC) or none, now and
// then a HAVING or another column outside the aggregates (MySQL's 1055),
// which are GMS's.
func randomGroupBy(r *rand.Rand, table, group string, aggs, conds []string) string {
	var sel []string
	if r.Intn(4) != 0 {
		sel = append(sel, group)
	}
	for i := 0; i < 1+r.Intn(3); i++ {
		sel = append(sel, aggs[r.Intn(len(aggs))])
	}
	r.Shuffle(len(sel), func(i, j int) { sel[i], sel[j] = sel[j], sel[i] })
	if r.Intn(15) == 0 {
		sel = append(sel, "v")
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + table + " WHERE " + strings.Join(conds, " AND ") + " GROUP BY " + group
	if r.Intn(15) == 0 {
		q += " HAVING COUNT(*) > 1"
	}
	switch r.Intn(3) {
	case 0:
		q += " ORDER BY " + group
	case 1:
		q += " ORDER BY " + group + " DESC"
	}
	return q
}

// appendLimit appends a random LIMIT clause, or none, to q and its
// arguments to args.
func appendLimit(r *rand.Rand, q string, args []any) (string, []any) {
	switch r.Intn(4) {
	case 0:
		// Not 0 under aggregates: GMS v0.20.0 panics closing a GROUP
		// BY it never read (TestFastPathRangeDifferential's note).
		q += " LIMIT ?"
		args = append(args, 1+r.Intn(5))
	case 1:
		q += " LIMIT ?, ?"
		args = append(args, r.Intn(4), 1+r.Intn(5))
	}
	return q, args
}

// rangeDiffSize returns the number of statements of a differential test
// (n, short with -short, or PERCDB_RANGE_DIFF_N) and its seed (seed, or
// PERCDB_RANGE_DIFF_SEED).
func rangeDiffSize(t *testing.T, n, short int, seed int64) (int, int64) {
	if testing.Short() {
		n = short
	}
	if s := os.Getenv("PERCDB_RANGE_DIFF_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("PERCDB_RANGE_DIFF_N=%q: %v", s, err)
		}
	}
	if s := os.Getenv("PERCDB_RANGE_DIFF_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("PERCDB_RANGE_DIFF_SEED=%q: %v", s, err)
		}
	}
	return n, seed
}

// stepAnyHow runs q with args as text, as a statement with arguments or
// prepared, picked by r.
func (d *diff) stepAnyHow(r *rand.Rand, q string, args []any) {
	switch r.Intn(3) {
	case 0:
		d.step(fill(q, args))
	case 1:
		d.step(q, args...)
	default:
		d.stepPrepared(q, args...)
	}
}

// checkHits logs the fast path's counters and fails the test when fewer
// than one statement in share of steps ran on the fast path.
func (d *diff) checkHits(t *testing.T, steps, share int) {
	hits := d.status("Percdb_fastpath_hits")
	t.Logf("%d statements, %d fast-path hits", d.steps, hits)
	for _, r := range []string{"shape", "parse", "table", "value", "session", "learning", "error", "size"} {
		t.Logf("fallthrough %s: %d", r, d.status("Percdb_fastpath_fallthrough_"+r))
	}
	if hits < uint64(steps/share) {
		t.Errorf("only %d of %d statements ran on the fast path", hits, steps)
	}
}
