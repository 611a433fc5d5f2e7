package sql_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// The ends of a key on the fast path against GMS's path: ORDER BY the
// key's columns after those pinned, each DESC, under a LIMIT (read
// backwards from the end of the ranges, next to the data for a primary
// key: copr.RunReverse over txn.CoprocessorReverse; through the index
// for a secondary one), and MIN and MAX of the key's column after those
// pinned (one entry read from each end, past the NULLs an index on a
// nullable column holds first). Random tables with composite primary
// keys (fastpath_scankey_diff_test.go's) split into several regions, so
// that a backward walk crosses region boundaries, and with secondary
// indexes (fastpath_scanindex_diff_test.go's), each also empty; with
// conditions on other columns (evaluated next to the data, so that a
// walk stops inside a region and resumes below), OFFSETs, and the
// session's own uncommitted writes. Every answer must be GMS's, byte for
// byte.

// endsKeyTable is a keyTable whose queries are read from an end of the
// key.
type endsKeyTable struct{ keyTable }

// query returns a random SELECT of the last rows of a range of the key,
// or of MIN and MAX of its column after those pinned.
func (t *endsKeyTable) query(r *rand.Rand) (string, []any) {
	var conds []string
	var args []any
	pinned := r.Intn(len(t.keys))
	for i := 0; i < pinned; i++ {
		c, a := t.keyCond(r, i, r.Intn(5) != 0)
		conds = append(conds, c)
		args = append(args, a...)
	}
	if r.Intn(2) == 0 {
		c, a := t.keyCond(r, pinned, false)
		conds = append(conds, c)
		args = append(args, a...)
	}
	if r.Intn(3) == 0 {
		conds = append(conds, []string{"v > ?", "(u = ? OR v IS NULL)", "v <> ?"}[r.Intn(3)])
		args = append(args, r.Intn(5)-2)
	}
	where := ""
	if len(conds) > 0 {
		r.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	col := t.keys[pinned]
	if r.Intn(3) == 0 {
		sel := []string{"MIN(" + col + ")", "MAX(" + col + ")", "MIN(" + col + "), MAX(" + col + ")", "MAX(" + col + "), MIN(" + col + ")"}[r.Intn(4)]
		return "SELECT " + sel + " FROM " + t.name + where, args
	}
	var order []string
	for _, k := range t.keys[pinned:] {
		order = append(order, k+" DESC")
	}
	sel := []string{"*", strings.Join(t.keys, ", "), t.keys[len(t.keys)-1] + ", v", "v, s"}[r.Intn(4)]
	return endsLimit(r, "SELECT "+sel+" FROM "+t.name+where+" ORDER BY "+strings.Join(order, ", "), args, 4)
}

// endsLimit appends a LIMIT of 1 to 6 rows to q, after an OFFSET below
// offsets one time in two, and its arguments to args.
func endsLimit(r *rand.Rand, q string, args []any, offsets int) (string, []any) {
	if r.Intn(2) == 0 {
		return q + " LIMIT ?", append(args, 1+r.Intn(6))
	}
	return q + " LIMIT ?, ?", append(args, r.Intn(offsets), 1+r.Intn(6))
}

// endsIndexTable is an indexTable whose queries are read from an end of
// an index.
type endsIndexTable struct{ indexTable }

// query returns a random SELECT of the last entries of a range of one of
// the table's indexes, or of MIN and MAX of its column after those
// pinned.
func (t *endsIndexTable) query(r *rand.Rand) (string, []any) {
	ix := t.indexes[r.Intn(len(t.indexes))]
	var conds []string
	var args []any
	pinned := r.Intn(len(ix))
	for i := 0; i < pinned; i++ {
		c, a := t.cond(r, ix[i], true)
		conds = append(conds, c)
		args = append(args, a...)
	}
	if r.Intn(2) == 0 {
		c, a := t.cond(r, ix[pinned], false)
		conds = append(conds, c)
		args = append(args, a...)
	}
	where := ""
	if len(conds) > 0 {
		r.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	col := ix[pinned]
	if r.Intn(3) == 0 {
		sel := []string{"MIN(" + col + ")", "MAX(" + col + ")", "MIN(" + col + "), MAX(" + col + ")"}[r.Intn(3)]
		return "SELECT " + sel + " FROM " + t.name + where, args
	}
	var order []string
	for _, c := range ix[pinned:] {
		order = append(order, c+" DESC")
	}
	for _, k := range t.keys {
		if !strings.Contains(strings.Join(ix, ","), k) {
			order = append(order, k+" DESC")
		}
	}
	// The index's columns and the key's (a covering read), or a column
	// the rows hold besides.
	sel := strings.Join(append(append([]string(nil), ix...), t.keys...), ", ")
	if r.Intn(2) == 0 {
		sel += ", v"
	}
	return endsLimit(r, "SELECT "+sel+" FROM "+t.name+where+" ORDER BY "+strings.Join(order, ", "), args, 3)
}

// TestFastPathEndsDifferential compares reads from an end of a primary
// key or an index (ORDER BY ... DESC LIMIT, MIN, MAX) on the fast path
// with GMS's answers, over random tables, full and empty.
// PERCDB_RANGE_DIFF_N sets the number of statements (default 500, 200
// with -short), PERCDB_RANGE_DIFF_SEED the seed.
func TestFastPathEndsDifferential(t *testing.T) {
	n, seed := rangeDiffSize(t, 500, 200, 53)
	r := rand.New(rand.NewSource(seed))
	keys := []*endsKeyTable{{newKeyTable(r, "ea")}, {newKeyTable(r, "eb")}, {newKeyTable(r, "ee")}}
	indexes := []*endsIndexTable{{newIndexTable(r, "ec")}, {newIndexTable(r, "ed")}, {newIndexTable(r, "ef")}}
	setup := []string{"USE d"}
	var tables []randomTable
	names := []string{}
	for i, kt := range keys {
		t.Log(kt.create)
		setup = append(setup, kt.create)
		if i < 2 { // the last stays empty (until the writes)
			setup = append(setup, kt.rows(r)...)
			// Regions of their own for the rows from (1) and (3, 2) on:
			// a backward read walks them from the last.
			setup = append(setup, fmt.Sprintf("SPLIT TABLE %s BY (1%s), (3, 2%s)", kt.name,
				strings.Repeat(", 0", len(kt.keys)-1), strings.Repeat(", 0", len(kt.keys)-2)))
		}
		tables = append(tables, kt)
		names = append(names, kt.name)
	}
	for i, it := range indexes {
		t.Log(it.create)
		setup = append(setup, it.create)
		if i < 2 {
			setup = append(setup, it.rows(r)...)
		}
		tables = append(tables, it)
		names = append(names, it.name)
	}
	setup = append(setup, "ANALYZE TABLE "+strings.Join(names, ", "))
	d := newDiff(t, setup...)
	steps := runRandomSteps(d, r, n, tables)
	d.checkHits(t, steps, 15)
	d.finish(names...)
}
