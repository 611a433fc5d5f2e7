package sql

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/compat"
)

// Correlated scalar aggregates evaluated once, grouped. GMS evaluates a
// correlated scalar subquery such as
//
//	SELECT c.id, (SELECT SUM(o.amount) FROM o, l WHERE ... AND o.c_id = c.id) FROM c
//
// by running the subquery's whole plan again for every outer row. Where
// the correlation is a filter over the subquery's join (GMS pushes an
// outer column into an index only when it alone makes a prefix of one
// index of one table), every run reads everything the subquery reads
// and keeps the rows of one outer row: TPC-C's consistency check
// 3.3.2.12 read ORDER-LINE once per customer (30,000 times) and ran for
// minutes. This is the Apply operator of the literature; TiDB and
// CockroachDB decorrelate it into a join with the subquery grouped by
// its correlated columns.
//
// percdb does the same at execution: the subquery, without its
// correlated equalities and grouped by their inner columns, runs once
// per statement (the rows it reads are the ones a single correlated run
// reads, since the removed filter sat above them), and each outer row
// looks its value up by the values of its outer columns. An outer row
// whose key has no group gets the subquery's value over no rows (COUNT
// 0, SUM NULL), from fresh buffers of its aggregates, or where those do
// not give it, from the subquery itself run with NULL keys.
//
// It is exactly the subquery's answer because it applies only when:
//
//   - the subquery is an aggregate without GROUP BY or HAVING (a single
//     row per outer row) under at most a projection, neither of which
//     reads the outer row, nor anything non-deterministic or another
//     subquery anywhere in it;
//   - its correlation is only conjuncts inner = outer of the Filters
//     right under the aggregate, each comparing two integer columns of
//     the same signedness (so that equality is equality of values, which
//     the lookup key encodes; a NULL on either side matches nothing, as
//     = does), and no other part of the plan reads an outer column: the
//     grouped plan then reads the same rows for every outer row, and its
//     result holds for the whole statement.
//
// The state lives in the expression, built at its first evaluation and
// released by Dispose; a plan cache template (plancache.go) is not
// rewritten, and a plan with a grouped subquery is never cached
// (keepsRows). @percdb_decorrelate = 0 evaluates the
// subquery row by row as GMS does (the differential test compares both).
const decorrelateUserVar = "percdb_decorrelate"

// decorrelateScalarSubqueries returns the analyzer rule, run once the
// execution indexes are assigned; see the comment at the top of the
// file. runs counts the grouped runs (Percdb_grouped_subqueries).
func decorrelateScalarSubqueries(runs *atomic.Uint64) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, _ analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		return decorrelateStatement(ctx, a, n, scope, qFlags, runs)
	}
}

// decorrelateStatement is the rule's work.
func decorrelateStatement(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, qFlags *gsql.QueryFlags, runs *atomic.Uint64) (gsql.Node, transform.TreeIdentity, error) {
	// A plan cache template is left alone: its grouped subqueries would
	// keep one execution's rows in the plan (keepsRows).
	if planTemplate(ctx) || !wholeReadWithSubqueries(ctx, n, scope, qFlags) {
		return n, transform.SameTree, nil
	}
	return decorrelateIn(n, grouping{b: a.ExecBuilder, runs: runs, shared: map[string]*groupedShared{}})
}

// wholeReadWithSubqueries reports whether the rules that replace
// correlated subqueries (decorrelate.go, scalarlookup.go) may rewrite n:
// the final plan of a whole read statement with subqueries.
func wholeReadWithSubqueries(ctx *gsql.Context, n gsql.Node, scope *plan.Scope, qFlags *gsql.QueryFlags) bool {
	// Only the analysis of the whole statement (no scope at all) sees
	// final plans: GMS analyzes a derived table's query under an empty
	// scope of its own first and finalizes its subqueries afterwards.
	// A write's correlated runs see the statement's own earlier
	// writes, which one grouped run before them would not: writes are
	// left to GMS.
	if !scope.IsEmpty() || scope.RecursionDepth() > 0 || qFlags != nil && !qFlags.SubqueryIsSet() || !n.IsReadOnly() {
		return false
	}
	// A routine's statements are analyzed one by one, each as a whole
	// statement (under a context without the statement's text), and a
	// loop runs one plan many times: they are left alone, as are
	// triggers'. TestGroupedSubqueryNotInWrites.
	return !(qFlags != nil && (qFlags.IsSet(gsql.QFlagAnalyzeProcedure) || qFlags.IsSet(gsql.QFlagTrigger)) ||
		strings.TrimSpace(ctx.Query()) == "" || inRoutine(n))
}

// inRoutine reports whether n holds statements that may run more than
// once in one plan (a routine's, a trigger's, a loop's), whose subqueries
// a result kept for the plan would not serve.
func inRoutine(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		switch n.(type) {
		case *plan.Call, *plan.Block, *plan.BeginEndBlock, *plan.TriggerExecutor, *plan.TriggerBeginEndBlock,
			*plan.Loop, *plan.While, *plan.Repeat:
			found = true
		}
		return !found
	})
	return found
}

// grouping is what a groupedSubquery needs from its statement's
// analysis: the builder of its plan and the counter of its runs.
type grouping struct {
	b    gsql.NodeExecBuilder
	runs *atomic.Uint64
	// shared holds the state of the statement's grouped subqueries by
	// their text: GMS's plan repeats a derived table's subquery column
	// in the projections above it (3.3.2.12's Filter over its Project
	// over the Project that made it), and the occurrences of one
	// subquery, whose grouped run reads no outer row, run it once.
	shared map[string]*groupedShared
}

// decorrelateIn replaces the scalar subqueries of n's expressions that
// groupedSubqueryOf accepts, at any depth of subqueries and derived
// tables (no other opaque node: a trigger's or a routine's statements
// run again after writes, which a grouped result kept for the
// statement would not see).
func decorrelateIn(n gsql.Node, b grouping) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		if sqa, ok := n.(*plan.SubqueryAlias); ok {
			child, same, err := decorrelateIn(sqa.Child, b)
			if err != nil || same {
				return n, transform.SameTree, err
			}
			n, err := sqa.WithChildren(child)
			return n, transform.NewTree, err
		}
		return transform.OneNodeExpressions(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			return transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
				return decorrelateExpr(e, b)
			})
		})
	})
}

// decorrelateExpr replaces e when it is a subquery groupedSubqueryOf
// accepts, after the subqueries inside it.
func decorrelateExpr(e gsql.Expression, b grouping) (gsql.Expression, transform.TreeIdentity, error) {
	sq, ok := e.(*plan.Subquery)
	if !ok {
		return e, transform.SameTree, nil
	}
	q, same, err := decorrelateIn(sq.Query, b)
	if err != nil {
		return e, transform.SameTree, err
	}
	if !same {
		sq = sq.WithQuery(q)
	}
	if g, ok := groupedSubqueryOf(sq, b); ok {
		return g, transform.NewTree, nil
	}
	return sq, same, nil
}

// groupedSubqueryOf returns sq evaluated grouped when sq has the shape
// the comment at the top of the file allows.
func groupedSubqueryOf(sq *plan.Subquery, b grouping) (*groupedSubquery, bool) {
	corr := sq.Correlated()
	if corr.Empty() || sq.Volatile() || b.b == nil || len(sq.Query.Schema()) != 1 {
		return nil, false
	}
	var proj *plan.Project
	top := sq.Query
	if p, ok := top.(*plan.Project); ok {
		proj, top = p, p.Child
	}
	gb, ok := top.(*plan.GroupBy)
	if !ok || len(gb.GroupByExprs) != 0 {
		return nil, false
	}
	// The conjuncts of the Filters right under the aggregate.
	var conds []gsql.Expression
	below := gb.Child
	for {
		f, ok := below.(*plan.Filter)
		if !ok {
			break
		}
		conds = append(conds, expression.SplitConjunction(f.Expression)...)
		below = f.Child
	}
	g := &groupedSubquery{sq: sq, b: b.b, runs: b.runs, proj: proj}
	var rest []gsql.Expression
	for _, c := range conds {
		if !compat.RefersTo(c, corr) {
			rest = append(rest, c)
			continue
		}
		inner, outer, ok := innerOuterEquality(c, corr)
		if !ok {
			return nil, false
		}
		g.inner = append(g.inner, inner)
		g.outer = append(g.outer, outer)
	}
	if len(g.inner) == 0 {
		return nil, false
	}
	// Nothing else reads the outer row, nor varies between runs.
	exprs := append(append([]gsql.Expression{}, rest...), gb.SelectedExprs...)
	if proj != nil {
		exprs = append(exprs, proj.Projections...)
	}
	for _, e := range exprs {
		if !groupableExpr(e, corr) {
			return nil, false
		}
	}
	ok = true
	transform.Inspect(below, func(n gsql.Node) bool {
		if ex, isEx := n.(gsql.Expressioner); isEx {
			for _, e := range ex.Expressions() {
				if !groupableExpr(e, corr) {
					ok = false
				}
			}
		}
		if _, isSA := n.(*plan.SubqueryAlias); isSA {
			// A derived table's plan is not walked here.
			ok = false
		}
		return ok
	})
	if !ok {
		return nil, false
	}
	child := below
	if len(rest) > 0 {
		child = plan.NewFilter(expression.JoinAnd(rest...), below)
	}
	keys := make([]gsql.Expression, len(g.inner))
	for i, k := range g.inner {
		keys[i] = k
	}
	selected := append(append([]gsql.Expression{}, gb.SelectedExprs...), keys...)
	g.grouped = sq.WithQuery(plan.NewGroupBy(selected, keys, child))
	g.aggs = gb.SelectedExprs
	// The grouped plan and the subquery's text name what is read and
	// how it is aggregated; the outer columns (g.outer) are each
	// occurrence's own.
	text := sq.String() + "\x00" + g.grouped.String()
	if b.shared[text] == nil {
		b.shared[text] = &groupedShared{}
	}
	g.shared = b.shared[text]
	return g, true
}

// innerOuterEquality splits c, a conjunct reading an outer column, into
// its inner and outer column when it is inner = outer of two integer
// columns of the same signedness.
func innerOuterEquality(c gsql.Expression, corr gsql.ColSet) (inner, outer *expression.GetField, ok bool) {
	eq, isEq := c.(*expression.Equals)
	if !isEq {
		return nil, nil, false
	}
	l, lok := eq.Left().(*expression.GetField)
	r, rok := eq.Right().(*expression.GetField)
	if !lok || !rok {
		return nil, nil, false
	}
	switch {
	case corr.Contains(l.Id()) && !corr.Contains(r.Id()):
		inner, outer = r, l
	case corr.Contains(r.Id()) && !corr.Contains(l.Id()):
		inner, outer = l, r
	default:
		return nil, nil, false
	}
	it, ot := inner.Type(), outer.Type()
	if !types.IsInteger(it) || !types.IsInteger(ot) || types.IsSigned(it) != types.IsSigned(ot) {
		return nil, nil, false
	}
	return inner, outer, true
}

// groupableExpr reports whether e reads no outer column, holds no
// subquery and gives the same value in every run.
func groupableExpr(e gsql.Expression, corr gsql.ColSet) bool {
	ok := true
	transform.InspectExpr(e, func(e gsql.Expression) bool {
		switch e := e.(type) {
		case *expression.GetField:
			if corr.Contains(e.Id()) {
				ok = false
			}
		case *plan.Subquery, *plan.ExistsSubquery, *plan.InSubquery, *groupedSubquery:
			ok = false
		case *expression.UserVar, *expression.ProcedureParam:
			// A variable may change between outer rows (@x := ...).
			ok = false
		case gsql.NonDeterministicExpression:
			if e.IsNonDeterministic() {
				ok = false
			}
		}
		return !ok
	})
	return ok
}

// groupedSubquery is a correlated scalar subquery evaluated grouped; see
// the comment at the top of the file.
type groupedSubquery struct {
	// sq is the subquery as GMS evaluates it, row by row.
	sq   *plan.Subquery
	b    gsql.NodeExecBuilder
	runs *atomic.Uint64
	// grouped is sq's aggregate without the correlated conjuncts, its
	// selected expressions followed by inner, grouped by inner; proj is
	// sq's projection over the aggregate, nil when there is none.
	grouped *plan.Subquery
	// aggs are the aggregate's selected expressions.
	aggs []gsql.Expression
	proj *plan.Project
	// inner[i] = outer[i] are the correlated conjuncts.
	inner, outer []*expression.GetField

	// shared is the state of the statement's occurrences of the
	// subquery (grouping.shared).
	shared *groupedShared
}

// groupedShared is the state of one statement's grouped subquery,
// shared by its occurrences in the plan.
type groupedShared struct {
	mu    sync.Mutex
	state *groupedState
}

// groupedState is what one statement's first evaluation built.
type groupedState struct {
	// values are the subquery's values by lookup key (groupKey).
	values map[string]any
	// empty is the subquery's value over no rows; emptyDone says it was
	// computed.
	empty     any
	emptyDone bool
	// off: a key value was of a type groupKey does not encode; every row
	// is evaluated as GMS does.
	off bool
}

var _ gsql.Expression = (*groupedSubquery)(nil)
var _ gsql.Disposable = (*groupedSubquery)(nil)

// Eval implements sql.Expression.
func (g *groupedSubquery) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if !userVarOn(ctx, decorrelateUserVar) {
		return g.sq.Eval(ctx, row)
	}
	g.shared.mu.Lock()
	defer g.shared.mu.Unlock()
	if g.shared.state == nil {
		st, err := g.build(ctx, row)
		if err != nil {
			return nil, err
		}
		g.shared.state = st
	}
	st := g.shared.state
	if st.off {
		return g.sq.Eval(ctx, row)
	}
	key := make([]byte, 0, 9*len(g.outer))
	for _, o := range g.outer {
		v, err := o.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		var ok bool
		if key, ok = groupKey(key, v); !ok {
			if v == nil {
				return g.emptyValue(ctx, row)
			}
			return g.sq.Eval(ctx, row)
		}
	}
	if v, ok := st.values[string(key)]; ok {
		return v, nil
	}
	return g.emptyValue(ctx, row)
}

// emptyValue returns the subquery's value over no rows.
func (g *groupedSubquery) emptyValue(ctx *gsql.Context, row gsql.Row) (any, error) {
	st := g.shared.state
	if st.emptyDone {
		return st.empty, nil
	}
	v, ok, err := g.aggregateOfNoRows(ctx, row)
	if err != nil {
		return nil, err
	}
	if !ok {
		// The subquery itself, for row with every outer key NULL,
		// which no inner row equals: it reads what one correlated
		// run reads.
		r := row.Copy()
		for _, o := range g.outer {
			if o.Index() < 0 || o.Index() >= len(r) {
				return g.sq.Eval(ctx, row)
			}
			r[o.Index()] = nil
		}
		if v, err = g.sq.Eval(ctx, r); err != nil {
			return nil, err
		}
	}
	st.empty, st.emptyDone = v, true
	return v, nil
}

// aggregateOfNoRows computes the subquery's value over no rows from
// fresh buffers of its aggregates, as GMS's aggregate gives it for an
// empty input, when each selected expression is an aggregate other than
// ANY_VALUE (an aggregate of ANY_VALUEs alone has no row for no input).
func (g *groupedSubquery) aggregateOfNoRows(ctx *gsql.Context, row gsql.Row) (any, bool, error) {
	sel := make(gsql.Row, len(g.aggs))
	for i, e := range g.aggs {
		a, ok := e.(gsql.Aggregation)
		if _, any := e.(*aggregation.AnyValue); !ok || any {
			return nil, false, nil
		}
		buf, err := a.NewBuffer()
		if err != nil {
			return nil, false, err
		}
		sel[i], err = buf.Eval(ctx)
		buf.Dispose()
		if err != nil {
			return nil, false, err
		}
	}
	v, err := g.valueOf(ctx, row, sel)
	return v, err == nil, err
}

// valueOf is the subquery's value for sel, a row of its aggregate:
// sel's first column, or the projection over it, which reads the
// aggregate's row after the outer row, as GMS's prepended rows are.
func (g *groupedSubquery) valueOf(ctx *gsql.Context, row, sel gsql.Row) (any, error) {
	if g.proj == nil {
		return sel[0], nil
	}
	pr := make(gsql.Row, 0, len(row)+len(sel))
	pr = append(append(pr, row...), sel...)
	return g.proj.Projections[0].Eval(ctx, pr)
}

// build runs the grouped plan under row (any outer row: the plan reads
// none of it) and keeps each group's value.
func (g *groupedSubquery) build(ctx *gsql.Context, row gsql.Row) (*groupedState, error) {
	q, _, err := transform.Node(g.grouped.Query, plan.PrependRowInPlan(row, false))
	if err != nil {
		return nil, fmt.Errorf("grouped subquery: %w", err)
	}
	iter, err := g.b.Build(ctx, q, row)
	if err != nil {
		return nil, err
	}
	g.runs.Add(1)
	st := &groupedState{values: map[string]any{}}
	n := len(row)
	for {
		r, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = iter.Close(ctx)
			return nil, err
		}
		sel, keys := r[n:n+len(g.aggs)], r[n+len(g.aggs):]
		key := make([]byte, 0, 9*len(keys))
		skip := false
		for _, k := range keys {
			var ok bool
			if key, ok = groupKey(key, k); !ok {
				if k != nil {
					st.off = true
				}
				// A NULL inner key matches no outer row.
				skip = true
				break
			}
		}
		if st.off {
			break
		}
		if skip {
			continue
		}
		v, err := g.valueOf(ctx, row, sel)
		if err != nil {
			_ = iter.Close(ctx)
			return nil, err
		}
		st.values[string(key)] = v
	}
	if err := iter.Close(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

// groupKey appends the lookup key of v, an integer, to key: a sign byte
// and the magnitude, so that equal values of any integer type have one
// key. ok is false for NULL and for values of other types.
func groupKey(key []byte, v any) (_ []byte, ok bool) {
	neg, mag, ok := compat.IntMagnitude(v)
	if !ok {
		return key, false
	}
	sign := byte(1)
	if neg {
		sign = 0
	}
	return binary.BigEndian.AppendUint64(append(key, sign), mag), true
}

// Dispose implements sql.Disposable: the statement is over.
func (g *groupedSubquery) Dispose() {
	g.shared.mu.Lock()
	g.shared.state = nil
	g.shared.mu.Unlock()
	g.sq.Dispose()
}

// Resolved implements sql.Expression.
func (g *groupedSubquery) Resolved() bool { return g.sq.Resolved() }

// IsNullable implements sql.Expression.
func (g *groupedSubquery) IsNullable() bool { return true }

// Type implements sql.Expression.
func (g *groupedSubquery) Type() gsql.Type { return g.sq.Type() }

// Children implements sql.Expression.
func (g *groupedSubquery) Children() []gsql.Expression { return nil }

// WithChildren implements sql.Expression.
func (g *groupedSubquery) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(g, len(children), 0)
	}
	return g, nil
}

// CollationCoercibility implements sql.CollationCoercible.
func (g *groupedSubquery) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return g.sq.CollationCoercibility(ctx)
}

// String implements sql.Expression; EXPLAIN shows the grouping.
func (g *groupedSubquery) String() string {
	return g.describe(g.sq.String())
}

// DebugString implements sql.DebugStringer.
func (g *groupedSubquery) DebugString() string {
	return g.describe(gsql.DebugString(g.sq))
}

func (g *groupedSubquery) describe(sq string) string {
	keys := make([]string, len(g.inner))
	for i := range g.inner {
		keys[i] = g.inner[i].String() + " = " + g.outer[i].String()
	}
	return fmt.Sprintf("GroupedSubquery(once, grouped by %s)\n%s", strings.Join(keys, ", "), sq)
}
