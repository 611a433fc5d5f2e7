package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// GMS builds an index range by converting each constant a column is
// compared with to the column's type, and fails the statement when the
// conversion fails: `bi = 'abc'` of an indexed BIGINT failed with 1366
// (`'abc' is not a valid value for 'bigint'`), where MySQL compares the
// string as the number it begins with (0 here, with warning 1292) and
// finds the rows of bi = 0. A conversion that succeeds can still be
// wrong: `d0 = '3.5'` of an indexed DECIMAL(6,0) read the rows of 4, and
// an integer column's `'1.5'` the rows of 2, and `tu IN ('300', 256)`
// of a TINYINT UNSIGNED failed, where MySQL compares the numbers as they
// are.
//
// Percdb's rules read such strings as MySQL does (strnum.go) before GMS
// builds its ranges, for every statement GMS analyzes with its full
// list of rules. A one-table UPDATE or DELETE is analyzed with a short
// list of GMS's own (analyzer.getBatchesForNode) that plans the index
// read before any rule of percdb's has run; percdb's rewrites come
// afterwards, in the row-iterator builder (sql/compat_exec.go).
// UnconvertibleKeys tells the table's LookupForExpressions
// (sql/compat_keyconvert.go) that GMS must not build a range from such
// a comparison: the statement reads the table and its WHERE clause,
// rewritten by percdb, decides.

// UnconvertibleKeys reports whether one of exprs, a filter's conjuncts,
// compares a numeric column with a constant string whose conversion to
// the column's type for an index range fails or changes its number.
func UnconvertibleKeys(exprs []gsql.Expression) bool {
	found := false
	for _, e := range exprs {
		gsql.Inspect(e, func(e gsql.Expression) bool {
			if found {
				return false
			}
			switch e := e.(type) {
			case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
				*expression.GreaterThan, *expression.GreaterThanOrEqual:
				b := e.(expression.BinaryExpression)
				found = unconvertibleKey(b.Left(), b.Right()) || unconvertibleKey(b.Right(), b.Left()) ||
					yearKey(b.Left(), b.Right()) || yearKey(b.Right(), b.Left())
			case *expression.InTuple, *expression.HashInTuple:
				c := e.(expression.Comparer)
				if tup, ok := c.Right().(expression.Tuple); ok {
					for _, it := range tup {
						if unconvertibleKey(c.Left(), it) {
							found = true
						}
					}
				}
			case *expression.Between:
				found = unconvertibleKey(e.Val, e.Lower) || unconvertibleKey(e.Val, e.Upper) ||
					yearKey(e.Val, e.Lower) || yearKey(e.Val, e.Upper)
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// yearKey reports whether k, compared with the column col, is a
// constant that yearComparison rewrites when col is a YEAR (year.go).
func yearKey(col, k gsql.Expression) bool {
	return yearColumn(col) && (numberNoYear(k) || twoDigitYear(k) || stringConstant(k))
}

// unconvertibleKey reports whether k, compared with the column col, is a
// constant string that GMS's conversion to col's type for a range fails
// on or reads as another number: not a number as a whole, or one with
// more digits after the point than col's type keeps.
func unconvertibleKey(col, k gsql.Expression) bool {
	if _, ok := col.(*expression.GetField); !ok || !types.IsNumber(col.Type()) || types.IsFloat(col.Type()) {
		return false
	}
	if !types.IsText(k.Type()) {
		return false
	}
	s, ok := constantString(k)
	if !ok {
		return false
	}
	return !numericString.MatchString(s) || !numberFits(s, col.Type()) || types.IsUnsigned(col.Type()) && zeroString(s)
}

// zeroString reports whether s, a number as numericString matches it,
// is zero ('0', '-0', ' 0.00 '). GMS converts such a string to an
// unsigned integer type through the DOUBLE 0, which it reads as 2^63
// (outofrange.go, constantBeyondColumn): `tu >= '0'` of an indexed
// TINYINT UNSIGNED read the index from there, and a one-table UPDATE
// changed only the rows of 255.
func zeroString(s string) bool {
	v, err := decimal.NewFromString(strings.TrimSpace(s))
	return err == nil && v.IsZero()
}

// numberFits reports whether s, a number as numericString matches it, is
// one a column of t, a numeric type that is no FLOAT or DOUBLE, holds as
// it is: no more digits after the point than t keeps and, for an
// integer type, within its range. GMS's conversion of any other rounds
// or clips it, or fails ('300' against a TINYINT UNSIGNED, '-1' against
// an unsigned one, and '-0', which GMS's conversion to an unsigned type
// refuses: its IN list converted it once a row, warning 1292 each time).
func numberFits(s string, t gsql.Type) bool {
	if types.IsUnsigned(t) && strings.HasPrefix(strings.TrimSpace(s), "-") {
		return false
	}
	scale := 0
	if d, ok := t.(gsql.DecimalType); ok {
		scale = int(d.Scale())
	}
	if fractionDigits(s) > scale {
		return false
	}
	lo, hi, ok := IntegerBounds(t)
	if !ok {
		return true
	}
	v, err := decimal.NewFromString(strings.TrimSpace(s))
	return err == nil && !v.LessThan(lo) && !v.GreaterThan(hi)
}

// fractionDigits returns the number of digits after the point of s, a
// number as numericString matches it, not counting trailing zeros; an
// exponent makes it a DOUBLE, counted as having them.
func fractionDigits(s string) int {
	s = strings.TrimSpace(s)
	if strings.ContainsAny(s, "eE") {
		return 1 << 10
	}
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return 0
	}
	return len(strings.TrimRight(s[i+1:], "0"))
}
