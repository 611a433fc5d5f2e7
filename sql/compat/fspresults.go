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
	micros := expression.NewArithmetic(iv.Child, expression.NewLiteral(int64(1_000_000), types.Int64), "*")
	return expression.NewInterval(micros, "MICROSECOND"), true
}
