package compat

import (
	"fmt"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// GMS v0.20.0 has UTC_TIMESTAMP but not UTC_DATE nor UTC_TIME (1105
// "function: 'utc_date' not found"), though its parser takes both (with
// or without parentheses, UTC_TIME with a precision). utcFunctions are
// MySQL's: the date, and the time of day to the precision's digits (cut,
// not rounded, as MySQL's current-time functions are), in UTC, at the
// statement's start.

// utcFunctions are UTC_DATE and UTC_TIME, by name.
var utcFunctions = map[string]gsql.Function{
	"utc_date": gsql.NewFunction0("utc_date", func() gsql.Expression {
		return newTemporalFunc("utc_date", func(ctx *gsql.Context, _ []any, _ []gsql.Expression) (any, error) {
			t := ctx.QueryTime().UTC()
			return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
		}, fixedType(types.Date))
	}),
	"utc_time": gsql.FunctionN{Name: "utc_time", Fn: newUTCTime},
}

// newUTCTime returns UTC_TIME() or UTC_TIME(fsp): its one argument, the
// parser's 0 when it has none, is a constant from 0 to 6 (MySQL: 1426
// otherwise).
func newUTCTime(args ...gsql.Expression) (gsql.Expression, error) {
	digits, err := fspArgument("utc_time", args)
	if err != nil {
		return nil, err
	}
	return newTemporalFunc("utc_time", func(ctx *gsql.Context, _ []any, _ []gsql.Expression) (any, error) {
		t := ctx.QueryTime().UTC()
		micros := int64(t.Hour()*3600+t.Minute()*60+t.Second())*1_000_000 + int64(t.Nanosecond()/1000)
		unit := int64(1)
		for i := digits; i < 6; i++ {
			unit *= 10
		}
		return types.Time.MicrosecondsToTimespan(micros - micros%unit), nil
	}, fixedType(timeType(digits))), nil
}

// fspArgument returns the fractional digits of a current-time function
// (name, lower case) of args: none, or one constant from 0 to 6 (MySQL:
// 1426 otherwise).
func fspArgument(name string, args []gsql.Expression) (int, error) {
	switch len(args) {
	case 0:
		return 0, nil
	case 1:
	default:
		return 0, gsql.ErrInvalidArgumentNumber.New(strings.ToUpper(name), "0 or 1", len(args))
	}
	lit, ok := args[0].(*expression.Literal)
	if !ok {
		return 0, fmt.Errorf("%s: the precision must be a constant", strings.ToUpper(name))
	}
	v, _, err := types.Int64.Convert(gsql.NewEmptyContext(), lit.Value())
	if err != nil {
		return 0, fmt.Errorf("%s: %w", strings.ToUpper(name), err)
	}
	n := v.(int64)
	if n < 0 || n > 6 {
		return 0, mysql.NewSQLError(1426, "42000", "Too-big precision %d specified for '%s'. Maximum is 6.", n, name)
	}
	return int(n), nil
}
