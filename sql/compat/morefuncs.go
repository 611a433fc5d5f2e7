package compat

import (
	"context"
	"math"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// Functions MySQL 8 has that GMS lacks (1305) or answers otherwise
// (found by tests/difftest's TestFuncProbe):
//
//   - TIME_TO_SEC(t) and HOUR, MINUTE, SECOND and MICROSECOND of a
//     string read the string as a TIME ('01:01:01' is 3661 seconds,
//     HOUR('100:00:00') is 100); GMS read it as a DATETIME and failed
//     (TIME_TO_SEC, 1105) or answered NULL with a warning.
//   - TIMESTAMP(date, time) is the DATETIME of date plus time; GMS took
//     one argument only (1105).
//   - REPEAT(s, n) of n below 1 is ”; GMS failed (1105).
//   - POW, POWER and EXP of a result beyond DOUBLE's range fail with
//     MySQL's 1690, as do +, - and * of DOUBLEs (finiteDouble); GMS
//     answered NULL or +Inf.
//   - LN, LOG, LOG2 and LOG10 of a number that is not positive warn with
//     MySQL's text, 3020 "Invalid argument for logarithm" (GMS's was
//     "invalid argument value for logarithm: 0").
//   - UTC_TIMESTAMP([fsp]) is a DATETIME of fsp digits, 0 by default;
//     GMS's always had six.
//   - PERIOD_ADD, PERIOD_DIFF, TO_SECONDS, MAKE_SET and EXPORT_SET were
//     missing (1305).
var moreFunctions = map[string]gsql.Function{
	"time_to_sec": gsql.Function1{Name: "time_to_sec", Fn: func(t gsql.Expression) gsql.Expression {
		return newTemporalFunc("time_to_sec", timeToSec, fixedType(types.Int64), t)
	}},
	"hour":        timePart("hour", function.NewHour, func(h, _, _, _ int64) int64 { return h }),
	"minute":      timePart("minute", function.NewMinute, func(_, m, _, _ int64) int64 { return m }),
	"second":      timePart("second", function.NewSecond, func(_, _, s, _ int64) int64 { return s }),
	"microsecond": timePart("microsecond", function.NewMicrosecond, func(_, _, _, us int64) int64 { return us }),
	"timestamp": gsql.FunctionN{Name: "timestamp", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		if len(args) != 2 {
			return function.NewDatetime(args...)
		}
		return newTemporalFunc("timestamp", timestampAdd, timestampType, args...), nil
	}},
	"repeat": gsql.Function2{Name: "repeat", Fn: func(s, n gsql.Expression) gsql.Expression {
		return newTemporalFunc("repeat", repeatString, fixedType(types.LongText), s, n)
	}},
	"period_add": gsql.Function2{Name: "period_add", Fn: func(p, n gsql.Expression) gsql.Expression {
		return newTemporalFunc("period_add", periodAdd, fixedType(types.Int64), p, n)
	}},
	"period_diff": gsql.Function2{Name: "period_diff", Fn: func(a, b gsql.Expression) gsql.Expression {
		return newTemporalFunc("period_diff", periodDiff, fixedType(types.Int64), a, b)
	}},
	"to_seconds": gsql.Function1{Name: "to_seconds", Fn: func(d gsql.Expression) gsql.Expression {
		return newTemporalFunc("to_seconds", toSeconds, fixedType(types.Int64), d)
	}},
	"pow":   doubleFunction2("pow", math.Pow),
	"power": doubleFunction2("power", math.Pow),
	"exp": gsql.Function1{Name: "exp", Fn: func(x gsql.Expression) gsql.Expression {
		return newTemporalFunc("exp", func(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error) {
			x, ok := doubleOf(ctx, vals[0])
			if !ok {
				return nil, nil
			}
			return finiteDouble(&temporalFunc{name: "exp", args: args}, math.Exp(x), nil)
		}, fixedType(types.Float64), x)
	}},
	"ln":    logFunction("ln", math.Log),
	"log2":  logFunction("log2", math.Log2),
	"log10": logFunction("log10", math.Log10),
	"log": gsql.FunctionN{Name: "log", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		switch len(args) {
		case 1:
			return logFunction("log", math.Log).Fn(args[0]), nil
		case 2:
			return newTemporalFunc("log", logBase, fixedType(types.Float64), args...), nil
		}
		return nil, gsql.ErrInvalidArgumentNumber.New("LOG", "1 or 2", len(args))
	}},
	"utc_timestamp": gsql.FunctionN{Name: "utc_timestamp", Fn: newUTCTimestamp},
	"make_set":      gsql.FunctionN{Name: "make_set", Fn: newMakeSet},
	"export_set": gsql.FunctionN{Name: "export_set", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		if len(args) < 3 || len(args) > 5 {
			return nil, gsql.ErrInvalidArgumentNumber.New("EXPORT_SET", "3, 4 or 5", len(args))
		}
		return newTemporalFunc("export_set", exportSet, fixedType(types.LongText), args...), nil
	}},
}

// timeSpanOf reads v as MySQL's functions of a TIME read their argument:
// a TIME string or value as such, a DATETIME (or a string of one) by its
// time of day; ok false when it is neither, after warning 1292.
func timeSpanOf(ctx *gsql.Context, v any) (types.Timespan, bool) {
	if ts, err := types.Time.ConvertToTimespan(v); err == nil {
		return ts, true
	}
	if dt, _, err := types.DatetimeMaxPrecision.Convert(ctx, v); err == nil && dt != nil {
		t := dt.(time.Time)
		us := (int64(t.Hour())*3600+int64(t.Minute())*60+int64(t.Second()))*1_000_000 + int64(t.Nanosecond()/1000)
		return types.Time.MicrosecondsToTimespan(us), true
	}
	if p, ok := fuzzyDateOfValue(v); ok && p.hasTime {
		// '0000-00-00 10:11:12': the time of day of an incomplete date
		// (fuzzydates.go).
		us := (int64(p.hour)*3600+int64(p.minute)*60+int64(p.second))*1_000_000 + int64(p.micros)
		return types.Time.MicrosecondsToTimespan(us), true
	}
	ctx.Warn(codeTruncatedWrongValue, "Truncated incorrect time value: '%v'", v)
	return 0, false
}

// timeFields returns ts's sign and fields: hours (beyond 24), minutes,
// seconds, microseconds.
func timeFields(ts types.Timespan) (neg bool, h, m, s, us int64) {
	micros := ts.AsMicroseconds()
	if micros < 0 {
		neg, micros = true, -micros
	}
	return neg, micros / 3_600_000_000, micros / 60_000_000 % 60, micros / 1_000_000 % 60, micros % 1_000_000
}

// timeToSec is TIME_TO_SEC(t): t's seconds, negative for a negative
// TIME; its fraction is dropped.
func timeToSec(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	ts, ok := timeSpanOf(ctx, vals[0])
	if !ok {
		return nil, nil
	}
	neg, h, m, s, _ := timeFields(ts)
	secs := h*3600 + m*60 + s
	if neg {
		secs = -secs
	}
	return secs, nil
}

// timePart returns HOUR, MINUTE, SECOND or MICROSECOND: of a string, the
// field pick takes of the string read as a TIME; of anything else GMS's.
func timePart(name string, gms func(gsql.Expression) gsql.Expression, pick func(h, m, s, us int64) int64) gsql.Function {
	return gsql.Function1{Name: name, Fn: func(e gsql.Expression) gsql.Expression {
		if !types.IsText(e.Type()) {
			return gms(e)
		}
		return newTemporalFunc(name, func(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
			ts, ok := timeSpanOf(ctx, vals[0])
			if !ok {
				return nil, nil
			}
			_, h, m, s, us := timeFields(ts)
			return pick(h, m, s, us), nil
		}, fixedType(types.Int32), e)
	}}
}

// timestampType is TIMESTAMP(date, time)'s type: a DATETIME with the
// fractional digits of the more precise argument (a string constant's
// as written).
func timestampType(args []gsql.Expression) gsql.Type {
	digits := 0
	for _, a := range args {
		digits = max(digits, argDigits(a))
	}
	return types.MustCreateDatetimeType(sqltypes.Datetime, digits)
}

// timestampAdd is TIMESTAMP(date, time): the DATETIME of date plus time.
func timestampAdd(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error) {
	dt, _, err := types.DatetimeMaxPrecision.Convert(ctx, vals[0])
	if err != nil || dt == nil {
		ctx.Warn(codeTruncatedWrongValue, "Incorrect datetime value: '%v'", vals[0])
		return nil, nil
	}
	ts, ok := timeSpanOf(ctx, vals[1])
	if !ok {
		return nil, nil
	}
	r := dt.(time.Time).Add(time.Duration(ts.AsMicroseconds()) * time.Microsecond)
	if r.Year() < 1 || r.Year() > 9999 {
		return nil, nil
	}
	v, _, err := timestampType(args).Convert(ctx, r)
	return v, err
}

// maxRepeatBytes is the longest string REPEAT makes: MySQL's default
// max_allowed_packet (64 MiB); a longer one is NULL with a warning.
const maxRepeatBytes = 64 << 20

// repeatString is REPEAT(s, n): s n times, ” for n below 1.
func repeatString(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	s, err := types.ConvertToString(ctx, vals[0], types.LongText, nil)
	if err != nil {
		return nil, err
	}
	n, ok := repeatCount(ctx, vals[1])
	if !ok || n.LessThan(decimal.NewFromInt(1)) || s == "" {
		return "", nil
	}
	if n.GreaterThan(decimal.NewFromInt(int64(maxRepeatBytes / len(s)))) {
		ctx.Warn(1301, "Result of repeat() was larger than max_allowed_packet (%d) - truncated", maxRepeatBytes)
		return nil, nil
	}
	return strings.Repeat(s, int(n.IntPart())), nil
}

// repeatCount is REPEAT's count v as MySQL reads it (val_int): a DOUBLE
// rounded half to even (rint), a DECIMAL half away from zero, a string's
// leading integer; GMS's reading truncated them all (REPEAT('a', x) of a
// DOUBLE 1.5 repeated once, MySQL twice).
func repeatCount(ctx *gsql.Context, v any) (decimal.Decimal, bool) {
	switch x := v.(type) {
	case float64:
		return decimal.NewFromFloat(math.RoundToEven(x)), true
	case float32:
		return decimal.NewFromFloat(math.RoundToEven(float64(x))), true
	case decimal.Decimal:
		return x.Round(0), true
	}
	n, ok := decimalOf(ctx, v)
	return n.Truncate(0), ok
}

// periodMonths returns period p (YYMM or YYYYMM; YY below 70 is 20YY) as
// a count of months.
func periodMonths(p int64) int64 {
	if p == 0 {
		return 0
	}
	y := p / 100
	if y < 70 {
		y += 2000
	} else if y < 100 {
		y += 1900
	}
	return y*12 + p%100 - 1
}

// periodOf returns v as a period (an integer), ok false for NULL.
func periodOf(ctx *gsql.Context, v any) (int64, bool) {
	d, ok := decimalOf(ctx, v)
	if !ok {
		return 0, false
	}
	return d.Round(0).IntPart(), true
}

// periodAdd is PERIOD_ADD(p, n): period p plus n months, as YYYYMM.
func periodAdd(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	p, ok1 := periodOf(ctx, vals[0])
	n, ok2 := periodOf(ctx, vals[1])
	if !ok1 || !ok2 {
		return nil, nil
	}
	if p == 0 {
		return int64(0), nil
	}
	m := periodMonths(p) + n
	return m/12*100 + m%12 + 1, nil
}

// periodDiff is PERIOD_DIFF(a, b): the months from period b to a.
func periodDiff(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	a, ok1 := periodOf(ctx, vals[0])
	b, ok2 := periodOf(ctx, vals[1])
	if !ok1 || !ok2 {
		return nil, nil
	}
	return periodMonths(a) - periodMonths(b), nil
}

// dayNumber is MySQL's day number of a date (TO_DAYS): days since the
// year 0 of its calendar, in which 0000-01-01 is day 1.
func dayNumber(y, m, d int64) int64 {
	n := 365*y + 31*(m-1) + d
	if m <= 2 {
		y--
	} else {
		n -= (m*4 + 23) / 10
	}
	return n + y/4 - ((y/100+1)*3)/4
}

// toSeconds is TO_SECONDS(d): the seconds since the start of the year 0.
func toSeconds(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	dt, _, err := types.DatetimeMaxPrecision.Convert(ctx, vals[0])
	if err != nil || dt == nil {
		ctx.Warn(codeTruncatedWrongValue, "Incorrect datetime value: '%v'", vals[0])
		return nil, nil
	}
	t := dt.(time.Time)
	days := dayNumber(int64(t.Year()), int64(t.Month()), int64(t.Day()))
	return days*86400 + int64(t.Hour()*3600+t.Minute()*60+t.Second()), nil
}

// bitsOf returns v as MySQL's 64 bits of a SET's or bit function's
// argument.
func bitsOf(ctx *gsql.Context, v any) (uint64, bool) {
	switch x := v.(type) {
	case int64:
		return uint64(x), true
	case uint64:
		return x, true
	case float64, float32:
		// A DOUBLE rounds half away from zero, within BIGINT's range.
		f := math.Round(toFloat(x))
		switch {
		case f <= math.MinInt64:
			return 1 << 63, true
		case f >= math.MaxInt64:
			return math.MaxInt64, true
		}
		return uint64(int64(f)), true
	}
	d, ok := decimalOf(ctx, v)
	if !ok {
		return 0, false
	}
	d = d.Round(0)
	if d.Sign() < 0 {
		return uint64(d.IntPart()), true
	}
	if d.GreaterThan(maxUint64Decimal) {
		return ^uint64(0), true
	}
	return d.BigInt().Uint64(), true
}

// newMakeSet returns MAKE_SET(bits, str1, str2, ...): the strings whose
// bit is set in bits (str1 bit 0), NULLs left out, joined by commas;
// NULL when bits is NULL.
func newMakeSet(args ...gsql.Expression) (gsql.Expression, error) {
	if len(args) < 2 {
		return nil, gsql.ErrInvalidArgumentNumber.New("MAKE_SET", "2 or more", len(args))
	}
	return &makeSet{temporalFunc: newTemporalFunc("make_set", nil, fixedType(types.LongText), args...)}, nil
}

// makeSet is MAKE_SET: unlike temporalFunc's functions, a NULL string
// argument does not make it NULL.
type makeSet struct {
	*temporalFunc
}

// Eval implements sql.Expression.
func (f *makeSet) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := f.args[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	bits, ok := bitsOf(ctx, v)
	if !ok {
		return nil, nil
	}
	var parts []string
	for i, a := range f.args[1:] {
		if i >= 64 || bits&(1<<uint(i)) == 0 {
			continue
		}
		s, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if s == nil {
			continue
		}
		str, err := types.ConvertToString(ctx, s, types.LongText, nil)
		if err != nil {
			return nil, err
		}
		parts = append(parts, str)
	}
	return strings.Join(parts, ","), nil
}

// WithChildren implements sql.Expression.
func (f *makeSet) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	t, err := f.temporalFunc.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &makeSet{temporalFunc: t.(*temporalFunc)}, nil
}

// exportSet is EXPORT_SET(bits, on, off[, separator[, n]]): for each of
// the n lowest bits of bits (64 at most, and by default), on when it is
// set and off when not, lowest first, joined by separator (',').
func exportSet(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	bits, ok := bitsOf(ctx, vals[0])
	if !ok {
		return nil, nil
	}
	strs := make([]string, 3)
	strs[2] = ","
	for i := 1; i < len(vals) && i < 4; i++ {
		s, err := types.ConvertToString(ctx, vals[i], types.LongText, nil)
		if err != nil {
			return nil, err
		}
		strs[i-1] = s
	}
	n := int64(64)
	if len(vals) == 5 {
		if d, ok := decimalOf(ctx, vals[4]); ok && d.Sign() >= 0 && d.LessThan(decimal.NewFromInt(64)) {
			n = d.IntPart()
		}
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strs[1]
		if bits&(1<<uint(i)) != 0 {
			parts[i] = strs[0]
		}
	}
	return strings.Join(parts, strs[2]), nil
}

// maxUint64Decimal is 18446744073709551615, the largest 64 bits.
var maxUint64Decimal = decimal.RequireFromString("18446744073709551615")

// toFloat returns x, a float32 or float64, as a float64.
func toFloat(x any) float64 {
	if f, ok := x.(float32); ok {
		return float64(f)
	}
	return x.(float64)
}

// finiteDouble returns v, err, unless v is a DOUBLE beyond the type's
// range (an infinity or not a number), which MySQL never yields: its
// error 1690 for e then.
func finiteDouble(e gsql.Expression, v any, err error) (any, error) {
	if f, ok := v.(float64); ok && err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return nil, outOfRange("DOUBLE", e)
	}
	return v, err
}

// doubleOf returns v as a DOUBLE; ok false when it is not a number.
func doubleOf(ctx *gsql.Context, v any) (float64, bool) {
	f, _, err := types.Float64.Convert(ctx, v)
	if err != nil || f == nil {
		return 0, false
	}
	return f.(float64), true
}

// doubleFunction2 is a function of two DOUBLEs computed by fn, failing
// with 1690 beyond DOUBLE's range.
func doubleFunction2(name string, fn func(x, y float64) float64) gsql.Function {
	return gsql.Function2{Name: name, Fn: func(a, b gsql.Expression) gsql.Expression {
		return newTemporalFunc(name, func(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error) {
			x, ok1 := doubleOf(ctx, vals[0])
			y, ok2 := doubleOf(ctx, vals[1])
			if !ok1 || !ok2 {
				return nil, nil
			}
			return finiteDouble(&temporalFunc{name: name, args: args}, fn(x, y), nil)
		}, fixedType(types.Float64), a, b)
	}}
}

// codeInvalidLogArgument is MySQL's ER_INVALID_ARGUMENT_FOR_LOGARITHM.
const codeInvalidLogArgument = 3020

// logFunction is LN, LOG(x), LOG2 or LOG10 by fn: NULL with MySQL's
// warning for a number that is not positive.
func logFunction(name string, fn func(float64) float64) gsql.Function1 {
	return gsql.Function1{Name: name, Fn: func(x gsql.Expression) gsql.Expression {
		return newTemporalFunc(name, func(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
			x, ok := doubleOf(ctx, vals[0])
			if !ok {
				return nil, nil
			}
			if x <= 0 {
				ctx.Warn(codeInvalidLogArgument, "Invalid argument for logarithm")
				return nil, nil
			}
			return fn(x), nil
		}, fixedType(types.Float64), x)
	}}
}

// logBase is LOG(b, x): the logarithm of x to base b, NULL with MySQL's
// warning when either is not positive or b is 1.
func logBase(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	b, ok1 := doubleOf(ctx, vals[0])
	x, ok2 := doubleOf(ctx, vals[1])
	if !ok1 || !ok2 {
		return nil, nil
	}
	if b <= 0 || x <= 0 || b == 1 {
		ctx.Warn(codeInvalidLogArgument, "Invalid argument for logarithm")
		return nil, nil
	}
	return math.Log(x) / math.Log(b), nil
}

// newUTCTimestamp returns UTC_TIMESTAMP([fsp]): the statement's start in
// UTC, a DATETIME of fsp fractional digits (0 without one).
func newUTCTimestamp(args ...gsql.Expression) (gsql.Expression, error) {
	if _, err := function.NewUTCTimestamp(args...); err != nil {
		return nil, err // GMS checks the argument
	}
	fsp := 0
	if len(args) == 1 {
		v, err := args[0].Eval(gsql.NewEmptyContext(), nil)
		if err != nil {
			return nil, err
		}
		n, _, err := types.Int32.Convert(context.Background(), v)
		if err != nil {
			return nil, err
		}
		fsp = int(n.(int32))
	}
	typ := types.MustCreateDatetimeType(sqltypes.Datetime, fsp)
	return newTemporalFunc("utc_timestamp", func(ctx *gsql.Context, _ []any, _ []gsql.Expression) (any, error) {
		unit := time.Duration(math.Pow10(9 - fsp))
		return ctx.QueryTime().UTC().Truncate(unit), nil
	}, fixedType(typ)), nil
}
