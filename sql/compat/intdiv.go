package compat

import (
	"math"
	"math/big"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// MySQL's x DIV y is the quotient truncated towards zero: of two
// integers computed in integers, otherwise of the operands as DECIMALs,
// exactly; the result is a BIGINT, or a BIGINT UNSIGNED when an operand
// is unsigned, and one it does not hold fails with error 1690. GMS
// divides DECIMALs rounded to two places before truncating (999.99 DIV 2
// was 500, MySQL 499; -999.99 DIV 2 -500), floors a DOUBLE's quotient
// (-7.5e0 DIV 2 was -4, MySQL -3), divides a signed integer by an
// unsigned one as DECIMALs into a signed result, and fails with 1105
// where MySQL fails with 1690.
//
// IntegerArithmetic puts intDivision in the place of GMS's IntDiv when
// both operands are numbers; strings and dates stay GMS's.

// divKind is how DIV computes: as GMS, in integers or in DECIMALs.
type divKind uint8

const (
	divGMS     divKind = iota // an operand is not a number: GMS's business
	divInt                    // both operands are integers
	divDecimal                // both are numbers, one not an integer
)

// intDivision is x DIV y (GMS's IntDiv) computed as MySQL does when both
// operands are numbers.
type intDivision struct {
	*expression.IntDiv
	left, right IntKind
	kind        divKind
	unsigned    bool // the result is BIGINT UNSIGNED
}

var _ gsql.Expression = (*intDivision)(nil)

func newIntDivision(d *expression.IntDiv) *intDivision {
	e := &intDivision{IntDiv: d, left: operandKind(d.LeftChild), right: operandKind(d.RightChild)}
	switch {
	case e.left != NotInt && e.right != NotInt:
		e.kind = divInt
	case exactOrFloat(d.LeftChild) && exactOrFloat(d.RightChild):
		e.kind = divDecimal
	}
	e.unsigned = e.left == UnsignedInt || e.right == UnsignedInt
	return e
}

// exactOrFloat reports whether e is a number MySQL divides as a DECIMAL:
// an integer, a DECIMAL, a FLOAT or a DOUBLE.
func exactOrFloat(e gsql.Expression) bool {
	if _, ok := hexLiteral(e); ok {
		return true
	}
	t := e.Type()
	return types.IsInteger(t) || types.IsDecimal(t) || types.IsFloat(t)
}

// Type implements sql.Expression.
func (e *intDivision) Type() gsql.Type {
	switch {
	case e.kind == divGMS:
		return e.IntDiv.Type()
	case e.unsigned:
		return types.Uint64
	}
	return types.Int64
}

// WithChildren implements sql.Expression.
func (e *intDivision) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	d, err := e.IntDiv.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return newIntDivision(d.(*expression.IntDiv)), nil
}

// Eval implements sql.Expression.
func (e *intDivision) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	switch e.kind {
	case divInt:
		l, r, null, ok, err := evalOperands(ctx, e.LeftChild, e.RightChild, e.left, e.right, row)
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return e.IntDiv.Eval(ctx, row)
		case null:
			return nil, nil
		}
		if r.mag == 0 {
			ctx.Warn(codeDivisionByZero, "Division by 0")
			return nil, nil
		}
		return e.result(intValue{mag: l.mag / r.mag, neg: l.neg != r.neg})
	case divDecimal:
		return e.evalDecimal(ctx, row)
	}
	return e.IntDiv.Eval(ctx, row)
}

// evalDecimal divides the operands as DECIMALs and truncates.
func (e *intDivision) evalDecimal(ctx *gsql.Context, row gsql.Row) (any, error) {
	var ds [2]decimal.Decimal
	for i, c := range []gsql.Expression{e.LeftChild, e.RightChild} {
		if u, ok := hexLiteral(c); ok {
			ds[i] = decimal.NewFromBigInt(new(big.Int).SetUint64(u), 0)
			continue
		}
		v, err := c.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		d, ok := decimalOf(ctx, v)
		if !ok {
			return e.IntDiv.Eval(ctx, row)
		}
		ds[i] = d
	}
	if ds[1].IsZero() {
		ctx.Warn(codeDivisionByZero, "Division by 0")
		return nil, nil
	}
	q, _ := ds[0].QuoRem(ds[1], 0) // truncated towards zero
	b := q.BigInt()
	abs := new(big.Int).Abs(b)
	if !abs.IsUint64() {
		return nil, e.overflow()
	}
	v := intValue{mag: abs.Uint64(), neg: b.Sign() < 0}
	return e.result(v)
}

// result returns the quotient v in the result's type, or MySQL's 1690
// when that type does not hold it. As in MySQL, a negative quotient of
// magnitude 2^63 overflows too.
func (e *intDivision) result(v intValue) (any, error) {
	if v.mag == 0 {
		v.neg = false
	}
	switch {
	case v.neg && v.mag > math.MaxInt64:
		return nil, e.overflow()
	case v.neg && e.unsigned:
		return nil, e.overflow()
	case v.neg:
		return -int64(v.mag), nil
	case e.unsigned:
		return v.mag, nil
	case v.mag > math.MaxInt64:
		return nil, e.overflow()
	}
	return int64(v.mag), nil
}

// overflow is MySQL's error 1690 for e's result.
func (e *intDivision) overflow() error {
	if e.unsigned {
		return outOfRange("BIGINT UNSIGNED", e)
	}
	return outOfRange("BIGINT", e)
}
