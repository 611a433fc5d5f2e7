package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// GMS computes SUM and AVG over a window in float64 from prefix sums
// that count a NULL as 0: a frame whose values are all NULL gave SUM 0
// (MySQL: NULL) and AVG 0/0, NaN, which the DECIMAL type ExactAggregates
// gives AVG of an exact number panicked converting ("Cannot create a
// Decimal from NaN", the statement failed); and integers and DECIMALs
// were summed inexactly. windowSum is percdb's window function for them:
// exact prefix sums (decimal) for an exact result type, float64 ones for
// DOUBLE, with prefix counts of the values that are not NULL. It frames
// as GMS's function does (the window's frame, else GMS's default).

// windowSum is SUM or AVG over a window, typed typ.
type windowSum struct {
	avg    bool
	expr   gsql.Expression
	typ    gsql.Type
	framer gsql.WindowFramer

	partitionStart int
	exact          []decimal.Decimal // prefix sums when typ is exact
	approx         []float64         // prefix sums when typ is DOUBLE
	counts         []int             // prefix counts of non-NULL values
}

var _ gsql.WindowFunction = (*windowSum)(nil)

// newWindowSum returns the window function of agg, a SUM or AVG over a
// window, with result type typ; ok is false for another aggregate (or a
// DISTINCT one), which stays GMS's.
func newWindowSum(agg gsql.Aggregation, typ gsql.Type) (gsql.WindowFunction, bool, error) {
	var avg bool
	var child gsql.Expression
	switch a := agg.(type) {
	case *aggregation.Sum:
		child = a.Child
	case *aggregation.Avg:
		avg, child = true, a.Child
	default:
		return nil, false, nil
	}
	if _, distinct := child.(*expression.DistinctExpression); distinct {
		return nil, false, nil
	}
	expr, err := transform.Clone(child)
	if err != nil {
		return nil, false, err
	}
	f := &windowSum{avg: avg, expr: expr, typ: typ}
	if w := agg.Window(); w != nil && w.Frame != nil {
		if f.framer, err = w.Frame.NewFramer(w); err != nil {
			return nil, false, err
		}
	}
	return f, true, nil
}

// Dispose implements sql.Disposable.
func (f *windowSum) Dispose() { expression.Dispose(f.expr) }

// DefaultFramer implements sql.WindowFunction: the window's frame, else
// the one GMS's SUM and AVG use.
func (f *windowSum) DefaultFramer() gsql.WindowFramer {
	if f.framer != nil {
		return f.framer
	}
	return aggregation.NewUnboundedPrecedingToCurrentRowFramer()
}

// StartPartition implements sql.WindowFunction: the prefix sums and
// counts of the partition.
func (f *windowSum) StartPartition(ctx *gsql.Context, interval gsql.WindowInterval, buf gsql.WindowBuffer) error {
	f.partitionStart = interval.Start
	n := interval.End - interval.Start
	_, exact := f.typ.(gsql.DecimalType)
	f.exact, f.approx, f.counts = nil, nil, make([]int, n)
	if exact {
		f.exact = make([]decimal.Decimal, n)
	} else {
		f.approx = make([]float64, n)
	}
	var sum decimal.Decimal
	var fsum float64
	count := 0
	for i := 0; i < n; i++ {
		v, err := f.expr.Eval(ctx, buf[interval.Start+i])
		if err != nil {
			return fmt.Errorf("window %s: %w", f.name(), err)
		}
		if v != nil {
			count++
			if exact {
				d, err := exactDecimal(ctx, v)
				if err != nil {
					return fmt.Errorf("window %s: %w", f.name(), err)
				}
				sum = sum.Add(d)
			} else {
				fv, _, err := types.Float64.Convert(ctx, v)
				if err != nil {
					fv = float64(0) // MySQL reads a non-numeric string as 0
				}
				fsum += fv.(float64)
			}
		}
		f.counts[i] = count
		if exact {
			f.exact[i] = sum
		} else {
			f.approx[i] = fsum
		}
	}
	return nil
}

func (f *windowSum) name() string {
	if f.avg {
		return "AVG"
	}
	return "SUM"
}

// Compute implements sql.WindowFunction: NULL for a frame without a
// value that is not NULL.
func (f *windowSum) Compute(_ *gsql.Context, interval gsql.WindowInterval, _ gsql.WindowBuffer) any {
	if interval.End <= interval.Start {
		return nil
	}
	lo, hi := interval.Start-f.partitionStart-1, interval.End-f.partitionStart-1
	n := f.counts[hi]
	if lo >= 0 {
		n -= f.counts[lo]
	}
	if n == 0 {
		return nil
	}
	if f.approx != nil {
		s := f.approx[hi]
		if lo >= 0 {
			s -= f.approx[lo]
		}
		if f.avg {
			return s / float64(n)
		}
		return s
	}
	s := f.exact[hi]
	if lo >= 0 {
		s = s.Sub(f.exact[lo])
	}
	scale := int32(f.typ.(gsql.DecimalType).Scale())
	if f.avg {
		return s.DivRound(decimal.NewFromInt(int64(n)), scale)
	}
	return s.Round(scale)
}

// GMS's window iterator starts a new partition at every row that has no
// columns (isNewPartition takes an empty previous row for "no row yet"),
// and a window over a table none of whose columns the query reads (SELECT
// COUNT(*) OVER () FROM t, ROW_NUMBER() OVER ()) reads rows of no
// columns once the table is pruned: each row was a partition of its own,
// COUNT(*) OVER () was 1 and ROW_NUMBER() 1 on every row.
// WindowInputColumns, an analyzer rule before GMS assigns execution
// indexes, gives such a window's input one constant column.
func WindowInputColumns(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if !scope.IsEmpty() {
		// A subquery's rows begin with the outer row's columns.
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		w, ok := n.(*plan.Window)
		if !ok || len(w.Child.Schema()) > 0 {
			return n, transform.SameTree, nil
		}
		child := plan.NewProject([]gsql.Expression{expression.NewLiteral(int8(1), types.Int8)}, w.Child)
		ret, err := w.WithChildren(child)
		if err != nil {
			return nil, transform.SameTree, fmt.Errorf("window input: %w", err)
		}
		return ret, transform.NewTree, nil
	})
}

// GMS's planner gives a window that names a WINDOW clause's window and
// adds no ORDER BY of its own (OVER w, OVER (w)) the frame of a window
// without ORDER BY, the whole partition, before it merges in the named
// window's ORDER BY (planbuilder's buildWindowDef, mergeWindowDefs): with
// WINDOW w AS (PARTITION BY b ORDER BY a), SUM(f) OVER w was the sum of
// the partition where MySQL's default frame with an ORDER BY ends at the
// current row. namedWindowOrders writes such an OVER clause out as the
// named window it means (its partitions, ORDER BY and frame), which GMS
// plans as it plans a window written in place.
func namedWindowOrders(stmt ast.Statement) ast.Statement {
	if stmt == nil {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		sel, ok := node.(*ast.Select)
		if !ok || len(sel.Window) == 0 {
			return true, nil
		}
		named := map[string]*ast.WindowDef{}
		for _, w := range sel.Window {
			named[w.Name.Lowered()] = w
		}
		_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
			f, ok := node.(*ast.FuncExpr)
			if !ok || f.Over == nil || f.Over.NameRef.IsEmpty() || len(f.Over.OrderBy) > 0 || f.Over.Frame != nil {
				return true, nil
			}
			w := resolveWindow((*ast.WindowDef)(f.Over), named, 0)
			if len(w.OrderBy) == 0 || w.Frame != nil {
				return true, nil
			}
			f.Over = (*ast.Over)(w)
			return true, nil
		}, sel.SelectExprs, sel.OrderBy)
		return true, nil
	}, stmt)
	return stmt
}

// resolveWindow returns def with the windows it names merged in, as MySQL
// merges them (each part from whichever window has it), and no name
// reference; def as it is when a name is unknown or the chain is too
// long (GMS then reports the error).
func resolveWindow(def *ast.WindowDef, named map[string]*ast.WindowDef, depth int) *ast.WindowDef {
	if def.NameRef.IsEmpty() {
		return def
	}
	ref, ok := named[def.NameRef.Lowered()]
	if !ok || depth > len(named) {
		return def
	}
	ref = resolveWindow(ref, named, depth+1)
	if !ref.NameRef.IsEmpty() {
		return def
	}
	out := &ast.WindowDef{PartitionBy: def.PartitionBy, OrderBy: def.OrderBy, Frame: def.Frame}
	if len(out.PartitionBy) == 0 {
		out.PartitionBy = ref.PartitionBy
	}
	if len(out.OrderBy) == 0 {
		out.OrderBy = ref.OrderBy
	}
	if out.Frame == nil {
		out.Frame = ref.Frame
	}
	return out
}

// GMS's LEAD and LAG take their offset when they are made, from a
// literal only (expression.LiteralToInt), so a prepared statement's
// LEAD(x, ?) failed to prepare ("offset must be a non-negative integer;
// found: BindVar(v1)"); MySQL takes a parameter there. boundOffset stands
// for such a LEAD or LAG until the parameter is bound: binding it (its
// WithChildren with the value in the BindVar's place) makes GMS's
// function of the value.
type boundOffset struct {
	name   string // "lead" or "lag"
	args   []gsql.Expression
	window *gsql.WindowDefinition
	id     gsql.ColumnId
}

var _ gsql.WindowAdaptableExpression = (*boundOffset)(nil)
var _ gsql.FunctionExpression = (*boundOffset)(nil)

// windowOffsetFunction returns the function of LEAD or LAG: GMS's, or a
// boundOffset when the offset is a parameter.
func windowOffsetFunction(name string, gms func(...gsql.Expression) (gsql.Expression, error)) gsql.Function {
	return gsql.FunctionN{Name: name, Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		if len(args) >= 2 {
			if _, param := args[1].(*expression.BindVar); param {
				return &boundOffset{name: name, args: args}, nil
			}
		}
		return gms(args...)
	}}
}

// bind makes GMS's function once the offset is a value.
func (b *boundOffset) bind(args []gsql.Expression) (gsql.Expression, error) {
	var f gsql.WindowAdaptableExpression
	var err error
	if b.name == "lead" {
		f, err = window.NewLead(args...)
	} else {
		f, err = window.NewLag(args...)
	}
	if err != nil {
		return nil, err
	}
	f = f.WithWindow(b.window)
	return f.WithId(b.id), nil
}

// FunctionName implements sql.FunctionExpression.
func (b *boundOffset) FunctionName() string { return b.name }

// Description implements sql.FunctionExpression.
func (b *boundOffset) Description() string { return "MySQL's " + b.name + " with a parameter offset" }

// Resolved implements sql.Expression.
func (b *boundOffset) Resolved() bool {
	for _, a := range b.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

// String implements sql.Expression.
func (b *boundOffset) String() string {
	parts := make([]string, len(b.args))
	for i, a := range b.args {
		parts[i] = a.String()
	}
	s := fmt.Sprintf("%s(%s)", b.name, strings.Join(parts, ", "))
	if b.window != nil {
		s += " " + b.window.String()
	}
	return s
}

// Type implements sql.Expression: the value's, as GMS's.
func (b *boundOffset) Type() gsql.Type { return b.args[0].Type() }

// IsNullable implements sql.Expression.
func (b *boundOffset) IsNullable() bool { return true }

// Children implements sql.Expression.
func (b *boundOffset) Children() []gsql.Expression { return b.args }

// WithChildren implements sql.Expression: GMS's function once the
// offset is bound.
func (b *boundOffset) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(b.args) {
		return nil, gsql.ErrInvalidChildrenNumber.New(b, len(children), len(b.args))
	}
	if _, param := children[1].(*expression.BindVar); !param {
		return b.bind(children)
	}
	out := *b
	out.args = children
	return &out, nil
}

// Eval implements sql.Expression: a window function is not evaluated
// row by row.
func (b *boundOffset) Eval(*gsql.Context, gsql.Row) (any, error) {
	return nil, gsql.ErrWindowUnsupported.New(b.name)
}

// Id implements sql.IdExpression.
func (b *boundOffset) Id() gsql.ColumnId { return b.id }

// WithId implements sql.IdExpression.
func (b *boundOffset) WithId(id gsql.ColumnId) gsql.IdExpression {
	out := *b
	out.id = id
	return &out
}

// Window implements sql.WindowAdaptableExpression.
func (b *boundOffset) Window() *gsql.WindowDefinition { return b.window }

// WithWindow implements sql.WindowAdaptableExpression.
func (b *boundOffset) WithWindow(w *gsql.WindowDefinition) gsql.WindowAdaptableExpression {
	out := *b
	out.window = w
	return &out
}

// NewWindowFunction implements sql.WindowAdaptableExpression: reached
// only with the parameter unbound.
func (b *boundOffset) NewWindowFunction() (gsql.WindowFunction, error) {
	return nil, fmt.Errorf("%s: the offset parameter is not bound", b.name)
}
