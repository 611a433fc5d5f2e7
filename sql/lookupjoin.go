package sql

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync/atomic"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
)

// Batched lookup joins. GMS runs a lookup join (for each row of the outer
// side, a lookup keyed by that row in an index of the inner table: MySQL's
// eq_ref and ref) by building the inner side's iterator again for every
// outer row: an index lookup, a partition, a row decoder and one read of
// the store per outer row. percdb reads the outer side in batches instead,
// as TiDB's index lookup join and MySQL's batched key access do:
//
//   - where an outer row's lookup is on every column of the inner table's
//     primary key (eq_ref, at most one row per outer row), the inner rows
//     of a whole batch are fetched with one BatchGet: one round to the
//     store (one RPC per region in a cluster) per batch rather than one
//     per row;
//   - where it is a range (a prefix of the primary key, as TPC-C's ORDERS
//     to ORDER-LINE, or any lookup in a secondary index: MySQL's ref), the
//     batch's distinct ranges are read in key order by one row iterator,
//     each range once however many outer rows share it, without building
//     GMS's plan of the inner side per row. At most maxLookupRows inner
//     rows are kept per batch: the ranges past that cap are read per
//     outer row as GMS reads them, so a batch's memory stays bounded
//     whatever the ranges hold. The ranges of a secondary index read
//     without locks are first read all together, at most lookupRangeRows
//     entries each, with a multi-range read of the entries and one batch
//     read of their rows (two requests per region instead of an index
//     scan and a batch read per range); the ranges with more entries go
//     to the row iterator.
//
// The answer is the one GMS's join gives, row for row and in the same
// order:
//
//   - each outer row's key comes from the lookup's own key expressions
//     and conversions (IndexedTableAccess.GetLookup, GMS's LookupBuilder:
//     a NULL key matches nothing) and becomes a key range as
//     Table.LookupPartitions makes it (keyRangeOf), so a key that does
//     not convert exactly to the column's type is no point but a wider
//     range; a row whose lookup is not one such range, or whose range
//     overlaps another of the batch without being equal to it, is joined
//     through GMS's own build of the inner side;
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
// join, percdb makes NOT EXISTS's one, antilookup.go).
//
// Batches start small and double up to maxLookupBatch, so that a join
// under a LIMIT that needs a few rows reads few outer rows ahead.
// lookupBatchUserVar is the user variable that turns batched lookups off
// for a session when set to 0 or OFF (the differential test compares
// both).
const lookupBatchUserVar = "percdb_lookup_batch"

// minLookupBatch and maxLookupBatch bound a batch's outer rows;
// maxLookupRows bounds the inner rows a batch keeps from its ranges.
const (
	minLookupBatch = 16
	maxLookupBatch = 512
	maxLookupRows  = 8192
	// lookupRangeRows bounds the entries a batch reads of each range of
	// a secondary index in its multi-range read: a batch of
	// maxLookupBatch ranges keeps at most maxLookupRows*2 of them, and a
	// range with more is read again by a row iterator.
	lookupRangeRows = 2 * maxLookupRows / maxLookupBatch
)

// lookupJoinStats are the node's counters of batched lookups
// (counters.go).
type lookupJoinStats struct {
	// batches are the batch reads, keys the distinct keys they read.
	batches, keys atomic.Uint64
}

// batchedInner is the inner side of a lookup join percdb batches: a read,
// keyed by the outer row, of an index of a percdb table (its primary key
// or a secondary index, whole or a prefix of its columns), under filters
// on its rows and aliases.
type batchedInner struct {
	ita *plan.IndexedTableAccess
	t   *Table
	x   *Index
	// filters are the conditions of the Filter nodes over the read, the
	// innermost first, each evaluated as GMS's FilterIter evaluates it:
	// over the inner row alone, or when it sits above prepend, over
	// prepend's row followed by the inner row.
	filters []innerFilter
	// prepend is the PrependNode right over the read, nil when none: in
	// a subquery GMS builds for an outer row (PrependRowInPlan), the read
	// gives the outer row followed by the table's row.
	prepend *plan.PrependNode
	// strip is the StripRowNode over the whole inner side, nil when
	// none: in a subquery, GMS's exec indexes (fixupJoinScopes) strip the
	// outer scope's columns off the side's rows.
	strip *plan.StripRowNode
	// intPoints: the lookup is on every column of the primary key, each
	// of an integer type, without a null-safe comparison, so an outer
	// row whose key values are integers the columns hold is a point whose
	// handle fill makes directly (intPoint).
	intPoints bool
}

// innerFilter is a condition over the inner side's read.
type innerFilter struct {
	e gsql.Expression
	// prepended: the condition reads the row with prepend's row first.
	prepended bool
}

// batchedLookup returns the inner side of j when GMS would run j as a
// lookup join whose lookups percdb can batch: an inner, left, semi or
// anti lookup join whose inner side is such a read (batchedInner). The inner
// table has no virtual columns, which GMS computes over the read.
func batchedLookup(j *plan.JoinNode) (batchedInner, bool) {
	var in batchedInner
	switch j.Op {
	case plan.JoinTypeLookup, plan.JoinTypeLeftOuterLookup, plan.JoinTypeSemiLookup, plan.JoinTypeAntiLookup:
	default:
		return in, false
	}
	right := j.Right()
	if s, ok := right.(*plan.StripRowNode); ok {
		in.strip, right = s, s.Child
	}
	// The Filters above a PrependNode are marked once it is met.
	var above []int
	for {
		switch n := right.(type) {
		case *plan.TableAlias:
			right = n.Child
			continue
		case *plan.Filter:
			above = append(above, len(in.filters))
			in.filters = append(in.filters, innerFilter{e: n.Expression})
			right = n.Child
			continue
		case *plan.PrependNode:
			if in.prepend != nil {
				return in, false
			}
			for _, i := range above {
				in.filters[i].prepended = true
			}
			in.prepend, right = n, n.Child
			continue
		}
		break
	}
	// A strip without a prepend under it would cut the table's own
	// columns: left to GMS.
	if in.strip != nil && (in.prepend == nil || in.strip.NumCols > len(in.prepend.Row)) {
		return in, false
	}
	// Innermost first, as they are evaluated.
	for a, b := 0, len(in.filters)-1; a < b; a, b = a+1, b-1 {
		in.filters[a], in.filters[b] = in.filters[b], in.filters[a]
	}
	ita, ok := right.(*plan.IndexedTableAccess)
	if !ok || ita.IsStatic() {
		return in, false
	}
	it, ok := ita.Table.(*IndexedTable)
	if !ok {
		return in, false
	}
	// A prefix index's rows come sorted by a sortedIter GMS's path adds
	// (Table.PartitionRows), which the batch's reads do not.
	x, ok := ita.Index().(*Index)
	if !ok || x.im.Prefixed || len(ita.Expressions()) == 0 || len(ita.Expressions()) > len(x.im.Ords) {
		return in, false
	}
	if it.Table.meta.Schema.Schema.HasVirtualColumns() {
		return in, false
	}
	in.ita, in.t, in.x = ita, it.Table, x
	in.intPoints = intPointLookup(ita, x, it.Table)
	return in, true
}

// intPointLookup reports whether ita's lookups in x, an index of t, are
// points of a primary key of integer columns, keyed on every column
// without a null-safe comparison (batchedInner.intPoints).
func intPointLookup(ita *plan.IndexedTableAccess, x *Index, t *Table) bool {
	im, m := x.im, t.meta.Exec
	if !im.IsPrimary || len(ita.Expressions()) != len(im.Ords) || len(m.PrimaryKey) != len(im.Ords) {
		return false
	}
	if m.HandleKind != executor.HandleInt && m.HandleKind != executor.HandleCommon {
		return false
	}
	for _, nullSafe := range ita.NullMask() {
		if nullSafe {
			return false
		}
	}
	for _, typ := range im.Types {
		if n, ok := typ.(types.NumberTypeImpl_); !ok || !types.IsInteger(n) {
			return false
		}
	}
	return true
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
		limit:   lookupLimitOf(ctx, j),
	}, nil
}

// lookupLimitKey is the context key of a lookupLimit.
type lookupLimitKey struct{}

// lookupLimit says that the reader of join j's rows takes at most rows
// of them (a LIMIT over it, with its OFFSET, through projections alone).
type lookupLimit struct {
	j    *plan.JoinNode
	rows int
}

// limitedLookupJoin returns the join under n, a LIMIT, whose rows n
// reads directly (through an OFFSET and projections, which neither drop
// nor add rows), and how many of them n takes at most; ok is false when
// there is none, or when n reads every row (SQL_CALC_FOUND_ROWS).
func limitedLookupJoin(ctx *gsql.Context, n *plan.Limit) (*plan.JoinNode, int, bool) {
	if n.CalcFoundRows {
		return nil, 0, false
	}
	rows, ok := limitCount(ctx, n.Limit)
	if !ok {
		return nil, 0, false
	}
	for child := n.Child; ; {
		switch c := child.(type) {
		case *plan.Offset:
			off, ok := limitCount(ctx, c.Offset)
			if !ok {
				return nil, 0, false
			}
			rows += off
			child = c.Child
		case *plan.Project:
			child = c.Child
		case *plan.JoinNode:
			return c, rows, rows > 0
		default:
			return nil, 0, false
		}
	}
}

// limitCount evaluates a LIMIT's or OFFSET's count: ok false when it is
// not a count below a million (a batch's bound is no use past that).
func limitCount(ctx *gsql.Context, e gsql.Expression) (int, bool) {
	v, err := e.Eval(ctx, nil)
	if err != nil {
		return 0, false
	}
	n, _, err := types.Int64.Convert(ctx, v)
	if err != nil {
		return 0, false
	}
	c, ok := n.(int64)
	return int(c), ok && c >= 0 && c < 1_000_000
}

// withLookupLimit returns ctx saying that j's reader takes at most rows
// of its rows, for the build of the iterators under the LIMIT; ok is
// false when ctx already says so (the LIMIT is being built).
func withLookupLimit(ctx *gsql.Context, j *plan.JoinNode, rows int) (*gsql.Context, bool) {
	if l, ok := ctx.Value(lookupLimitKey{}).(lookupLimit); ok && l.j == j {
		return ctx, false
	}
	return ctx.WithContext(context.WithValue(ctx.Context, lookupLimitKey{}, lookupLimit{j: j, rows: rows})), true
}

// lookupLimitOf returns how many of j's rows its reader takes at most
// (withLookupLimit), 0 when it may take every one.
func lookupLimitOf(ctx *gsql.Context, j *plan.JoinNode) int {
	if l, ok := ctx.Value(lookupLimitKey{}).(lookupLimit); ok && l.j == j {
		return l.rows
	}
	return 0
}

// Kinds of an outer row's lookup.
const (
	// noInner: the lookup matches no row (a NULL key, an empty range).
	noInner = iota
	// innerPoint: one primary-key point, read with the batch's BatchGet.
	innerPoint
	// innerRange: a range, read with the batch's ranges.
	innerRange
	// innerByGMS: GMS's build of the inner side reads the lookup.
	innerByGMS
)

// batchedOuter is an outer row of a batch: the outer scope's row
// followed by the outer side's, and where its inner rows are.
type batchedOuter struct {
	row gsql.Row
	// kind is how its lookup is read; read is the position of its read
	// among the batch's points or ranges, by kind.
	kind, read int
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

	// outer is the batch; points the rows of its points (by read), nil
	// where the point has no row; ranges the rows of its ranges (by
	// read), nil where the range was not read within the batch's cap.
	outer  []batchedOuter
	points []gsql.Row
	ranges [][]gsql.Row
	// pos is the outer row being joined; served how many of its inner
	// rows were joined; gms reads its inner rows when GMS does; matched
	// whether one of them met the join's condition.
	pos     int
	served  int
	gms     gsql.RowIter
	matched bool
	// key holds an outer row's key values (intPoint).
	key []any
	// limit is how many rows the join's reader takes at most (a LIMIT
	// over it), 0 when it may take all; returned counts the rows the
	// join returned, fetched the outer rows of the batches before this
	// one (nextBatchSize).
	limit, returned, fetched int
}

// Next implements sql.RowIter.
func (it *batchedLookupIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	var r gsql.Row
	var err error
	if it.j.Op.IsSemi() || it.j.Op.IsAnti() {
		r, err = it.nextExists(ctx)
	} else {
		r, err = it.nextJoined(ctx)
	}
	if err == nil {
		it.returned++
	}
	return r, err
}

// nextBatchSize returns how many outer rows the next batch reads: the
// batch's size, or under a LIMIT, about as many as the rows the LIMIT
// still takes want. A left join gives at least one row for each outer
// row; another join is expected to give rows at the rate its batches
// so far gave them (too few outer rows cost one more batch, a smaller
// one; too many, the outer scan's rows that no row comes of).
func (it *batchedLookupIter) nextBatchSize() int {
	if it.limit == 0 {
		return it.size
	}
	want := max(it.limit-it.returned, 1)
	if it.j.Op.IsLeftOuter() {
		return min(it.size, want)
	}
	if it.returned == 0 {
		return it.size
	}
	// Outer rows per row returned, rounded up.
	need := (want*it.fetched + it.returned - 1) / it.returned
	return min(it.size, need+1)
}

// nextJoined is Next of an inner or left join.
func (it *batchedLookupIter) nextJoined(ctx *gsql.Context) (gsql.Row, error) {
	for {
		o, right, ok, err := it.step(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			// The outer row's inner rows are done.
			matched := it.matched
			it.pos++
			it.served, it.matched = 0, false
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
			it.served = 0
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
	it.served, it.matched = 0, false
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
	var rows []gsql.Row
	switch o.kind {
	case noInner:
		return nil, false, nil
	case innerPoint:
		if r := it.points[o.read]; r != nil {
			rows = []gsql.Row{r}
		}
	case innerRange:
		if rows = it.ranges[o.read]; rows == nil {
			// Past the batch's cap: read as GMS reads it.
			o.kind = innerByGMS
		}
	}
	if o.kind != innerByGMS {
		// The filters over the read, when GMS would evaluate them: as
		// this outer row is joined, row by row.
		for it.served < len(rows) {
			r, ok, err := it.passes(ctx, rows[it.served])
			it.served++
			if err != nil {
				return nil, false, err
			}
			if ok {
				return r, true, nil
			}
		}
		return nil, false, nil
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
	it.outer, it.pos = it.outer[:0], 0
	var points, ranges []keyRange
	size := it.nextBatchSize()
	if pb, ok := it.left.(*coprRowIter); ok && size < it.size {
		// The outer scan's next page reads no more than the batch wants.
		if err := pb.boundNextPage(size); err != nil {
			return err
		}
	}
	for len(it.outer) < size {
		l, err := it.left.Next(ctx)
		if err == io.EOF {
			it.leftDone = true
			break
		}
		if err != nil {
			return err
		}
		row := it.parent.Append(l)
		o := batchedOuter{row: row, kind: noInner}
		if it.in.intPoints {
			h, kind, ok, err := it.intPoint(ctx, row)
			if err != nil {
				return err
			}
			if ok {
				if kind == innerPoint {
					o.kind, o.read = innerPoint, len(points)
					points = append(points, keyRange{point: true, handle: h})
				}
				it.outer = append(it.outer, o)
				continue
			}
		}
		lookup, err := it.in.ita.GetLookup(ctx, row)
		if err != nil {
			return err
		}
		if !lookup.IsEmptyRange {
			kr, kind, err := it.read(ctx, lookup)
			if err != nil {
				return err
			}
			o.kind = kind
			switch kind {
			case innerPoint:
				o.read = len(points)
				points = append(points, kr)
			case innerRange:
				o.read = len(ranges)
				ranges = append(ranges, kr)
			}
		}
		it.outer = append(it.outer, o)
	}
	it.fetched += len(it.outer)
	if it.size < maxLookupBatch {
		it.size *= 2
	}
	if err := it.readPoints(ctx, points); err != nil {
		return err
	}
	return it.readRanges(ctx, ranges)
}

// intPoint returns the read of an outer row's lookup of a batchedInner
// with intPoints, without GMS's lookup and its key range: noInner when a
// key value is NULL (GMS's lookup is an empty range), innerPoint and the
// row's handle when every key value is an integer the column's type
// holds, the point keyRangeOf makes of GMS's lookup then. ok is false
// for any other key (a string, a value out of the column's range), whose
// lookup is GMS's.
func (it *batchedLookupIter) intPoint(ctx *gsql.Context, row gsql.Row) (h tablecodec.Handle, kind int, ok bool, err error) {
	exprs := it.in.ita.Expressions()
	if cap(it.key) < len(exprs) {
		it.key = make([]any, len(exprs))
	}
	key := it.key[:len(exprs)]
	nulls := false
	for i, e := range exprs {
		v, err := e.Eval(ctx, row)
		if err != nil {
			return h, 0, false, err
		}
		if v == nil {
			// Evaluated on: GMS's lookup evaluates every key.
			nulls = true
			continue
		}
		if !isGoInteger(v) {
			return h, 0, false, nil
		}
		if key[i], ok = boundValue(ctx, v, it.in.x.im, i); !ok {
			return h, 0, false, nil
		}
	}
	if nulls {
		return h, noInner, true, nil
	}
	if h, err = it.in.t.meta.Exec.KeyHandle(key); err != nil {
		// A value no int handle holds (an unsigned one past int64):
		// GMS's lookup and keyRangeOf say what it reads.
		return h, 0, false, nil
	}
	return h, innerPoint, true, nil
}

// isGoInteger reports whether v is a Go integer, as GMS evaluates an
// integer expression.
func isGoInteger(v any) bool {
	switch v.(type) {
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return true
	}
	return false
}

// read returns the read of a lookup and its kind: a primary-key point
// (innerPoint), one other range of the index (innerRange), or noInner
// (it reads nothing) or innerByGMS.
func (it *batchedLookupIter) read(ctx *gsql.Context, lookup gsql.IndexLookup) (keyRange, int, error) {
	ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
	// A reverse read and a read of the whole index (which marks the
	// statement a full scan, Table.LookupPartitions) are GMS's.
	if !ok || len(ranges) != 1 || lookup.IsReverse || wholeIndex(ranges) {
		return keyRange{}, innerByGMS, nil
	}
	kr, empty, err := keyRangeOf(ctx, it.in.t.meta, it.in.x.im, ranges[0])
	switch {
	case err != nil:
		return keyRange{}, 0, err
	case empty:
		return keyRange{}, noInner, nil
	case kr.point && it.in.x.im.IsPrimary:
		return kr, innerPoint, nil
	}
	return kr, innerRange, nil
}

// readPoints reads the rows of points (by position) into it.inner, each
// distinct key once, with one batch read in key order.
func (it *batchedLookupIter) readPoints(ctx *gsql.Context, points []keyRange) error {
	if len(points) == 0 {
		return nil
	}
	// Points are ordered by their handles, the order of their row keys
	// (a point of intPoint has no key range).
	order := make([]int, len(points))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return points[a].handle.Compare(points[b].handle) })
	// distinct holds the reads without repeats; slot maps each point to
	// its read.
	distinct := make([]keyRange, 0, len(points))
	slot := make([]int, len(points))
	for _, i := range order {
		if n := len(distinct); n == 0 || !distinct[n-1].handle.Equal(points[i].handle) {
			distinct = append(distinct, points[i])
		}
		slot[i] = len(distinct) - 1
	}
	it.count(len(distinct))
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
	if cap(it.points) < len(points) {
		it.points = make([]gsql.Row, len(points))
	}
	it.points = it.points[:len(points)]
	for i := range points {
		it.points[i] = rows[slot[i]]
	}
	return nil
}

// startOrder returns the positions of krs in the order of their start
// keys, equal starts in their order in krs.
func startOrder(krs []keyRange) []int {
	order := make([]int, len(krs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return bytes.Compare(krs[a].Start, krs[b].Start) })
	return order
}

// count adds a batch read of n distinct keys or ranges to the node's
// counters.
func (it *batchedLookupIter) count(n int) {
	stats := &it.in.t.db.provider.lookups
	stats.batches.Add(1)
	stats.keys.Add(uint64(n))
}

// readRanges reads the rows of ranges (by position) into it.ranges:
// each distinct range once, in key order, through one row iterator over
// the index (the one GMS's build would read, Table.PartitionRows), until
// maxLookupRows rows are kept. A range that overlaps another without
// being equal to it (a key that converted inexactly), and the ranges
// past the cap, are left nil: GMS reads them per outer row.
func (it *batchedLookupIter) readRanges(ctx *gsql.Context, ranges []keyRange) error {
	it.ranges = it.ranges[:0]
	if len(ranges) == 0 {
		return nil
	}
	order := startOrder(ranges)
	// distinct holds the reads without repeats and without overlaps;
	// slot maps each range to its read, -1 where GMS reads it.
	distinct := make([]keyRange, 0, len(ranges))
	slot := make([]int, len(ranges))
	for _, i := range order {
		kr := ranges[i]
		n := len(distinct)
		switch {
		case n > 0 && sameRange(distinct[n-1], kr):
			slot[i] = n - 1
		case n > 0 && (distinct[n-1].End == nil || bytes.Compare(kr.Start, distinct[n-1].End) < 0):
			slot[i] = -1
		default:
			distinct = append(distinct, kr)
			slot[i] = n
		}
	}
	it.count(len(distinct))
	rows, err := it.readDistinct(ctx, distinct)
	if err != nil {
		return err
	}
	for i := range ranges {
		var rs []gsql.Row
		if slot[i] >= 0 {
			rs = rows[slot[i]]
		}
		it.ranges = append(it.ranges, rs)
	}
	return nil
}

// readDistinct returns the rows of each of distinct (sorted, disjoint
// ranges), nil for those left to GMS. The ranges of a secondary index
// read without locks are read together (executor.IndexLookupRanges: one
// request per region for the entries, one for the rows), at most
// lookupRangeRows entries each; those with more, and the other reads,
// are read by scanDistinct.
func (it *batchedLookupIter) readDistinct(ctx *gsql.Context, distinct []keyRange) ([][]gsql.Row, error) {
	if it.in.x.im.IsPrimary || len(distinct) < 2 {
		return it.scanDistinct(ctx, distinct)
	}
	r, err := it.in.t.newRowIter(ctx, it.in.x.im, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close(ctx)
	if r.lock || r.track || r.covering != nil || r.index == nil {
		return it.scanDistinct(ctx, distinct)
	}
	krs := make([]executor.KeyRange, len(distinct))
	for i, kr := range distinct {
		krs[i] = kr.KeyRange
	}
	got, full, err := executor.IndexLookupRanges(ctx, r.k, it.in.t.meta.Exec, r.index.Exec, r.dec, krs, lookupRangeRows)
	if err != nil {
		return nil, toSQLError(err)
	}
	rows := make([][]gsql.Row, len(distinct))
	var again []keyRange
	var at []int
	for i, rs := range got {
		if full[i] {
			again, at = append(again, distinct[i]), append(at, i)
			continue
		}
		r.examined += uint64(len(rs))
		rows[i] = make([]gsql.Row, len(rs))
		for j, row := range rs {
			rows[i][j] = gsql.Row(row.Values)
		}
	}
	if len(again) > 0 {
		more, err := it.scanDistinct(ctx, again)
		if err != nil {
			return nil, err
		}
		for j, i := range at {
			rows[i] = more[j]
		}
	}
	return rows, nil
}

// scanDistinct returns the rows of each of distinct (sorted, disjoint
// ranges) read in key order by one row iterator over the index (the one
// GMS's build would read, Table.PartitionRows), until maxLookupRows rows
// are kept: the ranges past the cap are left nil, for GMS.
func (it *batchedLookupIter) scanDistinct(ctx *gsql.Context, distinct []keyRange) ([][]gsql.Row, error) {
	rows := make([][]gsql.Row, len(distinct))
	reads, first := it.coalesce(distinct)
	r, err := it.in.t.newRowIter(ctx, it.in.x.im, reads)
	if err != nil {
		return nil, err
	}
	defer r.Close(ctx)
	// complete counts the reads known to be read to their end; read is
	// the range the last row came from.
	complete, kept, read := len(distinct), 0, 0
	var key []byte
	for {
		row, err := r.nextRow(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		// The read the row comes from: each read is its own (no two
		// of them are primary-key points, which are read together),
		// and of a read that covers adjacent ranges, the range whose
		// end is past the row's key (rows come in key order).
		m := r.from
		read = max(read, first[m])
		if last := first[m+1] - 1; read < last {
			key = tablecodec.RowKey(key[:0], it.in.t.meta.Exec.ID, row.Handle)
			for read < last && bytes.Compare(key, distinct[read].End) >= 0 {
				read++
			}
		}
		if kept++; kept > maxLookupRows {
			// This range and the ones after it are GMS's.
			complete = read
			break
		}
		rows[read] = append(rows[read], gsql.Row(row.Values))
	}
	for i := range rows {
		switch {
		case i >= complete:
			rows[i] = nil
		case rows[i] == nil:
			rows[i] = []gsql.Row{} // read, and empty
		}
	}
	return rows, nil
}

// coalesce returns the reads of distinct, sorted and disjoint ranges: a
// run of ranges of the table's rows each ending where the next starts
// (the ranges of consecutive prefixes, such as the order lines of
// consecutive orders) is read with one scan rather than one each. first
// holds, for each read, the position of its first range in distinct,
// and one more entry, len(distinct).
func (it *batchedLookupIter) coalesce(distinct []keyRange) (reads []keyRange, first []int) {
	if !it.in.x.im.IsPrimary {
		first = make([]int, len(distinct)+1)
		for i := range first {
			first[i] = i
		}
		return distinct, first
	}
	for i, kr := range distinct {
		if n := len(reads); n > 0 && reads[n-1].End != nil && bytes.Equal(reads[n-1].End, kr.Start) {
			reads[n-1].End = kr.End
			continue
		}
		reads = append(reads, keyRange{KeyRange: kr.KeyRange})
		first = append(first, i)
	}
	return reads, append(first, len(distinct))
}

// sameRange reports whether a and b read the same keys.
func sameRange(a, b keyRange) bool {
	return bytes.Equal(a.Start, b.Start) && bytes.Equal(a.End, b.End) && a.point == b.point
}

// passes reports whether inner row r, as the read gives it, meets the
// filters over the inner side's read, and returns the row the inner
// side gives for it (with prepend's row and without strip's columns, as
// GMS's iterators of those nodes make it).
func (it *batchedLookupIter) passes(ctx *gsql.Context, r gsql.Row) (gsql.Row, bool, error) {
	// The prepended row is made only where a filter or the side's row
	// needs it: a strip of the prepended columns gives back r.
	var full gsql.Row
	prepended := func() gsql.Row {
		if full == nil {
			full = it.in.prepend.Row.Append(r)
		}
		return full
	}
	for _, f := range it.in.filters {
		row := r
		if f.prepended {
			row = prepended()
		}
		res, err := gsql.EvaluateCondition(ctx, f.e, row)
		if err != nil || !gsql.IsTrue(res) {
			return nil, false, err
		}
	}
	switch {
	case it.in.prepend == nil:
		return r, true, nil
	case it.in.strip == nil:
		return prepended(), true, nil
	case it.in.strip.NumCols == len(it.in.prepend.Row):
		return r, true, nil
	}
	return prepended()[it.in.strip.NumCols:], true, nil
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
