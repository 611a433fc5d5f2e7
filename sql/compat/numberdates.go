package compat

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Numbers where MySQL expects a date. MySQL reads a number given as a
// DATE or DATETIME as YYYYMMDD, YYMMDD, YYYYMMDDhhmmss or YYMMDDhhmmss,
// a fraction being the microseconds (number_to_datetime in MySQL's
// my_time.cc): CAST(20200115 AS DATE) is 2020-01-15, DATE(20200115) too,
// DATE_ADD(20200115, INTERVAL 1 DAY) 2020-01-16. GMS's conversion to a
// date refuses every number but 0, so such a CAST was NULL and the
// functions failed with 1105 (Incorrect datetime value: '20200115').
// numberDateArguments gives the functions that read an argument as a
// date the number's date as text ('2020-01-15', '2020-01-15 10:30:00'),
// and dateCastValue does so for CAST(x AS DATE/DATETIME).
//
// GMS's CAST to DATE or DATETIME also warned 'Incorrect date value: abc'
// for what it could not read; MySQL's warning is 1292 Incorrect datetime
// value: 'abc', which dateCastValue gives.

// dateArgumentPositions are the arguments, by function (lower-case
// name), that MySQL reads as a DATE or DATETIME. It is not changed after
// the package is initialized.
var dateArgumentPositions = map[string][]int{
	"date": {0}, "timestamp": {0}, "year": {0}, "month": {0}, "day": {0}, "dayofmonth": {0},
	"dayofweek": {0}, "dayofyear": {0}, "weekday": {0}, "week": {0}, "yearweek": {0},
	"weekofyear": {0}, "quarter": {0}, "monthname": {0}, "dayname": {0}, "last_day": {0},
	"to_days": {0}, "to_seconds": {0}, "date_format": {0}, "datediff": {0, 1}, "date_add": {0},
	"date_sub": {0}, "adddate": {0}, "subdate": {0}, "datetime": {0}, "timestampdiff": {1, 2},
	"extract": {1},
}

// dateArithmeticNames are the functions of dateArgumentPositions that
// are not wrapped in a dateErrorNull. It is not changed after the
// package is initialized.
var dateArithmeticNames = map[string]bool{"date_add": true, "date_sub": true, "adddate": true, "subdate": true}

// isPlainNumber reports whether t is an integer, DECIMAL or floating
// point type (not a YEAR nor a BIT, which MySQL reads otherwise).
func isPlainNumber(t gsql.Type) bool {
	return types.IsInteger(t) || types.IsDecimal(t) || types.IsFloat(t)
}

// numberDateArguments returns the function e with its number arguments
// that MySQL reads as dates given as their dates' text, and whether it
// changed any.
func numberDateArguments(e gsql.FunctionExpression) (gsql.Expression, bool) {
	positions := dateArgumentPositions[strings.ToLower(e.FunctionName())]
	if positions == nil {
		return e, false
	}
	return withReplacedChildren(e, func(i int, c gsql.Expression) gsql.Expression {
		if !slices.Contains(positions, i) || c == nil || !isPlainNumber(c.Type()) {
			return nil
		}
		return &castArgument{UnaryExpression: expression.UnaryExpression{Child: c}, read: numberDateValue, typ: types.LongText}
	})
}

// numberDateValue is a number read as a date, as its text: the date's
// when the number is one, else the number's own (which the function
// then refuses as MySQL does).
func numberDateValue(_ *gsql.Context, v any) any {
	if s, ok := numberDatetimeText(v); ok {
		return s
	}
	return numberText(v)
}

// dateCastValue is the argument of CAST(x AS DATE/DATETIME(n)) as MySQL
// reads it: a number as its date's text, a string as zeroDatetimeValue
// gives it. What is no date is NULL with MySQL's warning.
func dateCastValue(ctx *gsql.Context, v any) any {
	var written string
	switch x := v.(type) {
	case string:
		written = x
	case []byte:
		written = string(x)
	default:
		if !isNumberValue(v) {
			return v
		}
		written = numberText(v)
		s, ok := numberDatetimeText(v)
		if !ok || s == "0000-00-00" && gsql.LoadSqlMode(ctx).ModeEnabled("NO_ZERO_DATE") {
			// The zero date of a number is refused under
			// NO_ZERO_DATE, as MySQL's number_to_datetime does.
			ctx.Warn(codeTruncatedWrongValue, "Incorrect datetime value: '%s'", written)
			return nil
		}
		v = s
	}
	v = zeroDatetimeValue(ctx, v)
	if _, err := types.DatetimeMaxPrecision.ConvertWithoutRangeCheck(ctx, v); err != nil {
		ctx.Warn(codeTruncatedWrongValue, "Incorrect datetime value: '%s'", written)
		return nil
	}
	return v
}

// isNumberValue reports whether v is a number of GMS's.
func isNumberValue(v any) bool {
	switch v.(type) {
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint, float32, float64, decimal.Decimal:
		return true
	}
	return false
}

// numberText is v written as MySQL writes a number in a string.
func numberText(v any) string {
	switch x := v.(type) {
	case decimal.Decimal:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	}
	return fmt.Sprint(v)
}

// numberDatetimeText returns the number v read as a date as MySQL's
// number_to_datetime reads it, written 'YYYY-MM-DD' or 'YYYY-MM-DD
// hh:mm:ss[.ffffff]', and false when v is no number or no date.
func numberDatetimeText(v any) (string, bool) {
	var whole int64
	var micro int64
	switch x := v.(type) {
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint:
		n, err := strconv.ParseInt(fmt.Sprint(x), 10, 64)
		if err != nil {
			return "", false
		}
		whole = n
	case uint64:
		if x > math.MaxInt64 {
			return "", false
		}
		whole = int64(x)
	case float32:
		return numberDatetimeText(decimal.NewFromFloat32(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > 1e15 {
			return "", false
		}
		return numberDatetimeText(decimal.NewFromFloat(x))
	case decimal.Decimal:
		if x.IsNegative() || x.GreaterThan(decimal.New(1, 15)) {
			return "", false
		}
		w := x.Truncate(0)
		whole = w.IntPart()
		micro = x.Sub(w).Shift(6).Round(0).IntPart()
		if micro >= 1e6 {
			// .9999995 rounds to the next second.
			micro = 999999
		}
	default:
		return "", false
	}
	year, month, day, hour, minute, second, hasTime, ok := numberToDatetime(whole)
	if !ok {
		return "", false
	}
	if !hasTime {
		return fmt.Sprintf("%04d-%02d-%02d", year, month, day), true
	}
	s := fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", year, month, day, hour, minute, second)
	if micro > 0 {
		s += fmt.Sprintf(".%06d", micro)
	}
	return s, true
}

// numberToDatetime splits nr into a date and a time as MySQL's
// number_to_datetime does: YYMMDD and YYMMDDhhmmss with a two-digit year
// (70-99 the 1900s, 00-69 the 2000s), YYYYMMDD and YYYYMMDDhhmmss, 0 the
// zero date. hasTime says whether nr had a time part; ok is false for a
// number that is none of these or whose fields are out of range.
func numberToDatetime(nr int64) (year, month, day, hour, minute, second int, hasTime, ok bool) {
	const yyPart = 70
	switch {
	case nr == 0:
		return 0, 0, 0, 0, 0, 0, false, true
	case nr >= 10000101000000:
		hasTime = true
		if nr > 99999999999999 {
			return
		}
	case nr < 101:
		return
	case nr <= (yyPart-1)*10000+1231:
		nr = (nr + 20000000) * 1000000
	case nr < yyPart*10000+101:
		return
	case nr <= 991231:
		nr = (nr + 19000000) * 1000000
	case nr < 10000101:
		return
	case nr <= 99991231:
		nr *= 1000000
	case nr < 101000000:
		return
	case nr <= (yyPart-1)*10000000000+1231235959:
		hasTime = true
		nr += 20000000000000
	case nr < yyPart*10000000000+101000000:
		return
	case nr <= 991231235959:
		hasTime = true
		nr += 19000000000000
	default:
		// 991231235960 to 10000100999999: MySQL reads it as it is.
		hasTime = true
	}
	date, clock := nr/1000000, nr%1000000
	year, month, day = int(date/10000), int(date/100%100), int(date%100)
	hour, minute, second = int(clock/10000), int(clock/100%100), int(clock%100)
	ok = year <= 9999 && month <= 12 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59
	return
}

// GMS's DATE_FORMAT, MONTHNAME, DATEDIFF, WEEK and others fail with 1105
// (Incorrect datetime value: '2020-02-30') when a string argument is no
// date; MySQL answers NULL with that warning, 1292. dateErrorsNull
// wraps such a function (one of dateArgumentPositions) so that this
// error is the warning and the answer NULL.

// dateErrorsNull returns the function e wrapped so that a date argument
// it cannot read is NULL with MySQL's warning.
func dateErrorsNull(e gsql.Expression, zero zeroDateAnswer) gsql.Expression {
	return &dateErrorNull{UnaryExpression: expression.UnaryExpression{Child: e}, zero: zero}
}

// dateErrorNull is a date function whose error for an argument that is
// no date is MySQL's warning and NULL, and whose answer for the zero
// date is zero's (zerodateargs.go).
type dateErrorNull struct {
	expression.UnaryExpression
	zero zeroDateAnswer
}

var _ gsql.Expression = (*dateErrorNull)(nil)
var _ functionWrapper = (*dateErrorNull)(nil)

// Type implements sql.Expression: the function's.
func (d *dateErrorNull) Type() gsql.Type { return d.Child.Type() }

// IsNullable implements sql.Expression.
func (d *dateErrorNull) IsNullable() bool { return true }

// String implements sql.Expression: the function's own text.
func (d *dateErrorNull) String() string { return d.Child.String() }

func (d *dateErrorNull) wrapped() gsql.Expression { return d.Child }

// CollationCoercibility implements sql.CollationCoercible: the
// function's.
func (d *dateErrorNull) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, d.Child)
}

// Eval implements sql.Expression.
func (d *dateErrorNull) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if err == nil {
		return v, nil
	}
	if v, ok, err := zeroDateResult(ctx, d.zero, err, d.Child, row); ok || err != nil {
		return v, err
	}
	ws := ctx.Session.Warnings() // the newest first
	switch {
	case types.ErrConvertingToTime.Is(err):
		ctx.Warn(codeTruncatedWrongValue, "%s", err.Error())
	case gsql.ErrInvalidArgumentDetails.Is(err) && len(ws) > 0 && ws[0].Code == codeTruncatedWrongValue:
		// WEEK and YEARWEEK warn of the date and then fail on the
		// NULL they read.
	default:
		return nil, err
	}
	return nil, nil
}

// dayName is DAYNAME of its argument's value: GMS's warned
// "Incorrect datetime value: '<nil>'" for a string that is no date.
func dayName(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	t, err := types.DatetimeMaxPrecision.ConvertWithoutRangeCheck(ctx, vals[0])
	if err != nil {
		ctx.Warn(codeTruncatedWrongValue, "%s", types.ErrConvertingToTime.New(vals[0]).Error())
		return nil, nil
	}
	return t.Weekday().String(), nil
}

// WithChildren implements sql.Expression.
func (d *dateErrorNull) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &dateErrorNull{UnaryExpression: expression.UnaryExpression{Child: children[0]}, zero: d.zero}, nil
}
