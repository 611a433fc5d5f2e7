package compat

import (
	"context"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS compares a YEAR column with a number by converting the number to a
// YEAR, and fails the statement with 1105 (`value 255 is not a valid
// Year`) when it is none: `y = 255`, `y < -1`, and a join `x.y = z.tu`
// meeting a 255 in tu. MySQL converts a constant integer that is a valid
// year input to the YEAR (20 is 2020, as an INSERT stores it) and
// otherwise compares the numbers, as it compares a YEAR with a column
// of numbers. yearComparison reads the YEAR column as a signed integer
// when the other side is a number that is not a constant integer GMS
// converts to a YEAR (a column, an expression, a fraction, an integer
// out of the YEAR's inputs). A constant from 1 to 99 is the year MySQL
// reads it as (20 is 2020); the other constant years are left to GMS,
// which reads them as MySQL does and keeps the column's index range. A
// one-table UPDATE or DELETE reads the table for such a comparison
// (keyconvert.go): GMS builds its index range before this rewrite runs.

// yearComparison returns e, a comparison of a YEAR column with a
// number, with the column read as a signed integer where GMS would
// convert the number to a YEAR that it is not, and whether it changed e.
func yearComparison(e gsql.Expression) (gsql.Expression, bool) {
	if b, ok := e.(*expression.Between); ok {
		return yearBetween(b)
	}
	if !isComparison(e) {
		return e, false
	}
	return withOperands(e, func(l, r gsql.Expression) (gsql.Expression, gsql.Expression, bool) {
		switch {
		case yearColumn(l) && numberNoYear(r):
			return expression.NewConvert(l, expression.ConvertToSigned), r, true
		case yearColumn(r) && numberNoYear(l):
			return l, expression.NewConvert(r, expression.ConvertToSigned), true
		case yearColumn(l) && twoDigitYear(r):
			return l, asYear(r), true
		case yearColumn(r) && twoDigitYear(l):
			return asYear(l), r, true
		case yearColumn(l) && strictYear(r):
			y, _ := stringYear(r.(*strictNumber).child)
			return l, y, true
		case yearColumn(r) && strictYear(l):
			y, _ := stringYear(l.(*strictNumber).child)
			return y, r, true
		case yearColumn(l) && stringConstant(r):
			if y, ok := stringYear(r); ok {
				return l, y, true
			}
			return expression.NewConvert(l, expression.ConvertToSigned), &stringNumber{UnaryExpression: expression.UnaryExpression{Child: r}}, true
		case yearColumn(r) && stringConstant(l):
			if y, ok := stringYear(l); ok {
				return y, r, true
			}
			return &stringNumber{UnaryExpression: expression.UnaryExpression{Child: l}}, expression.NewConvert(r, expression.ConvertToSigned), true
		}
		return l, r, false
	})
}

// yearBetween returns b, y BETWEEN lo AND hi of a YEAR column y, as
// y >= lo AND y <= hi, each read as yearComparison reads it, when a
// bound is a constant GMS reads otherwise than MySQL: MySQL converts
// each constant bound to the YEAR as a comparison does (`y BETWEEN 1
// AND 2020` is y BETWEEN 2001 AND 2020), where GMS compared the number 1
// or failed on a bound that is no year.
func yearBetween(b *expression.Between) (gsql.Expression, bool) {
	if !yearColumn(b.Val) {
		return b, false
	}
	ge, gok := yearComparison(expression.NewGreaterThanOrEqual(b.Val, b.Lower))
	le, lok := yearComparison(expression.NewLessThanOrEqual(b.Val, b.Upper))
	if !gok && !lok {
		return b, false
	}
	return expression.NewAnd(ge, le), true
}

// stringConstant reports whether e is a constant string.
func stringConstant(e gsql.Expression) bool {
	if !types.IsText(e.Type()) {
		return false
	}
	_, ok := constantString(e)
	return ok
}

// strictYear reports whether e is a constant string that a one-table
// write in a strict sql_mode reads as a number (strict.go) and MySQL as
// a YEAR (stringYear); a string that is no year stays such a number.
func strictYear(e gsql.Expression) bool {
	s, ok := e.(*strictNumber)
	if !ok || !stringConstant(s.child) {
		return false
	}
	_, ok = stringYear(s.child)
	return ok
}

// stringYear returns e, a constant string, as the YEAR MySQL converts it
// to where it meets a YEAR column, as an INSERT stores it: digits only
// (spaces around them aside), '0' to '99' the years 2000-2069 and
// 1970-1999 ('0' and '00' 2000, '0000' the year 0), 1901 to 2155 that
// year; false for any other string, which MySQL compares with the
// YEAR as numbers.
func stringYear(e gsql.Expression) (gsql.Expression, bool) {
	s, _ := constantString(e)
	s = strings.Trim(s, " ")
	if s == "" || len(s) > 4 {
		return e, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || s[0] == '+' {
		return e, false
	}
	switch {
	case n == 0 && len(s) == 4:
	case n < 70:
		n += 2000
	case n < 100:
		n += 1900
	case n > 1900 && n <= 2155:
	default:
		return e, false
	}
	return expression.NewLiteral(int16(n), types.Year), true
}

// yearColumn reports whether e is a column of type YEAR.
func yearColumn(e gsql.Expression) bool {
	_, col := e.(*expression.GetField)
	return col && types.IsYear(e.Type())
}

// numberNoYear reports whether e is a number (not a YEAR) that is not a
// constant integer GMS converts to a YEAR.
func numberNoYear(e gsql.Expression) bool {
	t := e.Type()
	if !types.IsNumber(t) || types.IsYear(t) {
		return false
	}
	v, ok := constantValue(e)
	if !ok || !types.IsInteger(t) {
		return true
	}
	_, _, err := types.Year.Convert(context.Background(), v)
	return err != nil
}

// twoDigitYear reports whether e is a constant integer from 1 to 99,
// which MySQL converts to the year 2001-2069 or 1970-1999 when it meets
// a YEAR (GMS compared the numbers: `y = 20` was false for 2020).
func twoDigitYear(e gsql.Expression) bool {
	if !types.IsInteger(e.Type()) {
		return false
	}
	v, ok := constantValue(e)
	if !ok {
		return false
	}
	n, mag, ok := IntMagnitude(v)
	return ok && !n && mag >= 1 && mag <= 99
}

// asYear returns e, a constant twoDigitYear, as the year MySQL reads it.
func asYear(e gsql.Expression) gsql.Expression {
	v, _ := constantValue(e)
	y, _, err := types.Year.Convert(context.Background(), v)
	if err != nil {
		return e
	}
	return expression.NewLiteral(y, types.Year)
}

// yearBranches returns e, an IFNULL, COALESCE or IF whose values are a
// YEAR and a number of another type, with the YEAR values read as
// signed integers, and whether it changed e. GMS typed the result YEAR
// and converted the other values to it (IFNULL(y, 7) was 2007 for a
// NULL y, IFNULL(y, 2.5e0) 2002) or took the other DECIMAL's type, too
// narrow for the year (IFNULL(y, 0.5) failed with 1105 "Out of range
// value for column of Decimal type"); MySQL's result is a number of the
// types merged, a YEAR counting as an integer.
func yearBranches(e gsql.Expression) (gsql.Expression, bool) {
	var values []int // the children that are the result's values
	switch e.(type) {
	case *function.IfNull:
		values = []int{0, 1}
	case *function.Coalesce:
		for i := range e.Children() {
			values = append(values, i)
		}
	case *function.If:
		values = []int{1, 2}
	default:
		return e, false
	}
	children := e.Children()
	year, number := false, false
	for _, i := range values {
		t := children[i].Type()
		switch {
		case types.IsYear(t):
			year = true
		case types.IsNumber(t):
			number = true
		}
	}
	if !year || !number {
		return e, false
	}
	out := append([]gsql.Expression(nil), children...)
	for _, i := range values {
		if types.IsYear(out[i].Type()) {
			out[i] = expression.NewConvert(out[i], expression.ConvertToSigned)
		}
	}
	ret, err := e.WithChildren(out...)
	if err != nil {
		return e, false
	}
	return ret, true
}
