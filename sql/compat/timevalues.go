package compat

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"

	"github.com/percdb/percdb/sql/tablemeta"
)

// TIME values where GMS's functions do not expect them. GMS keeps a TIME
// as a types.Timespan (microseconds), which its numeric and string
// conversions do not know: a TIME in arithmetic or an aggregate was 0
// (t + 0, SUM(t), CAST(t AS SIGNED)), in a string function an error
// ("incompatible conversion to SQL type: '01:02:03'->longtext": CONCAT,
// UPPER, LENGTH) and CAST(t AS CHAR) NULL. MySQL reads a TIME as the
// number HHMMSS[.fraction] in a numeric context and as its text
// 'HH:MM:SS[.fraction]' in a string one. The TimeValues rule gives such
// operands that value (timeNumber, timeText).
//
// GMS also adds an INTERVAL to a TIME as to a DATETIME of today
// (t - INTERVAL 2 HOUR was '2026-11-25 23:02:03') or wraps DATE_SUB's
// result into a day (23:02:03); MySQL's is the TIME -00:57:57
// (timeInterval). CAST('2020-01-01 03:25:45' AS TIME), the text of a
// DATETIME, a 'D HH:MM:SS' and a number YYYYMMDDHHMMSS were NULL; MySQL
// takes the time of day, or D days more (timeCastValue), and go-sql-
// driver sends a time.Time parameter as such a DATETIME. GREATEST and
// LEAST of a TIME failed ("unsupported type for greatest/least
// argument"); MySQL compares them as TIMEs (timeExtremum). COUNT(DISTINCT
// t) failed as a string function did (GMS hashes each value's text); it
// counts the TIMEs' texts.

// isTimeType reports whether t is a TIME: GMS's, of six digits, or
// percdb's TIME(n).
func isTimeType(t gsql.Type) bool {
	return t != nil && t.Type() == sqltypes.Time
}

// timeDigits returns the fractional digits of the TIME type t.
func timeDigits(t gsql.Type) int {
	if n, ok := TimePrecision(t); ok {
		return n
	}
	return 6
}

// timeType returns the TIME type of n digits.
func timeType(n int) gsql.Type {
	t, err := tablemeta.NewTimeType(n)
	if err != nil {
		return types.Time
	}
	return t
}

// TimeValues is the analyzer rule; see the comment above.
func TimeValues(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		return nodeExprsOnce(n, timeValuesExpr)
	})
}

// functionWrapper is an expression that wraps a function of GMS's under
// another type or evaluation (temporalResult, timeInterval, timeCast),
// keeping it as its one child so that GMS's checks on the function (an
// INTERVAL only under DATE_ADD, DATE_SUB, + and -) still find it. A
// rule that runs again on a plan it changed visits only the function's
// arguments (exprOnce), or it would wrap the function again.
type functionWrapper interface {
	gsql.Expression
	wrapped() gsql.Expression
}

// timeValuesExpr rewrites e when one of its operands is a TIME it does
// not read as MySQL does.
func timeValuesExpr(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	switch e := e.(type) {
	case *expression.Convert:
		child := e.Child
		switch t := e.Type(); {
		case isTimeType(t):
			if _, done := child.(*castArgument); !done && !isTimeType(child.Type()) {
				child = &castArgument{UnaryExpression: expression.UnaryExpression{Child: child}, read: timeCastValue}
			}
			ret, err := e.WithChildren(child)
			if err != nil {
				return nil, transform.SameTree, err
			}
			// CAST(x AS TIME(n)) has n digits (GMS's six, written
			// only when the fraction is not 0).
			typ, err := tablemeta.NewExprTimeType(timeCastDigits(e))
			if err != nil {
				return nil, transform.SameTree, err
			}
			return &timeCast{UnaryExpression: expression.UnaryExpression{Child: ret}, typ: typ}, transform.NewTree, nil
		case (types.IsDatetimeType(t) || types.IsDateType(t)) && (types.IsText(child.Type()) || isPlainNumber(child.Type())):
			// A number's date, MySQL's warning (numberdates.go).
			if _, done := child.(*castArgument); done {
				return e, transform.SameTree, nil
			}
			ret, err := e.WithChildren(&castArgument{UnaryExpression: expression.UnaryExpression{Child: child}, read: dateCastValue})
			if err != nil {
				return nil, transform.SameTree, err
			}
			return roundedDatetime(ret), transform.NewTree, nil
		case types.IsDatetimeType(t) && !types.IsDateType(t) && (types.IsTime(child.Type()) || isTimeType(child.Type())):
			if r := roundedDatetime(e); r != e {
				return r, transform.NewTree, nil
			}
			return e, transform.SameTree, nil
		case types.IsText(t) && (types.IsDatetimeType(child.Type()) || types.IsTimestampType(child.Type())):
			// CAST(dt AS CHAR) of a DATETIME(n) writes n digits
			// (datetext.go's argText).
			return withChildren(e, &argText{UnaryExpression: expression.UnaryExpression{Child: child}})
		case types.IsNumber(t) && isDateOrDatetime(child.Type()):
			if _, done := child.(*datetimeNumber); done {
				return e, transform.SameTree, nil
			}
			return withChildren(e, newDatetimeNumber(child)) // datetimenumber.go
		case !isTimeType(child.Type()):
			return e, transform.SameTree, nil
		case types.IsText(t):
			return withChildren(e, newTimeString(child))
		case types.IsNumber(t):
			return withChildren(e, newTimeNumber(child))
		}
		return e, transform.SameTree, nil
	case *expression.Arithmetic:
		if ret, ok := timePlusInterval(e, e.LeftChild, e.RightChild, e.Op); ok {
			return ret, transform.NewTree, nil
		}
		_, li := e.LeftChild.(*expression.Interval)
		_, ri := e.RightChild.(*expression.Interval)
		if li || ri {
			return timeOperands(e)
		}
		return numberOperandsTree(e)
	case *function.Now:
		if ret, ok := nowDigits(e); ok { // currenttime.go
			return ret, transform.NewTree, nil
		}
	case *function.DateAdd:
		if ret, ok := timePlusInterval(e, e.Date, e.Interval, "+"); ok {
			return ret, transform.NewTree, nil
		}
	case *function.DateSub:
		if ret, ok := timePlusInterval(e, e.Date, e.Interval, "-"); ok {
			return ret, transform.NewTree, nil
		}
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
		// A TIME compared with a string compares as TIMEs: GMS
		// compared the TIME 00:00:00.100000 with '00:00:00.1' as
		// strings, unequal.
		c := e.Children()
		l, r := c[0], c[1]
		changed := true
		switch {
		case isTimeType(l.Type()) && types.IsText(r.Type()):
			r = asTime(r)
		case isTimeType(r.Type()) && types.IsText(l.Type()):
			l = asTime(l)
		default:
			changed = false
		}
		var retyped bool
		l, r, retyped = sameTimeType(e, l, r)
		if changed || retyped {
			return withChildren(e, l, r)
		}
	case *expression.Div, *expression.IntDiv, *expression.Mod, *expression.UnaryMinus,
		*aggregation.Sum, *aggregation.Avg, *function.AbsVal, *expression.BitOp:
		return numberOperandsTree(e)
	case *aggregation.CountDistinct:
		// GMS tells distinct values apart by their text (a LONGTEXT
		// conversion, which fails on a TIME): the TIME's own text
		// keeps equal TIMEs equal and different ones apart.
		if e.Window() != nil {
			break
		}
		ret, same, err := timeTextOperands(e)
		if err != nil || same == transform.SameTree {
			return ret, same, err
		}
		// GMS's WithChildren forgets the column ID, by which the plan
		// above finds the count.
		return ret.(*aggregation.CountDistinct).WithId(e.Id()).(gsql.Expression), transform.NewTree, nil
	case gsql.FunctionExpression:
		if stringFunctions[strings.ToLower(e.FunctionName())] {
			return timeTextOperands(e)
		}
		if e.FunctionName() == bitNotName || numberFunctions[strings.ToLower(e.FunctionName())] {
			return numberOperandsTree(e)
		}
	}
	if f, ok := e.(gsql.FunctionExpression); ok && dateArgumentPositions[strings.ToLower(f.FunctionName())] != nil {
		// numberdates.go
		ret, changed := numberDateArguments(f)
		if dateArithmeticNames[strings.ToLower(f.FunctionName())] {
			// Typed by the row-comparison rule (functions.go's
			// dateArithmetic), which has to find the function.
			if changed {
				return ret, transform.NewTree, nil
			}
			return e, transform.SameTree, nil
		}
		name := strings.ToLower(f.FunctionName())
		guarded, zero := guardZeroDates(ret, name, dateArgumentPositions[name]) // zerodateargs.go
		return dateErrorsNull(guarded, zero), transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}

// sameTimeType returns the operands l and r of the comparison e, both
// TIMEs of different types (a TIME(0) column, a string read as TIME(6)),
// with one given the other's type where GMS would compare them as
// strings: GMS compares operands of different types as the type of a
// column among them, and as strings when none is one, and <=> always
// does so; GMS's TIME has no string conversion, so every TIME was <=>
// equal to every other (t <=> '01:00:00' was 1 for 100:00:00). A TIME
// type compares TIMEs exactly, whatever its digits.
func sameTimeType(e gsql.Expression, l, r gsql.Expression) (gsql.Expression, gsql.Expression, bool) {
	if !isTimeType(l.Type()) || !isTimeType(r.Type()) || types.TypesEqual(l.Type(), r.Type()) {
		return l, r, false
	}
	_, lField := l.(*expression.GetField)
	_, rField := r.(*expression.GetField)
	if _, nullSafe := e.(*expression.NullSafeEquals); !nullSafe && (lField || rField) {
		return l, r, false
	}
	if rField && !lField {
		return &timeCast{UnaryExpression: expression.UnaryExpression{Child: l}, typ: r.Type(), exact: true}, r, true
	}
	return l, &timeCast{UnaryExpression: expression.UnaryExpression{Child: r}, typ: l.Type(), exact: true}, true
}

// numberFunctions are the functions that read their first argument as a
// number (MySQL's numeric_context_result_type of a temporal value: its
// digits, datetimenumber.go). MariaDB answers FLOOR, CEIL and ROUND of a
// DATETIME with a DATETIME (docs/compatibility.md); GMS failed (1105 "is
// not a valid Decimal").
var numberFunctions = map[string]bool{
	"floor": true, "ceil": true, "ceiling": true, "round": true, "truncate": true, "sign": true,
}

// stringFunctions are the functions that read their arguments as strings.
var stringFunctions = map[string]bool{
	"concat": true, "concat_ws": true, "upper": true, "ucase": true, "lower": true, "lcase": true,
	"length": true, "octet_length": true, "char_length": true, "character_length": true, "bit_length": true,
	"substring": true, "substr": true, "mid": true, "left": true, "right": true, "lpad": true, "rpad": true,
	"replace": true, "reverse": true, "trim": true, "ltrim": true, "rtrim": true, "instr": true,
	"locate": true, "position": true, "hex": true, "md5": true, "sha": true, "sha1": true, "sha2": true,
	"repeat": true, "insert": true, "ascii": true, "ord": true, "strcmp": true, "quote": true,
	"to_base64": true, "crc32": true, "soundex": true,
}

// asTime is CAST(e AS TIME(6)).
func asTime(e gsql.Expression) gsql.Expression {
	return expression.NewConvertWithLengthAndScale(e, expression.ConvertToTime, 6, 0)
}

// withChildren returns e with children, as a new tree.
func withChildren(e gsql.Expression, children ...gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	ret, err := e.WithChildren(children...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return ret, transform.NewTree, nil
}

// timeOperands gives e's TIME operands their number.
func timeOperands(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	return mapTimeChildren(e, newTimeNumber)
}

// timeTextOperands gives e's TIME operands their text.
func timeTextOperands(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	return mapTimeChildren(e, newTimeString)
}

// mapTimeChildren replaces each TIME child c of e by wrap(c).
func mapTimeChildren(e gsql.Expression, wrap func(gsql.Expression) gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	out := replacedChildren(e.Children(), func(_ int, c gsql.Expression) gsql.Expression {
		if !isTimeType(c.Type()) {
			return nil
		}
		return wrap(c)
	})
	if out == nil {
		return e, transform.SameTree, nil
	}
	return withChildren(e, out...)
}

// timeOf returns v, a value of a TIME expression, as a Timespan; ok
// false for NULL.
func timeOf(v any) (types.Timespan, bool, error) {
	if v == nil {
		return 0, false, nil
	}
	ts, err := types.Time.ConvertToTimespan(v)
	if err != nil {
		return 0, false, err
	}
	return ts, true, nil
}

// timeNumber is a TIME read as a number: HHMMSS, with the type's
// fractional digits after the point (MySQL's TIME(3) 01:02:03.456 + 0 is
// 10203.456).
type timeNumber struct {
	expression.UnaryExpression
	digits int
}

var _ gsql.Expression = (*timeNumber)(nil)

func newTimeNumber(e gsql.Expression) gsql.Expression {
	return &timeNumber{UnaryExpression: expression.UnaryExpression{Child: e}, digits: timeDigits(e.Type())}
}

// Type implements sql.Expression: BIGINT without digits, else DECIMAL.
func (t *timeNumber) Type() gsql.Type {
	if t.digits == 0 {
		return types.Int64
	}
	return types.MustCreateDecimalType(uint8(10+t.digits), uint8(t.digits))
}

// String implements sql.Expression.
func (t *timeNumber) String() string { return t.Child.String() }

// Eval implements sql.Expression.
func (t *timeNumber) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	ts, ok, err := timeOf(v)
	if err != nil || !ok {
		return nil, err
	}
	d := timeDecimal(ts)
	if t.digits == 0 {
		// The type's digits are none: a TIME(0)'s value has no fraction.
		return d.IntPart(), nil
	}
	return d.Round(int32(t.digits)), nil
}

// timeDecimal returns ts as MySQL reads a TIME as a number:
// [-]HHMMSS.ffffff.
func timeDecimal(ts types.Timespan) decimal.Decimal {
	m := ts.AsMicroseconds()
	neg := m < 0
	if neg {
		m = -m
	}
	s := m / 1e6
	whole := (s/3600)*10000 + (s/60%60)*100 + s%60
	d := decimal.New(whole, 0).Add(decimal.New(m%1e6, -6))
	if neg {
		d = d.Neg()
	}
	return d
}

// WithChildren implements sql.Expression.
func (t *timeNumber) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &timeNumber{UnaryExpression: expression.UnaryExpression{Child: children[0]}, digits: t.digits}, nil
}

// timeText is a TIME read as a string: its text with exactly the type's
// fractional digits (CAST of a TIME(3) AS CHAR is '01:02:03.450'), where
// rows.go's timeString, for a TIME among values of other types,
// writes GMS's TIME text.
type timeText struct {
	expression.UnaryExpression
	typ gsql.Type // the TIME's type, which writes its text
}

var _ gsql.Expression = (*timeText)(nil)

func newTimeString(e gsql.Expression) gsql.Expression {
	return &timeText{UnaryExpression: expression.UnaryExpression{Child: e}, typ: e.Type()}
}

// Type implements sql.Expression.
func (t *timeText) Type() gsql.Type {
	return types.MustCreateStringWithDefaults(sqltypes.VarChar, 17)
}

// String implements sql.Expression.
func (t *timeText) String() string { return t.Child.String() }

// Eval implements sql.Expression.
func (t *timeText) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	ts, ok, err := timeOf(v)
	if err != nil || !ok {
		return nil, err
	}
	sv, err := t.typ.SQL(ctx, nil, ts)
	if err != nil {
		return nil, err
	}
	return sv.ToString(), nil
}

// WithChildren implements sql.Expression.
func (t *timeText) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	typ := t.typ
	if c := children[0].Type(); isTimeType(c) {
		// The TIME typed again by a rule after this one
		// (fspresults.go's TIME(x) of x's digits): its text has the
		// new type's digits.
		typ = c
	}
	return &timeText{UnaryExpression: expression.UnaryExpression{Child: children[0]}, typ: typ}, nil
}

// timeIntervalUnits are the INTERVAL units a TIME moves by, true for
// those of a day or less; a TIME plus months or years is NULL (it is no
// time of day), where GMS answered a DATETIME of today.
var timeIntervalUnits = map[string]bool{
	"MICROSECOND": true, "SECOND": true, "MINUTE": true, "HOUR": true, "DAY": true, "WEEK": true,
	"SECOND_MICROSECOND": true, "MINUTE_MICROSECOND": true, "MINUTE_SECOND": true,
	"HOUR_MICROSECOND": true, "HOUR_SECOND": true, "HOUR_MINUTE": true,
	"DAY_MICROSECOND": true, "DAY_SECOND": true, "DAY_MINUTE": true, "DAY_HOUR": true,
	"MONTH": false, "QUARTER": false, "YEAR": false, "YEAR_MONTH": false,
}

// timePlusInterval returns e, a ± b, as a timeInterval when one of a
// and b is a TIME and the other an INTERVAL of a day or less.
func timePlusInterval(e, a, b gsql.Expression, op string) (gsql.Expression, bool) {
	iv, ok := b.(*expression.Interval)
	if !ok && op == "+" {
		a, b = b, a
		iv, ok = b.(*expression.Interval)
	}
	if !ok || (op != "+" && op != "-") || !isTimeType(a.Type()) {
		return nil, false
	}
	if _, known := timeIntervalUnits[strings.ToUpper(iv.Unit)]; !known {
		return nil, false
	}
	digits := timeDigits(a.Type())
	if strings.Contains(strings.ToUpper(iv.Unit), "MICROSECOND") {
		digits = 6
	}
	sign := int64(1)
	if op == "-" {
		sign = -1
	}
	return &timeInterval{UnaryExpression: expression.UnaryExpression{Child: e}, sign: sign, typ: timeType(digits)}, true
}

// timeInterval is a TIME plus or minus an INTERVAL: a TIME, not wrapped
// into a day (NULL for an interval of months or years), clamped to TIME's range
// (-838:59:59.999999 to 838:59:59.999999) as MySQL's ADDTIME is. Its
// one child is GMS's function (DATE_ADD, DATE_SUB, + or -), whose
// arguments it evaluates, so that GMS's check that an INTERVAL appears
// only under those still finds it there.
type timeInterval struct {
	expression.UnaryExpression
	sign int64
	typ  gsql.Type
}

var _ gsql.Expression = (*timeInterval)(nil)

// IsNullable implements sql.Expression.
func (t *timeInterval) IsNullable() bool { return true }

// Type implements sql.Expression.
func (t *timeInterval) Type() gsql.Type { return t.typ }

// String implements sql.Expression: the function's own text.
func (t *timeInterval) String() string { return t.Child.String() }

func (t *timeInterval) wrapped() gsql.Expression { return t.Child }

// operands returns the TIME and the INTERVAL of the function.
func (t *timeInterval) operands() (gsql.Expression, *expression.Interval, error) {
	var tm gsql.Expression
	var iv *expression.Interval
	for _, c := range t.Child.Children() {
		if i, ok := c.(*expression.Interval); ok {
			iv = i
		} else {
			tm = c
		}
	}
	if tm == nil || iv == nil {
		return nil, nil, fmt.Errorf("TIME arithmetic: %s is not a TIME and an INTERVAL", t.Child)
	}
	return tm, iv, nil
}

// Eval implements sql.Expression.
func (t *timeInterval) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	tm, iv, err := t.operands()
	if err != nil {
		return nil, err
	}
	v, err := tm.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	ts, ok, err := timeOf(v)
	if err != nil || !ok {
		return nil, err
	}
	d, err := iv.EvalDelta(ctx, row)
	if err != nil || d == nil || !timeIntervalUnits[strings.ToUpper(iv.Unit)] {
		return nil, err
	}
	delta := (((d.Days*24+d.Hours)*60+d.Minutes)*60+d.Seconds)*1e6 + d.Microseconds
	return types.Time.MicrosecondsToTimespan(ts.AsMicroseconds() + t.sign*delta), nil
}

// WithChildren implements sql.Expression.
func (t *timeInterval) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &timeInterval{UnaryExpression: expression.UnaryExpression{Child: children[0]}, sign: t.sign, typ: t.typ}, nil
}

// timeCastDigits returns the n of CAST(x AS TIME(n)), 0 without one.
// GMS keeps the length of a cast unexported; its text (convert(x,
// time(3))) is the one place that shows it.
func timeCastDigits(c *expression.Convert) int {
	prefix := "convert(" + c.Child.String() + ", time"
	rest, ok := strings.CutPrefix(c.String(), prefix)
	if !ok || rest == ")" {
		return 0
	}
	if len(rest) == 4 && rest[0] == '(' && rest[2] == ')' && rest[1] >= '0' && rest[1] <= '6' {
		return int(rest[1] - '0')
	}
	return 6
}

// timeCast is CAST(x AS TIME(n)): GMS's cast, rounded to n digits and
// typed TIME(n); exact, a TIME under another TIME type, its value
// unchanged (not rounded to the type's digits), for a comparison that
// compares by its operands' type (sameTimeType).
type timeCast struct {
	expression.UnaryExpression
	typ   gsql.Type
	exact bool
}

var _ gsql.Expression = (*timeCast)(nil)

// Type implements sql.Expression.
func (t *timeCast) Type() gsql.Type { return t.typ }

// String implements sql.Expression: the cast's own text.
func (t *timeCast) String() string { return t.Child.String() }

func (t *timeCast) wrapped() gsql.Expression { return t.Child }

// Eval implements sql.Expression.
func (t *timeCast) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if v == nil {
		if r, ok, err := t.truncated(ctx, row); ok || err != nil {
			return r, err
		}
		return nil, t.warnNoTime(ctx, row)
	}
	if t.exact {
		ts, _, err := timeOf(v)
		return ts, err
	}
	r, _, err := t.typ.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	if ts, ok := r.(types.Timespan); ok && (ts.AsMicroseconds() == maxTimeMicros || ts.AsMicroseconds() == -maxTimeMicros) {
		// GMS's cast clamps without a warning: MySQL warns when the
		// argument was beyond the range.
		if m, ok, err := t.truncated(ctx, row); ok || err != nil {
			return m, err
		}
	}
	return r, nil
}

// maxTimeMicros is 838:59:59, the largest TIME, in microseconds.
const maxTimeMicros = 3020399e6

// truncated returns ±838:59:59 with MySQL's warning 1292 "Truncated
// incorrect time value" when the cast's argument is a time beyond a
// TIME's range (truncatedTime): GMS made 8390000 and '839:00:00'
// 838:59:59 without the warning, and 1e20 and '1000:00:00' NULL.
func (t *timeCast) truncated(ctx *gsql.Context, row gsql.Row) (any, bool, error) {
	arg, ok := t.castArg()
	if !ok {
		return nil, false, nil
	}
	v, err := arg.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, false, err
	}
	neg, text, ok := truncatedTime(v)
	if !ok {
		return nil, false, nil
	}
	warnOnce(ctx, codeTruncatedWrongValue, fmt.Sprintf("Truncated incorrect time value: '%s'", text), isConstant(arg))
	m := int64(maxTimeMicros)
	if neg {
		m = -m
	}
	return types.Time.MicrosecondsToTimespan(m), true, nil
}

// castArg returns the argument of the cast, as the client wrote it.
func (t *timeCast) castArg() (gsql.Expression, bool) {
	c, ok := t.Child.(*expression.Convert)
	if !ok {
		return nil, false
	}
	arg := c.Child
	if a, ok := arg.(*castArgument); ok {
		arg = a.Child
	}
	return arg, true
}

// truncatedTime reports whether MySQL casts v to a TIME by truncating it
// to ±838:59:59 (with the warning, whose text of v it returns): a
// number or numeric string hhhmmss[.f] of seven digits whose minutes
// and seconds are a time's and whose hours are beyond 838, a text
// hhh:mm:ss with such hours, a DOUBLE beyond any DATETIME's number
// (1e15 and more). Longer integers are read as a DATETIME or are no
// time (NULL with "Incorrect time value"), as MariaDB 10.11 answers.
func truncatedTime(v any) (neg bool, text string, ok bool) {
	switch x := v.(type) {
	case float64:
		text = doubleText(x, 64)
		if math.Abs(x) >= 1e15 {
			return x < 0, text, true
		}
		return x < 0, text, beyondTimeNumber(int64(math.Abs(math.Trunc(x))))
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		n, err := strconv.ParseInt(fmt.Sprint(x), 10, 64)
		if err != nil {
			return false, "", false
		}
		return n < 0, fmt.Sprint(x), beyondTimeNumber(max(n, -n))
	case decimal.Decimal:
		n := x.Abs().Truncate(0)
		if !n.IsInteger() || n.GreaterThan(decimal.NewFromInt(9999999)) {
			return false, "", false
		}
		return x.IsNegative(), x.String(), beyondTimeNumber(n.IntPart())
	case []byte:
		return truncatedTime(string(x))
	case string:
		s := strings.TrimSpace(x)
		body, neg := strings.CutPrefix(s, "-")
		whole, _, _ := strings.Cut(body, ".")
		if allDigits(whole) {
			n, err := strconv.ParseInt(whole, 10, 64)
			return neg, x, err == nil && beyondTimeNumber(n)
		}
		parts := strings.Split(whole, ":")
		if len(parts) != 3 || !allDigits(parts[0]) || len(parts[1]) != 2 || len(parts[2]) != 2 || !allDigits(parts[1]+parts[2]) {
			return false, "", false
		}
		h, err := strconv.Atoi(parts[0])
		m, _ := strconv.Atoi(parts[1])
		sec, _ := strconv.Atoi(parts[2])
		return neg, x, err == nil && h > 838 && m < 60 && sec < 60
	}
	return false, "", false
}

// beyondTimeNumber reports whether n (not negative) is hhhmmss of
// seven digits with minutes and seconds below 60 and hours beyond 838.
func beyondTimeNumber(n int64) bool {
	return n > 8385959 && n <= 9999999 && n%100 < 60 && n/100%100 < 60
}

// warnNoTime warns, as MySQL does, when the cast's value is NULL because
// its argument is no time (106000 has no minute 60; '10:60:00'): 1292
// "Incorrect time value" (number_to_time, str_to_time). GMS gave NULL
// without a warning.
func (t *timeCast) warnNoTime(ctx *gsql.Context, row gsql.Row) error {
	arg, ok := t.castArg()
	if !ok {
		return nil
	}
	v, err := arg.Eval(ctx, row)
	if err != nil || v == nil {
		return err
	}
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case float64:
		text = doubleText(x, 64)
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, decimal.Decimal:
		text = fmt.Sprint(x)
	default:
		return nil
	}
	warnOnce(ctx, codeTruncatedWrongValue, fmt.Sprintf("Incorrect time value: '%s'", text), isConstant(arg))
	return nil
}

// WithChildren implements sql.Expression.
func (t *timeCast) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &timeCast{UnaryExpression: expression.UnaryExpression{Child: children[0]}, typ: t.typ, exact: t.exact}, nil
}

// castArgument is the argument of a CAST (or of a function) as MySQL
// reads it where GMS's does not: read gives the value GMS's cast is to
// see, of type typ when it is not nil.
type castArgument struct {
	expression.UnaryExpression
	read func(*gsql.Context, any) any
	typ  gsql.Type
}

var _ gsql.Expression = (*castArgument)(nil)

// Type implements sql.Expression: the argument's, so that the cast
// around it is unchanged, unless read gives another type (typ).
func (a *castArgument) Type() gsql.Type {
	if a.typ != nil {
		return a.typ
	}
	return a.Child.Type()
}

// String implements sql.Expression.
func (a *castArgument) String() string { return a.Child.String() }

// Eval implements sql.Expression.
func (a *castArgument) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := a.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	return a.read(ctx, v), nil
}

// WithChildren implements sql.Expression.
func (a *castArgument) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(a, len(children), 1)
	}
	return &castArgument{UnaryExpression: expression.UnaryExpression{Child: children[0]}, read: a.read, typ: a.typ}, nil
}

// timeCastValue is the argument of CAST(x AS TIME) as MySQL reads it:
// the time of day of a DATETIME, of a DATETIME's text and of a number
// YYYYMMDDHHMMSS, and D days more of a 'D HH:MM:SS'. Other values go to
// GMS's cast as they are.
func timeCastValue(ctx *gsql.Context, v any) any {
	switch x := v.(type) {
	case time.Time:
		return timeOfDay(x)
	case []byte:
		return castTimeText(ctx, string(x))
	case string:
		return castTimeText(ctx, x)
	case int64:
		return castTimeText(ctx, strconv.FormatInt(x, 10))
	case uint64:
		return castTimeText(ctx, strconv.FormatUint(x, 10))
	case decimal.Decimal:
		return castTimeText(ctx, x.String())
	}
	return v
}

// zeroDatetimeValue is the text argument of CAST(x AS DATETIME(n)) with
// a zero date's fraction of zeros taken off: GMS reads '0000-00-00
// 00:00:00' as the zero DATETIME but '0000-00-00 00:00:00.0' as NULL.
func zeroDatetimeValue(_ *gsql.Context, v any) any {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	default:
		return v
	}
	whole, frac, ok := strings.Cut(strings.TrimSpace(s), ".")
	if ok && whole == "0000-00-00 00:00:00" && strings.Trim(frac, "0") == "" {
		return whole
	}
	return v
}

// timeOfDay returns the time of day of t as a TIME.
func timeOfDay(t time.Time) types.Timespan {
	m := int64(t.Hour())*3600e6 + int64(t.Minute())*60e6 + int64(t.Second())*1e6 + int64(t.Nanosecond()/1000)
	return types.Time.MicrosecondsToTimespan(m)
}

// castTimeText reads s as MySQL's CAST(s AS TIME) does where GMS's cast
// does not: a date and a time ('2020-01-01 03:25:45', or the digits
// YYMMDDHHMMSS and YYYYMMDDHHMMSS) give the time, 'D HH:MM[:SS]' D days
// more. Anything else is returned as it is, for GMS's cast.
func castTimeText(ctx *gsql.Context, s string) any {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if (len(whole) == 12 || len(whole) == 14) && allDigits(whole) {
		// A DATETIME as a number: its last six digits are the time.
		hms := whole[len(whole)-6:]
		if frac != "" {
			hms += "." + frac
		}
		return hms[0:2] + ":" + hms[2:4] + ":" + hms[4:]
	}
	date, clock, ok := strings.Cut(s, " ")
	if !ok {
		date, clock, ok = strings.Cut(s, "T")
	}
	if !ok || !strings.Contains(clock, ":") {
		if i := strings.IndexByte(s, '-'); i > 0 && allDigits(s[:i]) && !ok {
			// A date alone: MySQL reads the digits before the first
			// '-' ('0000-00-00' is 00:00:00, '2020-01-01' 00:20:20).
			return s[:i]
		}
		return s
	}
	if allDigits(date) && len(date) <= 2 {
		// 'D HH:MM:SS': D days.
		days, _ := strconv.Atoi(date)
		ts, err := types.Time.ConvertToTimespan(strings.TrimSpace(clock))
		if err != nil {
			return s
		}
		m := ts.AsMicroseconds()
		extra := int64(days) * 86400e6
		if m < 0 {
			extra = -extra
		}
		return types.Time.MicrosecondsToTimespan(m + extra)
	}
	if strings.ContainsAny(date, "-/") {
		dt, _, err := types.DatetimeMaxPrecision.Convert(ctx, s)
		if t, ok := dt.(time.Time); err == nil && ok {
			return timeOfDay(t)
		}
	}
	return s
}

// allDigits reports whether s is made of ASCII digits only (and is not
// empty).
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// timeFunctions are percdb's GREATEST and LEAST when an argument is a
// TIME (timeExtremum); otherwise numeric.go's.
var timeFunctions = map[string]gsql.Function{
	"greatest": gsql.FunctionN{Name: "greatest", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return newTimeExtremum("greatest", args)
	}},
	"least": gsql.FunctionN{Name: "least", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return newTimeExtremum("least", args)
	}},
}

// newTimeExtremum returns GREATEST or LEAST (name) of args: a
// timeExtremum when one is a TIME, DATE or DATETIME, else numeric.go's
// function. MySQL compares them as the temporal arguments' aggregate
// (mergedtypes.go): as TIMEs when the temporal ones are TIMEs, else as
// DATETIMEs (a TIME today at that time), the numbers and strings among
// them read as that type; GMS failed on a TIME with a number
// ("unsupported type for greatest/least argument") and compared a DATE
// with a number as numbers (LEAST(d, 20200101) was 0).
func newTimeExtremum(name string, args []gsql.Expression) (gsql.Expression, error) {
	var temporal []gsql.Type
	for _, a := range args {
		if k, _ := temporalKind(a.Type()); k != mergeNone {
			temporal = append(temporal, a.Type())
		}
	}
	m := mergeTemporal(temporal)
	if m.kind == mergeNone {
		return newExtremum(name, args)
	}
	return &timeExtremum{name: name, args: args, typ: m.typ(), asDatetime: m.kind != mergeTime}, nil
}

// timeExtremum is GREATEST or LEAST of TIMEs (and strings read as
// TIMEs): NULL when an argument is NULL, as in MySQL.
type timeExtremum struct {
	name string
	args []gsql.Expression
	typ  gsql.Type
	// asDatetime compares the arguments as DATETIMEs, not TIMEs.
	asDatetime bool
}

var _ gsql.FunctionExpression = (*timeExtremum)(nil)

// FunctionName implements sql.FunctionExpression.
func (e *timeExtremum) FunctionName() string { return e.name }

// Description implements sql.FunctionExpression.
func (e *timeExtremum) Description() string {
	return "MySQL's " + strings.ToUpper(e.name) + " of TIMEs"
}

// Resolved implements sql.Expression.
func (e *timeExtremum) Resolved() bool { return expression.ExpressionsResolved(e.args...) }

// IsNullable implements sql.Expression.
func (e *timeExtremum) IsNullable() bool { return true }

// Type implements sql.Expression.
func (e *timeExtremum) Type() gsql.Type { return e.typ }

// Children implements sql.Expression.
func (e *timeExtremum) Children() []gsql.Expression { return e.args }

// String implements sql.Expression.
func (e *timeExtremum) String() string {
	parts := make([]string, len(e.args))
	for i, a := range e.args {
		parts[i] = a.String()
	}
	return e.name + "(" + strings.Join(parts, ",") + ")"
}

// Eval implements sql.Expression.
func (e *timeExtremum) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if e.asDatetime {
		return e.evalDatetime(ctx, row)
	}
	var best types.Timespan
	for i, a := range e.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		ts, ok, err := timeOf(v)
		if err != nil || !ok {
			// NULL, or a string that is no TIME (MySQL warns and
			// gives NULL).
			return nil, nil
		}
		if i == 0 || (e.name == "greatest" && ts > best) || (e.name == "least" && ts < best) {
			best = ts
		}
	}
	return best, nil
}

// WithChildren implements sql.Expression.
func (e *timeExtremum) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(e.args) {
		return nil, gsql.ErrInvalidChildrenNumber.New(e, len(children), len(e.args))
	}
	return &timeExtremum{name: e.name, args: children, typ: e.typ, asDatetime: e.asDatetime}, nil
}

// evalDatetime is Eval comparing the arguments as DATETIMEs: NULL when
// one is NULL or no DATETIME (MySQL warns and gives NULL).
func (e *timeExtremum) evalDatetime(ctx *gsql.Context, row gsql.Row) (any, error) {
	var best time.Time
	for i, a := range e.args {
		v, err := a.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		if !isTimeType(a.Type()) {
			v = dateCastValue(ctx, v) // numberdates.go: a number's date
		}
		d, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		if err != nil {
			return nil, nil
		}
		t, ok := d.(time.Time)
		if !ok {
			return nil, nil
		}
		if i == 0 || (e.name == "greatest" && t.After(best)) || (e.name == "least" && t.Before(best)) {
			best = t
		}
	}
	ret, _, err := e.typ.Convert(ctx, best)
	return ret, err
}

// roundedDatetime returns e, a CAST to DATETIME(n), with its value
// rounded to n digits when n is less than six: GMS typed CAST(x AS
// DATETIME) a DATETIME(0) but kept the fraction in its value, which a
// comparison and CONCAT saw (CAST(dt AS DATETIME) = dt was true of a
// DATETIME(2) '… 10:00:00.25'); MySQL rounds the value to the type's
// digits.
func roundedDatetime(e gsql.Expression) gsql.Expression {
	dt, ok := e.Type().(gsql.DatetimeType)
	if !ok || types.IsDateType(e.Type()) || dt.Precision() >= 6 {
		return e
	}
	return &datetimeCast{UnaryExpression: expression.UnaryExpression{Child: e}, digits: dt.Precision()}
}

// datetimeCast is a CAST to DATETIME(n), n < 6, whose value is rounded
// to its n digits (roundedDatetime).
type datetimeCast struct {
	expression.UnaryExpression
	digits int
}

var _ functionWrapper = (*datetimeCast)(nil)

// Type implements sql.Expression.
func (d *datetimeCast) Type() gsql.Type { return d.Child.Type() }

// String implements sql.Expression: the cast's own text.
func (d *datetimeCast) String() string { return d.Child.String() }

func (d *datetimeCast) wrapped() gsql.Expression { return d.Child }

// Eval implements sql.Expression.
func (d *datetimeCast) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if t, ok := v.(time.Time); ok && err == nil {
		return t.Round(time.Duration(math.Pow10(9 - d.digits))), nil
	}
	return v, err
}

// WithChildren implements sql.Expression.
func (d *datetimeCast) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &datetimeCast{UnaryExpression: expression.UnaryExpression{Child: children[0]}, digits: d.digits}, nil
}
