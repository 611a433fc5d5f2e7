package compat

import (
	"context"
	"fmt"
	"math"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// MySQL's numeric functions that GMS v0.20.0 lacks or gets wrong:
//
//   - TRUNCATE(X, D) is missing (1105 "function: 'truncate' not found").
//   - ROUND of a DOUBLE rounds half away from zero (ROUND(2.5e0) is 3);
//     MySQL rounds it half to even, as the C library's rint.
//   - GREATEST and LEAST fail on a DECIMAL argument ("unsupported type for
//     greatest/least argument: decimal.Decimal"), compare integers as
//     float64 (BIGINTs above 2^53 tie) and fail on a BIGINT UNSIGNED above
//     2^63. MySQL compares numbers exactly unless one is approximate, and
//     types the result as the arguments' common numeric type: DOUBLE when
//     one is a DOUBLE or FLOAT, else DECIMAL when one is a DECIMAL, else
//     an integer.
//
// The provider hands them to GMS's catalog (DatabaseProvider.Function).

// numericFunctions are percdb's numeric functions, and its LEAD and LAG
// (window.go), by lower-case name. It is not changed after the
// package is initialized.
var numericFunctions = map[string]gsql.Function{
	"truncate": gsql.Function2{Name: "truncate", Fn: func(x, d gsql.Expression) gsql.Expression {
		return newTemporalFunc("truncate", truncateNumber, truncateType, x, d)
	}},
	paramMarkerName: gsql.Function1{Name: paramMarkerName, Fn: func(e gsql.Expression) gsql.Expression {
		return &paramMarker{UnaryExpression: expression.UnaryExpression{Child: e}}
	}},
	"greatest": gsql.FunctionN{Name: "greatest", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return newExtremum("greatest", args)
	}},
	"least": gsql.FunctionN{Name: "least", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return newExtremum("least", args)
	}},
	"round": gsql.FunctionN{Name: "round", Fn: newDoubleRound},
	// IFNULL of an integer and a DECIMAL typed as MySQL types it from
	// the start, so that a UNION or a derived table over it gets that
	// type (rows.go, widenedDecimalCoalesce); IFNULL of two other
	// numbers of different types is the COALESCE that GMS types right
	// (rows.go, numbersIfNull). Both from the start also for the
	// fast path's aggregates, which evaluate the expression without the
	// analyzer's rules.
	"ifnull": gsql.Function2{Name: "ifnull", Fn: func(a, b gsql.Expression) gsql.Expression {
		if c, ok := numbersIfNull(a, b); ok {
			return c
		}
		e := function.NewIfNull(a, b)
		if w, ok := widenedDecimalCoalesce(e); ok {
			return w
		}
		return e
	}},
	// LEAD and LAG with a parameter offset (window.go).
	"lead": windowOffsetFunction("lead", func(args ...gsql.Expression) (gsql.Expression, error) { return window.NewLead(args...) }),
	"lag":  windowOffsetFunction("lag", func(args ...gsql.Expression) (gsql.Expression, error) { return window.NewLag(args...) }),
}

// truncateType is TRUNCATE(X, D)'s type, as MySQL's
// Item_func_round::fix_length_and_dec gives it: an integer X keeps its
// type, an approximate one (or a string) is DOUBLE, a DECIMAL gets the
// scale D when D is a constant (0 for a negative D; up to 30), its own
// scale otherwise.
func truncateType(args []gsql.Expression) gsql.Type {
	t := args[0].Type()
	switch {
	case types.IsInteger(t):
		if types.IsUnsigned(t) {
			return types.Uint64
		}
		return types.Int64
	case types.IsDecimal(t):
		dt := t.(gsql.DecimalType)
		intDigits, scale := int(dt.Precision())-int(dt.Scale()), int(dt.Scale())
		if lit, ok := args[1].(*expression.Literal); ok {
			if d, ok := lit.Value().(int64); ok {
				scale = int(min(max(d, 0), decimalMaxScale))
			} else if d, ok := lit.Value().(int8); ok {
				scale = int(min(max(int64(d), 0), decimalMaxScale))
			}
		}
		return types.MustCreateDecimalType(uint8(min(max(intDigits+scale, 1), decimalMaxPrecision)), uint8(scale))
	default:
		return types.Float64
	}
}

// truncateNumber is TRUNCATE(X, D): X cut (towards zero) to D digits
// after the point, or with -D digits before it zeroed.
func truncateNumber(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error) {
	dv, _, err := types.Int64.Convert(ctx, vals[1])
	if err != nil {
		return nil, fmt.Errorf("TRUNCATE: %w", err)
	}
	d := dv.(int64)
	typ := truncateType(args)
	if types.IsFloat(typ) {
		fv, _, err := types.Float64.Convert(ctx, vals[0])
		if err != nil {
			return nil, fmt.Errorf("TRUNCATE: %w", err)
		}
		f := fv.(float64)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return f, nil
		}
		out, _ := truncateDecimal(decimal.NewFromFloat(f), d).Float64()
		return out, nil
	}
	x, err := exactDecimal(ctx, vals[0])
	if err != nil {
		return nil, fmt.Errorf("TRUNCATE: %w", err)
	}
	return exactAs(ctx, typ, truncateDecimal(x, d))
}

// exactAs converts an exact number to typ, an integer or DECIMAL type
// (GMS's BIGINT UNSIGNED conversion of a DECIMAL goes through int64 and
// wraps above 2^63).
func exactAs(ctx *gsql.Context, typ gsql.Type, d decimal.Decimal) (any, error) {
	switch {
	case types.IsUnsigned(typ) && types.IsInteger(typ):
		if d.Sign() < 0 {
			return uint64(0), nil
		}
		return d.BigInt().Uint64(), nil
	case types.IsInteger(typ):
		return d.IntPart(), nil
	}
	out, _, err := typ.Convert(ctx, d)
	if err != nil {
		return nil, err
	}
	// With the type's scale written out (2.00, not 2), as MySQL sends it.
	if dt, ok := typ.(gsql.DecimalType); ok {
		if od, ok := out.(decimal.Decimal); ok {
			return od.Round(int32(dt.Scale())), nil
		}
	}
	return out, nil
}

// truncateDecimal cuts x to d digits after the point, towards zero.
func truncateDecimal(x decimal.Decimal, d int64) decimal.Decimal {
	switch {
	case d >= 0:
		return x.Truncate(int32(min(d, 60)))
	case d < -65:
		return decimal.Zero
	default:
		shift := decimal.New(1, int32(-d))
		return x.Div(shift).Truncate(0).Mul(shift)
	}
}

// extremum is GREATEST or LEAST. Over numbers it compares exactly and is
// typed as MySQL types it; over anything else (strings, dates, a mix) it
// is GMS's function.
type extremum struct {
	name string // "greatest" or "least"
	args []gsql.Expression
	gms  gsql.Expression // GMS's function of the same arguments
	// params marks the arguments that are prepared-statement parameters
	// (a BindVar when the function was built, a literal once bound):
	// MySQL types a parameter from the other arguments, so GREATEST(d,
	// ?) of a DECIMAL d compares the string '2.5' sent for it as a
	// DECIMAL (GMS failed: "unsupported type for greatest/least
	// argument: decimal.Decimal"). With integers only, GMS's function
	// stays: it compares such a string as a number, not as an integer.
	params []bool
}

var _ gsql.FunctionExpression = (*extremum)(nil)

func newExtremum(name string, args []gsql.Expression) (gsql.Expression, error) {
	if t, ok := newTextExtremum(name, args); ok {
		return t, nil // sql/compat/extremumtext.go
	}
	params := make([]bool, len(args))
	args = append([]gsql.Expression(nil), args...)
	for i, a := range args {
		switch a := a.(type) {
		case *expression.BindVar:
			params[i] = true
		case *paramMarker:
			args[i], params[i] = a.Child, true
		}
	}
	return buildExtremum(name, args, params)
}

// paramMarkerName is the function extremumParameters wraps a parameter
// of GREATEST or LEAST in. GMS plans an execution of a prepared statement
// with its parameters' values in their places, as literals, so the mark
// is made in the parsed statement, which keeps the placeholders.
const paramMarkerName = "percdb_param"

// paramMarker marks a prepared statement's parameter; it is its value.
type paramMarker struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*paramMarker)(nil)

// Type implements sql.Expression.
func (m *paramMarker) Type() gsql.Type { return m.Child.Type() }

// String implements sql.Expression.
func (m *paramMarker) String() string { return m.Child.String() }

// Eval implements sql.Expression.
func (m *paramMarker) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	return m.Child.Eval(ctx, row)
}

// WithChildren implements sql.Expression.
func (m *paramMarker) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(m, len(children), 1)
	}
	return &paramMarker{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// extremumParameters wraps each placeholder argument of GREATEST and
// LEAST in the parsed statement in paramMarkerName's function, so that
// the function knows it for a parameter once it is bound.
func extremumParameters(stmt ast.Statement) ast.Statement {
	if stmt == nil {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		f, ok := node.(*ast.FuncExpr)
		if !ok || !(f.Name.EqualString("greatest") || f.Name.EqualString("least")) {
			return true, nil
		}
		for i, a := range f.Exprs {
			ae, ok := a.(*ast.AliasedExpr)
			if !ok {
				continue
			}
			if v, ok := ae.Expr.(*ast.SQLVal); ok && v.Type == ast.ValArg {
				f.Exprs[i] = &ast.AliasedExpr{Expr: &ast.FuncExpr{Name: ast.NewColIdent(paramMarkerName), Exprs: ast.SelectExprs{ae}}}
			}
		}
		return true, nil
	}, stmt)
	return stmt
}

// buildExtremum returns the function of args, params marking those that
// are parameters.
func buildExtremum(name string, args []gsql.Expression, params []bool) (gsql.Expression, error) {
	var gms gsql.Expression
	var err error
	if name == "greatest" {
		gms, err = function.NewGreatest(args...)
	} else {
		gms, err = function.NewLeast(args...)
	}
	if err != nil {
		return nil, err
	}
	return &extremum{name: name, args: args, gms: gms, params: params}, nil
}

// numericType returns the type MySQL gives GREATEST or LEAST of args,
// and false when one is not a number (or all are NULL).
func (e *extremum) numericType() (gsql.Type, bool) {
	anyFloat, anyDecimal, anySigned, anyUnsigned := false, false, false, false
	intDigits, scale := 0, 0
	anyParam, anyYear := false, false
	for i, a := range e.args {
		t := a.Type()
		switch {
		case e.params[i]:
			anyParam = true
		case t == types.Null:
		case types.IsYear(t):
			// A YEAR is an integer beside a DECIMAL or a DOUBLE
			// (GMS's function failed: "unsupported type for
			// greatest/least argument: decimal.Decimal").
			anyYear = true
			intDigits = max(intDigits, 4)
		case types.IsFloat(t):
			anyFloat = true
		case types.IsDecimal(t):
			anyDecimal = true
			dt := t.(gsql.DecimalType)
			intDigits = max(intDigits, int(dt.Precision())-int(dt.Scale()))
			scale = max(scale, int(dt.Scale()))
		case types.IsInteger(t):
			switch {
			case types.IsUnsigned(t):
				anyUnsigned = true
			case !nonNegativeLiteral(a):
				// A literal such as the 1 of GREATEST(u, 1) fits
				// either signedness.
				anySigned = true
			}
			intDigits = max(intDigits, 20)
		default:
			return nil, false
		}
	}
	switch {
	case anyYear && !anyFloat && !anyDecimal:
		// YEARs and integers: GMS's function, which answers them.
		return nil, false
	case anyParam && !anyFloat && !anyDecimal:
		// Integers with a parameter: GMS's function, which compares a
		// string sent for it with them as numbers (LEAST(a, ?) of 3 and
		// '2.5' is 2.5, not an integer).
		return nil, false
	case anyFloat:
		return types.Float64, true
	case anyDecimal || (anySigned && anyUnsigned):
		return types.MustCreateDecimalType(uint8(min(intDigits+scale, decimalMaxPrecision)), uint8(min(scale, decimalMaxScale))), true
	case anyUnsigned:
		return types.Uint64, true
	case intDigits > 0:
		return types.Int64, true
	}
	return nil, false
}

// nonNegativeLiteral reports whether e is an integer constant of zero or
// more.
func nonNegativeLiteral(e gsql.Expression) bool {
	lit, ok := e.(*expression.Literal)
	if !ok {
		return false
	}
	switch v := lit.Value().(type) {
	case int8:
		return v >= 0
	case int16:
		return v >= 0
	case int32:
		return v >= 0
	case int64:
		return v >= 0
	}
	return false
}

// FunctionName implements sql.FunctionExpression.
func (e *extremum) FunctionName() string { return e.name }

// Description implements sql.FunctionExpression.
func (e *extremum) Description() string { return "MySQL's " + strings.ToUpper(e.name) }

// Resolved implements sql.Expression.
func (e *extremum) Resolved() bool { return e.gms.Resolved() }

// String implements sql.Expression.
func (e *extremum) String() string { return e.gms.String() }

// Type implements sql.Expression.
func (e *extremum) Type() gsql.Type {
	if t, ok := e.numericType(); ok {
		return t
	}
	return e.gms.Type()
}

// IsNullable implements sql.Expression.
func (e *extremum) IsNullable() bool { return e.gms.IsNullable() }

// Children implements sql.Expression.
func (e *extremum) Children() []gsql.Expression { return e.args }

// WithChildren implements sql.Expression.
func (e *extremum) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(e.args) {
		return nil, gsql.ErrInvalidChildrenNumber.New(e, len(children), len(e.args))
	}
	params := append([]bool(nil), e.params...)
	for i, c := range children {
		if _, ok := c.(*expression.BindVar); ok {
			params[i] = true
		}
	}
	return buildExtremum(e.name, children, params)
}

// Eval implements sql.Expression: NULL when an argument is NULL.
func (e *extremum) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	return e.eval(ctx, row, false)
}

// eval is Eval; with own, an exact result is the chosen argument's own
// value, not made the function's type (ownDecimal, owntext.go).
func (e *extremum) eval(ctx *gsql.Context, row gsql.Row, own bool) (any, error) {
	typ, ok := e.numericType()
	if !ok {
		return e.gms.Eval(ctx, row)
	}
	var best decimal.Decimal
	var bestF float64
	for i, a := range e.args {
		v, err := a.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		if types.IsFloat(typ) {
			fv, _, err := types.Float64.Convert(ctx, v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", strings.ToUpper(e.name), err)
			}
			f := fv.(float64)
			if i == 0 || (e.name == "greatest" && f > bestF) || (e.name == "least" && f < bestF) {
				bestF = f
			}
			continue
		}
		d, err := exactDecimal(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", strings.ToUpper(e.name), err)
		}
		if c := d.Cmp(best); i == 0 || (e.name == "greatest" && c > 0) || (e.name == "least" && c < 0) {
			best = d
		}
	}
	if types.IsFloat(typ) {
		return bestF, nil
	}
	if own {
		return best, nil
	}
	return exactAs(ctx, typ, best)
}

// doubleRound is ROUND of GMS's, but over a DOUBLE (or FLOAT) rounding
// half to even, as MySQL does with the C library's rint
// (my_double_round): ROUND(2.5e0) is 2 where GMS, rounding every value
// as a DECIMAL, gave 3. Exact numbers keep GMS's half away from zero,
// which is MySQL's for them.
type doubleRound struct {
	args []gsql.Expression
	gms  gsql.Expression // GMS's ROUND of the same arguments
}

var _ gsql.FunctionExpression = (*doubleRound)(nil)

func newDoubleRound(args ...gsql.Expression) (gsql.Expression, error) {
	gms, err := function.NewRound(args...)
	if err != nil {
		return nil, err
	}
	return &doubleRound{args: args, gms: gms}, nil
}

// FunctionName implements sql.FunctionExpression.
func (r *doubleRound) FunctionName() string { return "round" }

// Description implements sql.FunctionExpression.
func (r *doubleRound) Description() string { return "MySQL's ROUND" }

// Resolved implements sql.Expression.
func (r *doubleRound) Resolved() bool { return r.gms.Resolved() }

// String implements sql.Expression.
func (r *doubleRound) String() string { return r.gms.String() }

// Type implements sql.Expression: of a DECIMAL with a constant number
// of digits D, MySQL's DECIMAL of scale D (0 when D is negative or not
// given) with a digit more before the point when the scale shrinks, for
// a carry (Item_func_round::resolve_type: ROUND(x, 2) of a DECIMAL(8,4)
// is a DECIMAL(7,2), 1.50); GMS typed it as x, so it was sent 1.5000.
func (r *doubleRound) Type() gsql.Type {
	dt, ok := r.args[0].Type().(gsql.DecimalType)
	if !ok {
		return r.gms.Type()
	}
	d := int64(0)
	if len(r.args) > 1 {
		lit, ok := r.args[1].(*expression.Literal)
		if !ok {
			return r.gms.Type()
		}
		v, _, err := types.Int64.Convert(context.Background(), lit.Value())
		if err != nil || v == nil {
			return r.gms.Type()
		}
		d = v.(int64)
	}
	scale := int(min(max(d, 0), decimalMaxScale))
	intDigits := int(dt.Precision()) - int(dt.Scale())
	if scale < int(dt.Scale()) {
		intDigits++
	}
	return types.MustCreateDecimalType(uint8(min(max(intDigits+scale, 1), decimalMaxPrecision)), uint8(scale))
}

// IsNullable implements sql.Expression.
func (r *doubleRound) IsNullable() bool { return r.gms.IsNullable() }

// Children implements sql.Expression.
func (r *doubleRound) Children() []gsql.Expression { return r.args }

// WithChildren implements sql.Expression.
func (r *doubleRound) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	return newDoubleRound(children...)
}

// Eval implements sql.Expression.
func (r *doubleRound) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if !types.IsFloat(r.args[0].Type()) {
		return r.gms.Eval(ctx, row)
	}
	v, err := r.args[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	fv, _, err := types.Float64.Convert(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("ROUND: %w", err)
	}
	places := int64(0)
	if len(r.args) > 1 {
		d, err := r.args[1].Eval(ctx, row)
		if err != nil || d == nil {
			return nil, err
		}
		dv, _, err := types.Int64.Convert(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("ROUND: %w", err)
		}
		places = min(max(dv.(int64), -308), 308)
	}
	return roundHalfEvenPlaces(fv.(float64), places), nil
}

// roundHalfEvenPlaces is MySQL's my_double_round: f rounded half to
// even at places digits after the point (before it when negative).
func roundHalfEvenPlaces(f float64, places int64) float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	scale := math.Pow(10, math.Abs(float64(places)))
	if places >= 0 {
		if math.IsInf(f*scale, 0) {
			return f
		}
		return math.RoundToEven(f*scale) / scale
	}
	return math.RoundToEven(f/scale) * scale
}

// unsignedCast is CAST(x AS UNSIGNED) of a DECIMAL or a DOUBLE as MySQL
// computes it (Item_typecast_unsigned::val_int): the value is rounded to
// an integer (a DECIMAL half away from zero, a DOUBLE half to even, as
// rint) and a negative one is taken as a signed 64-bit integer read as
// unsigned, so CAST(-1.5 AS UNSIGNED) is 18446744073709551614, as
// CAST(-2 AS UNSIGNED) is; -0.4 rounds to 0. Values beyond the range
// saturate (below -2^63 to 2^63 read unsigned, above 2^64 - 1 to it).
// GMS gave 9223372036854775808 for every negative fraction and rounded a
// DOUBLE half away from zero (CAST(2.5e0 AS UNSIGNED) was 3).
type unsignedCast struct {
	expression.UnaryExpression
	name string // the CAST's own text, which names its column
}

var _ gsql.Expression = (*unsignedCast)(nil)

// Type implements sql.Expression.
func (c *unsignedCast) Type() gsql.Type { return types.Uint64 }

// String implements sql.Expression.
func (c *unsignedCast) String() string { return c.name }

// Eval implements sql.Expression.
func (c *unsignedCast) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	switch x := v.(type) {
	case decimal.Decimal:
		return unsignedFromDecimal(x), nil
	case float64:
		return unsignedFromFloat(x), nil
	case float32:
		return unsignedFromFloat(float64(x)), nil
	}
	out, _, err := types.Uint64.Convert(ctx, v)
	return out, err
}

// unsignedFromDecimal rounds d half away from zero and reads it as
// BIGINT UNSIGNED (see unsignedCast).
func unsignedFromDecimal(d decimal.Decimal) uint64 {
	r := d.Round(0).BigInt()
	switch {
	case r.Sign() >= 0 && r.IsUint64():
		return r.Uint64()
	case r.Sign() > 0:
		return math.MaxUint64
	case r.IsInt64():
		return uint64(r.Int64())
	}
	return 1 << 63 // below -2^63: the smallest BIGINT, read unsigned
}

// unsignedFromFloat rounds f half to even and reads it as BIGINT
// UNSIGNED (see unsignedCast).
func unsignedFromFloat(f float64) uint64 {
	r := math.RoundToEven(f)
	switch {
	case math.IsNaN(r):
		return 0
	case r >= 0 && r < 1<<64:
		return uint64(r)
	case r >= 0:
		return math.MaxUint64
	case r >= -(1 << 63):
		return uint64(int64(r))
	}
	return 1 << 63
}

// WithChildren implements sql.Expression.
func (c *unsignedCast) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	return &unsignedCast{UnaryExpression: expression.UnaryExpression{Child: children[0]}, name: c.name}, nil
}
