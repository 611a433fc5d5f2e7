package compat

import (
	"math"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL negates an integer, and takes its absolute value, in BIGINT: -x
// of any integer is a signed BIGINT (-tu of a TINYINT UNSIGNED 255 is
// -255), ABS(x) of a signed one a BIGINT (ABS of an INT -2147483648 is
// 2147483648) and of an unsigned one the value itself, and a result
// BIGINT does not hold fails with error 1690 (-x of BIGINT's minimum, of
// a BIGINT UNSIGNED above 2^63, ABS of BIGINT's minimum). GMS negates
// and takes the absolute value in the operand's own Go type: -tu of 255
// was 1 (-int8(255)), -u of 4294967295 was 1, -i and ABS(i) of INT's
// minimum stayed -2147483648, -bu of 18446744073709551615 was 1, ABS of
// BIGINT's minimum stayed negative, and -bi of it failed with 1105.
//
// IntegerArithmetic puts intNegation in the place of GMS's UnaryMinus
// and intAbs in the place of its ABS; operands that are not integers
// (DECIMAL, DOUBLE, strings, dates) stay GMS's.

// intNegation is -x (GMS's UnaryMinus) computed as MySQL does when x is
// an integer.
type intNegation struct {
	*expression.UnaryMinus
	kind IntKind
}

var _ gsql.Expression = (*intNegation)(nil)

func newIntNegation(m *expression.UnaryMinus) *intNegation {
	kind := operandKind(m.Child)
	if kind == NotInt && types.IsYear(m.Child.Type()) {
		// -y of a YEAR is the negated number (GMS typed it a YEAR
		// and failed: `value -1999 is not a valid Year`).
		kind = SignedInt
	}
	return &intNegation{UnaryMinus: m, kind: kind}
}

// Type implements sql.Expression.
func (e *intNegation) Type() gsql.Type {
	if e.kind == NotInt {
		return e.UnaryMinus.Type()
	}
	return types.Int64
}

// WithChildren implements sql.Expression.
func (e *intNegation) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	m, err := e.UnaryMinus.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return newIntNegation(m.(*expression.UnaryMinus)), nil
}

// Eval implements sql.Expression.
func (e *intNegation) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if e.kind == NotInt {
		return e.UnaryMinus.Eval(ctx, row)
	}
	v, null, ok, err := evalInt(ctx, e.Child, e.kind, row)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return e.UnaryMinus.Eval(ctx, row)
	case null:
		return nil, nil
	}
	if v.neg {
		if v.mag > math.MaxInt64 {
			return nil, outOfRange("BIGINT", e)
		}
		return int64(v.mag), nil
	}
	if v.mag > 1<<63 {
		return nil, outOfRange("BIGINT", e)
	}
	return int64From(intValue{mag: v.mag, neg: v.mag != 0}), nil
}

// intAbs is ABS(x) (GMS's AbsVal) computed as MySQL does when x is an
// integer.
type intAbs struct {
	*function.AbsVal
	kind IntKind
}

var _ gsql.FunctionExpression = (*intAbs)(nil)

func newIntAbs(a *function.AbsVal) *intAbs {
	return &intAbs{AbsVal: a, kind: operandKind(a.Child)}
}

// Type implements sql.Expression.
func (e *intAbs) Type() gsql.Type {
	switch e.kind {
	case NotInt:
		return e.AbsVal.Type()
	case UnsignedInt:
		return types.Uint64
	}
	return types.Int64
}

// WithChildren implements sql.Expression.
func (e *intAbs) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	a, err := e.AbsVal.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return newIntAbs(a.(*function.AbsVal)), nil
}

// Eval implements sql.Expression.
func (e *intAbs) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if e.kind == NotInt {
		return e.AbsVal.Eval(ctx, row)
	}
	v, null, ok, err := evalInt(ctx, e.Child, e.kind, row)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return e.AbsVal.Eval(ctx, row)
	case null:
		return nil, nil
	}
	if e.kind == UnsignedInt {
		return v.mag, nil
	}
	if v.mag > math.MaxInt64 {
		return nil, outOfRange("BIGINT", e)
	}
	return int64(v.mag), nil
}
