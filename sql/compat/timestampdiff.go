package compat

import (
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS's TIMESTAMPDIFF counts MONTH, QUARTER and YEAR in 30-day months
// and 365-day years: TIMESTAMPDIFF(MONTH, '2020-01-31', '2020-03-01') was
// 0 and TIMESTAMPDIFF(QUARTER, '2020-01-01', '2020-12-31') 4 (MySQL: 1
// and 3), and TIMESTAMPDIFF(MONTH, '2020-01-01', '2020-12-31') 12 (11).
// MySQL counts calendar months (Item_func_timestamp_diff): the months
// between the two dates' year and month, less one when the later date's
// day, or on the same day its time of day, comes before the earlier
// one's; a quarter is three of them and a year twelve, truncated toward
// zero; negative when the second date is the earlier. shiftDates puts a
// calendarDiff around each TIMESTAMPDIFF (DateShifts' rule); the other
// units stay GMS's, which counts them exactly.

// calendarDiff is TIMESTAMPDIFF with MySQL's calendar units. Its child
// is GMS's function.
type calendarDiff struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*calendarDiff)(nil)

// Type implements sql.Expression: the function's (BIGINT).
func (d *calendarDiff) Type() gsql.Type { return d.Child.Type() }

// IsNullable implements sql.Expression.
func (d *calendarDiff) IsNullable() bool { return d.Child.IsNullable() }

// String implements sql.Expression.
func (d *calendarDiff) String() string { return d.Child.String() }

// WithChildren implements sql.Expression.
func (d *calendarDiff) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &calendarDiff{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// calendarMonths are the units counted in calendar months, by how many
// months one is.
var calendarMonths = map[string]int64{"month": 1, "quarter": 3, "year": 12}

// Eval implements sql.Expression.
func (d *calendarDiff) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	args := d.Child.Children()
	if len(args) != 3 {
		return d.Child.Eval(ctx, row)
	}
	u, err := args[0].Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	unit, _ := u.(string)
	per, ok := calendarMonths[strings.TrimPrefix(strings.ToLower(unit), "sql_tsi_")]
	if !ok {
		return d.Child.Eval(ctx, row)
	}
	var dates [2]time.Time
	for i := range dates {
		v, err := args[1+i].Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		t, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		if err != nil || t == nil {
			return nil, err
		}
		dates[i] = t.(time.Time)
		if dates[i].Equal(zeroDatetime) {
			return nil, nil // '0000-00-00': NULL, as MySQL
		}
	}
	return calendarMonthsBetween(dates[0], dates[1]) / per, nil
}

// calendarMonthsBetween is the number of whole calendar months from a to
// b, negative when b is before a.
func calendarMonthsBetween(a, b time.Time) int64 {
	sign := int64(1)
	if b.Before(a) {
		a, b, sign = b, a, -1
	}
	months := int64(b.Year()-a.Year())*12 + int64(b.Month()) - int64(a.Month())
	// A month is whole when the later date's day and time of day come at
	// or after the earlier one's.
	if b.Day() < a.Day() || b.Day() == a.Day() && timeOfDay(b).AsMicroseconds() < timeOfDay(a).AsMicroseconds() {
		months--
	}
	return sign * months
}

// zeroDatetime is the time GMS reads '0000-00-00' as (0000-01-01).
var zeroDatetime = time.Unix(-62167219200, 0).UTC()

// isTimestampDiff reports whether e is GMS's TIMESTAMPDIFF.
func isTimestampDiff(e gsql.Expression) bool {
	_, ok := e.(*function.TimestampDiff)
	return ok
}
