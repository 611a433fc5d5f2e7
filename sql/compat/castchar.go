package compat

import (
	"reflect"
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// CAST(x AS CHAR(N)) of a value whose text is longer than N characters
// keeps the first N and warns 1292 "Truncated incorrect CHAR(N) value:
// '<text>'" in MySQL; GMS cut it silently. charCast is such a cast of
// a string or a number, which warns.

// charCast is CAST(x AS CHAR(N)) (or NCHAR(N)) of a string or a number.
type charCast struct {
	*expression.Convert
	n int
}

var _ gsql.Expression = (*charCast)(nil)

// castToChar returns e as a charCast when it is a CAST to CHAR(N) or
// NCHAR(N) of a string or a number.
func castToChar(e gsql.Expression) (gsql.Expression, bool) {
	c, ok := e.(*expression.Convert)
	if !ok {
		return e, false
	}
	switch convertTarget(c) {
	case expression.ConvertToChar, expression.ConvertToNChar:
	default:
		return e, false
	}
	n := convertLength(c)
	if t := c.Child.Type(); n <= 0 || !types.IsText(t) && !types.IsNumber(t) {
		return e, false
	}
	return &charCast{Convert: c, n: n}, true
}

// convertLength is the N of a CAST to CHAR(N) (0 without one), which
// GMS keeps unexported, as the target (convertTarget).
func convertLength(c *expression.Convert) int {
	return int(reflect.ValueOf(c).Elem().FieldByName("typeLength").Int())
}

// Eval implements sql.Expression: GMS's cast, with the warning when it
// cut the value.
func (c *charCast) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	full, err := valueText(ctx, c.Child.Type(), v) // groupconcat.go
	if err != nil {
		return c.Convert.Eval(ctx, row)
	}
	if utf8.RuneCountInString(full) <= c.n {
		return c.Convert.Eval(ctx, row)
	}
	ctx.Warn(1292, "Truncated incorrect CHAR(%d) value: '%s'", c.n, full)
	return string([]rune(full)[:c.n]), nil
}

// WithChildren implements sql.Expression.
func (c *charCast) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	n, err := c.Convert.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if s, ok := castToChar(n); ok {
		return s, nil
	}
	return n, nil
}
