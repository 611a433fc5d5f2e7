package compat

import (
	"strings"

	"github.com/shopspring/decimal"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS compares a DECIMAL with another number in the DECIMAL's own type:
// the other value is rounded to its scale first (comparison.Compare and
// DecimalType.Compare), so a DECIMAL(6,2) 2.50 compared with a DECIMAL(6,3)
// 2.503 was equal, and with a DOUBLE 2.503 too. MySQL compares two
// decimals exactly, and a decimal with a floating-point number as
// doubles. decimalComparison rewrites a comparison of a DECIMAL with a
// number of another type:
//
//   - against a constant (a literal, which decimalLiteralScales in
//     parse.go kept from being rounded) whose value the DECIMAL's
//     type holds exactly: the constant becomes a literal of that type, as
//     GMS's planner makes it, which keeps index ranges on the column;
//   - against a FLOAT or DOUBLE constant: both sides compared as DOUBLE;
//   - against a constant the type cannot hold exactly: both sides
//     converted to one DECIMAL wide enough for each, in which nothing is
//     rounded.
//
// Comparisons of two columns or expressions are left as GMS plans them
// (the join planner plans hash and lookup joins on such conditions, and
// does not follow a conversion wrapped around one side) and made exact
// once the plan is built: ExactDecimalColumns.
func decimalComparison(e gsql.Expression) (gsql.Expression, bool) {
	b, ok := e.(expression.BinaryExpression)
	if !ok {
		return e, false
	}
	switch e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
	default:
		return e, false
	}
	l, r := b.Left(), b.Right()
	lt, rt := l.Type(), r.Type()
	if !types.IsDecimal(lt) && !types.IsDecimal(rt) || types.TypesEqual(lt, rt) {
		return e, false
	}
	if !types.IsNumber(lt) || !types.IsNumber(rt) {
		return e, false // strings, dates: GMS's business
	}
	lv, lconst := constantValue(l)
	rv, rconst := constantValue(r)
	if lconst && !types.IsDecimal(rt) || rconst && !types.IsDecimal(lt) {
		// A constant beside an integer or floating-point column: GMS
		// compares in the constant's type or as doubles, without loss.
		return e, false
	}
	if !lconst && !rconst {
		// Two columns (or expressions): left to GMS, whose join planner
		// builds hash and lookup joins on such conditions and does not
		// follow a conversion wrapped around one side.
		return e, false
	}
	if types.IsFloat(lt) || types.IsFloat(rt) {
		if !types.IsFloat(lt) {
			l = expression.NewConvert(l, expression.ConvertToDouble)
		} else {
			r = expression.NewConvert(r, expression.ConvertToDouble)
		}
		ret, err := e.WithChildren(l, r)
		return ret, err == nil
	}
	// A constant beside a DECIMAL: exact in its type?
	if lconst {
		if lit, exact := exactIn(lv, rt); exact {
			ret, err := e.WithChildren(lit, r)
			return ret, err == nil
		}
	} else if lit, exact := exactIn(rv, lt); exact {
		ret, err := e.WithChildren(l, lit)
		return ret, err == nil
	}
	p, s := commonDecimal(numberDigits(l, lv), numberDigits(r, rv))
	ret, err := e.WithChildren(
		expression.NewConvertWithLengthAndScale(l, expression.ConvertToDecimal, p, s),
		expression.NewConvertWithLengthAndScale(r, expression.ConvertToDecimal, p, s))
	return ret, err == nil
}

// constantValue returns the value of e when e is a literal or a CAST of
// one.
func constantValue(e gsql.Expression) (any, bool) {
	if c, ok := e.(*expression.Convert); ok {
		if _, lit := c.Child.(*expression.Literal); !lit {
			return nil, false
		}
	} else if lit, ok := e.(*expression.Literal); ok {
		// A literal's value needs no evaluation (an empty context costs a
		// session's variable maps: a sixth of a short range query's CPU).
		v := lit.Value()
		return v, v != nil
	} else {
		return nil, false
	}
	v, err := e.Eval(gsql.NewEmptyContext(), nil)
	if err != nil || v == nil {
		return nil, false
	}
	return v, true
}

// exactIn returns v as a literal of type t when t holds it exactly.
func exactIn(v any, t gsql.Type) (gsql.Expression, bool) {
	dt, ok := t.(gsql.DecimalType)
	if !ok {
		return nil, false
	}
	want, err := types.InternalDecimalType.ConvertToNullDecimal(v)
	if err != nil || !want.Valid {
		return nil, false
	}
	got, err := dt.ConvertToNullDecimal(v)
	if err != nil || !got.Valid || !got.Decimal.Equal(want.Decimal) || !fits(got.Decimal, dt) {
		return nil, false
	}
	return expression.NewLiteral(got.Decimal, t), true
}

// fits reports whether d has at most the integer digits of t.
func fits(d decimal.Decimal, t gsql.DecimalType) bool {
	intDigits := int(t.Precision()) - int(t.Scale())
	limit := decimal.New(1, int32(intDigits))
	return d.Abs().LessThan(limit)
}

// numDigits are the integer and fraction digits a number needs.
type numDigits struct{ intDigits, scale int }

// numberDigits returns the digits e needs: those of its value v when it
// is a constant (a literal padded with zeros needs none of the zeros),
// else its type's.
func numberDigits(e gsql.Expression, v any) numDigits {
	if v != nil {
		if d, err := types.InternalDecimalType.ConvertToNullDecimal(v); err == nil && d.Valid {
			text := d.Decimal.String()
			ip, frac, _ := strings.Cut(strings.TrimLeft(text, "-"), ".")
			frac = strings.TrimRight(frac, "0")
			return numDigits{len(strings.TrimLeft(ip, "0")), len(frac)}
		}
	}
	if dt, ok := e.Type().(gsql.DecimalType); ok {
		return numDigits{int(dt.Precision()) - int(dt.Scale()), int(dt.Scale())}
	}
	return numDigits{20, 0} // integers: BIGINT UNSIGNED has 20 digits
}

// commonDecimal returns the precision and scale of a DECIMAL that holds
// values of a and b exactly, within MySQL's limits.
func commonDecimal(a, b numDigits) (int, int) {
	s := min(max(a.scale, b.scale), maxDecimalScale)
	i := max(a.intDigits, b.intDigits, 1)
	return min(i+s, maxDecimalPrecision), s
}

// decimalBetween rewrites v BETWEEN a AND b of a DECIMAL and numbers of
// other types as v >= a AND v <= b (what BETWEEN means in MySQL, NULLs
// included), each comparison made exact by decimalComparison: GMS's
// BETWEEN compares in v's type, rounding a and b to its scale.
func decimalBetween(e gsql.Expression) (gsql.Expression, bool) {
	b, ok := e.(*expression.Between)
	if !ok {
		return e, false
	}
	// The types first: they rule out nearly every BETWEEN for the price
	// of a few type switches, where evaluating a CAST costs a context.
	vt, lt, ut := b.Val.Type(), b.Lower.Type(), b.Upper.Type()
	if !types.IsNumber(vt) || !types.IsNumber(lt) || !types.IsNumber(ut) {
		return e, false
	}
	if !types.IsDecimal(vt) && !types.IsDecimal(lt) && !types.IsDecimal(ut) {
		return e, false
	}
	if types.TypesEqual(vt, lt) && types.TypesEqual(vt, ut) {
		return e, false
	}
	if _, ok := constantValue(b.Lower); !ok {
		return e, false
	}
	if _, ok := constantValue(b.Upper); !ok {
		return e, false
	}
	ge, _ := decimalComparison(expression.NewGreaterThanOrEqual(b.Val, b.Lower))
	le, _ := decimalComparison(expression.NewLessThanOrEqual(b.Val, b.Upper))
	return expression.NewAnd(ge, le), true
}

// ExactDecimalColumns makes the comparisons of two columns (or other
// expressions that are not constants) in e exact where one is a DECIMAL
// and the other a number of another type, which GMS compares in the left
// one's type, rounding the other: a DECIMAL(10,2) 2.51 equalled a
// DECIMAL(10,3) 2.505, and a DOUBLE 2.505. As MySQL, two DECIMALs are
// compared in a DECIMAL wide enough for both, and a DECIMAL with a FLOAT
// or DOUBLE as doubles. It is applied to the conditions of joins and
// filters as percdb's row-iterator builder builds them (sql/compat_exec.go),
// after the join planner has made its plan of the comparisons as GMS
// wrote them: the hash and lookup keys it chose stay as they are (their
// own exactness is hashkey.go's), and the comparison decides.
func ExactDecimalColumns(e gsql.Expression) (gsql.Expression, bool) {
	changed := false
	ret, _, err := transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch e.(type) {
		case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.GreaterThan, *expression.GreaterThanOrEqual:
		default:
			return e, transform.SameTree, nil
		}
		b := e.(expression.BinaryExpression)
		l, r := b.Left(), b.Right()
		lt, rt := l.Type(), r.Type()
		if !types.IsDecimal(lt) && !types.IsDecimal(rt) || types.TypesEqual(lt, rt) ||
			!types.IsNumber(lt) || !types.IsNumber(rt) {
			return e, transform.SameTree, nil
		}
		if _, c := constantValue(l); c {
			return e, transform.SameTree, nil
		}
		if _, c := constantValue(r); c {
			return e, transform.SameTree, nil
		}
		switch {
		case types.IsFloat(lt):
			r = expression.NewConvert(r, expression.ConvertToDouble)
		case types.IsFloat(rt):
			l = expression.NewConvert(l, expression.ConvertToDouble)
		default:
			p, s := commonDecimal(numberDigits(l, nil), numberDigits(r, nil))
			l = expression.NewConvertWithLengthAndScale(l, expression.ConvertToDecimal, p, s)
			r = expression.NewConvertWithLengthAndScale(r, expression.ConvertToDecimal, p, s)
		}
		ret, err := e.WithChildren(l, r)
		if err != nil {
			return e, transform.SameTree, err
		}
		changed = true
		return ret, transform.NewTree, nil
	})
	if err != nil || !changed {
		return e, false
	}
	return ret, true
}
