package compat

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// MySQL computes SUM and AVG of exact numbers (integers and DECIMALs)
// exactly, as DECIMALs: SUM(x) is DECIMAL(p + 22, s) for an argument of
// p digits and scale s, AVG(x) is DECIMAL(p + 4, s + 4)
// (div_precision_increment = 4), capped at DECIMAL(65, 30). GMS sums
// integers in float64 and types both DOUBLE: AVG of integers gave
// 25275.82859391912 where MySQL gives 25275.8286, SUM of a BIGINT column
// lost digits above 2^53 and was written 4.99995e+09, and drivers that
// decode by the column type got a double. ExactAggregates, an analyzer
// rule, puts percdb's DecimalAgg in place of such SUMs and AVGs (not
// DISTINCT ones, nor window functions: GMS's stay) and gives the
// references to their results in the rest of the plan the DECIMAL type.
// References through a derived table (SELECT … FROM (SELECT AVG(x) a …))
// keep GMS's DOUBLE.

// Digits of MySQL's decimal arithmetic.
const (
	decimalMaxPrecision  = 65
	decimalMaxScale      = 30
	sumPrecisionIncrease = 22 // DECIMAL_LONGLONG_DIGITS
	divPrecisionIncrease = 4  // div_precision_increment's default
)

// ExactAggregates is the analyzer rule; see the comment above.
func ExactAggregates(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	retyped := &retypedAggregates{byID: map[gsql.ColumnId]gsql.Type{}, byName: map[string]gsql.Type{}}
	n, same, err := transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		switch n := n.(type) {
		case *plan.GroupBy:
			exprs, ok := mysqlAggregates(n.SelectedExprs, retyped)
			if !ok {
				return n, transform.SameTree, nil
			}
			out := *n
			out.SelectedExprs = exprs
			return &out, transform.NewTree, nil
		case *plan.Window:
			exprs, ok := mysqlAggregates(n.SelectExprs, retyped)
			if !ok {
				return n, transform.SameTree, nil
			}
			out := *n
			out.SelectExprs = exprs
			return &out, transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
	if err != nil || same {
		return n, same, err
	}
	// The GetFields that read the aggregates' results, above the GROUP
	// BY (projections, HAVING, ORDER BY), carry the type GMS gave them.
	n, _, err = transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		if _, ok := n.(gsql.Expressioner); !ok {
			return n, transform.SameTree, nil
		}
		return transform.OneNodeExpressions(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			gf, ok := e.(*expression.GetField)
			if !ok {
				return e, transform.SameTree, nil
			}
			typ, ok := retyped.byID[gf.Id()]
			if !ok {
				// A window function written twice (AVG(a) OVER w, twice)
				// is computed once: the second reads the first's column,
				// found by its text, under a type of its own.
				typ, ok = retyped.byName[strings.ToLower(gf.Name())]
			}
			if !ok || typ == gf.Type() {
				return e, transform.SameTree, nil
			}
			return expression.NewGetFieldWithTable(gf.Index(), int(gf.TableId()), typ, gf.Database(), gf.Table(), gf.Name(), true).WithId(gf.Id()).(*expression.GetField), transform.NewTree, nil
		})
	})
	return n, transform.NewTree, err
}

// retypedAggregates are the new types of the aggregates ExactAggregates
// rewrote, by column id, and those of window functions by their text in
// lower case too.
type retypedAggregates struct {
	byID   map[gsql.ColumnId]gsql.Type
	byName map[string]gsql.Type
}

// mysqlAggregates returns exprs, the aggregates of a GROUP BY or window
// node, with MySQL's types, and whether it changed any; it records the
// new types in retyped.
func mysqlAggregates(exprs []gsql.Expression, retyped *retypedAggregates) ([]gsql.Expression, bool) {
	var out []gsql.Expression
	for i, e := range exprs {
		inner, alias := e, (*expression.Alias)(nil)
		if a, ok := e.(*expression.Alias); ok {
			inner, alias = a.Child, a
		}
		agg, ok := inner.(gsql.Aggregation)
		if !ok {
			continue
		}
		m, typ, ok := mysqlAggregate(agg)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]gsql.Expression(nil), exprs...)
		}
		retyped.byID[agg.Id()] = typ
		if agg.Window() != nil {
			retyped.byName[strings.ToLower(agg.String())] = typ
		}
		out[i] = m
		if alias != nil {
			out[i] = expression.NewAlias(alias.Name(), m).WithId(alias.Id()).(*expression.Alias)
			retyped.byID[alias.Id()] = typ
		}
	}
	return out, out != nil
}

// mysqlAggregate returns agg with MySQL's result type, and that type,
// when GMS's differs: percdb's exact DecimalAgg for SUM and AVG of exact
// numbers, GMS's aggregate under MySQL's type otherwise (SUM and AVG of
// a DISTINCT or over a window, the standard deviations and variances,
// which GMS types as their argument: STD of integers returned an integer,
// cut from the double it computed).
func mysqlAggregate(agg gsql.Aggregation) (gsql.Aggregation, gsql.Type, bool) {
	return MySQLAggregate(agg)
}

// MySQLAggregate is mysqlAggregate, for the fast path's aggregates over
// key ranges, which must answer with the types percdb's GMS path gives.
func MySQLAggregate(agg gsql.Aggregation) (gsql.Aggregation, gsql.Type, bool) {
	var kind string
	var child gsql.Expression
	switch a := agg.(type) {
	case *aggregation.Sum:
		kind, child = "SUM", a.Child
	case *aggregation.Avg:
		kind, child = "AVG", a.Child
	case *aggregation.StdDevPop, *aggregation.StdDevSamp, *aggregation.VarPop, *aggregation.VarSamp:
		return &typedAgg{Aggregation: agg, typ: types.Float64}, types.Float64, true
	default:
		return nil, nil, false
	}
	arg := child
	_, distinct := child.(*expression.DistinctExpression)
	if distinct {
		arg = child.(*expression.DistinctExpression).Child
	}
	p, s, exact := exactDigits(arg.Type())
	if !exact {
		return &typedAgg{Aggregation: agg, typ: types.Float64}, types.Float64, true
	}
	if kind == "SUM" {
		p += sumPrecisionIncrease
	} else {
		p, s = p+divPrecisionIncrease, s+divPrecisionIncrease
	}
	typ := types.MustCreateColumnDecimalType(uint8(min(p, decimalMaxPrecision)), uint8(min(s, decimalMaxScale)))
	if distinct || agg.Window() != nil {
		return &typedAgg{Aggregation: agg, typ: typ}, typ, true
	}
	return &DecimalAgg{kind: kind, child: child, id: agg.Id(), typ: typ}, typ, true
}

// typedAgg is one of GMS's aggregates with another result type: its
// values (float64) are converted to it.
type typedAgg struct {
	gsql.Aggregation
	typ gsql.Type
}

// NewBuffer implements sql.Aggregation.
func (a *typedAgg) NewBuffer() (gsql.AggregationBuffer, error) {
	b, err := a.Aggregation.NewBuffer()
	if err != nil {
		return nil, err
	}
	return &typedBuffer{AggregationBuffer: b, typ: a.typ}, nil
}

// NewWindowFunction implements sql.WindowAdaptableExpression.
func (a *typedAgg) NewWindowFunction() (gsql.WindowFunction, error) {
	if f, ok, err := newWindowSum(a.Aggregation, a.typ); ok || err != nil {
		return f, err
	}
	f, err := a.Aggregation.NewWindowFunction()
	if err != nil {
		return nil, err
	}
	return &typedWindowFunction{WindowFunction: f, typ: a.typ}, nil
}

// typedBuffer converts the result of a GMS aggregation buffer to typ.
type typedBuffer struct {
	gsql.AggregationBuffer
	typ gsql.Type
}

// Eval implements sql.AggregationBuffer.
func (b *typedBuffer) Eval(ctx *gsql.Context) (any, error) {
	v, err := b.AggregationBuffer.Eval(ctx)
	if err != nil || v == nil {
		return v, err
	}
	v, _, err = b.typ.Convert(ctx, v)
	return v, err
}

// typedWindowFunction converts the results of a GMS window function to
// typ.
type typedWindowFunction struct {
	gsql.WindowFunction
	typ gsql.Type
}

// Compute implements sql.WindowFunction. A value that does not convert
// (none does not: typ is DOUBLE or a DECIMAL wide enough) is returned as
// GMS computed it.
func (f *typedWindowFunction) Compute(ctx *gsql.Context, interval gsql.WindowInterval, buf gsql.WindowBuffer) any {
	v := f.WindowFunction.Compute(ctx, interval, buf)
	if v == nil {
		return nil
	}
	if c, _, err := f.typ.Convert(ctx, v); err == nil {
		return c
	}
	return v
}

// Type implements sql.Expression.
func (a *typedAgg) Type() gsql.Type { return a.typ }

// IsNullable implements sql.Expression: NULL when no row has a value.
func (a *typedAgg) IsNullable() bool { return true }

// WithChildren implements sql.Expression.
func (a *typedAgg) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	e, err := a.Aggregation.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &typedAgg{Aggregation: e.(gsql.Aggregation), typ: a.typ}, nil
}

// WithId implements sql.IdExpression.
func (a *typedAgg) WithId(id gsql.ColumnId) gsql.IdExpression {
	return &typedAgg{Aggregation: a.Aggregation.WithId(id).(gsql.Aggregation), typ: a.typ}
}

// WithWindow implements sql.WindowAdaptableExpression.
func (a *typedAgg) WithWindow(w *gsql.WindowDefinition) gsql.WindowAdaptableExpression {
	return &typedAgg{Aggregation: a.Aggregation.WithWindow(w).(gsql.Aggregation), typ: a.typ}
}

// exactDigits returns the digits and scale MySQL counts for a value of
// type t when t is an integer or DECIMAL type.
func exactDigits(t gsql.Type) (precision, scale int, ok bool) {
	if d, isDec := t.(gsql.DecimalType); isDec {
		return int(d.Precision()), int(d.Scale()), true
	}
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Uint8:
		return 3, 0, true
	case sqltypes.Int16, sqltypes.Uint16:
		return 5, 0, true
	case sqltypes.Int24, sqltypes.Uint24:
		return 8, 0, true
	case sqltypes.Int32, sqltypes.Uint32:
		return 10, 0, true
	case sqltypes.Int64:
		return 19, 0, true
	case sqltypes.Uint64:
		return 20, 0, true
	}
	return 0, 0, false
}

// DecimalAgg is SUM or AVG of exact numbers, computed exactly and typed
// as MySQL types it.
type DecimalAgg struct {
	kind  string // "SUM" or "AVG"
	child gsql.Expression
	id    gsql.ColumnId
	typ   gsql.Type
}

var _ gsql.Aggregation = (*DecimalAgg)(nil)

// Resolved implements sql.Expression.
func (a *DecimalAgg) Resolved() bool { return a.child.Resolved() }

// String implements sql.Expression, as GMS's SUM and AVG.
func (a *DecimalAgg) String() string { return fmt.Sprintf("%s(%s)", a.kind, a.child) }

// Type implements sql.Expression.
func (a *DecimalAgg) Type() gsql.Type { return a.typ }

// IsNullable implements sql.Expression: NULL when no row has a value.
func (a *DecimalAgg) IsNullable() bool { return true }

// Eval implements sql.Expression; an aggregate is evaluated through its
// buffer.
func (a *DecimalAgg) Eval(*gsql.Context, gsql.Row) (any, error) {
	return nil, aggregation.ErrEvalUnsupportedOnAggregation.New(a.kind)
}

// Children implements sql.Expression.
func (a *DecimalAgg) Children() []gsql.Expression { return []gsql.Expression{a.child} }

// Kind is "SUM" or "AVG".
func (a *DecimalAgg) Kind() string { return a.kind }

// Child is the aggregated expression.
func (a *DecimalAgg) Child() gsql.Expression { return a.child }

// WithChildren implements sql.Expression.
func (a *DecimalAgg) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(a, len(children), 1)
	}
	out := *a
	out.child = children[0]
	return &out, nil
}

// Id implements sql.IdExpression.
func (a *DecimalAgg) Id() gsql.ColumnId { return a.id }

// WithId implements sql.IdExpression.
func (a *DecimalAgg) WithId(id gsql.ColumnId) gsql.IdExpression {
	out := *a
	out.id = id
	return &out
}

// NewWindowFunction implements sql.WindowAdaptableExpression. DecimalAgg
// is never over a window (asDecimalAgg); GMS's would be used.
func (a *DecimalAgg) NewWindowFunction() (gsql.WindowFunction, error) {
	return nil, fmt.Errorf("%s over a window: not percdb's aggregate", a)
}

// WithWindow implements sql.WindowAdaptableExpression.
func (a *DecimalAgg) WithWindow(*gsql.WindowDefinition) gsql.WindowAdaptableExpression { return a }

// Window implements sql.WindowAdaptableExpression.
func (a *DecimalAgg) Window() *gsql.WindowDefinition { return nil }

// NewBuffer implements sql.Aggregation.
func (a *DecimalAgg) NewBuffer() (gsql.AggregationBuffer, error) {
	child, err := transform.Clone(a.child)
	if err != nil {
		return nil, err
	}
	scale := int32(0)
	if d, ok := a.typ.(gsql.DecimalType); ok {
		scale = int32(d.Scale())
	}
	return &decimalAggBuffer{avg: a.kind == "AVG", child: child, scale: scale}, nil
}

// decimalAggBuffer sums the values of one group exactly. Integers are
// summed in an int64 while the sum fits (a decimal addition allocates and
// costs ten times more), the rest, and an int64 sum about to overflow, in
// a decimal.
type decimalAggBuffer struct {
	avg   bool
	child gsql.Expression
	scale int32
	sum   decimal.Decimal
	isum  int64 // integers not yet added to sum
	n     int64
}

// Update implements sql.AggregationBuffer.
func (b *decimalAggBuffer) Update(ctx *gsql.Context, row gsql.Row) error {
	v, err := b.child.Eval(ctx, row)
	if err != nil || v == nil {
		return err
	}
	if i, ok := smallInt(v); ok {
		s := b.isum + i
		// Overflow: both addends of one sign and the sum of the other.
		if (b.isum >= 0) == (i >= 0) && (s >= 0) != (i >= 0) {
			b.sum = b.sum.Add(decimal.NewFromInt(b.isum))
			s = i
		}
		b.isum = s
		b.n++
		return nil
	}
	d, err := exactDecimal(ctx, v)
	if err != nil {
		return err
	}
	b.sum = b.sum.Add(d)
	b.n++
	return nil
}

// smallInt returns v as an int64 when it is an integer of a type that
// always fits one (every width but BIGINT UNSIGNED, whose values above
// MaxInt64 go through decimals).
func smallInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int16:
		return int64(n), true
	case int8:
		return int64(n), true
	case int:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint8:
		return int64(n), true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	}
	return 0, false
}

// Eval implements sql.AggregationBuffer: NULL for a group without
// values; an average rounded half away from zero, as MySQL rounds
// DECIMALs.
func (b *decimalAggBuffer) Eval(*gsql.Context) (any, error) {
	if b.n == 0 {
		return nil, nil
	}
	sum := b.sum
	if b.isum != 0 {
		sum = sum.Add(decimal.NewFromInt(b.isum))
	}
	if b.avg {
		return sum.DivRound(decimal.NewFromInt(b.n), b.scale), nil
	}
	return sum, nil
}

// Dispose implements sql.Disposable.
func (b *decimalAggBuffer) Dispose() { expression.Dispose(b.child) }

// exactDecimal converts an integer or DECIMAL value to a decimal.
func exactDecimal(ctx *gsql.Context, v any) (decimal.Decimal, error) {
	switch n := v.(type) {
	case decimal.Decimal:
		return n, nil
	case int64:
		return decimal.NewFromInt(n), nil
	case uint64:
		return decimal.NewFromBigInt(new(big.Int).SetUint64(n), 0), nil
	}
	d, _, err := types.InternalDecimalType.Convert(ctx, v)
	if err != nil {
		return decimal.Decimal{}, err
	}
	return d.(decimal.Decimal), nil
}
