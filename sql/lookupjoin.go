package sql

import (
	"bytes"
	"io"
	"sort"
	"sync/atomic"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// Batched lookup joins. GMS runs a lookup join (for each row of the outer
// side, a lookup keyed by that row in an index of the inner table: MySQL's
// eq_ref and ref) by building the inner side's iterator again for every
// outer row: an index lookup, a partition, a row decoder and one read of
// the store per outer row. Where the lookup is on every column of the
// inner table's primary key (eq_ref, at most one row per outer row),
// percdb reads the outer side in batches instead and fetches the inner
// rows of a whole batch with one BatchGet, as TiDB's index lookup join and
// MySQL's batched key access do: one round to the store (one RPC per
// region in a cluster) per batch rather than one per row.
//
// The answer is the one GMS's join gives, row for row and in the same
// order:
//
//   - each outer row's key comes from the lookup's own key expressions
//     and conversions (IndexedTableAccess.GetLookup, GMS's LookupBuilder:
//     a NULL key matches nothing) and becomes a key range as
//     Table.LookupPartitions makes it (keyRangeOf), so a key that does
//     not convert exactly to the column's type is no point but a wider
//     range; such a row, or any row whose lookup is not one primary-key
//     point, is joined through GMS's own build of the inner side;
//   - rows are joined in the order of the outer side, each outer row with
//     its inner row, under the join's condition (LEFT JOIN: with NULLs
//     when none matches);
//   - the inner rows are read through the same row iterator GMS's path
//     uses, so a locking read locks them and the rows examined are
//     counted.
//
// Semi lookup joins (EXISTS and IN unnested by GMS) are batched alike: an
// outer row is returned once when one of its inner rows meets the join's
// condition, decided as GMS's exists join decides (nextExists, which
// also knows an anti join's decisions: GMS v0.20.0 plans no anti lookup
// join, and NOT EXISTS runs as a nested loop over the inner table).
//
// Batches start small and double up to maxLookupBatch, so that a join
// under a LIMIT that needs a few rows reads few outer rows ahead.
// lookupBatchUserVar is the user variable that turns batched lookups off
// for a session when set to 0 or OFF (the differential test compares
// both).
const lookupBatchUserVar = "percdb_lookup_batch"

// minLookupBatch and maxLookupBatch bound a batch's outer rows.
const (
	minLookupBatch = 16
	maxLookupBatch = 512
)

// lookupJoinStats are the node's counters of batched lookups
// (counters.go).
type lookupJoinStats struct {
	// batches are the batch reads, keys the distinct keys they read.
	batches, keys atomic.Uint64
}

// batchedInner is the inner side of a lookup join percdb batches: a read,
// keyed by the outer row, of every column of a percdb table's primary
// key, under filters on its rows and aliases.
type batchedInner struct {
	ita *plan.IndexedTableAccess
	t   *Table
	x   *Index
	// filters are the conditions of the Filter nodes over the read, the
	// innermost first, each evaluated over the inner row alone as GMS's
	// FilterIter evaluates it.
	filters []gsql.Expression
}

// batchedLookup returns the inner side of j when GMS would run j as a
// lookup join whose lookups percdb can batch: an inner, left or semi
// lookup join whose inner side is such a read (batchedInner). The inner
// table has no virtual columns, which GMS computes over the read.
func batchedLookup(j *plan.JoinNode) (batchedInner, bool) {
	var in batchedInner
	switch j.Op {
	case plan.JoinTypeLookup, plan.JoinTypeLeftOuterLookup, plan.JoinTypeSemiLookup:
	default:
		return in, false
	}
	right := j.Right()
	for {
		switch n := right.(type) {
		case *plan.TableAlias:
			right = n.Child
			continue
		case *plan.Filter:
			in.filters = append([]gsql.Expression{n.Expression}, in.filters...)
			right = n.Child
			continue
		}
		break
	}
	ita, ok := right.(*plan.IndexedTableAccess)
	if !ok || ita.IsStatic() {
		return in, false
	}
	it, ok := ita.Table.(*IndexedTable)
	if !ok {
		return in, false
	}
	x, ok := ita.Index().(*Index)
	if !ok || !x.im.IsPrimary || x.im.Prefixed || len(ita.Expressions()) != len(x.im.Ords) {
		return in, false
	}
	if it.Table.meta.Schema.Schema.HasVirtualColumns() {
		return in, false
	}
	in.ita, in.t, in.x = ita, it.Table, x
	return in, true
}

// batchedJoin reports whether j runs as a batched lookup join in ctx's
// session (EXPLAIN's "Using join buffer (Batched Key Access)").
func batchedJoin(ctx *gsql.Context, j *plan.JoinNode) bool {
	_, ok := batchedLookup(j)
	return ok && userVarOn(ctx, lookupBatchUserVar)
}

// newBatchedLookupIter returns the iterator of j, a join batchedLookup
// accepted, under the outer scope's row parent.
func newBatchedLookupIter(ctx *gsql.Context, b gsql.NodeExecBuilder, j *plan.JoinNode, in batchedInner, parent gsql.Row) (gsql.RowIter, error) {
	left, err := b.Build(ctx, j.Left(), parent)
	if err != nil {
		return nil, err
	}
	return &batchedLookupIter{
		b: b, j: j, in: in,
		parent:  parent,
		left:    left,
		size:    minLookupBatch,
		rowSize: len(parent) + len(j.Left().Schema()) + len(j.Right().Schema()),
	}, nil
}

// Kinds of an outer row's lookup besides a position in the batch's
// inner rows.
const (
	// noInner: the lookup matches no row (a NULL key, an empty range).
	noInner = -1
	// innerByGMS: the lookup is not one primary-key point; GMS's build of
	// the inner side reads it.
	innerByGMS = -2
)

// batchedOuter is an outer row of a batch: the outer scope's row
// followed by the outer side's, and where its inner row is.
type batchedOuter struct {
	row gsql.Row
	// inner is the position of its inner row in the batch's inner
	// rows, or noInner, or innerByGMS.
	inner int
}

// batchedLookupIter runs a batched lookup join; see the comment at the
// top of the file.
type batchedLookupIter struct {
	b      gsql.NodeExecBuilder
	j      *plan.JoinNode
	in     batchedInner
	parent gsql.Row
	left   gsql.RowIter
	// leftDone: the outer side has no more rows.
	leftDone bool
	// size is the next batch's number of outer rows.
	size    int
	rowSize int

	// outer is the batch; inner the inner rows of its points, nil where
	// the point has no row.
	outer []batchedOuter
	inner []gsql.Row
	// pos is the outer row being joined; served whether its point's row
	// was joined; gms reads its inner rows when GMS does; matched whether
	// one of them met the join's condition.
	pos     int
	served  bool
	gms     gsql.RowIter
	matched bool
}

// Next implements sql.RowIter.
func (it *batchedLookupIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	if it.j.Op.IsSemi() || it.j.Op.IsAnti() {
		return it.nextExists(ctx)
	}
	for {
		o, right, ok, err := it.step(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			// The outer row's inner rows are done.
			matched := it.matched
			it.pos++
			it.served, it.matched = false, false
			if !matched && it.j.Op.IsLeftOuter() {
				return it.joined(o.row, nil), nil
			}
			continue
		}
		row := it.build(o.row, right)
		if it.j.Filter != nil {
			res, err := gsql.EvaluateCondition(ctx, it.j.Filter, row)
			if err != nil {
				return nil, err
			}
			if !gsql.IsTrue(res) {
				continue
			}
		}
		it.matched = true
		return it.removeParent(row), nil
	}
}

// step returns the current outer row and its next inner row, ok false
// when it has no more; it reads the next batch when the batch is done,
// and fails with io.EOF after the last outer row.
func (it *batchedLookupIter) step(ctx *gsql.Context) (o batchedOuter, right gsql.Row, ok bool, err error) {
	for it.pos >= len(it.outer) {
		if it.leftDone {
			return o, nil, false, io.EOF
		}
		if err := it.fill(ctx); err != nil {
			return o, nil, false, err
		}
	}
	o = it.outer[it.pos]
	right, ok, err = it.nextInner(ctx, o)
	return o, right, ok, err
}

// nextExists is Next of a semi or anti join: each outer row once, when
// one of its inner rows meets the join's condition (semi) or none does
// (anti), decided as GMS's exists join decides.
func (it *batchedLookupIter) nextExists(ctx *gsql.Context) (gsql.Row, error) {
	anti := it.j.Op.IsAnti()
	for {
		o, right, ok, err := it.step(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			// No inner row met the condition.
			it.pos++
			it.served = false
			if anti {
				return it.removeParent(o.row), nil
			}
			continue
		}
		met := true
		if it.j.Filter != nil {
			res, err := gsql.EvaluateCondition(ctx, it.j.Filter, it.build(o.row, right))
			if err != nil {
				return nil, err
			}
			if res == nil && it.j.Op.IsExcludeNulls() {
				if anti {
					// An unknown comparison rejects the row.
					if err := it.nextOuter(ctx); err != nil {
						return nil, err
					}
				}
				continue
			}
			met = gsql.IsTrue(res)
		}
		if !met {
			continue
		}
		if err := it.nextOuter(ctx); err != nil {
			return nil, err
		}
		if !anti {
			return it.removeParent(o.row), nil
		}
	}
}

// nextOuter leaves the current outer row: its remaining inner rows are
// not read.
func (it *batchedLookupIter) nextOuter(ctx *gsql.Context) error {
	it.pos++
	it.served, it.matched = false, false
	if it.gms != nil {
		err := it.gms.Close(ctx)
		it.gms = nil
		return err
	}
	return nil
}

// nextInner returns the next inner row of outer row o, false when it has
// no more.
func (it *batchedLookupIter) nextInner(ctx *gsql.Context, o batchedOuter) (gsql.Row, bool, error) {
	switch {
	case o.inner == noInner:
		return nil, false, nil
	case o.inner >= 0:
		if it.served || it.inner[o.inner] == nil {
			return nil, false, nil
		}
		it.served = true
		// The filters over the read, when GMS would evaluate them:
		// as this outer row is joined.
		if ok, err := it.passes(ctx, it.inner[o.inner]); err != nil || !ok {
			return nil, false, err
		}
		return it.inner[o.inner], true, nil
	}
	if it.gms == nil {
		iter, err := it.b.Build(ctx, it.j.Right(), o.row)
		if err != nil {
			return nil, false, err
		}
		it.gms = iter
	}
	row, err := it.gms.Next(ctx)
	if err == io.EOF {
		err = it.gms.Close(ctx)
		it.gms = nil
		return nil, false, err
	}
	if err != nil {
		return nil, false, err
	}
	return row, true, nil
}

// fill reads the next batch of outer rows and the inner rows of their
// points.
func (it *batchedLookupIter) fill(ctx *gsql.Context) error {
	it.outer, it.inner, it.pos = it.outer[:0], it.inner[:0], 0
	var points []keyRange
	for len(it.outer) < it.size {
		l, err := it.left.Next(ctx)
		if err == io.EOF {
			it.leftDone = true
			break
		}
		if err != nil {
			return err
		}
		row := it.parent.Append(l)
		o := batchedOuter{row: row, inner: noInner}
		lookup, err := it.in.ita.GetLookup(ctx, row)
		if err != nil {
			return err
		}
		if !lookup.IsEmptyRange {
			kr, kind, err := it.point(ctx, lookup)
			if err != nil {
				return err
			}
			o.inner = kind
			if kind >= 0 {
				o.inner = len(points)
				points = append(points, kr)
			}
		}
		it.outer = append(it.outer, o)
	}
	if it.size < maxLookupBatch {
		it.size *= 2
	}
	return it.readPoints(ctx, points)
}

// point returns the read of a lookup when it is one primary-key point
// (kind 0), else noInner (it reads nothing) or innerByGMS.
func (it *batchedLookupIter) point(ctx *gsql.Context, lookup gsql.IndexLookup) (keyRange, int, error) {
	ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
	if !ok || len(ranges) != 1 {
		return keyRange{}, innerByGMS, nil
	}
	kr, empty, err := keyRangeOf(ctx, it.in.t.meta, it.in.x.im, ranges[0])
	switch {
	case err != nil:
		return keyRange{}, 0, err
	case empty:
		return keyRange{}, noInner, nil
	case !kr.point:
		return keyRange{}, innerByGMS, nil
	}
	return kr, 0, nil
}

// readPoints reads the rows of points (by position) into it.inner, each
// distinct key once, with one batch read in key order.
func (it *batchedLookupIter) readPoints(ctx *gsql.Context, points []keyRange) error {
	if len(points) == 0 {
		return nil
	}
	order := make([]int, len(points))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return bytes.Compare(points[order[a]].Start, points[order[b]].Start) < 0 })
	// distinct holds the reads without repeats; slot maps each point to
	// its read.
	distinct := make([]keyRange, 0, len(points))
	slot := make([]int, len(points))
	for _, i := range order {
		if n := len(distinct); n == 0 || !bytes.Equal(distinct[n-1].Start, points[i].Start) {
			distinct = append(distinct, points[i])
		}
		slot[i] = len(distinct) - 1
	}
	stats := &it.in.t.db.provider.lookups
	stats.batches.Add(1)
	stats.keys.Add(uint64(len(distinct)))
	rows := make([]gsql.Row, len(distinct))
	r, err := it.in.t.newRowIter(ctx, nil, distinct)
	if err != nil {
		return err
	}
	defer r.Close(ctx)
	next := 0
	for {
		row, err := r.nextRow(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		// Rows come in key order, a missing one left out.
		for next < len(distinct) && !distinct[next].handle.Equal(row.Handle) {
			next++
		}
		if next == len(distinct) {
			break
		}
		rows[next] = gsql.Row(row.Values)
		next++
	}
	if cap(it.inner) < len(points) {
		it.inner = make([]gsql.Row, len(points))
	}
	it.inner = it.inner[:len(points)]
	for i := range points {
		it.inner[i] = rows[slot[i]]
	}
	return nil
}

// passes reports whether inner row r meets the filters over the inner
// side's read.
func (it *batchedLookupIter) passes(ctx *gsql.Context, r gsql.Row) (bool, error) {
	for _, f := range it.in.filters {
		res, err := gsql.EvaluateCondition(ctx, f, r)
		if err != nil || !gsql.IsTrue(res) {
			return false, err
		}
	}
	return true, nil
}

// build returns the row of outer row primary (the outer scope's row
// included) joined with inner row secondary (nil: NULLs), as GMS's join
// makes it.
func (it *batchedLookupIter) build(primary, secondary gsql.Row) gsql.Row {
	row := make(gsql.Row, it.rowSize)
	copy(row, primary)
	copy(row[len(primary):], secondary)
	return row
}

// joined is build without the outer scope's row.
func (it *batchedLookupIter) joined(primary, secondary gsql.Row) gsql.Row {
	return it.removeParent(it.build(primary, secondary))
}

// removeParent drops the outer scope's row from r but for the first
// ScopeLen values, as GMS's join does.
func (it *batchedLookupIter) removeParent(r gsql.Row) gsql.Row {
	scopeLen := it.j.ScopeLen
	copy(r[scopeLen:], r[len(it.parent):])
	return r[:len(r)-len(it.parent)+scopeLen]
}

// Close implements sql.RowIter.
func (it *batchedLookupIter) Close(ctx *gsql.Context) error {
	err := it.left.Close(ctx)
	if it.gms != nil {
		if cerr := it.gms.Close(ctx); err == nil {
			err = cerr
		}
		it.gms = nil
	}
	return err
}
