package compat

import (
	"errors"
	"fmt"
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
	// zeroDateIsPart: the part of the date as written (YEAR, MONTH,
	// DAY, DAYOFMONTH, QUARTER: 0 for the zero date).
	zeroDateIsPart
	// zeroDateIsNull: NULL with MySQL's warning 1292.
	zeroDateIsNull
	// zeroDateIsNameless: NULL without a warning for the zero date (no
	// name of month 0); MONTHNAME names the month of an incomplete date
	// with a month.
	zeroDateIsNameless
	// zeroDateIsFormatted: DATE_FORMAT and EXTRACT of the parts as
	// written (fuzzydates.go).
	zeroDateIsFormatted
)

// zeroDateAnswers are the date functions (lower-case name) whose answer
// for the zero date is GMS's wrong, and MySQL's answer. It is not
// changed after the package is initialized.
var zeroDateAnswers = map[string]zeroDateAnswer{
	"year": zeroDateIsPart, "month": zeroDateIsPart, "day": zeroDateIsPart,
	"dayofmonth": zeroDateIsPart, "quarter": zeroDateIsPart,
	"to_days": zeroDateIsNull, "to_seconds": zeroDateIsNull, "dayofweek": zeroDateIsNull,
	"weekday": zeroDateIsNull, "dayofyear": zeroDateIsNull, "week": zeroDateIsNull,
	"yearweek": zeroDateIsNull, "weekofyear": zeroDateIsNull, "last_day": zeroDateIsNull,
	"datediff":  zeroDateIsNull,
	"monthname": zeroDateIsNameless, "dayname": zeroDateIsNameless,
	"date_format": zeroDateIsFormatted, "extract": zeroDateIsFormatted,
}

// zeroDateArgument is the error of a zeroDateGuard: its argument was the
// zero date, or (written as a string) a date with a zero month or day:
// its text, and its parts.
type zeroDateArgument struct {
	text string
	date fuzzyDate
	// zero: the zero date, not only a zero month or day.
	zero bool
}

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
	zero, inDate := zeroParts(v)
	if !zero && !inDate {
		return v, nil
	}
	arg := &zeroDateArgument{text: zeroDateText(z.Child.Type(), v), zero: zero}
	switch v.(type) {
	case string, []byte:
		p, ok := fuzzyDateOfValue(v)
		if !ok {
			return v, nil // GMS's warning for what is no date
		}
		arg.date = p
	default:
		// A zero DATE or DATETIME column, or the number 0.
		arg.date.hasTime = types.IsDatetimeType(z.Child.Type()) || types.IsTimestampType(z.Child.Type())
	}
	return nil, arg
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

// zeroDateResult is what the function fn with answer gives, on row, for
// the zero or incomplete date of err, a zeroDateArgument; ok false when
// err is none. fn's other arguments (DATE_FORMAT's format, EXTRACT's
// unit) are evaluated here, once.
func zeroDateResult(ctx *gsql.Context, answer zeroDateAnswer, err error, fn gsql.Expression, row gsql.Row) (v any, ok bool, ferr error) {
	var z *zeroDateArgument
	if answer == zeroDateNotGuarded || !errors.As(err, &z) {
		return nil, false, nil
	}
	p := z.date
	name := ""
	if f, isFunc := fn.(gsql.FunctionExpression); isFunc {
		name = strings.ToLower(f.FunctionName())
	}
	switch answer {
	case zeroDateIsPart:
		switch name {
		case "year":
			return int32(p.year), true, nil
		case "month":
			return int32(p.month), true, nil
		case "quarter":
			return int32((p.month + 2) / 3), true, nil
		default: // day, dayofmonth
			return int32(p.day), true, nil
		}
	case zeroDateIsNameless:
		if name == "monthname" {
			if p.month == 0 {
				return nil, true, nil
			}
			return monthNames[p.month-1], true, nil
		}
		if z.zero {
			return nil, true, nil
		}
	case zeroDateIsFormatted:
		if len(fn.Children()) != 2 {
			return nil, false, nil
		}
		if name == "extract" {
			unit, err := fn.Children()[0].Eval(ctx, row)
			if err != nil || unit == nil {
				return nil, true, err
			}
			n, known := p.extract(textOfValue(unit))
			if !known {
				break
			}
			return n, true, nil
		}
		f, err := fn.Children()[1].Eval(ctx, row)
		if err != nil || f == nil {
			return nil, true, err
		}
		text, known := p.format(textOfValue(f))
		if !known {
			return nil, true, nil
		}
		return text, true, nil
	}
	ctx.Warn(codeTruncatedWrongValue, "Incorrect datetime value: '%s'", z.text)
	return nil, true, nil
}

// textOfValue is a string or []byte value as a string, anything else as
// Go prints it.
func textOfValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}
