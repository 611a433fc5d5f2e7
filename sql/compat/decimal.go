package compat

import (
	"strings"

	"github.com/shopspring/decimal"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
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

// SettledDecimalComparisons is the analyzer rule that applies
// decimalComparison again once the subqueries and derived tables of the
// scope have been analysed. A scalar subquery of SUM or AVG of exact
// numbers, or a derived table's column of one, is typed DOUBLE (GMS's
// type of the aggregate) when the comparisons are rewritten, and DECIMAL
// (ExactAggregates, DerivedColumnTypes) once its own plan is analysed:
// `(SELECT SUM(i) …) <= -1.25` of a SUM of -1 was compared in the
// subquery's DECIMAL(32,0), which rounded -1.25 to -1, and was true.
// decimalComparison leaves its own rewrites as they are, so the
// comparisons it already made exact do not change.
func SettledDecimalComparisons(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprs(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		if d, ok := numericTextAsDouble(e); ok {
			e = d
		}
		if d, ok := decimalComparison(e); ok {
			return d, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// numericTextAsDouble returns e, a comparison of a DECIMAL that is not a
// constant with a string constant that is a number, with the string
// converted to DOUBLE: MySQL compares a DECIMAL with a string as
// floating-point numbers (MySQL 8 reference manual, Type Conversion in
// Expression Evaluation), GMS in the DECIMAL's type, which rounded
// '-1.25' to -1 beside a DECIMAL(32,0). decimalComparison then compares
// both sides as DOUBLEs.
func numericTextAsDouble(e gsql.Expression) (gsql.Expression, bool) {
	if _, ok := comparisonWant(e); !ok {
		if _, nullSafe := e.(*expression.NullSafeEquals); !nullSafe {
			return e, false
		}
	}
	b := e.(expression.BinaryExpression)
	l, r := b.Left(), b.Right()
	if text, ok := numericTextConstant(r); ok && types.IsDecimal(l.Type()) && !isConstant(l) {
		r = expression.NewConvert(text, expression.ConvertToDouble)
	} else if text, ok := numericTextConstant(l); ok && types.IsDecimal(r.Type()) && !isConstant(r) {
		l = expression.NewConvert(text, expression.ConvertToDouble)
	} else {
		return e, false
	}
	ret, err := e.WithChildren(l, r)
	return ret, err == nil
}

// numericTextConstant returns e when it is a string literal that is a
// number (numericString).
func numericTextConstant(e gsql.Expression) (gsql.Expression, bool) {
	lit, ok := e.(*expression.Literal)
	if !ok || !types.IsText(lit.Type()) {
		return nil, false
	}
	s, ok := lit.Value().(string)
	return lit, ok && numericString.MatchString(s)
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
