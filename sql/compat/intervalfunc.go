package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// INTERVAL(N, N1, N2, ...) is the index of the last Ni not above N: 0
// when N < N1, 1 when N1 <= N < N2, ...; -1 when N is NULL; a NULL Ni
// is skipped. GMS's grammar has no such function (INTERVAL starts a
// time interval there: 1064), so the parse fallback writes it as
// percdb_interval(...) (syntax.go) when the parenthesis after INTERVAL
// holds a list, which an interval's operand never is. N and an Ni
// that are both integers or DECIMALs compare exactly, any other pair
// as DOUBLEs. The list is read in order, stopping at the first Ni above
// N, as MariaDB does for every list and MySQL for a list that is not
// constant (MySQL binary-searches a constant list, which gives the same
// answer when the list is sorted, as the function requires).

// intervalIndexName is the name the parse fallback gives INTERVAL().
const intervalIndexName = "percdb_interval_index"

// intervalIndexFunctions holds INTERVAL() under that name.
var intervalIndexFunctions = map[string]gsql.Function{
	intervalIndexName: gsql.FunctionN{Name: intervalIndexName, Fn: newIntervalIndex},
}

// newIntervalIndex returns INTERVAL(args...); MySQL's 1064 (a syntax
// error there) for fewer than two arguments.
func newIntervalIndex(args ...gsql.Expression) (gsql.Expression, error) {
	if len(args) < 2 {
		return nil, gsql.ErrInvalidArgumentNumber.New("INTERVAL", "2 or more", len(args))
	}
	return &intervalIndex{args: args}, nil
}

// intervalIndex is INTERVAL(N, N1, ...).
type intervalIndex struct {
	args []gsql.Expression
}

var _ gsql.FunctionExpression = (*intervalIndex)(nil)

// FunctionName implements sql.FunctionExpression.
func (f *intervalIndex) FunctionName() string { return "interval" }

// Description implements sql.FunctionExpression.
func (f *intervalIndex) Description() string {
	return "MySQL's INTERVAL(N, N1, ...): the index of the last Ni not above N"
}

// Resolved implements sql.Expression.
func (f *intervalIndex) Resolved() bool {
	for _, a := range f.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

// String implements sql.Expression.
func (f *intervalIndex) String() string {
	parts := make([]string, len(f.args))
	for i, a := range f.args {
		parts[i] = a.String()
	}
	return fmt.Sprintf("interval(%s)", strings.Join(parts, ", "))
}

// Type implements sql.Expression: BIGINT, never NULL.
func (f *intervalIndex) Type() gsql.Type { return types.Int64 }

// IsNullable implements sql.Expression.
func (f *intervalIndex) IsNullable() bool { return false }

// Children implements sql.Expression.
func (f *intervalIndex) Children() []gsql.Expression { return f.args }

// WithChildren implements sql.Expression.
func (f *intervalIndex) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(f.args) {
		return nil, gsql.ErrInvalidChildrenNumber.New(f, len(children), len(f.args))
	}
	return &intervalIndex{args: children}, nil
}

// Eval implements sql.Expression.
func (f *intervalIndex) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	n, err := f.args[0].Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return int64(-1), nil
	}
	_, _, exactN := exactDigits(f.args[0].Type())
	i := 1
	for ; i < len(f.args); i++ {
		v, err := f.args[i].Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		above, err := intervalAbove(ctx, v, n, exactN && isExact(f.args[i].Type()))
		if err != nil {
			return nil, err
		}
		if above {
			break
		}
	}
	return int64(i - 1), nil
}

// isExact reports whether t is an integer or DECIMAL type.
func isExact(t gsql.Type) bool {
	_, _, ok := exactDigits(t)
	return ok
}

// intervalAbove reports whether v is above n, compared exactly when
// exact, else as DOUBLEs (a value that is not a number is 0).
func intervalAbove(ctx *gsql.Context, v, n any, exact bool) (bool, error) {
	if exact {
		dv, ok1 := decimalOf(ctx, v)
		dn, ok2 := decimalOf(ctx, n)
		if ok1 && ok2 {
			return dv.GreaterThan(dn), nil
		}
	}
	fv, _ := doubleOf(ctx, v)
	fn, _ := doubleOf(ctx, n)
	return fv > fn, nil
}
