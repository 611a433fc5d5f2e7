package compat

import (
	"fmt"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS moves a date by an INTERVAL (DATE_ADD, DATE_SUB, date ± INTERVAL)
// in its TimeDelta.apply, which has two defects:
//
//   - months that reach a December past the next year land a year late:
//     the new month is (month + n) % 12 and the year grows by
//     (month + n) / 12, so month + n = 24 is December of the year after
//     next. DATE_ADD('2020-12-15', INTERVAL 12 MONTH) was 2022-12-15,
//     INTERVAL 18 MONTH from June the same (MySQL: 2021-12-15);
//   - days, hours, minutes, seconds and microseconds are added as a
//     time.Duration, nanoseconds in an int64, which overflows past about
//     292 years: INTERVAL 200000 DAY from 2020 gave a date in 1983.
//
// dateShifts, an analyzer rule run once the plan is final, puts a
// dateShift around each such function (not under percdb's TIME
// arithmetic, compat_timevalues.go). It computes the moved date as MySQL
// does (date_add_interval: months as a count from year 0, days through
// the calendar) when GMS's would be wrong, NULL outside 0000-9999, and
// has GMS's function write it, moved by an interval of 0 of the same
// unit, so that the result's type and text are GMS's (as percdb's other
// rules made them). Its one child is GMS's function, so that GMS's check
// that an INTERVAL appears only under DATE_ADD, DATE_SUB, + and - still
// finds it there.

// DateShifts is the analyzer rule; see the comment above.
func DateShifts(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		// Each expression from its top, so that percdb's TIME
		// arithmetic is seen before the function under it.
		return eachNodeExpr(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			ne, changed, err := shiftDates(e)
			if err != nil || !changed {
				return e, transform.SameTree, err
			}
			return ne, transform.NewTree, nil
		})
	})
}

// eachNodeExpr applies g to each expression of n alone (not of its
// children) and returns n with the results.
func eachNodeExpr(n gsql.Node, g transform.ExprFunc) (gsql.Node, transform.TreeIdentity, error) {
	ne, ok := n.(gsql.Expressioner)
	if !ok {
		return n, transform.SameTree, nil
	}
	exprs := ne.Expressions()
	var out []gsql.Expression
	for i, e := range exprs {
		e, same, err := g(e)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if !same {
			if out == nil {
				out = append([]gsql.Expression(nil), exprs...)
			}
			out[i] = e
		}
	}
	if out == nil {
		return n, transform.SameTree, nil
	}
	ret, err := ne.WithExpressions(out...)
	if err != nil {
		return nil, transform.SameTree, fmt.Errorf("expressions of %s: %w", n, err)
	}
	return ret, transform.NewTree, nil
}

// shiftDates returns e with a dateShift around each date ± INTERVAL in
// it; percdb's TIME arithmetic and dateShifts already made are left as
// they are.
func shiftDates(e gsql.Expression) (gsql.Expression, bool, error) {
	switch e.(type) {
	case *timeInterval, *dateShift, *calendarDiff:
		return e, false, nil
	}
	children := e.Children()
	var out []gsql.Expression
	for i, c := range children {
		nc, changed, err := shiftDates(c)
		if err != nil {
			return nil, false, err
		}
		if changed {
			if out == nil {
				out = append([]gsql.Expression(nil), children...)
			}
			out[i] = nc
		}
	}
	changed := out != nil
	if changed {
		var err error
		if e, err = e.WithChildren(out...); err != nil {
			return nil, false, fmt.Errorf("date arithmetic %s: %w", e, err)
		}
	}
	if _, _, _, _, ok := shiftOperands(e); ok {
		return &dateShift{UnaryExpression: expression.UnaryExpression{Child: e}}, true, nil
	}
	if isTimestampDiff(e) {
		// Calendar months (timestampdiff.go).
		return &calendarDiff{UnaryExpression: expression.UnaryExpression{Child: e}}, true, nil
	}
	return e, changed, nil
}

// shiftOperands returns the date, the interval and the direction (1 or
// -1) of e, DATE_ADD, DATE_SUB or date ± INTERVAL, and the index of the
// date among e's children; false for another expression.
func shiftOperands(e gsql.Expression) (date gsql.Expression, iv *expression.Interval, sign, dateIdx int, ok bool) {
	switch f := e.(type) {
	case *function.DateAdd:
		return f.Date, f.Interval, 1, 0, true
	case *function.DateSub:
		return f.Date, f.Interval, -1, 0, true
	case *expression.Arithmetic:
		if l, isIv := f.LeftChild.(*expression.Interval); isIv && f.Op == sqlparser.PlusStr {
			return f.RightChild, l, 1, 1, true
		}
		r, isIv := f.RightChild.(*expression.Interval)
		if !isIv {
			return nil, nil, 0, 0, false
		}
		switch f.Op {
		case sqlparser.PlusStr:
			return f.LeftChild, r, 1, 0, true
		case sqlparser.MinusStr:
			return f.LeftChild, r, -1, 0, true
		}
	}
	return nil, nil, 0, 0, false
}

// dateShift is GMS's date ± INTERVAL, computed by percdb where GMS's
// answer is wrong; see the comment at the top of the file.
type dateShift struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*dateShift)(nil)

// Type implements sql.Expression: the function's.
func (d *dateShift) Type() gsql.Type { return d.Child.Type() }

// IsNullable implements sql.Expression.
func (d *dateShift) IsNullable() bool { return true }

// String implements sql.Expression: the function's own text.
func (d *dateShift) String() string { return d.Child.String() }

// wrapped makes a rule that runs again on the plan (exprOnce) visit only
// the function's arguments, as for compat_timevalues.go's wrappers.
func (d *dateShift) wrapped() gsql.Expression { return d.Child }

// WithChildren implements sql.Expression.
func (d *dateShift) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &dateShift{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// Eval implements sql.Expression.
func (d *dateShift) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	// The function, under the wrappers other rules may have put
	// around it since (compat_functions.go's temporalResult).
	var wrappers []gsql.Expression
	fn := d.Child
	for {
		w, ok := fn.(functionWrapper)
		if !ok {
			break
		}
		wrappers = append(wrappers, fn)
		fn = w.wrapped()
	}
	date, iv, sign, dateIdx, ok := shiftOperands(fn)
	if !ok {
		return d.Child.Eval(ctx, row)
	}
	v, err := date.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if zero, _ := zeroParts(v); zero {
		// MySQL moves no zero date (date_add_interval reads its date
		// with TIME_NO_ZERO_DATE): NULL with its warning, where GMS
		// moved 0000-01-01 (zerodateargs.go).
		ctx.Warn(codeTruncatedWrongValue, "Incorrect datetime value: '%s'", zeroDateText(date.Type(), v))
		return nil, nil
	}
	delta, err := iv.EvalDelta(ctx, row)
	if err != nil || delta == nil {
		return nil, err
	}
	if !gmsShiftWrong(delta) {
		r, err := d.Child.Eval(ctx, row)
		if err == nil && r == nil {
			// NULL of a date GMS read: the result is out of range.
			if _, _, cerr := types.DatetimeMaxPrecision.Convert(ctx, v); cerr == nil {
				warnDatetimeOverflow(ctx)
			}
		}
		return r, err
	}
	tv, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
	if err != nil {
		return d.Child.Eval(ctx, row) // GMS's warning and NULL
	}
	t, ok := shiftDate(tv.(time.Time), delta, int64(sign))
	if !ok {
		warnDatetimeOverflow(ctx)
		return nil, nil
	}
	// GMS's function writes the moved date: moved by 0 of the same unit.
	out := append([]gsql.Expression(nil), fn.Children()...)
	out[dateIdx] = shiftedLiteral(v, t, date.Type())
	out[1-dateIdx] = expression.NewInterval(expression.NewLiteral(int64(0), types.Int64), iv.Unit)
	f, err := fn.WithChildren(out...)
	for i := len(wrappers) - 1; i >= 0 && err == nil; i-- {
		f, err = wrappers[i].WithChildren(f)
	}
	if err != nil {
		return nil, fmt.Errorf("date arithmetic %s: %w", d, err)
	}
	return f.Eval(ctx, row)
}

// gmsShiftWrong reports whether GMS's TimeDelta.apply may move by delta
// wrongly: by months or years (the December defect; MySQL's month
// arithmetic is cheap enough to use for all), or by more of a field than
// a time.Duration holds.
func gmsShiftWrong(delta *expression.TimeDelta) bool {
	const maxDays = int64(time.Duration(1<<63-1) / (24 * time.Hour))
	return delta.Years != 0 || delta.Months != 0 ||
		abs64(delta.Days) > maxDays || abs64(delta.Hours) > maxDays*24 || abs64(delta.Minutes) > maxDays*24*60 ||
		abs64(delta.Seconds) > maxDays*24*3600 || abs64(delta.Microseconds) > maxDays*24*3600*1_000_000
}

// shiftDate moves t by sign × delta as MySQL's date_add_interval does;
// false when the result is outside years 0 to 9999.
func shiftDate(t time.Time, delta *expression.TimeDelta, sign int64) (time.Time, bool) {
	const maxMonths = 10000 * 12
	if months := delta.Years*12 + delta.Months; months != 0 {
		if abs64(delta.Years) > maxMonths || abs64(months) > maxMonths {
			return time.Time{}, false
		}
		total := int64(t.Year())*12 + int64(t.Month()) - 1 + sign*months
		if total < 0 || total >= maxMonths {
			return time.Time{}, false
		}
		y, m := int(total/12), time.Month(total%12+1)
		day := min(t.Day(), daysIn(m, y))
		t = time.Date(y, m, day, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	}
	// Days through the calendar, the rest (less than a day of each
	// field) as a duration.
	const dayMicros = 24 * 3600 * 1_000_000
	days := delta.Days + delta.Hours/24 + delta.Minutes/(24*60) + delta.Seconds/(24*3600) + delta.Microseconds/dayMicros
	rest := (delta.Hours%24)*3600*1_000_000 + (delta.Minutes%(24*60))*60*1_000_000 + (delta.Seconds%(24*3600))*1_000_000 + delta.Microseconds%dayMicros
	if abs64(days) > 10000*366 {
		return time.Time{}, false
	}
	t = t.AddDate(0, 0, int(sign*days)).Add(time.Duration(sign*rest) * time.Microsecond)
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, false
	}
	return t, true
}

// daysIn returns the number of days of month m of year y.
func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// shiftedLiteral returns t as the literal GMS's function is to write:
// in the form of v, the date it was given (a string stays a string, a
// date-only one date-only when t has no time of day).
func shiftedLiteral(v any, t time.Time, typ gsql.Type) gsql.Expression {
	s, isString := v.(string)
	if !isString {
		return expression.NewLiteral(t, typ)
	}
	dateOnly := false
	for _, layout := range types.DateOnlyLayouts {
		if _, err := time.Parse(layout, s); err == nil {
			dateOnly = true
			break
		}
	}
	switch {
	case dateOnly && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0:
		s = t.Format("2006-01-02")
	case t.Nanosecond() != 0:
		s = t.Format("2006-01-02 15:04:05.000000")
	default:
		s = t.Format("2006-01-02 15:04:05")
	}
	return expression.NewLiteral(s, types.LongText)
}

// abs64 returns |x| (the smallest int64 as the largest).
func abs64(x int64) int64 {
	if x < 0 {
		if x == -1<<63 {
			return 1<<63 - 1
		}
		return -x
	}
	return x
}

// warnDatetimeOverflow gives MySQL's warning for date arithmetic whose
// result is outside years 0 to 9999 (ER_DATETIME_FUNCTION_OVERFLOW),
// which GMS answered NULL without.
func warnDatetimeOverflow(ctx *gsql.Context) {
	ctx.Warn(1441, "Datetime function: datetime field overflow")
}
