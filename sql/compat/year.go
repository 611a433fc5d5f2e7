package compat

import (
	"context"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
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
		}
		return l, r, false
	})
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
