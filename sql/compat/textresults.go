package compat

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS types SUBSTRING (SUBSTR, MID), REVERSE, LOWER, UPPER, LTRIM and
// RTRIM as their string argument: of a DATE, a DATE; of an INT, an INT.
// Their value is text all the same, so an expression over them read the
// text as the argument's type: COALESCE(SUBSTRING(d, 6), 0) of a DATE
// '1999-12-31' merged a DATE with a number and made '12-31' a date (0,
// warning 1292) where MySQL answers '12-31'; COALESCE(LOWER(a), 0.5) of
// an INT 9 was 9.0 (MySQL '9'). MySQL types them as strings whatever the
// argument. textResults wraps such a function of a non-string argument,
// as an operand of another expression, in a textResult, a string of the
// function's value.

// textResults returns e with those of its operands that are one of
// those functions, typed other than as a string, wrapped (the operands,
// not e itself, so that the rule, run again over the plan, wraps each
// once).
func textResults(e gsql.Expression) (gsql.Expression, bool) {
	if _, done := e.(*textResult); done {
		return e, false
	}
	return withReplacedChildren(e, func(_ int, c gsql.Expression) gsql.Expression {
		switch c.(type) {
		case *function.Substring, *function.Reverse, *function.Lower, *function.Upper,
			*function.LeftTrim, *function.RightTrim:
		default:
			return nil
		}
		if t := c.Type(); t == types.Null || types.IsText(t) {
			return nil
		}
		return &textResult{UnaryExpression: expression.UnaryExpression{Child: c}}
	})
}

// textResult is a string function's value typed as a string (see
// textResults).
type textResult struct {
	expression.UnaryExpression
}

var _ gsql.CollationCoercible = (*textResult)(nil)

// String implements sql.Expression: the function's, so that names stay
// as written.
func (t *textResult) String() string { return t.Child.String() }

// DebugString shows the wrapper.
func (t *textResult) DebugString() string { return fmt.Sprintf("text_result(%s)", t.Child) }

// Type implements sql.Expression.
func (t *textResult) Type() gsql.Type { return types.LongText }

// CollationCoercibility implements sql.CollationCoercible: the
// connection's collation, as a number's text has in MySQL.
func (t *textResult) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return ctx.GetCollation(), 4
}

// Eval implements sql.Expression: the function's value as text.
func (t *textResult) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := t.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	s, _, err := types.LongText.Convert(ctx, v)
	return s, err
}

// WithChildren implements sql.Expression.
func (t *textResult) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(t, len(children), 1)
	}
	return &textResult{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}
