package compat

import (
	"reflect"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
)

// MySQL's CAST(x AS SIGNED) of an unsigned integer keeps its 64 bits:
// CAST(18446744073709551615 AS SIGNED) is -1, as CAST(-1 AS UNSIGNED) is
// 18446744073709551615. GMS converts an unsigned value above BIGINT's
// largest to that largest value, 9223372036854775807.
//
// castToSigned puts signedCast in the place of such a CAST when its
// operand is an unsigned integer; other operands stay GMS's.

// signedCast is CAST(x AS SIGNED) of an unsigned integer x.
type signedCast struct {
	*expression.Convert
}

var _ gsql.Expression = (*signedCast)(nil)

// castToSigned returns e as a signedCast when it is a CAST to SIGNED of
// an unsigned integer.
func castToSigned(e gsql.Expression) (gsql.Expression, bool) {
	c, ok := e.(*expression.Convert)
	if !ok || operandKind(c.Child) != UnsignedInt {
		return e, false
	}
	if convertTarget(c) != expression.ConvertToSigned {
		return e, false
	}
	return &signedCast{Convert: c}, true
}

// convertTarget is the type c converts to (expression.ConvertToSigned,
// ...), which GMS keeps unexported: the one place percdb reads it.
func convertTarget(c *expression.Convert) string {
	return reflect.ValueOf(c).Elem().FieldByName("castToType").String()
}

// Eval implements sql.Expression.
func (c *signedCast) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, null, ok, err := evalInt(ctx, c.Child, UnsignedInt, row)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return c.Convert.Eval(ctx, row)
	case null:
		return nil, nil
	}
	return int64(v.mag), nil // two's complement, as MySQL
}

// WithChildren implements sql.Expression.
func (c *signedCast) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	n, err := c.Convert.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if s, ok := castToSigned(n); ok {
		return s, nil
	}
	return n, nil
}
