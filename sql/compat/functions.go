package compat

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// MySQL's date and time functions that GMS v0.20.0 lacks (SEC_TO_TIME,
// MAKETIME, ADDTIME, SUBTIME, MAKEDATE: 1105 "function not found") or
// types differently from MySQL (CURDATE and CURRENT_DATE are strings in
// GMS, so drivers got a VARCHAR where MySQL sends a DATE). The provider
// hands them to GMS's catalog before its own functions
// (DatabaseProvider.Function), so percdb's take their names' place.

// temporalFunctions are percdb's functions by lower-case name. It is not
// changed after the package is initialized.
var temporalFunctions = map[string]gsql.Function{
	"curdate":      gsql.NewFunction0("curdate", func() gsql.Expression { return newCurDate("curdate") }),
	"current_date": gsql.NewFunction0("current_date", func() gsql.Expression { return newCurDate("current_date") }),
	"sec_to_time": gsql.Function1{Name: "sec_to_time", Fn: func(e gsql.Expression) gsql.Expression {
		return newTemporalFunc("sec_to_time", secToTime, secToTimeType, e)
	}},
	"maketime": gsql.Function3{Name: "maketime", Fn: func(h, m, s gsql.Expression) gsql.Expression {
		return newTemporalFunc("maketime", makeTime, fixedType(types.Time), h, m, s)
	}},
	"makedate": gsql.Function2{Name: "makedate", Fn: func(y, d gsql.Expression) gsql.Expression {
		return newTemporalFunc("makedate", makeDate, fixedType(types.Date), y, d)
	}},
	"addtime": gsql.Function2{Name: "addtime", Fn: func(a, b gsql.Expression) gsql.Expression {
		return newTemporalFunc("addtime", addTime(1), addTimeType, a, b)
	}},
	"subtime": gsql.Function2{Name: "subtime", Fn: func(a, b gsql.Expression) gsql.Expression {
		return newTemporalFunc("subtime", addTime(-1), addTimeType, a, b)
	}},
	// GMS's WEEK and YEARWEEK fail on a NULL date ("Invalid argument
	// to WEEK: invalid year") where MySQL answers NULL: GMS's, with NULL
	// for a NULL argument (STR_TO_DATE is percdb's own). WEEK's
	// and YEARWEEK's mode is read as an integer, a NULL one as 0
	// (Item_func_week::val_int), not a NULL answer.
	"str_to_date": strToDateFunction, // strtodate.go
	"dayname": gsql.Function1{Name: "dayname", Fn: func(e gsql.Expression) gsql.Expression {
		return newTemporalFunc("dayname", dayName, fixedType(types.Text), e) // numberdates.go
	}},
	"week": gsql.FunctionN{Name: "week", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return weekFunction("week", function.NewWeek, args)
	}},
	"yearweek": gsql.FunctionN{Name: "yearweek", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return weekFunction("yearweek", function.NewYearWeek, args)
	}},
}

// weekFunction returns WEEK or YEARWEEK (build, GMS's) of args as
// nullSafe, a NULL mode read as 0.
func weekFunction(name string, build func(...gsql.Expression) (gsql.Expression, error), args []gsql.Expression) (gsql.Expression, error) {
	if _, err := build(args...); err != nil {
		return nil, err // the number of arguments
	}
	if len(args) == 2 {
		mode, err := function.NewCoalesce(args[1], expression.NewLiteral(int64(0), types.Int64))
		if err != nil {
			return nil, err
		}
		args = []gsql.Expression{args[0], mode}
	}
	return nullSafe(name, build, args...), nil
}

// nullSafe is GMS's function build of args, NULL when an argument is
// NULL: it is evaluated over the arguments' values.
func nullSafe(name string, build func(...gsql.Expression) (gsql.Expression, error), args ...gsql.Expression) gsql.Expression {
	typ := func(args []gsql.Expression) gsql.Type {
		e, err := build(args...)
		if err != nil {
			return types.Null
		}
		return e.Type()
	}
	return newTemporalFunc(name, func(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error) {
		lits := make([]gsql.Expression, len(vals))
		for i, v := range vals {
			lits[i] = expression.NewLiteral(v, args[i].Type())
		}
		e, err := build(lits...)
		if err != nil {
			return nil, err
		}
		return e.Eval(ctx, nil)
	}, typ, args...)
}

// Function returns percdb's function of name, which GMS's catalog looks
// up before its built-in ones (package sql's DatabaseProvider.Function).
func Function(name string) (gsql.Function, bool) {
	name = strings.ToLower(name)
	for _, fns := range []map[string]gsql.Function{aggregateFunctions, windowFunctions, intervalFunctions, utcFunctions, currentTimeFunctions, temporalFunctions, timeFunctions, numericFunctions, peerRankedFunctions, comparisonFunctions, missingStringFunctions, quantifiedFunctions, moreFunctions, bitNotFunctions, assignFunctions, intervalIndexFunctions, padFormatFunctions, selectedColumnFunctions, intValFunctions, collationFunctions} {
		if f, ok := fns[name]; ok {
			return f, true
		}
	}
	return nil, false
}

// aggregateFunctions are percdb's aggregates by lower-case name
// (groupconcat.go). It is not changed after the package is initialized.
var aggregateFunctions = map[string]gsql.Function{"group_concat": groupConcatFunction}

// newCurDate returns CURDATE() (or CURRENT_DATE, by name): the date the
// statement started, typed DATE.
func newCurDate(name string) gsql.Expression {
	return newTemporalFunc(name, func(ctx *gsql.Context, _ []any, _ []gsql.Expression) (any, error) {
		t := ctx.QueryTime()
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
	}, fixedType(types.Date))
}

// temporalFunc is one of percdb's functions: NULL when an argument is
// NULL, else eval of the arguments' values.
type temporalFunc struct {
	name string
	args []gsql.Expression
	eval func(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error)
	typ  func(args []gsql.Expression) gsql.Type
	// nullOnlyOfNull: the function is NULL only when an argument is
	// (FLOOR, CEIL); others may be NULL for any argument.
	nullOnlyOfNull bool
}

var _ gsql.FunctionExpression = (*temporalFunc)(nil)

func newTemporalFunc(name string, eval func(*gsql.Context, []any, []gsql.Expression) (any, error), typ func([]gsql.Expression) gsql.Type, args ...gsql.Expression) *temporalFunc {
	return &temporalFunc{name: name, args: args, eval: eval, typ: typ}
}

// fixedType is the type of a function whose type its arguments do not
// change.
func fixedType(t gsql.Type) func([]gsql.Expression) gsql.Type {
	return func([]gsql.Expression) gsql.Type { return t }
}

// FunctionName implements sql.FunctionExpression.
func (f *temporalFunc) FunctionName() string { return f.name }

// Description implements sql.FunctionExpression.
func (f *temporalFunc) Description() string { return "MySQL's " + strings.ToUpper(f.name) }

// Resolved implements sql.Expression.
func (f *temporalFunc) Resolved() bool {
	for _, a := range f.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

// String implements sql.Expression.
func (f *temporalFunc) String() string {
	parts := make([]string, len(f.args))
	for i, a := range f.args {
		parts[i] = a.String()
	}
	return fmt.Sprintf("%s(%s)", strings.ToUpper(f.name), strings.Join(parts, ", "))
}

// Type implements sql.Expression.
func (f *temporalFunc) Type() gsql.Type { return f.typ(f.args) }

// IsNullable implements sql.Expression.
func (f *temporalFunc) IsNullable() bool {
	if !f.nullOnlyOfNull {
		return true
	}
	for _, a := range f.args {
		if a.IsNullable() {
			return true
		}
	}
	return false
}

// Children implements sql.Expression.
func (f *temporalFunc) Children() []gsql.Expression { return f.args }

// WithChildren implements sql.Expression.
func (f *temporalFunc) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(f.args) {
		return nil, gsql.ErrInvalidChildrenNumber.New(f, len(children), len(f.args))
	}
	return &temporalFunc{name: f.name, args: children, eval: f.eval, typ: f.typ, nullOnlyOfNull: f.nullOnlyOfNull}, nil
}

// CollationCoercibility implements sql.CollationCoercible: a number's
// (a string ADDTIME's is the connection's).
func (f *temporalFunc) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	if types.IsText(f.Type()) {
		return ctx.GetCollation(), 4
	}
	return gsql.Collation_binary, 5
}

// Eval implements sql.Expression.
func (f *temporalFunc) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	vals := make([]any, len(f.args))
	for i, a := range f.args {
		v, err := a.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		vals[i] = v
	}
	return f.eval(ctx, vals, f.args)
}

// decimalOf returns v as an exact number; ok false for a value that is
// not one (NULL, as MySQL's functions answer after a warning).
func decimalOf(ctx *gsql.Context, v any) (decimal.Decimal, bool) {
	d, _, err := types.InternalDecimalType.Convert(ctx, v)
	if err != nil {
		return decimal.Zero, false
	}
	dd, ok := d.(decimal.Decimal)
	return dd, ok
}

var microsPerSecond = decimal.NewFromInt(1_000_000)

// secToTime is SEC_TO_TIME(seconds): the TIME of that many seconds
// (fractions to the microsecond), clamped to TIME's range as in MySQL.
func secToTime(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	s, ok := decimalOf(ctx, vals[0])
	if !ok {
		return nil, nil
	}
	return types.Time.MicrosecondsToTimespan(clampedMicros(s)), nil
}

// clampedMicros returns seconds s as microseconds, rounded, within an
// int64 (TIME clamps it further).
func clampedMicros(s decimal.Decimal) int64 {
	const limit = 1 << 53
	m := s.Mul(microsPerSecond).Round(0)
	switch {
	case m.GreaterThan(decimal.NewFromInt(limit)):
		return limit
	case m.LessThan(decimal.NewFromInt(-limit)):
		return -limit
	}
	return m.IntPart()
}

// makeTime is MAKETIME(hour, minute, second): NULL for a minute outside
// 0-59 or a second outside [0, 60), as in MySQL; the hour's sign is the
// time's.
func makeTime(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	h, ok1 := decimalOf(ctx, vals[0])
	m, ok2 := decimalOf(ctx, vals[1])
	s, ok3 := decimalOf(ctx, vals[2])
	if !ok1 || !ok2 || !ok3 {
		return nil, nil
	}
	h, m = h.Round(0), m.Round(0)
	if m.IsNegative() || m.GreaterThan(decimal.NewFromInt(59)) || s.IsNegative() || !s.LessThan(decimal.NewFromInt(60)) {
		return nil, nil
	}
	total := h.Abs().Mul(decimal.NewFromInt(3600)).Add(m.Mul(decimal.NewFromInt(60))).Add(s)
	if h.IsNegative() {
		total = total.Neg()
	}
	return types.Time.MicrosecondsToTimespan(clampedMicros(total)), nil
}

// makeDate is MAKEDATE(year, dayofyear): the day-of-year'th day of the
// year (a two-digit year read as MySQL reads it, 70-99 as 19xx and 0-69
// as 20xx); NULL for a day below 1, a year outside 0-9999 or a date past
// 9999.
func makeDate(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	y, ok1 := decimalOf(ctx, vals[0])
	d, ok2 := decimalOf(ctx, vals[1])
	if !ok1 || !ok2 {
		return nil, nil
	}
	year, day := y.Round(0).IntPart(), d.Round(0).IntPart()
	if day < 1 || year < 0 || year > 9999 || day > 4_000_000 {
		return nil, nil
	}
	switch {
	case year < 70:
		year += 2000
	case year < 100:
		year += 1900
	}
	t := time.Date(int(year), time.January, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(day-1))
	if t.Year() > 9999 {
		return nil, nil
	}
	return t, nil
}

// addTimeType is the type of ADDTIME(a, b) and SUBTIME(a, b): a DATETIME
// for a date or datetime a, a TIME for a TIME (or number) a, and a
// string for a string a, as in MySQL. The DATETIME has a's fractional
// digits, or 6 when b is a constant with a fraction.
func addTimeType(args []gsql.Expression) gsql.Type {
	t := args[0].Type()
	switch {
	case types.IsText(t):
		return types.LongText
	case types.IsTime(t):
		precision := 0
		if dt, ok := t.(gsql.DatetimeType); ok {
			precision = dt.Precision()
		}
		if lit, ok := args[1].(*expression.Literal); ok && strings.Contains(fmt.Sprint(lit.Value()), ".") {
			precision = 6
		}
		return types.MustCreateDatetimeType(sqltypes.Datetime, precision)
	}
	return types.Time
}

// daysPrefix matches a TIME written with days first ('1 1:1:1.000002'),
// which GMS does not read.
var daysPrefix = regexp.MustCompile(`^\s*(-?)(\d+) +(\d.*)$`)

// timeArg returns v as a TIME value, reading a string with days first
// as MySQL does.
func timeArg(v any) (types.Timespan, error) {
	if s, ok := v.(string); ok {
		if m := daysPrefix.FindStringSubmatch(s); m != nil {
			var days int64
			fmt.Sscan(m[2], &days)
			rest, err := types.Time.ConvertToTimespan(m[3])
			if err != nil {
				return 0, err
			}
			micros := days*24*3600*1_000_000 + rest.AsMicroseconds()
			if m[1] == "-" {
				micros = -micros
			}
			return types.Time.MicrosecondsToTimespan(micros), nil
		}
	}
	return types.Time.ConvertToTimespan(v)
}

// datetimeString matches a string that ADDTIME reads as a DATETIME (a
// date first), not as a TIME.
var datetimeString = regexp.MustCompile(`^\s*\d{2,4}-\d{1,2}-\d{1,2}`)

// addTime returns ADDTIME (sign 1) or SUBTIME (sign -1): a plus (minus)
// the TIME b. NULL when either is not a value of its kind, or a date
// leaves DATETIME's range.
func addTime(sign int64) func(*gsql.Context, []any, []gsql.Expression) (any, error) {
	return func(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error) {
		b, err := timeArg(vals[1])
		if err != nil {
			return nil, nil
		}
		delta := time.Duration(sign*b.AsMicroseconds()) * time.Microsecond
		a := vals[0]
		s, isString := a.(string)
		if !isString && types.IsText(args[0].Type()) {
			if s, err = types.ConvertToString(ctx, a, types.LongText, nil); err != nil {
				return nil, nil
			}
			isString = true
		}
		asDatetime := !isString && types.IsTime(args[0].Type()) || isString && datetimeString.MatchString(s)
		if asDatetime {
			dt, _, err := types.DatetimeMaxPrecision.Convert(ctx, a)
			if err != nil || dt == nil {
				return nil, nil
			}
			r := dt.(time.Time).Add(delta)
			if r.Year() < 1 || r.Year() > 9999 {
				return nil, nil
			}
			if isString {
				return formatDatetime(r), nil
			}
			return r, nil
		}
		t, err := timeArg(a)
		if err != nil {
			return nil, nil
		}
		r := types.Time.MicrosecondsToTimespan(t.AsMicroseconds() + sign*b.AsMicroseconds())
		if isString {
			return r.String(), nil
		}
		return r, nil
	}
}

// formatDatetime writes a DATETIME as MySQL does, with its microseconds
// when it has any.
func formatDatetime(t time.Time) string {
	if t.Nanosecond() != 0 {
		return t.Format("2006-01-02 15:04:05.000000")
	}
	return t.Format("2006-01-02 15:04:05")
}

// MySQL types DATE_ADD, DATE_SUB and date ± INTERVAL as a DATE when a
// DATE moves by whole days or more, and otherwise as a DATETIME with the
// fractional digits of its argument (6 for an interval of microseconds).
// GMS types every DATETIME result DATETIME(6), so DATE_ADD(dt, INTERVAL 1
// DAY) was sent as '2020-02-01 10:00:00.000000', and leaves d + INTERVAL
// 1 DAY the Arithmetic it parsed, typed DATETIME: '2020-02-01 00:00:00'
// where MySQL sends '2020-02-01'. dateArithmetic (from the
// row-comparison rule) writes date ± INTERVAL as GMS's DATE_ADD or
// DATE_SUB, which GMS types by the interval's unit, and gives a DATETIME
// result MySQL's digits in a temporalResult.
func dateArithmetic(e gsql.Expression) (gsql.Expression, bool) {
	if a, ok := e.(*expression.Arithmetic); ok && (a.Op == "+" || a.Op == "-") {
		date, iv := a.LeftChild, a.RightChild
		if l, ok := date.(*expression.Interval); ok && a.Op == "+" {
			date, iv = iv, l
		}
		if _, ok := iv.(*expression.Interval); !ok {
			return e, false
		}
		var f gsql.Expression
		var err error
		if a.Op == "+" {
			f, err = function.NewDateAdd(date, iv)
		} else {
			f, err = function.NewDateSub(date, iv)
		}
		if err != nil {
			return e, false
		}
		e = f
		// Typed as DATE_ADD is: the larger of the date's and the
		// interval's digits (fspresults.go; dt + INTERVAL 1.5 SECOND
		// was written with six).
		if ret, ok := dateAddDigits(f); ok {
			return ret, true
		}
		if ret, ok := dateArithmetic(f); ok {
			return ret, true
		}
		return e, true
	}
	var date gsql.Expression
	var iv *expression.Interval
	switch f := e.(type) {
	case *function.DateAdd:
		date, iv = f.Date, f.Interval
	case *function.DateSub:
		date, iv = f.Date, f.Interval
	default:
		return e, false
	}
	if e.Type() != types.DatetimeMaxPrecision {
		return e, false
	}
	digits := 0
	switch t := date.Type(); {
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		if dt, ok := t.(gsql.DatetimeType); ok {
			digits = dt.Precision()
		}
	case t == types.Date:
	default:
		return e, false
	}
	if strings.Contains(strings.ToUpper(iv.Unit), "MICROSECOND") {
		digits = 6
	}
	if digits == 6 {
		return e, false
	}
	return &temporalResult{UnaryExpression: expression.UnaryExpression{Child: e}, typ: types.MustCreateDatetimeType(sqltypes.Datetime, digits)}, true
}

// temporalResult is a DATE_ADD or DATE_SUB of GMS's under MySQL's type.
// Its one child is the function itself, so that GMS's check that an
// INTERVAL appears only under DATE_ADD, DATE_SUB, + and - still finds
// it there; exprOnce visits only the function's arguments, so that the
// rule does not wrap it again.
type temporalResult struct {
	expression.UnaryExpression
	typ gsql.Type
}

var _ gsql.Expression = (*temporalResult)(nil)

// Type implements sql.Expression.
func (t *temporalResult) Type() gsql.Type { return t.typ }

// String implements sql.Expression: the function's own text.
func (t *temporalResult) String() string { return t.Child.String() }

func (t *temporalResult) wrapped() gsql.Expression { return t.Child }

// Eval implements sql.Expression.
func (t *temporalResult) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	return t.Child.Eval(ctx, row)
}

// WithChildren implements sql.Expression.
func (t *temporalResult) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &temporalResult{UnaryExpression: expression.UnaryExpression{Child: children[0]}, typ: t.typ}, nil
}
