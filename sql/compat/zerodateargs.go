package compat

import (
	"errors"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// The zero date ('0000-00-00', a zero DATE or DATETIME column, the number
// 0) given to a date function. GMS reads it as 0000-01-01, so MONTH and
// DAYOFMONTH of it were 1, TO_DAYS 1, DAYOFWEEK 7 and LAST_DAY
// 0000-01-31. MySQL reads a date argument in one of two ways
// (Item_func::get_arg0_date's flags, item_timefunc.cc): the functions
// that only take the date apart accept the zero date (TIME_FUZZY_DATE)
// and answer its parts, 0 (YEAR, MONTH, DAY, DAYOFMONTH, QUARTER); the
// ones that count days refuse it (TIME_NO_ZERO_DATE: TO_DAYS,
// TO_SECONDS, DAYOFWEEK, WEEKDAY, DAYOFYEAR, WEEK, YEARWEEK, WEEKOFYEAR,
// LAST_DAY, DATEDIFF) and answer NULL with warning 1292 "Incorrect
// datetime value: '0000-00-00'"; MONTHNAME and DAYNAME have no name for
// month 0 and answer NULL.
//
// The function's date arguments are wrapped in a zeroDateGuard, which
// fails with a zeroDateArgument for the zero date; the function passes
// its argument's error up, and the dateErrorNull around it answers the
// function's zeroDateAnswer. The argument is evaluated once, as before.

// zeroDateAnswer is what a date function answers for the zero date.
type zeroDateAnswer int

const (
	// zeroDateNotGuarded: the function's own answer stands.
	zeroDateNotGuarded zeroDateAnswer = iota
	// zeroDateIsZero: the integer 0 (the zero date's year, month, day).
	zeroDateIsZero
	// zeroDateIsNull: NULL with MySQL's warning 1292.
	zeroDateIsNull
	// zeroDateIsNameless: NULL without a warning (no name of month 0).
	zeroDateIsNameless
)

// zeroDateAnswers are the date functions (lower-case name) whose answer
// for the zero date is GMS's wrong, and MySQL's answer. It is not
// changed after the package is initialized.
var zeroDateAnswers = map[string]zeroDateAnswer{
	"year": zeroDateIsZero, "month": zeroDateIsZero, "day": zeroDateIsZero,
	"dayofmonth": zeroDateIsZero, "quarter": zeroDateIsZero,
	"to_days": zeroDateIsNull, "to_seconds": zeroDateIsNull, "dayofweek": zeroDateIsNull,
	"weekday": zeroDateIsNull, "dayofyear": zeroDateIsNull, "week": zeroDateIsNull,
	"yearweek": zeroDateIsNull, "weekofyear": zeroDateIsNull, "last_day": zeroDateIsNull,
	"datediff":  zeroDateIsNull,
	"monthname": zeroDateIsNameless, "dayname": zeroDateIsNameless,
}

// zeroDateArgument is the error of a zeroDateGuard: its argument was the
// zero date, written as text.
type zeroDateArgument struct{ text string }

func (z *zeroDateArgument) Error() string { return "zero date argument '" + z.text + "'" }

// guardZeroDates returns the function f (lower-case name) with its date
// arguments (positions) wrapped in zeroDateGuards, and f's answer for
// the zero date; f itself and zeroDateNotGuarded when MySQL's answer is
// GMS's.
func guardZeroDates(f gsql.Expression, name string, positions []int) (gsql.Expression, zeroDateAnswer) {
	answer := zeroDateAnswers[name]
	if answer == zeroDateNotGuarded {
		return f, answer
	}
	ret, changed := withReplacedChildren(f, func(i int, c gsql.Expression) gsql.Expression {
		if c == nil || !containsInt(positions, i) {
			return nil
		}
		if _, done := c.(*zeroDateGuard); done {
			return nil
		}
		return &zeroDateGuard{UnaryExpression: expression.UnaryExpression{Child: c}}
	})
	if !changed {
		return f, zeroDateNotGuarded
	}
	return ret, answer
}

// containsInt reports whether xs holds x.
func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// zeroDateGuard is a date function's argument that fails with a
// zeroDateArgument when it is the zero date, and is its argument's value
// otherwise.
type zeroDateGuard struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*zeroDateGuard)(nil)

// Type implements sql.Expression: the argument's.
func (z *zeroDateGuard) Type() gsql.Type { return z.Child.Type() }

// IsNullable implements sql.Expression.
func (z *zeroDateGuard) IsNullable() bool { return z.Child.IsNullable() }

// String implements sql.Expression: the argument's own text, so that a
// column named after the function keeps its name.
func (z *zeroDateGuard) String() string { return z.Child.String() }

// CollationCoercibility implements sql.CollationCoercible: the
// argument's.
func (z *zeroDateGuard) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, z.Child)
}

// Eval implements sql.Expression.
func (z *zeroDateGuard) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := z.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	if zero, _ := zeroParts(v); zero {
		return nil, &zeroDateArgument{text: zeroDateText(z.Child.Type(), v)}
	}
	return v, nil
}

// WithChildren implements sql.Expression.
func (z *zeroDateGuard) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(z, len(children), 1)
	}
	return &zeroDateGuard{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// zeroDateText is the zero date v of an expression of type typ as
// MySQL's warning writes it: a string as written, a DATE column's
// '0000-00-00', a DATETIME's '0000-00-00 00:00:00'.
func zeroDateText(typ gsql.Type, v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case []byte:
		return strings.TrimSpace(string(x))
	case time.Time:
		if types.IsDateType(typ) {
			return "0000-00-00"
		}
		return "0000-00-00 00:00:00"
	}
	return numberText(v)
}

// zeroDateResult is what a function with answer gives for the zero date
// of err, a zeroDateArgument; ok false when err is none.
func zeroDateResult(ctx *gsql.Context, answer zeroDateAnswer, err error) (v any, ok bool) {
	var z *zeroDateArgument
	if answer == zeroDateNotGuarded || !errors.As(err, &z) {
		return nil, false
	}
	switch answer {
	case zeroDateIsZero:
		return int32(0), true
	case zeroDateIsNull:
		ctx.Warn(codeTruncatedWrongValue, "Incorrect datetime value: '%s'", z.text)
	}
	return nil, true
}
