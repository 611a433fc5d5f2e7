package sql_test

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// rowInSchema is the table of TestFastPathRowInDifferential: a composite
// primary key whose row IN lists the fast path reads as points
// (fastpath.rowInConds), a secondary index, NULLs and strings.
const rowInSchema = `CREATE TABLE rk (w INT NOT NULL, id BIGINT NOT NULL, v INT, u INT UNSIGNED, s VARCHAR(8) COLLATE utf8mb4_0900_ai_ci,
	PRIMARY KEY (w, id), KEY v_idx (v))`

// rowInGen generates rows and row IN queries of rk.
type rowInGen struct {
	r *rand.Rand
}

func (g *rowInGen) pick(vals ...any) any { return vals[g.r.Intn(len(vals))] }

// value returns a value of a tuple: mostly keys of the table, some
// missing, NULL, at the edges, or of another type.
func (g *rowInGen) value() any {
	switch g.r.Intn(14) {
	case 0:
		return nil
	case 1:
		return g.pick(int64(math.MaxInt64), int64(math.MinInt64), uint64(math.MaxUint64), int64(math.MaxInt32)+1, -1)
	case 2:
		return g.pick("3", "x", 2.5, "2 ", -0.0)
	}
	return g.r.Intn(8)
}

// query returns a SELECT with a row IN over two or three columns (the
// key's, in its order or not, or with a column that is not the key's),
// other conditions, an ORDER BY, a LIMIT or aggregates, sometimes FOR
// UPDATE, and its arguments.
func (g *rowInGen) query() (string, []any) {
	colSets := [][]string{{"w", "id"}, {"w", "id"}, {"w", "id"}, {"id", "w"}, {"w", "v"}, {"w", "id", "v"}, {"v", "u"}}
	cols := colSets[g.r.Intn(len(colSets))]
	n := 1 + g.r.Intn(6)
	var tuples []string
	var args []any
	for i := 0; i < n; i++ {
		arity := len(cols)
		if g.r.Intn(40) == 0 {
			arity++ // MySQL's error 1241
		}
		tuples = append(tuples, "("+strings.TrimSuffix(strings.Repeat("?, ", arity), ", ")+")")
		for j := 0; j < arity; j++ {
			args = append(args, g.value())
		}
	}
	where := "(" + strings.Join(cols, ", ") + ") IN (" + strings.Join(tuples, ", ") + ")"
	switch g.r.Intn(5) {
	case 0:
		where += " AND v > ?"
		args = append(args, g.r.Intn(6))
	case 1:
		where = "w <> ? AND " + where
		args = append([]any{g.r.Intn(4)}, args...)
	case 2:
		where += " AND s IS NOT NULL"
	}
	sel := g.pick("*", "w, id", "id, v, s", "v")
	if g.r.Intn(5) == 0 {
		sel = g.pick("COUNT(*)", "SUM(v), MAX(id)", "MIN(w), COUNT(s)")
		return fmt.Sprintf("SELECT %s FROM rk WHERE %s", sel, where), args
	}
	q := fmt.Sprintf("SELECT %s FROM rk WHERE %s", sel, where)
	switch g.r.Intn(6) {
	case 0:
		q += " ORDER BY w, id"
	case 1:
		q += " ORDER BY w DESC, id DESC"
	case 2:
		q += " ORDER BY v, w, id LIMIT 2"
	case 3:
		// Not the key's order: sorted by the SQL node (New-Order's
		// ORDER BY s_i_id), ties in key order.
		q += g.pick(" ORDER BY id", " ORDER BY id DESC", " ORDER BY id, w DESC", " ORDER BY id LIMIT 2").(string)
	}
	if g.r.Intn(4) == 0 {
		q += " FOR UPDATE"
	}
	return q, args
}

// TestFastPathRowInDifferential compares generated SELECTs with a row IN
// list, (w, id) IN ((1, 5), (2, 7)), on the fast path, which reads the
// product of the tuples' values as points and keeps the rows that match
// a tuple (fastpath.rowInConds), with GMS's answers, as text, with
// arguments and prepared, in and out of transactions, between writes.
// PERCDB_RANGE_DIFF_N sets the number of statements (default 600, 200
// with -short).
func TestFastPathRowInDifferential(t *testing.T) {
	n, seed := rangeDiffSize(t, 600, 200, 17)
	g := &rowInGen{r: rand.New(rand.NewSource(seed))}
	setup := []string{"USE d", rowInSchema}
	var rows []string
	for w := 0; w < 6; w++ {
		for id := 0; id < 8; id++ {
			if g.r.Intn(4) == 0 {
				continue
			}
			v := fmt.Sprint(g.r.Intn(6))
			if g.r.Intn(5) == 0 {
				v = "NULL"
			}
			s := g.pick("'a'", "'A'", "'b '", "NULL", "''").(string)
			rows = append(rows, fmt.Sprintf("(%d, %d, %s, %d, %s)", w, id, v, g.r.Intn(3), s))
		}
	}
	setup = append(setup, "INSERT INTO rk VALUES "+strings.Join(rows, ", "))
	d := newDiff(t, setup...)
	inTxn := false
	steps := 0
	for steps < n {
		switch x := g.r.Intn(25); {
		case x == 0 && !inTxn:
			d.step("BEGIN")
			inTxn = true
		case x == 0 && inTxn:
			d.step(g.pick("COMMIT", "ROLLBACK").(string))
			inTxn = false
		case x < 3:
			w, id := g.r.Intn(6), g.r.Intn(8)
			q, args := "UPDATE rk SET v = ? WHERE w = ? AND id = ?", []any{g.r.Intn(6), w, id}
			if x == 2 {
				q, args = "REPLACE INTO rk VALUES (?, ?, ?, ?, ?)", []any{w, id, g.r.Intn(6), g.r.Intn(3), g.pick("a", nil)}
			}
			d.stepAnyHow(g.r, q, args)
			steps++
		default:
			q, args := g.query()
			// Twice: the first execution teaches the fast path its
			// column definitions.
			d.stepAnyHow(g.r, q, args)
			d.stepAnyHow(g.r, q, args)
			steps += 2
		}
	}
	if inTxn {
		d.step("COMMIT")
	}
	d.checkHits(t, steps, 10)
	d.finish("rk")
}

// TestFastPathRowInRuns checks that the fast path runs row IN lists
// over a composite primary key, as text and prepared, with one tuple or
// several, and that the rows come back in order.
func TestFastPathRowInRuns(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "prepared"}[prepared], func(t *testing.T) {
			d := newDiff(t, "USE d", rowInSchema,
				"INSERT INTO rk VALUES (1, 5, 1, 0, 'a'), (1, 77, NULL, 1, 'b'), (1, 9000, 3, 2, NULL), (2, 5, 4, 0, 'A'), (2, 6, 5, 1, '')")
			run := d.runner(prepared)
			for _, c := range []struct {
				q    string
				args []any
			}{
				{"SELECT w, id, v FROM rk WHERE (w, id) IN ((?, ?), (?, ?), (?, ?)) ORDER BY w, id", []any{1, 5, 1, 77, 1, 9000}},
				{"SELECT w, id, v FROM rk WHERE (w, id) IN ((?, ?), (?, ?), (?, ?)) ORDER BY w, id", []any{2, 5, 1, 6, 9, 9}},
				{"SELECT * FROM rk WHERE (w, id) IN ((?, ?))", []any{2, 6}},
				{"SELECT id FROM rk WHERE (id, w) IN ((?, ?), (?, ?)) ORDER BY id DESC", []any{5, 2, 77, 1}},
				{"SELECT COUNT(*), SUM(v) FROM rk WHERE (w, id) IN ((?, ?), (?, ?), (?, NULL))", []any{1, 5, 2, 5, 1}},
				{"SELECT w, id FROM rk WHERE (w, id) IN ((?, ?), (?, ?)) ORDER BY w DESC, id DESC", []any{1, 5, 2, 5}},
				{"SELECT w, id FROM rk WHERE w <> ? AND (w, id) IN ((?, ?), (?, ?))", []any{3, 1, 5, 2, 5}},
				{"SELECT w, id FROM rk WHERE (w, id) IN ((?, ?), (?, ?)) AND s IS NOT NULL", []any{1, 5, 2, 5}},
				{"SELECT v FROM rk WHERE (w, id) IN ((?, ?), (?, ?))", []any{1, 5, 2, 5}},
				{"SELECT SUM(v), MAX(id) FROM rk WHERE (w, id) IN ((?, ?), (?, ?))", []any{1, 5, 2, 5}},
			} {
				run(false, c.q, c.args...) // learns the column definitions
				run(true, c.q, c.args...)
				run(true, c.q, c.args...)
			}
			d.finish("rk")
		})
	}
}

// TestFastPathRowInForUpdateLocks checks the rows a row IN ... FOR UPDATE
// locks in a pessimistic transaction, on the fast path and on GMS's
// (@percdb_fastpath = 0): the rows of its tuples, not a row of the
// product of their values that matches none, which the fast path reads
// and does not return. (w, d, id) IN ((1, 1, 2), (1, 2, 1)) reads the
// points (1, 1, 1), (1, 1, 2), (1, 2, 1) and (1, 2, 2): a write of
// (1, 1, 1) must not wait, a write of (1, 2, 1) must. With an ORDER BY
// that is not the key's (New-Order's ORDER BY s_i_id), the fast path
// locks the rows it read before it sorts them; under a LIMIT too it
// leaves the statement to GMS, whose locks are checked all the same.
func TestFastPathRowInForUpdateLocks(t *testing.T) {
	const in = "SELECT w, d, id, v FROM ck WHERE (w, d, id) IN ((?, ?, ?), (?, ?, ?))"
	for _, c := range []struct {
		name, q string
		args    []any
		fast    bool // the fast path runs it
		rows    string
	}{
		{"key order", in + " FOR UPDATE", []any{1, 1, 2, 1, 2, 1}, true, "[[1 1 2 NULL] [1 2 1 30]]"},
		{"ORDER BY id", in + " ORDER BY id FOR UPDATE", []any{1, 1, 2, 1, 2, 1}, true, "[[1 2 1 30] [1 1 2 NULL]]"},
		{"ORDER BY d DESC, id", in + " ORDER BY d DESC, id FOR UPDATE", []any{1, 1, 2, 1, 2, 1}, true, "[[1 2 1 30] [1 1 2 NULL]]"},
		{"ORDER BY id LIMIT", in + " ORDER BY id LIMIT 1 FOR UPDATE", []any{1, 1, 2, 1, 2, 1}, false, "[[1 2 1 30]]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var outs [2]string
			for i, fast := range []bool{true, false} {
				outs[i] = rowInLockRun(t, fast, c.fast && fast, c.q, c.args)
			}
			want := c.rows + "; w = 1 AND d = 1 AND id = 1: no wait; w = 1 AND d = 2 AND id = 1: error 1205"
			if outs[0] != want || outs[1] != want {
				t.Errorf("fast path %s\nGMS       %s\nwant      %s", outs[0], outs[1], want)
			}
		})
	}
}

// rowInLockRun runs q FOR UPDATE in a pessimistic transaction, on the
// fast path or not (fast), checks that the fast path ran it when hit,
// then tries a write of a row of the product of the tuples' values that
// no tuple names, and one of a tuple's row, from another session; it
// returns the rows and what the writes met.
func rowInLockRun(t *testing.T, fast, hit bool, q string, args []any) string {
	t.Helper()
	a, b, status := forUpdateSetup(t)
	if !fast {
		if _, err := a.Exec("SET @percdb_fastpath = 0"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Exec("SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	// Outside a transaction first: the fast path learns the result's
	// column definitions.
	if _, err := a.Exec(q, args...); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec("BEGIN PESSIMISTIC"); err != nil {
		t.Fatal(err)
	}
	hits := serverStatus(t, status, "Percdb_fastpath_hits")
	rows, err := a.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(readRows(rows))
	rows.Close()
	if after := serverStatus(t, status, "Percdb_fastpath_hits"); hit != (after == hits+1) {
		t.Errorf("fast path %v: hits %d -> %d for %s", fast, hits, after, q)
	}
	for _, key := range []string{"w = 1 AND d = 1 AND id = 1", "w = 1 AND d = 2 AND id = 1"} {
		res := "no wait"
		if _, err := b.Exec("UPDATE ck SET v = 7 WHERE " + key); err != nil {
			res = fmt.Sprintf("error %d", errCode(err))
		}
		got += "; " + key + ": " + res
	}
	if _, err := a.Exec("COMMIT"); err != nil {
		t.Fatal(err)
	}
	return got
}
