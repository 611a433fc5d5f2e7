package compat

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS v0.20.0 parses CUME_DIST() and NTH_VALUE(x, n) but has neither
// (1105 "function: 'cume_dist' not found"), and its planner builds a
// function as a window function only when its name is on a fixed list
// (planbuilder's isWindowFunc), so a function of percdb's under either
// name would be built as a plain function. windowFunctionNames renames
// them in the parsed statement to names on that list whose grammar takes
// no such arguments, so that the rename cannot meet a user's call:
// CUME_DIST() becomes PERCENT_RANK(1) (PERCENT_RANK takes no argument)
// and NTH_VALUE(x, n) becomes FIRST_VALUE(x, n) (FIRST_VALUE takes one).
// windowFunctions, looked up before GMS's functions, tells them apart by
// their argument count and makes cumeDist and nthValue of them.
//
// MySQL's CUME_DIST is the share of the partition's rows that sort before
// the current row or are its peers (equal in every ORDER BY value, as
// their types compare); NTH_VALUE(x, n) is x of the frame's n-th row,
// NULL when the frame has fewer, over the window's frame or MySQL's
// default one (with an ORDER BY: the partition's start to the current
// row's last peer; without: the whole partition). n must be a positive
// integer constant (or a parameter): 1210 otherwise.

// Names of the functions the parsed statement calls CUME_DIST and
// NTH_VALUE by (see above).
const (
	cumeDistAlias = "percent_rank"
	nthValueAlias = "first_value"
)

// windowFunctions are percdb's window functions by the names GMS's
// planner builds them under; see the comment above.
var windowFunctions = map[string]gsql.Function{
	cumeDistAlias: gsql.FunctionN{Name: cumeDistAlias, Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		if len(args) == 1 {
			return &cumeDist{}, nil
		}
		return peerRankedFunctions["percent_rank"].NewInstance(args)
	}},
	nthValueAlias: gsql.FunctionN{Name: nthValueAlias, Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		if len(args) == 2 {
			return &nthValue{expr: args[0], n: args[1]}, nil
		}
		if len(args) != 1 {
			return nil, gsql.ErrInvalidArgumentNumber.New("FIRST_VALUE", 1, len(args))
		}
		return window.NewFirstValue(args[0]), nil
	}},
}

// windowFunctionNames renames CUME_DIST and NTH_VALUE in stmt; see the
// comment above.
func windowFunctionNames(stmt ast.Statement) ast.Statement {
	if stmt == nil {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		f, ok := node.(*ast.FuncExpr)
		if !ok || f.Over == nil {
			return true, nil
		}
		switch {
		case f.Name.EqualString("cume_dist") && len(f.Exprs) == 0:
			f.Name = ast.NewColIdent(cumeDistAlias)
			f.Exprs = ast.SelectExprs{&ast.AliasedExpr{Expr: ast.NewIntVal([]byte("1"))}}
		case f.Name.EqualString("nth_value"):
			f.Name = ast.NewColIdent(nthValueAlias)
		}
		return true, nil
	}, stmt)
	return stmt
}

// windowOf is the part every window function of this file shares: its
// window and column id.
type windowOf struct {
	window *gsql.WindowDefinition
	id     gsql.ColumnId
}

// Window implements sql.WindowAdaptableExpression.
func (w windowOf) Window() *gsql.WindowDefinition { return w.window }

// Id implements sql.IdExpression.
func (w windowOf) Id() gsql.ColumnId { return w.id }

// over returns the text of the OVER clause, empty without a window.
func (w windowOf) over() string {
	if w.window == nil {
		return ""
	}
	return " " + w.window.String()
}

// orderBy returns the window's ORDER BY expressions.
func (w windowOf) orderBy() []gsql.Expression {
	if w.window == nil {
		return nil
	}
	return w.window.OrderBy.ToExpressions()
}

// windowResolved reports whether the window's expressions are resolved.
func (w windowOf) windowResolved() bool {
	return w.window == nil || expression.ExpressionsResolved(w.window.ToExpressions()...)
}

// cumeDist is CUME_DIST() over a window.
type cumeDist struct {
	windowOf
}

var _ gsql.WindowAdaptableExpression = (*cumeDist)(nil)
var _ gsql.FunctionExpression = (*cumeDist)(nil)
var _ gsql.CollationCoercible = (*cumeDist)(nil)

// FunctionName implements sql.FunctionExpression.
func (c *cumeDist) FunctionName() string { return "cume_dist" }

// Description implements sql.FunctionExpression.
func (c *cumeDist) Description() string { return "MySQL's CUME_DIST" }

// Resolved implements sql.Expression.
func (c *cumeDist) Resolved() bool { return c.windowResolved() }

// String implements sql.Expression.
func (c *cumeDist) String() string { return "cume_dist()" + c.over() }

// Type implements sql.Expression: DOUBLE, as MySQL's.
func (c *cumeDist) Type() gsql.Type { return types.Float64 }

// IsNullable implements sql.Expression.
func (c *cumeDist) IsNullable() bool { return false }

// CollationCoercibility implements sql.CollationCoercible.
func (c *cumeDist) CollationCoercibility(*gsql.Context) (gsql.CollationID, byte) {
	return gsql.Collation_binary, 5
}

// Eval implements sql.Expression: a window function has no value of one
// row.
func (c *cumeDist) Eval(*gsql.Context, gsql.Row) (any, error) {
	return nil, gsql.ErrWindowUnsupported.New(c.FunctionName())
}

// Children implements sql.Expression: the window's expressions.
func (c *cumeDist) Children() []gsql.Expression { return c.window.ToExpressions() }

// WithChildren implements sql.Expression.
func (c *cumeDist) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	w, err := c.window.FromExpressions(children)
	if err != nil {
		return nil, err
	}
	return c.WithWindow(w), nil
}

// WithWindow implements sql.WindowAdaptableExpression.
func (c *cumeDist) WithWindow(w *gsql.WindowDefinition) gsql.WindowAdaptableExpression {
	out := *c
	out.window = w
	return &out
}

// WithId implements sql.IdExpression.
func (c *cumeDist) WithId(id gsql.ColumnId) gsql.IdExpression {
	out := *c
	out.id = id
	return &out
}

// NewWindowFunction implements sql.WindowAdaptableExpression.
func (c *cumeDist) NewWindowFunction() (gsql.WindowFunction, error) {
	return &cumeDistFunction{orderBy: c.orderBy()}, nil
}

// cumeDistFunction computes CUME_DIST over each row's peer group (its
// frame, by peerFramer): the rows up to the group's end, of the
// partition's.
type cumeDistFunction struct {
	orderBy                      []gsql.Expression
	partitionStart, partitionEnd int
}

// Dispose implements sql.Disposable.
func (f *cumeDistFunction) Dispose() {}

// DefaultFramer implements sql.WindowFunction: the current row's peers,
// whatever frame the window has (MySQL ignores it for CUME_DIST).
func (f *cumeDistFunction) DefaultFramer() gsql.WindowFramer {
	return &peerFramer{orderBy: f.orderBy}
}

// StartPartition implements sql.WindowFunction.
func (f *cumeDistFunction) StartPartition(_ *gsql.Context, interval gsql.WindowInterval, _ gsql.WindowBuffer) error {
	f.partitionStart, f.partitionEnd = interval.Start, interval.End
	return nil
}

// Compute implements sql.WindowFunction.
func (f *cumeDistFunction) Compute(_ *gsql.Context, interval gsql.WindowInterval, _ gsql.WindowBuffer) any {
	rows := f.partitionEnd - f.partitionStart
	if interval.End <= interval.Start || rows <= 0 {
		return nil
	}
	return float64(interval.End-f.partitionStart) / float64(rows)
}

// nthValue is NTH_VALUE(expr, n) over a window.
type nthValue struct {
	windowOf
	expr, n gsql.Expression
}

var _ gsql.WindowAdaptableExpression = (*nthValue)(nil)
var _ gsql.FunctionExpression = (*nthValue)(nil)
var _ gsql.CollationCoercible = (*nthValue)(nil)

// FunctionName implements sql.FunctionExpression.
func (v *nthValue) FunctionName() string { return "nth_value" }

// Description implements sql.FunctionExpression.
func (v *nthValue) Description() string { return "MySQL's NTH_VALUE" }

// Resolved implements sql.Expression.
func (v *nthValue) Resolved() bool {
	return v.windowResolved() && v.expr.Resolved() && v.n.Resolved()
}

// String implements sql.Expression.
func (v *nthValue) String() string {
	return fmt.Sprintf("nth_value(%s, %s)%s", v.expr, v.n, v.over())
}

// Type implements sql.Expression: the value's.
func (v *nthValue) Type() gsql.Type { return v.expr.Type() }

// IsNullable implements sql.Expression.
func (v *nthValue) IsNullable() bool { return true }

// CollationCoercibility implements sql.CollationCoercible.
func (v *nthValue) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, v.expr)
}

// Eval implements sql.Expression: a window function has no value of one
// row.
func (v *nthValue) Eval(*gsql.Context, gsql.Row) (any, error) {
	return nil, gsql.ErrWindowUnsupported.New(v.FunctionName())
}

// Children implements sql.Expression: the window's expressions, then
// the value and n.
func (v *nthValue) Children() []gsql.Expression {
	return append(v.window.ToExpressions(), v.expr, v.n)
}

// WithChildren implements sql.Expression.
func (v *nthValue) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) < 2 {
		return nil, gsql.ErrInvalidChildrenNumber.New(v, len(children), 2)
	}
	k := len(children) - 2
	w, err := v.window.FromExpressions(children[:k])
	if err != nil {
		return nil, err
	}
	out := *v
	out.window, out.expr, out.n = w, children[k], children[k+1]
	return &out, nil
}

// WithWindow implements sql.WindowAdaptableExpression.
func (v *nthValue) WithWindow(w *gsql.WindowDefinition) gsql.WindowAdaptableExpression {
	out := *v
	out.window = w
	return &out
}

// WithId implements sql.IdExpression.
func (v *nthValue) WithId(id gsql.ColumnId) gsql.IdExpression {
	out := *v
	out.id = id
	return &out
}

// errNthValueArgument is MySQL's error for an n of NTH_VALUE that is not
// a positive integer constant (ER_WRONG_ARGUMENTS).
func errNthValueArgument() error {
	return mysql.NewSQLError(1210, "HY000", "Incorrect arguments to nth_value")
}

// NewWindowFunction implements sql.WindowAdaptableExpression.
func (v *nthValue) NewWindowFunction() (gsql.WindowFunction, error) {
	n, err := windowConstant(v.n)
	if err != nil {
		return nil, err
	}
	expr, err := transform.Clone(v.expr)
	if err != nil {
		return nil, err
	}
	f := &nthValueFunction{expr: expr, n: n}
	switch {
	case v.window != nil && v.window.Frame != nil:
		if f.framer, err = v.window.Frame.NewFramer(v.window); err != nil {
			return nil, err
		}
	case len(v.orderBy()) > 0:
		f.framer = &peerRangeFramer{peers: peerFramer{orderBy: v.orderBy()}, fromPartitionStart: true}
	default:
		f.framer = aggregation.NewPartitionFramer()
	}
	return f, nil
}

// windowConstant returns n of NTH_VALUE, a positive integer constant
// (a literal, or a parameter's value once bound).
func windowConstant(e gsql.Expression) (int, error) {
	lit, ok := e.(*expression.Literal)
	if !ok || !types.IsInteger(lit.Type()) {
		return 0, errNthValueArgument()
	}
	v, _, err := types.Int64.Convert(gsql.NewEmptyContext(), lit.Value())
	if err != nil {
		return 0, errNthValueArgument()
	}
	n := v.(int64)
	if n < 1 || n > 1<<62 {
		return 0, errNthValueArgument()
	}
	return int(n), nil
}

// nthValueFunction computes NTH_VALUE over each row's frame.
type nthValueFunction struct {
	expr   gsql.Expression
	n      int
	framer gsql.WindowFramer
}

// Dispose implements sql.Disposable.
func (f *nthValueFunction) Dispose() { expression.Dispose(f.expr) }

// DefaultFramer implements sql.WindowFunction: the window's frame, else
// MySQL's default one.
func (f *nthValueFunction) DefaultFramer() gsql.WindowFramer { return f.framer }

// StartPartition implements sql.WindowFunction.
func (f *nthValueFunction) StartPartition(*gsql.Context, gsql.WindowInterval, gsql.WindowBuffer) error {
	return nil
}

// Compute implements sql.WindowFunction: NULL when the frame has fewer
// than n rows.
func (f *nthValueFunction) Compute(ctx *gsql.Context, interval gsql.WindowInterval, buf gsql.WindowBuffer) any {
	if interval.End-interval.Start < f.n {
		return nil
	}
	v, err := f.expr.Eval(ctx, buf[interval.Start+f.n-1])
	if err != nil {
		return err
	}
	return v
}

// peerRangeFramer frames each row by its peer group (peerFramer's, every
// ORDER BY value compared as its type compares it), widened to the
// partition's start and end as the frame's bounds say: RANGE frames
// whose bounds are UNBOUNDED PRECEDING, CURRENT ROW or UNBOUNDED
// FOLLOWING, which need no arithmetic on the ORDER BY values and so
// take any number of ORDER BY columns in either direction.
type peerRangeFramer struct {
	peers                              peerFramer
	fromPartitionStart, toPartitionEnd bool
}

var _ gsql.WindowFramer = (*peerRangeFramer)(nil)

// NewFramer implements sql.WindowFramer.
func (f *peerRangeFramer) NewFramer(interval gsql.WindowInterval) (gsql.WindowFramer, error) {
	p, err := f.peers.NewFramer(interval)
	if err != nil {
		return nil, err
	}
	return &peerRangeFramer{peers: *p.(*peerFramer), fromPartitionStart: f.fromPartitionStart, toPartitionEnd: f.toPartitionEnd}, nil
}

// Next implements sql.WindowFramer.
func (f *peerRangeFramer) Next(ctx *gsql.Context, buf gsql.WindowBuffer) (gsql.WindowInterval, error) {
	if _, err := f.peers.Next(ctx, buf); err != nil {
		return gsql.WindowInterval{}, err
	}
	return f.Interval()
}

// FirstIdx implements sql.WindowFramer.
func (f *peerRangeFramer) FirstIdx() int {
	i, _ := f.Interval()
	return i.Start
}

// LastIdx implements sql.WindowFramer.
func (f *peerRangeFramer) LastIdx() int {
	i, _ := f.Interval()
	return i.End
}

// Interval implements sql.WindowFramer.
func (f *peerRangeFramer) Interval() (gsql.WindowInterval, error) {
	i, err := f.peers.Interval()
	if err != nil {
		return i, err
	}
	if i.End <= i.Start {
		// the one empty frame of an empty partition
		return gsql.WindowInterval{Start: f.peers.partitionStart, End: f.peers.partitionStart}, nil
	}
	if f.fromPartitionStart {
		i.Start = f.peers.partitionStart
	}
	if f.toPartitionEnd {
		i.End = f.peers.partitionEnd
	}
	return i, nil
}
