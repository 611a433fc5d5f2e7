package compat

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL compares a string with a number as DOUBLEs, reading the string
// as strtod does: its longest numeric prefix after leading spaces, 0
// when there is none ('10:30:00' is 10, '2020-03-01' is 2020, 'abc' is
// 0, with a warning). GMS converts such a string to 0 whenever it is not
// a number as a whole, so COALESCE(TIME(dt), 0) > 5 was false for
// '10:30:00', and COALESCE(DATE_ADD(d, INTERVAL 1 DAY), 0) < 5 (a string,
// in MySQL as in GMS) true. stringNumberComparison reads the string side
// of a comparison of a string expression with a number as MySQL does.
// A constant string that is a number as a whole ('2.5') is left to GMS,
// which reads it the same way and keeps index ranges on the column it
// is compared with; one that is not ('abc', '1x') is read as MySQL reads
// it (pk = 'abc' failed with 1366 where MySQL finds pk = 0 and warns).
// Under a strict sql_mode an UPDATE or DELETE still fails on a string
// that is not a number (strict.go looks through stringNumber).

// stringNumberComparison returns e with the string side of a comparison
// of a string with a number read as MySQL reads it, and whether it
// changed e.
func stringNumberComparison(e gsql.Expression) (gsql.Expression, bool) {
	if !isComparison(e) {
		return e, false
	}
	return withOperands(e, func(l, r gsql.Expression) (gsql.Expression, gsql.Expression, bool) {
		switch {
		case (textOperand(l) || stringBeyondType(l, r.Type())) && types.IsNumber(r.Type()):
			return &stringNumber{UnaryExpression: expression.UnaryExpression{Child: l}}, r, true
		case (textOperand(r) || stringBeyondType(r, l.Type())) && types.IsNumber(l.Type()):
			return l, &stringNumber{UnaryExpression: expression.UnaryExpression{Child: r}}, true
		}
		return l, r, false
	})
}

// isComparison reports whether e is =, <=>, <, <=, > or >=.
func isComparison(e gsql.Expression) bool {
	switch e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
		return true
	}
	return false
}

// withOperands returns e, a binary expression, with the operands f
// gives for its own, and whether f changed them (ok) and e could take
// them.
func withOperands(e gsql.Expression, f func(l, r gsql.Expression) (gsql.Expression, gsql.Expression, bool)) (gsql.Expression, bool) {
	b, ok := e.(expression.BinaryExpression)
	if !ok {
		return e, false
	}
	l, r, ok := f(b.Left(), b.Right())
	if !ok {
		return e, false
	}
	ret, err := e.WithChildren(l, r)
	if err != nil {
		return e, false
	}
	return ret, true
}

// textOperand reports whether e is a string that GMS may read otherwise
// than MySQL: not a constant that is a number as a whole.
func textOperand(e gsql.Expression) bool {
	if !types.IsText(e.Type()) {
		return false
	}
	v, constant := constantValue(e)
	if !constant {
		return true
	}
	s, ok := v.(string)
	return ok && !numericString.MatchString(s)
}

// stringBeyondType reports whether e is a constant string that is a
// number a value of t, a DECIMAL or integer type, cannot be exactly
// (keyconvert.go, numberFits). GMS compares such a string with the
// number in the number's type, rounding or clipping it first: `d0 =
// '3.5'` of a DECIMAL(6,0) was true for 4, `tu IN ('0.5')` true for 0.
// MySQL compares a string with a number as DOUBLEs.
func stringBeyondType(e gsql.Expression, t gsql.Type) bool {
	if !types.IsNumber(t) || types.IsFloat(t) || !types.IsText(e.Type()) {
		return false
	}
	s, ok := constantString(e)
	return ok && numericString.MatchString(s) && !numberFits(s, t)
}

// constantString returns the value of e when e is a constant string.
func constantString(e gsql.Expression) (string, bool) {
	v, ok := constantValue(e)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// stringNumber is its child, a string, read as a DOUBLE as MySQL reads
// a string compared with a number.
type stringNumber struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*stringNumber)(nil)

// Type implements sql.Expression.
func (s *stringNumber) Type() gsql.Type { return types.Float64 }

// String implements sql.Expression: the string's own text.
func (s *stringNumber) String() string { return s.Child.String() }

// Eval implements sql.Expression.
func (s *stringNumber) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := s.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	str, ok := v.(string)
	if !ok {
		sv, _, err := types.LongText.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		str, _ = sv.(string)
	}
	return StringAsDouble(ctx, str, isConstant(s.Child)), nil
}

// StringAsDouble returns str read as the DOUBLE MySQL reads a string
// compared with a number as (its numeric prefix), and warns 1292 when
// str is not a number as a whole: once a statement for a constant, once
// a row otherwise.
func StringAsDouble(ctx *gsql.Context, str string, constant bool) float64 {
	f, overflow := numericPrefixRange(str)
	if overflow || !numericString.MatchString(str) {
		warnTruncatedDouble(ctx, str, constant)
	}
	return f
}

// warnTruncatedDouble warns, as MySQL does, that str was read as a
// number though it is not one as a whole: 1292, once a statement for a
// constant (MySQL converts a constant once), once a row otherwise.
func warnTruncatedDouble(ctx *gsql.Context, str string, constant bool) {
	warnOnce(ctx, codeTruncatedWrongValue, fmt.Sprintf("Truncated incorrect DOUBLE value: '%s'", str), constant)
}

// isConstant reports whether e is a literal, or a conversion of one.
func isConstant(e gsql.Expression) bool {
	for {
		switch x := e.(type) {
		case *expression.Literal:
			return true
		case *expression.Convert:
			e = x.Child
		default:
			return false
		}
	}
}

// WithChildren implements sql.Expression.
func (s *stringNumber) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(s, len(children), 1)
	}
	return &stringNumber{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// numberPrefixRE matches the number at the start of a string as strtod
// reads it: spaces, a sign, digits with a point, an exponent.
var numberPrefixRE = regexp.MustCompile(`^[ \t\n\r\f\v]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?`)

// numericPrefixRange returns the DOUBLE MySQL reads from s: its numeric
// prefix, 0 when it has none, the largest DOUBLE for one too large; and
// whether the number was beyond a DOUBLE (MySQL warns of it as of text
// left unread).
func numericPrefixRange(s string) (float64, bool) {
	m := numberPrefixRE.FindString(s)
	if m == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(trimSpaceLeft(m), 64)
	if err != nil && math.IsInf(f, 0) {
		if f > 0 {
			return math.MaxFloat64, true
		}
		return -math.MaxFloat64, true
	}
	return f, false
}

// trimSpaceLeft returns s without its leading spaces.
func trimSpaceLeft(s string) string {
	return strings.TrimLeft(s, " \t\n\r\f\v")
}

// stringNumberIn returns e, an IN list whose left side is a number, with
// each string of the list that is not a number as a whole read as
// MySQL reads it (its numeric prefix, as stringNumberComparison), and
// whether it changed e: GMS converted `'abc'` to the column's type and
// failed with 1366 (`bu IN ('abc', 7)`), where MySQL compares 0 and
// warns.
func stringNumberIn(e *expression.InTuple) (gsql.Expression, bool) {
	list, ok := e.Right().(expression.Tuple)
	if !ok || !types.IsNumber(e.Left().Type()) {
		return e, false
	}
	var items []gsql.Expression
	for i, it := range list {
		if !textOperand(it) && !stringBeyondType(it, e.Left().Type()) {
			continue
		}
		if items == nil {
			items = append([]gsql.Expression(nil), list...)
		}
		items[i] = &stringNumber{UnaryExpression: expression.UnaryExpression{Child: it}}
	}
	if items == nil {
		return e, false
	}
	return expression.NewInTuple(e.Left(), expression.NewTuple(items...)), true
}

// textAsDouble returns a, or, when an operand is a string, a with that
// operand read as MySQL reads a string in arithmetic (stringNumber: its
// numeric prefix, warning 1292 "Truncated incorrect DOUBLE value" as
// MySQL words it, where GMS's arithmetic wrote "double").
func textAsDouble(a *expression.Arithmetic) *expression.Arithmetic {
	l, r := a.LeftChild, a.RightChild
	lt, rt := types.IsText(l.Type()), types.IsText(r.Type())
	if !lt && !rt {
		return a
	}
	if lt {
		l = &stringNumber{UnaryExpression: expression.UnaryExpression{Child: l}}
	}
	if rt {
		r = &stringNumber{UnaryExpression: expression.UnaryExpression{Child: r}}
	}
	return expression.NewArithmetic(l, r, a.Op)
}
