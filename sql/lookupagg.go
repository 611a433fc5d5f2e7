package sql

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/planrules"
	"github.com/percdb/percdb/txn"
)

// Aggregates over a lookup join, per join key, in the coprocessor
// (docs/architecture.md, "Aggregates over a lookup join"). A GroupBy over
// an inner lookup join aggregates, for each outer row, the inner rows of
// its key: TPC-C's 3.3.2.12, once decorrelate.go has made its subquery
// one grouped run, sums 300,000 order lines into 30,000 sums. Run by
// GMS, every inner row is read into interface values, joined to its
// outer row and fed to the aggregate. percdb sends the aggregation down
// with the ranges instead (eager aggregation): per batch of outer rows,
// one program over the batch's lookup ranges (copr.RunRanges, one
// request per region) filters the inner rows and groups them by the
// inner columns of the join's equalities with partial aggregates, and
// each outer row merges the partial of its key values into its own group.
//
// Groups are keyed by values, not by the range a row came from: a row of
// one outer row's range with another outer row's key values meets the
// join's condition with that one too, and is in its range (a lookup
// reads every row its equalities can match), so each outer row gets
// exactly the inner rows the join gives it, whatever the ranges share;
// a range widened by an inexact key only reads rows that land in groups
// no outer row looks up. An outer row met twice merges its partial
// twice, as the join repeats the inner rows.
//
// It applies (lookupAggOf) when every conjunct of the join's condition
// and of the filters between it and the GroupBy is an equality of an
// inner integer column with an integer expression of the outer side (a
// key), or reads the inner table alone (compiled into the program), or
// the outer side alone (evaluated per outer row); when the grouping
// expressions and the selected non-aggregates read the outer side alone;
// and when every aggregate is one the coprocessor computes over inner
// columns (COUNT, MIN and MAX of integers, exact SUM and AVG of integers
// and DECIMALs). Otherwise, or for a read that locks, GMS's GroupBy runs.
// lookupAggUserVar set to 0 or OFF turns it off for a session (the
// differential test compares both).
const lookupAggUserVar = "percdb_lookup_agg"

// lookupAggBatch is how many outer rows one program serves at most: the
// partials of a batch are one per distinct key, a few dozen bytes each.
const lookupAggBatch = 1024

// lookupAgg is a GroupBy run as partial aggregates per join key.
type lookupAgg struct {
	g  *plan.GroupBy
	j  *plan.JoinNode
	in batchedInner
	// lookupKeys is how many key columns the lookup pins, the first of
	// the program's GroupBy.
	lookupKeys int
	// The join's rows (GMS's layout, which the GroupBy's expressions
	// index) hold the outer scope's kept columns and the outer side's in
	// [0, outerLen), the inner table's from outerLen on.
	outerLen int
	// keys are the outer expressions of the join condition's equalities,
	// in the order of the program's GroupBy after the lookup's;
	// unsigned says the inner column is.
	keys     []gsql.Expression
	unsigned []bool
	// conds are the conditions over the outer side alone.
	conds []gsql.Expression
	prog  *copr.Program
	avgs  []coprAvg
	// aggAt maps each selected expression of the GroupBy to its
	// aggregate among prog.Aggs, -1 for an expression evaluated over the
	// group's first row: over the outer side's columns, or where inner
	// holds it (HAVING's references to inner columns), over the inner
	// table's columns of that row, kept by the program (keepPos are
	// their table positions, in prog.Keep's order).
	aggAt   []int
	inner   []gsql.Expression
	keepPos []int
}

// lookupAggOf returns how g runs as partial aggregates per join key,
// false when it does not apply (see the comment at the top of the file).
func lookupAggOf(g *plan.GroupBy) (*lookupAgg, bool) {
	var conds []gsql.Expression
	child := g.Child
	for {
		f, ok := child.(*plan.Filter)
		if !ok {
			break
		}
		conds = append(conds, expression.SplitConjunction(f.Expression)...)
		child = f.Child
	}
	j, ok := child.(*plan.JoinNode)
	if !ok || j.Op != plan.JoinTypeLookup {
		return nil, false
	}
	in, ok := batchedLookup(j)
	if !ok || !in.x.im.IsPrimary {
		return nil, false
	}
	tschema := in.t.Schema()
	if len(j.Right().Schema()) != len(tschema) {
		return nil, false
	}
	la := &lookupAgg{g: g, j: j, in: in, outerLen: j.ScopeLen + len(j.Left().Schema())}
	if j.Filter != nil {
		conds = append(conds, expression.SplitConjunction(j.Filter)...)
	}
	c := newCoprCompiler(in.t)
	// The lookup's key columns, a prefix of the primary key, group the
	// inner rows first: each outer row's lookup is the point of its key
	// values on them (GMS converts the keys to the columns' types).
	exprs := in.ita.Expressions()
	for i, e := range exprs {
		pos := slices.Index(c.offsets, in.x.im.Ords[i])
		if pos < 0 || !types.IsInteger(in.x.im.Types[i]) || !types.IsInteger(e.Type()) {
			return nil, false
		}
		c.prog.GroupBy = append(c.prog.GroupBy, copr.Expr{Op: copr.OpColumn, Col: c.column(pos)})
	}
	la.lookupKeys = len(exprs)
	// The inner side's own filters read the table's row, after the
	// prepended row where they sit over it.
	for _, f := range in.filters {
		e := f.e
		if f.prepended {
			if e, ok = shiftFields(e, len(in.prepend.Row), len(tschema)); !ok {
				return nil, false
			}
		}
		if len(c.filter(e)) > 0 {
			return nil, false
		}
	}
	for _, cond := range conds {
		lo, hi, ok := fieldSpan(cond)
		switch {
		case !ok:
			return nil, false
		case isTrue(cond):
		case hi < la.outerLen:
			if exact, changed := compat.ExactDecimalColumns(cond); changed {
				cond = exact
			}
			la.conds = append(la.conds, cond)
		case lo >= la.outerLen:
			e, ok := shiftFields(cond, la.outerLen, len(tschema))
			if !ok || len(c.filter(e)) > 0 {
				return nil, false
			}
		default:
			// A column met twice is grouped by twice: a row joins when
			// it equals both.
			pos, outer, ok := la.joinKey(cond, tschema)
			if !ok {
				return nil, false
			}
			c.prog.GroupBy = append(c.prog.GroupBy, copr.Expr{Op: copr.OpColumn, Col: c.column(pos)})
			la.keys = append(la.keys, outer)
			la.unsigned = append(la.unsigned, types.IsUnsigned(tschema[pos].Type))
		}
	}
	if len(c.prog.GroupBy) == 0 {
		return nil, false
	}
	for _, e := range g.GroupByExprs {
		if _, hi, ok := fieldSpan(e); !ok || hi >= la.outerLen {
			return nil, false
		}
	}
	c.prog.Aggregate = true
	la.aggAt = make([]int, len(g.SelectedExprs))
	la.inner = make([]gsql.Expression, len(g.SelectedExprs))
	for i, e := range g.SelectedExprs {
		agg, isAgg := e.(gsql.Aggregation)
		if !isAgg {
			la.aggAt[i] = -1
			lo, hi, ok := fieldSpan(e)
			switch {
			case !ok:
				return nil, false
			case hi < la.outerLen:
				continue
			}
			inner, ok := shiftFields(e, la.outerLen, len(tschema))
			if !ok || lo < la.outerLen {
				return nil, false
			}
			transform.InspectExpr(inner, func(x gsql.Expression) bool {
				if gf, isField := x.(*expression.GetField); isField && !slices.Contains(la.keepPos, gf.Index()) {
					la.keepPos = append(la.keepPos, gf.Index())
					c.prog.Keep = append(c.prog.Keep, c.column(gf.Index()))
				}
				return false
			})
			la.inner[i] = inner
			continue
		}
		shifted, ok := shiftFields(agg, la.outerLen, len(tschema))
		if !ok {
			return nil, false
		}
		agg, ok = shifted.(gsql.Aggregation)
		if !ok {
			return nil, false
		}
		la.aggAt[i] = len(c.prog.Aggs)
		if avg, ok := c.average(agg); ok {
			la.avgs = append(la.avgs, coprAvg{at: len(c.prog.Aggs), scale: avg.scale})
			c.prog.Aggs = append(c.prog.Aggs, avg.sum, avg.count)
			continue
		}
		a, ok := c.aggregate(agg)
		if !ok {
			return nil, false
		}
		c.prog.Aggs = append(c.prog.Aggs, a)
	}
	if la.prog, ok = c.finish(); !ok {
		return nil, false
	}
	return la, true
}

// isTrue reports whether e is the literal TRUE (a lookup join's
// condition when the lookup holds all of it).
func isTrue(e gsql.Expression) bool {
	l, ok := e.(*expression.Literal)
	return ok && l.Value() == true
}

// joinKey returns the inner column (its table position) and the outer
// expression of cond when it is inner = outer, both of integer types:
// equality of integer values, which the groups' keys encode.
func (la *lookupAgg) joinKey(cond gsql.Expression, tschema gsql.Schema) (int, gsql.Expression, bool) {
	eq, ok := cond.(*expression.Equals)
	if !ok {
		return 0, nil, false
	}
	for _, sides := range [2][2]gsql.Expression{{eq.Left(), eq.Right()}, {eq.Right(), eq.Left()}} {
		gf, ok := sides[0].(*expression.GetField)
		if !ok {
			continue
		}
		pos := gf.Index() - la.outerLen
		if pos < 0 || pos >= len(tschema) || tschema[pos].Name != gf.Name() {
			continue
		}
		if _, hi, ok := fieldSpan(sides[1]); !ok || hi >= la.outerLen {
			continue
		}
		if !types.IsInteger(tschema[pos].Type) || !types.IsInteger(sides[1].Type()) {
			return 0, nil, false
		}
		return pos, sides[1], true
	}
	return 0, nil, false
}

// fieldSpan returns the lowest and highest row position e reads (-1, -1
// when it reads none); ok is false when e holds what is evaluated other
// than once per row as a function of it: a subquery, something
// non-deterministic, a nested aggregate.
func fieldSpan(e gsql.Expression) (lo, hi int, ok bool) {
	lo, hi, ok = math.MaxInt, -1, true
	transform.InspectExpr(e, func(x gsql.Expression) bool {
		switch x := x.(type) {
		case *plan.Subquery, gsql.NonDeterministicExpression:
			ok = false
		case gsql.Aggregation:
			if x != e {
				ok = false
			}
		case *expression.GetField:
			lo, hi = min(lo, x.Index()), max(hi, x.Index())
		}
		return !ok
	})
	if hi < 0 {
		lo = -1
	}
	return lo, hi, ok
}

// shiftFields returns e with every column position moved down by off,
// false when one falls outside [off, off+n) (e reads something else).
func shiftFields(e gsql.Expression, off, n int) (gsql.Expression, bool) {
	ok := true
	out, _, err := transform.Expr(e, func(x gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		gf, isField := x.(*expression.GetField)
		if !isField {
			return x, transform.SameTree, nil
		}
		if gf.Index() < off || gf.Index() >= off+n {
			ok = false
			return x, transform.SameTree, nil
		}
		return gf.WithIndex(gf.Index() - off), transform.NewTree, nil
	})
	return out, ok && err == nil
}

// aggregatedJoin reports whether g runs as partial aggregates per join
// key in ctx's session (EXPLAIN's "Using coprocessor (aggregation per
// join key)" on the inner table).
func aggregatedJoin(ctx *gsql.Context, g *plan.GroupBy) bool {
	if !coprEnabled(ctx) || !userVarOn(ctx, lookupAggUserVar) || !userVarOn(ctx, lookupBatchUserVar) {
		return false
	}
	_, ok := lookupAggOf(g)
	return ok
}

// buildLookupAgg returns the rows of g run as partial aggregates per join
// key, ok false (and nothing done) when that does not apply, for GMS to
// run it.
func (b *compatBuilder) buildLookupAgg(ctx *gsql.Context, g *plan.GroupBy, parent gsql.Row) (gsql.RowIter, bool, error) {
	if !aggregatedJoin(ctx, g) {
		return nil, false, nil
	}
	la, _ := lookupAggOf(g)
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, false, err
	}
	sess, _ := sessionOf(ctx)
	if (la.in.t.lockReads && tx.stmtOpen) || (sess != nil && sess.forUpdate && sess.inExplicitTransaction()) {
		return nil, false, nil // the coprocessor does not lock what it reads
	}
	k, err := tx.txn(ctx)
	if err != nil {
		return nil, false, toSQLError(err)
	}
	left, err := b.gms.Build(ctx, la.j.Left(), parent)
	if err != nil {
		return nil, false, err
	}
	r := &lookupAggRun{la: la, k: k, sess: sess, parent: parent, left: left, groups: map[string]int{}}
	err = r.run(ctx)
	if cerr := left.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, false, err
	}
	return gsql.RowsToRowIter(r.out...), true, nil
}

// lookupAggRun is one run of a lookupAgg.
type lookupAggRun struct {
	la     *lookupAgg
	k      *txn.Txn
	sess   *Session
	parent gsql.Row
	left   gsql.RowIter
	// groups maps an outer group's key (groupKeyOf) to its place in
	// first, keep and aggs: the group's first joined row, the kept
	// inner columns of its first inner row, its merged partials.
	groups map[string]int
	first  []gsql.Row
	keep   [][]any
	aggs   [][]any
	out    []gsql.Row
}

// pendingOuter is an outer row of a batch waiting for its partials: its
// joined row (inner columns NULL) and the key of its inner group.
type pendingOuter struct {
	row gsql.Row
	key []byte
}

// run reads the outer side batch by batch and makes the output rows.
func (r *lookupAggRun) run(ctx *gsql.Context) error {
	la := r.la
	rowLen := la.outerLen + len(la.j.Right().Schema())
	for done := false; !done; {
		var batch []pendingOuter
		var ranges []keyRange
		for len(batch) < lookupAggBatch {
			l, err := r.left.Next(ctx)
			if err == io.EOF {
				done = true
				break
			}
			if err != nil {
				return err
			}
			row := r.parent.Append(l)
			// The join's row: the outer scope's kept columns, the outer
			// side's, the inner side's (NULL here).
			joined := make(gsql.Row, rowLen)
			copy(joined, r.parent[:min(la.j.ScopeLen, len(r.parent))])
			if la.j.ScopeLen+len(l) != la.outerLen {
				return fmt.Errorf("lookup aggregation: outer row of %d columns, want %d", len(l), la.outerLen-la.j.ScopeLen)
			}
			copy(joined[la.j.ScopeLen:], l)
			lookup, err := la.in.ita.GetLookup(ctx, row)
			if err != nil {
				return err
			}
			if lookup.IsEmptyRange {
				continue
			}
			mr, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
			if !ok || len(mr) != 1 {
				return fmt.Errorf("table %s: lookup aggregation: ranges %T of %d", la.in.t.Name(), lookup.Ranges, len(mr))
			}
			key, ok, err := r.lookupKey(ctx, mr[0])
			if err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			key, ok, err = r.outer(ctx, joined, key)
			if err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			kr, empty, err := keyRangeOf(ctx, la.in.t.meta, la.in.x.im, mr[0])
			if err != nil || empty {
				if err != nil {
					return err
				}
				continue
			}
			ranges = append(ranges, kr)
			batch = append(batch, pendingOuter{row: joined, key: key})
		}
		if len(batch) == 0 {
			continue
		}
		m, err := r.partials(ctx, ranges)
		if err != nil {
			return err
		}
		for _, p := range batch {
			keep, part, ok := m.Group(p.key)
			if !ok {
				continue // no inner row: the inner join drops the outer row
			}
			if err := r.merge(ctx, p.row, keep, part); err != nil {
				return err
			}
		}
	}
	return r.finish(ctx)
}

// lookupKey returns the key of the inner group an outer row's lookup
// range reads: the values its range pins the lookup's key columns to,
// as the table's keys hold them. ok is false when the range holds no
// row (a NULL key: primary-key columns are never NULL).
func (r *lookupAggRun) lookupKey(ctx *gsql.Context, rng gsql.MySQLRange) ([]byte, bool, error) {
	la := r.la
	key := make([]byte, 0, 9*(la.lookupKeys+len(la.keys)))
	for i := 0; i < la.lookupKeys; i++ {
		v, ok := planrules.PointValue(ctx, rng[i])
		if ok && v != nil {
			v, ok = boundValue(ctx, v, la.in.x.im, i)
		}
		if !ok {
			// GMS converts a key to the column's type (its zero
			// value when it cannot): not met with integer keys.
			return nil, false, fmt.Errorf("table %s: lookup aggregation: key column %d is not a point", la.in.t.Name(), i)
		}
		if v == nil {
			return nil, false, nil
		}
		var err error
		if key, err = copr.AppendGroupKey(key, v); err != nil {
			return nil, false, err
		}
	}
	return key, true, nil
}

// outer evaluates the outer side's conditions over joined and appends
// the values of the join condition's keys to key, ok false when the row
// joins no inner row (a condition not true, a NULL key, a key no inner
// column value equals).
func (r *lookupAggRun) outer(ctx *gsql.Context, joined gsql.Row, key []byte) ([]byte, bool, error) {
	la := r.la
	for _, c := range la.conds {
		res, err := gsql.EvaluateCondition(ctx, c, joined)
		if err != nil || !gsql.IsTrue(res) {
			return nil, false, err
		}
	}
	for i, e := range la.keys {
		v, err := e.Eval(ctx, joined)
		if err != nil || v == nil {
			return nil, false, err
		}
		neg, mag, ok := compat.IntMagnitude(v)
		if !ok {
			return nil, false, fmt.Errorf("lookup aggregation: join key %s of type %T", e, v)
		}
		// The value as the inner column's signedness holds it.
		var kv any
		switch {
		case la.unsigned[i] && neg:
			return nil, false, nil
		case la.unsigned[i]:
			kv = mag
		case neg && mag <= 1<<63:
			kv = int64(-mag)
		case !neg && mag <= math.MaxInt64:
			kv = int64(mag)
		default:
			return nil, false, nil
		}
		if key, err = copr.AppendGroupKey(key, kv); err != nil {
			return nil, false, err
		}
	}
	return key, true, nil
}

// partials runs the program over ranges (sorted; overlapping and
// touching ranges united, so that outer rows read in the inner key's
// order, as 3.3.2.12's orders are for their order lines, make one range
// of a batch instead of one seek and range each) and merges its outputs
// into the inner groups. A union reads exactly the keys of its parts:
// groups are keyed by values, not by ranges.
func (r *lookupAggRun) partials(ctx *gsql.Context, ranges []keyRange) (*copr.Merger, error) {
	la := r.la
	sort.Slice(ranges, func(a, b int) bool { return bytes.Compare(ranges[a].Start, ranges[b].Start) < 0 })
	reads := make([]executor.KeyRange, 0, len(ranges))
	for _, kr := range ranges {
		if n := len(reads); n > 0 {
			last := &reads[n-1]
			if last.End == nil || bytes.Compare(kr.Start, last.End) <= 0 {
				if last.End != nil && (kr.End == nil || bytes.Compare(kr.End, last.End) > 0) {
					last.End = kr.End
				}
				continue
			}
		}
		reads = append(reads, kr.KeyRange)
	}
	la.in.t.db.provider.lookupAggs.Add(1)
	out, err := copr.RunRanges(ctx, r.k, la.in.t.meta.Exec, reads, la.prog)
	if err != nil {
		return nil, toSQLError(err)
	}
	defer func() {
		if r.sess != nil {
			r.sess.rowsExamined.Add(uint64(out.Examined()))
		}
		out.Close()
	}()
	return mergeOutputs(ctx, la.prog, func() ([]byte, error) { return out.Next(ctx) })
}

// merge adds the partials part of one outer row's key to the row's
// outer group.
func (r *lookupAggRun) merge(ctx *gsql.Context, joined gsql.Row, keep, part []any) error {
	la := r.la
	key, err := groupKeyOf(ctx, la.g.GroupByExprs, joined)
	if err != nil {
		return err
	}
	g, ok := r.groups[string(key)]
	if !ok {
		if !ctx.Memory.HasAvailable() {
			return gsql.ErrNoMemoryAvailable.New()
		}
		g = len(r.first)
		r.groups[string(key)] = g
		r.first = append(r.first, joined)
		r.keep = append(r.keep, slices.Clone(keep))
		r.aggs = append(r.aggs, noRowsAggs(la.prog))
	}
	acc := r.aggs[g]
	for i, a := range la.prog.Aggs {
		acc[i] = copr.Accumulate(a.Func, acc[i], part[i], true)
	}
	return nil
}

// noRowsAggs returns the partial aggregates of p over no rows: counts 0,
// the rest NULL.
func noRowsAggs(p *copr.Program) []any {
	aggs := make([]any, len(p.Aggs))
	for i, a := range p.Aggs {
		if a.Func == copr.AggCount || a.Func == copr.AggCountStar {
			aggs[i] = int64(0)
		}
	}
	return aggs
}

// finish makes the output rows, one per outer group in the order they
// were first met, as GMS's GroupBy gives them; without grouping
// expressions there is one row even over no rows.
func (r *lookupAggRun) finish(ctx *gsql.Context) error {
	la := r.la
	if len(r.first) == 0 && len(la.g.GroupByExprs) == 0 {
		r.first = append(r.first, nil)
		r.keep = append(r.keep, nil)
		r.aggs = append(r.aggs, noRowsAggs(la.prog))
	}
	for g, first := range r.first {
		aggs := finalAggregates(la.prog, la.avgs, r.aggs[g])
		row := make(gsql.Row, len(la.g.SelectedExprs))
		for i, e := range la.g.SelectedExprs {
			if at := la.aggAt[i]; at >= 0 {
				row[i] = aggs[at]
				continue
			}
			if first == nil {
				continue // the first row of no rows
			}
			over := first
			if in := la.inner[i]; in != nil {
				e, over = in, keptRow(len(la.in.t.Schema()), la.keepPos, r.keep[g])
			}
			v, err := e.Eval(ctx, over)
			if err != nil {
				return err
			}
			row[i] = v
		}
		r.out = append(r.out, row)
	}
	return nil
}

// groupKeyOf returns the key of a row's group by exprs: values equal as
// GMS's GroupBy groups them (strings by their collation's weights, the
// rest by their text) have one key. Unlike GMS's 64-bit hash of the
// same, two different values never share one.
func groupKeyOf(ctx *gsql.Context, exprs []gsql.Expression, row gsql.Row) ([]byte, error) {
	var key bytes.Buffer
	for _, e := range exprs {
		v, err := e.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		var part bytes.Buffer
		st, isString := e.Type().(gsql.StringType)
		switch {
		case v == nil:
			part.WriteByte(0)
		case isString:
			s, err := types.ConvertToString(ctx, v, st, nil)
			if err != nil {
				return nil, err
			}
			part.WriteByte(1)
			if err := st.Collation().WriteWeightString(&part, s); err != nil {
				return nil, err
			}
		default:
			part.WriteByte(2)
			fmt.Fprintf(&part, "%v", v)
		}
		var n [binary.MaxVarintLen64]byte
		key.Write(n[:binary.PutUvarint(n[:], uint64(part.Len()))])
		key.Write(part.Bytes())
	}
	return key.Bytes(), nil
}
