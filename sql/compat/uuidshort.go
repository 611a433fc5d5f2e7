package compat

import (
	"sync/atomic"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// UUIDShort is UUID_SHORT() of one server (GMS has none: 1305): a
// BIGINT UNSIGNED made, as MySQL makes it, of the low byte of server_id
// in the top 8 bits, the server's start time in seconds from bit 24
// and a count of the calls since the start, so that values are unique
// on a server and increase. Its owner is the server's
// DatabaseProvider, which makes one when it starts.
type UUIDShort struct {
	start uint64        // the start time in seconds
	calls atomic.Uint64 // calls so far
}

// NewUUIDShort returns the UUID_SHORT() of a server started at start.
func NewUUIDShort(start time.Time) *UUIDShort {
	return &UUIDShort{start: uint64(start.Unix())}
}

// Function returns UUID_SHORT as a function of the catalog.
func (u *UUIDShort) Function() gsql.Function {
	return gsql.Function0{Name: "uuid_short", Fn: func() gsql.Expression { return &uuidShortCall{u: u} }}
}

// next returns the next value, for a server of id serverID.
func (u *UUIDShort) next(serverID uint64) uint64 {
	return (serverID&255)<<56 + u.start<<24 + u.calls.Add(1) - 1
}

// uuidShortCall is one UUID_SHORT() of a statement: a new value each
// time it is evaluated.
type uuidShortCall struct {
	u *UUIDShort
}

var _ gsql.FunctionExpression = (*uuidShortCall)(nil)
var _ gsql.NonDeterministicExpression = (*uuidShortCall)(nil)

// FunctionName implements sql.FunctionExpression.
func (c *uuidShortCall) FunctionName() string { return "uuid_short" }

// Description implements sql.FunctionExpression.
func (c *uuidShortCall) Description() string {
	return "returns a short universal identifier as a 64-bit unsigned integer"
}

// Resolved implements sql.Expression.
func (c *uuidShortCall) Resolved() bool { return true }

// String implements sql.Expression.
func (c *uuidShortCall) String() string { return "uuid_short()" }

// Type implements sql.Expression.
func (c *uuidShortCall) Type() gsql.Type { return types.Uint64 }

// IsNullable implements sql.Expression.
func (c *uuidShortCall) IsNullable() bool { return false }

// IsNonDeterministic implements sql.NonDeterministicExpression: GMS must
// not fold it into a constant.
func (c *uuidShortCall) IsNonDeterministic() bool { return true }

// Children implements sql.Expression.
func (c *uuidShortCall) Children() []gsql.Expression { return nil }

// WithChildren implements sql.Expression.
func (c *uuidShortCall) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), 0)
	}
	return c, nil
}

// Eval implements sql.Expression.
func (c *uuidShortCall) Eval(ctx *gsql.Context, _ gsql.Row) (any, error) {
	var id uint64
	if v, err := ctx.GetSessionVariable(ctx, "server_id"); err == nil {
		if n, _, err := types.Uint64.Convert(ctx, v); err == nil {
			id, _ = n.(uint64)
		}
	}
	return c.u.next(id), nil
}
