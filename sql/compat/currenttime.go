package compat

import (
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// The current time's fractional digits. GMS types NOW(n),
// CURRENT_TIMESTAMP(n), LOCALTIME(n), LOCALTIMESTAMP(n) and SYSDATE(n)
// as DATETIME(6) whatever n, so a client was sent NOW(3) with six digits
// and a string function read it so ('2026-11-27 06:50:00.123000', where
// MySQL writes '...00.123'); CURTIME(n) and CURRENT_TIME(n) are GMS's
// strings of whole seconds ('06:50:00' for CURTIME(3)). nowDigits types
// the first under a temporalResult of DATETIME(n); percdb's CURTIME and
// CURRENT_TIME are the TIME(n) of the time of day of NOW(n).

// currentTimeFunctions are CURTIME and CURRENT_TIME, by name. It is not
// changed after the package is initialized.
var currentTimeFunctions = map[string]gsql.Function{
	"curtime": gsql.FunctionN{Name: "curtime", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return newCurTime("curtime", args)
	}},
	"current_time": gsql.FunctionN{Name: "current_time", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return newCurTime("current_time", args)
	}},
}

// newCurTime returns CURTIME([fsp]) (or CURRENT_TIME, by name): the
// time of day of NOW(fsp), in the session's time zone, a TIME(fsp).
func newCurTime(name string, args []gsql.Expression) (gsql.Expression, error) {
	digits, err := fspArgument(name, args) // utc.go
	if err != nil {
		return nil, err
	}
	now, err := function.NewNow(expression.NewLiteral(int8(digits), types.Int8))
	if err != nil {
		return nil, err
	}
	return newTemporalFunc(name, func(ctx *gsql.Context, _ []any, _ []gsql.Expression) (any, error) {
		v, err := now.Eval(ctx, nil)
		t, ok := v.(time.Time)
		if err != nil || !ok {
			return nil, err
		}
		return timeOfDay(t), nil // timevalues.go
	}, fixedType(timeType(digits)), args...), nil
}

// nowDigits returns NOW(n) (or its synonyms, or SYSDATE(n)) typed as
// MySQL's DATETIME(n), and whether n is from 0 to 5 (GMS's type,
// DATETIME(6), is right for 6).
func nowDigits(n *function.Now) (gsql.Expression, bool) {
	children := n.Children()
	if len(children) != 1 {
		return n, false
	}
	digits, err := fspArgument(n.FunctionName(), children)
	if err != nil || digits == 6 {
		return n, false
	}
	return &temporalResult{UnaryExpression: expression.UnaryExpression{Child: n}, typ: types.MustCreateDatetimeType(sqltypes.Datetime, digits)}, true
}
