package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS's BETWEEN converts its bounds to the tested value's type before it
// compares, and so does its index range over the value's column: against
// a BIGINT UNSIGNED a negative bound is no number of the type, and `bu
// BETWEEN -5 AND 10` found no row; against a BIGINT 9223372036854775808
// became 9223372036854775807, and `bi BETWEEN 9223372036854775808 AND
// bi` found the largest BIGINT; a DECIMAL bound beside an integer column
// (`bu BETWEEN -999.99 AND d`) found nothing. Its IN list converts a
// DECIMAL column among its values to one type of the list, rounding the
// others: `d IN (d0, -1)` of a DECIMAL(5,2) 1.50 and a DECIMAL(6,0) 2 was
// true. MySQL compares each pair exactly.
//
// numericBetween rewrites a BETWEEN of numbers of two signednesses, or of
// a DECIMAL and another number, as v >= a AND v <= b, which is what
// BETWEEN means in MySQL (NULLs included), and hands each comparison to
// the rewrites that make it exact (signedness.go, decimal.go; two columns
// ExactDecimalColumns, here rather than once the plan is built, since
// the select list is no condition the builder visits). decimalInColumns rewrites an IN list that mixes a
// DECIMAL with another number, a column among the values, as x = a OR x
// = b ..., again MySQL's meaning, NULLs included. Lists of constants stay
// GMS's (they are exact: decimal.go, signedness.go) and so do BETWEENs of
// one type, so that index ranges over them stay what they were.

// numericBetween returns e, a BETWEEN of numbers of mixed signedness or
// of a DECIMAL and another number, as two comparisons made exact, and
// whether it changed e.
func numericBetween(e gsql.Expression) (gsql.Expression, bool, error) {
	b, ok := e.(*expression.Between)
	if !ok {
		return e, false, nil
	}
	vt, lt, ut := b.Val.Type(), b.Lower.Type(), b.Upper.Type()
	if !types.IsNumber(vt) {
		return e, false, nil
	}
	// A bound that is a string GMS reads otherwise than MySQL ('7x'
	// is 7 to MySQL, 0 to GMS's BETWEEN; strnum.go): its comparison
	// reads it as MySQL does. `i BETWEEN '7x' AND 255` held for 0.
	strBound := stringBound(b.Lower, vt) || stringBound(b.Upper, vt)
	if !strBound && (!types.IsNumber(lt) || !types.IsNumber(ut)) {
		return e, false, nil
	}
	if !strBound && !mixedSigns(vt, lt) && !mixedSigns(vt, ut) && !decimalBeside(vt, lt) && !decimalBeside(vt, ut) {
		return e, false, nil
	}
	ge, err := exactComparison(expression.NewGreaterThanOrEqual(b.Val, b.Lower))
	if err != nil {
		return e, false, err
	}
	le, err := exactComparison(expression.NewLessThanOrEqual(b.Val, b.Upper))
	if err != nil {
		return e, false, err
	}
	return expression.NewAnd(ge, le), true, nil
}

// stringBound reports whether e, a bound of a BETWEEN of a number of
// type t, is a string that stringNumberComparison reads as a number.
func stringBound(e gsql.Expression, t gsql.Type) bool {
	return textOperand(e) || stringBeyondType(e, t)
}

// exactComparison returns c, a comparison of two numbers, made exact:
// by the rewrites of constants (expandRowComparison) and, for two
// columns, at once rather than when the plan is built
// (ExactDecimalColumns): neither a BETWEEN nor an IN list is a join key
// the join planner would lose.
func exactComparison(c gsql.Expression) (gsql.Expression, error) {
	c, _, err := expandRowComparison(c)
	if err != nil {
		return nil, err
	}
	if d, ok := ExactDecimalColumns(c); ok {
		return d, nil
	}
	return c, nil
}

// decimalBeside reports whether a and b are numbers of two types, one of
// them a DECIMAL, which GMS compares by rounding one to the other.
func decimalBeside(a, b gsql.Type) bool {
	return (types.IsDecimal(a) || types.IsDecimal(b)) && !types.TypesEqual(a, b)
}

// decimalInColumns returns e, an IN list that mixes a DECIMAL with a
// number of another type and has a value that is not a constant, as the
// equalities it means, and whether it changed e.
func decimalInColumns(e *expression.InTuple) (gsql.Expression, bool, error) {
	list, ok := e.Right().(expression.Tuple)
	if !ok || len(list) < 2 {
		return e, false, nil
	}
	left := e.Left()
	lt := left.Type()
	if !types.IsNumber(lt) {
		return e, false, nil
	}
	mixed, column := false, false
	for _, it := range list {
		if !types.IsNumber(it.Type()) {
			return e, false, nil
		}
		mixed = mixed || decimalBeside(lt, it.Type())
		if _, c := constantValue(it); !c {
			column = true
		}
	}
	if !mixed || !column {
		return e, false, nil
	}
	eqs := make([]gsql.Expression, len(list))
	for i, it := range list {
		eq, err := exactComparison(expression.NewEquals(left, it))
		if err != nil {
			return e, false, err
		}
		eqs[i] = eq
	}
	return expression.JoinOr(eqs...), true, nil
}

// exactProjections returns p with the comparisons of a DECIMAL column and
// a number of another type in its select list made exact
// (ExactDecimalColumns), and whether it changed p. The row-iterator
// builder makes those of filters and joins exact once the join planner
// has planned on them; a select list is planned on by nobody, and GMS
// compared `d0 > d` of a DECIMAL(6,0) 2 and a DECIMAL(5,2) 1.50 in d0's
// type, 2 > 2.
func exactProjections(p *plan.Project) (gsql.Node, bool) {
	exprs := p.Projections
	var out []gsql.Expression
	for i, e := range exprs {
		if x, ok := ExactDecimalColumns(e); ok {
			if out == nil {
				out = append([]gsql.Expression(nil), exprs...)
			}
			out[i] = x
		}
	}
	if out == nil {
		return p, false
	}
	q, err := p.WithExpressions(out...)
	if err != nil {
		return p, false
	}
	return q, true
}
