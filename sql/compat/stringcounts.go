package compat

import (
	"fmt"
	"math"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// A string where a string function takes a count or a position (LEFT's
// length, SUBSTRING's position and length, REPEAT's count, LPAD's
// length). MySQL reads it with val_int, by its leading digits as
// my_strtoll10 does (caststring.go's parseLeadingInt): LEFT('abcdef',
// '2.5') is 'ab', SUBSTRING('abcdef', '2x') 'bcdef', each with warning
// 1292 "Truncated incorrect INTEGER value". GMS read the string as a
// DOUBLE and rounded it ('2.5' took three characters) without a
// warning. A DOUBLE count is rounded half to even, as MySQL's rint
// (LEFT('abcdef', 2.5e0) is 'ab', 3.5e0 takes four), where GMS rounded
// half away from zero; a DECIMAL one is rounded half away from zero, as
// GMS did (LEFT('abcdef', 2.5) is 'abc').

// stringCountPositions are, by function (lower-case name), the positions
// of the arguments MySQL reads as integers. It is not changed after the
// package is initialized.
var stringCountPositions = map[string][]int{
	"left": {1}, "right": {1}, "repeat": {1}, "space": {0},
	"substring": {1, 2}, "substr": {1, 2}, "mid": {1, 2},
	"lpad": {1}, "rpad": {1}, "insert": {1, 2}, "locate": {2}, "substring_index": {2},
}

// stringCounts returns e with its string count arguments read as MySQL
// reads them, when e is such a function with one.
func stringCounts(e gsql.Expression) (gsql.Expression, bool) {
	f, ok := e.(gsql.FunctionExpression)
	if !ok {
		return e, false
	}
	positions := stringCountPositions[strings.ToLower(f.FunctionName())]
	if positions == nil {
		return e, false
	}
	return withReplacedChildren(e, func(i int, c gsql.Expression) gsql.Expression {
		if c == nil || !containsInt(positions, i) || !types.IsText(c.Type()) && !types.IsFloat(c.Type()) {
			return nil
		}
		if _, done := c.(*stringCount); done {
			return nil
		}
		return &stringCount{UnaryExpression: expression.UnaryExpression{Child: c}}
	})
}

// stringCount is a string read as an integer count by its leading
// digits, or a DOUBLE rounded half to even.
type stringCount struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*stringCount)(nil)

// Type implements sql.Expression.
func (s *stringCount) Type() gsql.Type { return types.Int64 }

// String implements sql.Expression: the argument's own text, so that
// names stay as written.
func (s *stringCount) String() string { return s.Child.String() }

// Eval implements sql.Expression.
func (s *stringCount) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := s.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	switch f := v.(type) {
	case float64:
		return roundedCount(f), nil
	case float32:
		return roundedCount(float64(f)), nil
	}
	text, ok := v.(string)
	if !ok {
		if text, err = types.ConvertToString(ctx, v, types.LongText, nil); err != nil {
			return nil, err
		}
	}
	n := parseLeadingInt(text)
	if n.truncated || n.overflow {
		warnOnce(ctx, codeTruncatedWrongValue, fmt.Sprintf("Truncated incorrect INTEGER value: '%s'", text), isConstant(s.Child))
	}
	return int64(n.bits), nil
}

// WithChildren implements sql.Expression.
func (s *stringCount) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(s, len(children), 1)
	}
	return &stringCount{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// roundedCount is f rounded half to even (C's rint), clipped to BIGINT.
func roundedCount(f float64) int64 {
	r := math.RoundToEven(f)
	switch {
	case r >= math.MaxInt64:
		return math.MaxInt64
	case r <= math.MinInt64:
		return math.MinInt64
	}
	return int64(r)
}
