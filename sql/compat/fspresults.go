package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// MySQL types CONVERT_TZ(dt, …), TIME(x) and TIMEDIFF(a, b) with the
// fractional digits of their arguments (Item::datetime_precision and
// time_precision): a DATETIME(n) or TIME(n) its n, a string constant the
// digits written after its point, a DATE or an integer none, anything
// else six. GMS types them DATETIME(6) and TIME, so that
// CONVERT_TZ('2020-01-01 12:00:00', '+00:00', '+05:30') was written
// '2020-01-01 17:30:00.000000' (MySQL '2020-01-01 17:30:00') and
// TIME('2020-01-01 10:00:00.5') '10:00:00.500000' (MySQL '10:00:00.5').
// argDigits gives an argument's digits; constantDigits puts such a
// function of GMS's under MySQL's type (a temporalResult), and
// SEC_TO_TIME (percdb's) is typed by secToTimeType.

// argDigits returns the fractional digits MySQL gives a temporal
// function's argument a: its type's, a string constant's as written
// (at most 6), 0 for a DATE or an integer, a DECIMAL's scale (at most
// 6), 6 for anything else.
func argDigits(a gsql.Expression) int {
	if c, ok := a.(*expression.Convert); ok && isTimeType(c.Type()) && isTimeType(c.Child.Type()) {
		a = c.Child // a TIME(n) column given to a function (TimeArguments)
	}
	switch t := a.Type().(type) {
	case gsql.DatetimeType:
		if t.Type() == sqltypes.Date {
			return 0
		}
		return t.Precision()
	default:
		switch {
		case isTimeType(t):
			return timeDigits(t)
		case types.IsInteger(t):
			return 0
		case types.IsDecimal(t):
			return min(6, int(t.(gsql.DecimalType).Scale()))
		}
		if s, ok := constantString(a); ok {
			if i := strings.LastIndexByte(s, '.'); i >= 0 {
				return min(6, len(strings.TrimSpace(s[i+1:])))
			}
			return 0
		}
	}
	return 6
}

// constantDigits returns CONVERT_TZ, TIME or TIMEDIFF of GMS's typed with
// its arguments' digits, when they are fewer than six.
func constantDigits(e gsql.Expression) (gsql.Expression, bool) {
	var typ gsql.Type
	switch x := e.(type) {
	case *function.ConvertTz:
		if n := argDigits(x.Children()[0]); n < 6 {
			typ = types.MustCreateDatetimeType(sqltypes.Datetime, n)
		}
	case *function.Time:
		if n := argDigits(x.Child); n < 6 {
			typ = timeType(n)
		}
	case *function.TimeDiff:
		if n := max(argDigits(x.LeftChild), argDigits(x.RightChild)); n < 6 {
			typ = timeType(n)
		}
	}
	if typ == nil {
		return e, false
	}
	return &temporalResult{UnaryExpression: expression.UnaryExpression{Child: e}, typ: typ}, true
}

// secToTimeType is SEC_TO_TIME(x)'s type: a TIME with x's decimals, at
// most 6 (Item_func_sec_to_time: an integer none, 3661.5 one, a DOUBLE
// six).
func secToTimeType(args []gsql.Expression) gsql.Type {
	n := 6
	switch t := args[0].Type(); {
	case types.IsInteger(t):
		n = 0
	case types.IsDecimal(t):
		n = min(6, int(t.(gsql.DecimalType).Scale()))
	}
	if n == 6 {
		return types.Time
	}
	return timeType(n)
}

// fractionalSeconds returns INTERVAL x SECOND of a DECIMAL or DOUBLE x as
// the interval of x's microseconds: MySQL keeps the fraction of a
// fractional SECOND (get_interval_value: DATE_ADD(dt, INTERVAL 1.5
// SECOND) is 1.5 seconds later), where GMS read it as a whole number (2).
func fractionalSeconds(e gsql.Expression) (gsql.Expression, bool) {
	iv, ok := e.(*expression.Interval)
	if !ok || !strings.EqualFold(iv.Unit, "SECOND") {
		return e, false
	}
	if t := iv.Child.Type(); !types.IsDecimal(t) && !types.IsFloat(t) {
		return e, false
	}
	micros := &secondMicros{Arithmetic: expression.NewArithmetic(iv.Child, expression.NewLiteral(int64(1_000_000), types.Int64), "*")}
	return expression.NewInterval(micros, "MICROSECOND"), true
}

// secondMicros is x * 1000000, the microseconds of INTERVAL x SECOND
// (fractionalSeconds): an interval of x's digits, not a MICROSECOND
// interval's six (intervalDigits).
type secondMicros struct {
	*expression.Arithmetic
}

// WithChildren implements sql.Expression.
func (m *secondMicros) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	a, err := m.Arithmetic.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if x, ok := a.(*expression.Arithmetic); ok {
		return &secondMicros{Arithmetic: x}, nil
	}
	return a, nil
}

// intervalDigits returns the fractional digits MySQL gives a date moved
// by iv (Item_date_add_interval): six for the MICROSECOND units, x's
// digits for INTERVAL x SECOND (argDigits), none for the others.
func intervalDigits(iv *expression.Interval) int {
	if m, ok := iv.Child.(*secondMicros); ok {
		return argDigits(m.Left())
	}
	unit := strings.ToUpper(iv.Unit)
	switch {
	case strings.HasSuffix(unit, "MICROSECOND"):
		return 6
	case unit == "SECOND":
		return argDigits(iv.Child)
	}
	return 0
}

// dateAddDigits returns DATE_ADD and DATE_SUB (ADDDATE, SUBDATE) of a
// DATETIME result typed with MySQL's digits, the larger of the date's
// (argDigits) and the interval's (intervalDigits), when they are fewer
// than six: GMS typed them DATETIME(6), and a string date's result, a
// string, it wrote with six digits when it had a fraction, so that
// DATE_ADD(dt, INTERVAL 1.5 SECOND) was '… 10:00:01.500000' (MySQL
// '… 10:00:01.5').
func dateAddDigits(e gsql.Expression) (gsql.Expression, bool) {
	var date gsql.Expression
	var iv *expression.Interval
	switch x := e.(type) {
	case *function.DateAdd:
		date, iv = x.Date, x.Interval
	case *function.DateSub:
		date, iv = x.Date, x.Interval
	default:
		return e, false
	}
	n := max(argDigits(date), intervalDigits(iv))
	if n >= 6 {
		return e, false
	}
	switch t := e.Type(); {
	case t == types.DatetimeMaxPrecision:
		return &temporalResult{UnaryExpression: expression.UnaryExpression{Child: e}, typ: types.MustCreateDatetimeType(sqltypes.Datetime, n)}, true
	case types.IsText(t):
		return &datetimeDigitsText{UnaryExpression: expression.UnaryExpression{Child: e}, digits: n}, true
	}
	return e, false
}

// datetimeDigitsText is a date function's string result written with
// digits fractional digits: the zeros GMS wrote after them taken off.
type datetimeDigitsText struct {
	expression.UnaryExpression
	digits int
}

// Type implements sql.Expression.
func (d *datetimeDigitsText) Type() gsql.Type { return d.Child.Type() }

// String implements sql.Expression: the function's own text.
func (d *datetimeDigitsText) String() string { return d.Child.String() }

// Eval implements sql.Expression.
func (d *datetimeDigitsText) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	s, ok := v.(string)
	if err != nil || !ok {
		return v, err
	}
	i := strings.LastIndexByte(s, '.')
	if i < 0 || !strings.Contains(s, ":") || strings.IndexByte(s[i:], ':') >= 0 {
		return s, nil
	}
	frac := s[i+1:]
	keep := max(d.digits, len(strings.TrimRight(frac, "0")))
	if keep >= len(frac) {
		return s, nil
	}
	if keep == 0 {
		return s[:i], nil
	}
	return s[:i+1+keep], nil
}

// WithChildren implements sql.Expression.
func (d *datetimeDigitsText) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &datetimeDigitsText{UnaryExpression: expression.UnaryExpression{Child: children[0]}, digits: d.digits}, nil
}
