package compat

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL's CAST(s AS SIGNED) and CAST(s AS UNSIGNED) of a string read it
// as an integer, by its leading digits, as my_strtoll10 does: spaces, a
// sign, then digits up to the first other character. '12abc' is 12,
// '1.5' is 1, '1e3' is 1, 'abc' and '' are 0; whatever is left unread
// (trailing spaces included) warns 1292 "Truncated incorrect INTEGER
// value". A number beyond 64 bits is clipped to the largest unsigned
// one (18446744073709551615, which SIGNED reads as -1) or, negative, to
// -9223372036854775808, with the same warning; one that fits 64 bits
// but not a BIGINT turns negative under SIGNED and warns 1105 "Cast to
// signed converted positive out-of-range integer to it's negative
// complement"; a negative one under UNSIGNED keeps its bits and warns
// 1105 "Cast to unsigned converted negative integer to it's positive
// complement" (MySQL 8's Item_func_signed and Item_func_unsigned).
//
// GMS parsed the string as a DOUBLE and rounded it ('1.5' was 2), gave
// 0 with no warning for anything that is not a number as a whole
// ('12abc' was 0), and clipped a large one to BIGINT's bounds.

// stringIntCast is CAST(s AS SIGNED) or CAST(s AS UNSIGNED) of a string s.
type stringIntCast struct {
	*expression.Convert
	unsigned bool
}

var _ gsql.Expression = (*stringIntCast)(nil)

// castStringToInt returns e as a stringIntCast when it is a CAST to
// SIGNED or UNSIGNED of a string.
func castStringToInt(e gsql.Expression) (gsql.Expression, bool) {
	c, ok := e.(*expression.Convert)
	if !ok || !types.IsText(c.Child.Type()) {
		return e, false
	}
	switch convertTarget(c) {
	case expression.ConvertToSigned:
		return &stringIntCast{Convert: c}, true
	case expression.ConvertToUnsigned:
		return &stringIntCast{Convert: c, unsigned: true}, true
	}
	return e, false
}

// Eval implements sql.Expression.
func (c *stringIntCast) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := c.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	s, ok := v.(string)
	if !ok {
		sv, _, err := types.LongText.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		s, _ = sv.(string)
	}
	n := parseLeadingInt(s)
	constant := isConstant(c.Child)
	if n.truncated || n.overflow {
		warnOnce(ctx, codeTruncatedWrongValue, fmt.Sprintf("Truncated incorrect INTEGER value: '%s'", s), constant)
	}
	switch {
	case c.unsigned:
		if n.negative && !n.overflow && !n.truncated {
			warnOnce(ctx, codeUnknownError, "Cast to unsigned converted negative integer to it's positive complement", constant)
		}
		return n.bits, nil
	case !n.negative && !n.overflow && !n.truncated && int64(n.bits) < 0:
		warnOnce(ctx, codeUnknownError, "Cast to signed converted positive out-of-range integer to it's negative complement", constant)
	}
	return int64(n.bits), nil
}

// codeUnknownError is MySQL's ER_UNKNOWN_ERROR (1105), which its casts
// warn with.
const codeUnknownError = 1105

// leadingInt is what parseLeadingInt read from a string.
type leadingInt struct {
	// bits is the integer's 64 bits (two's complement when negative).
	bits uint64
	// negative: it had a minus sign (and no error).
	negative bool
	// overflow: it did not fit 64 bits and was clipped.
	overflow bool
	// truncated: something was left unread, or there was no digit.
	truncated bool
}

// parseLeadingInt reads s as MySQL's my_strtoll10 does: spaces and tabs,
// a sign, then digits, to the first character that is not one.
func parseLeadingInt(s string) leadingInt {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var mag uint64
	overflow := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if mag > (^uint64(0)-d)/10 {
			overflow = true
			continue
		}
		mag = mag*10 + d
	}
	r := leadingInt{truncated: i == start || i != len(s)}
	switch {
	case neg && (overflow || mag > 1<<63):
		r.bits, r.overflow = 1<<63, true
	case overflow:
		r.bits, r.overflow = ^uint64(0), true
	case neg:
		r.bits, r.negative = -mag, true
	default:
		r.bits = mag
	}
	return r
}

// warnOnce warns with code and msg, once a statement when the value is a
// constant (MySQL converts a constant once), once a row otherwise.
func warnOnce(ctx *gsql.Context, code int, msg string, constant bool) {
	if constant && ctx.Session.WarningCount() > 0 {
		for _, w := range ctx.Session.Warnings() {
			if w.Code == code && w.Message == msg {
				return
			}
		}
	}
	ctx.Warn(code, "%s", msg)
}

// WithChildren implements sql.Expression.
func (c *stringIntCast) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	n, err := c.Convert.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	if s, ok := castStringToInt(n); ok {
		return s, nil
	}
	return n, nil
}

// MySQL's CAST(s AS DOUBLE) (and AS REAL) of a string reads it as
// strtod does, by its numeric prefix, and warns 1292 "Truncated
// incorrect DOUBLE value" when something is left unread or the number is
// beyond a DOUBLE (which becomes the largest DOUBLE, of its sign):
// CAST('12abc' AS DOUBLE) is 12, CAST('1e400' AS DOUBLE)
// 1.7976931348623157e308, each with the warning. GMS gave 0 without a
// warning for both. stringDoubleCast reads it as a string compared with
// a number is read (stringNumber, strnum.go).
type stringDoubleCast struct {
	*expression.Convert
}

var _ gsql.Expression = (*stringDoubleCast)(nil)

// castStringToDouble returns e as a stringDoubleCast when it is a CAST
// to DOUBLE or REAL of a string.
func castStringToDouble(e gsql.Expression) (gsql.Expression, bool) {
	c, ok := e.(*expression.Convert)
	if !ok || !types.IsText(c.Child.Type()) {
		return e, false
	}
	switch convertTarget(c) {
	case expression.ConvertToDouble, expression.ConvertToReal:
		return &stringDoubleCast{Convert: c}, true
	}
	return e, false
}

// Type implements sql.Expression.
func (c *stringDoubleCast) Type() gsql.Type { return types.Float64 }

// Eval implements sql.Expression.
func (c *stringDoubleCast) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	return (&stringNumber{UnaryExpression: expression.UnaryExpression{Child: c.Child}}).Eval(ctx, row)
}

// WithChildren implements sql.Expression.
func (c *stringDoubleCast) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	ret, err := c.Convert.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	conv, ok := ret.(*expression.Convert)
	if !ok {
		return ret, nil
	}
	return &stringDoubleCast{Convert: conv}, nil
}
