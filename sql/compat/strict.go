package compat

import (
	"fmt"
	"regexp"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
)

// MySQL compares a number with a string as numbers, and a string that
// is not a number ('abc', '1x') converts with a warning, 1292 "Truncated
// incorrect DOUBLE value". Under a strict sql_mode the warning of an
// UPDATE or DELETE is an error, and the statement changes nothing: with
// a row whose b is 1, UPDATE t SET ... WHERE b = 'abc' fails with 1292.
// GMS converts such strings to 0 silently, so the statement ran.
// StrictComparisons, applied to UPDATE and DELETE under STRICT_TRANS_TABLES
// or STRICT_ALL_TABLES, puts a check around the string side of each
// comparison of a number with a string: the comparison fails with 1292
// when it meets a value that is not a number, as MySQL's does (only when
// it is evaluated: WHERE a = 3 AND b = 'abc' with no row of a = 3 runs).

// Error 1292, ER_TRUNCATED_WRONG_VALUE.
const (
	codeTruncatedWrongValue  = 1292
	stateTruncatedWrongValue = "22007"
)

// numericString matches a string MySQL converts to a number without a
// warning: spaces, a sign, digits with a point, an exponent, spaces.
var numericString = regexp.MustCompile(`^[ \t\n\r]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\n\r]*$`)

// StrictComparisons returns n with its comparisons of numbers with
// strings checked, and whether it changed anything; n unchanged outside
// a strict sql_mode.
func StrictComparisons(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	if !strictMode(ctx) {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprsWithOpaque(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *expression.Equals, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.NullSafeEquals:
			c := e.(expression.Comparer)
			// The string of a comparison with a number that
			// strnum.go reads as a number is checked as it is.
			l, r := unwrapStringNumber(c.Left()), unwrapStringNumber(c.Right())
			switch {
			case needsNumericCheck(l.Type(), r):
				r = &strictNumber{child: r}
			case needsNumericCheck(r.Type(), l):
				l = &strictNumber{child: l}
			default:
				return e, transform.SameTree, nil
			}
			ret, err := e.WithChildren(l, r)
			return ret, transform.NewTree, err
		case *expression.InTuple, *expression.HashInTuple:
			// A HashInTuple becomes the InTuple it stands for: its
			// hash was made of the unchecked values.
			c := e.(expression.Comparer)
			tup, ok := c.Right().(expression.Tuple)
			if !ok || !types.IsNumber(c.Left().Type()) {
				return e, transform.SameTree, nil
			}
			var out expression.Tuple
			for i, v := range tup {
				if !needsNumericCheck(c.Left().Type(), v) {
					continue
				}
				if out == nil {
					out = append(expression.Tuple(nil), tup...)
				}
				out[i] = &strictNumber{child: v}
			}
			if out == nil {
				return e, transform.SameTree, nil
			}
			if _, hashed := e.(*expression.HashInTuple); hashed {
				// Its hashing's warnings go with it (rows.go).
				forgetHashWarnings(ctx, expression.NewInTuple(c.Left(), tup))
			}
			return expression.NewInTuple(c.Left(), out), transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// needsNumericCheck reports whether other, compared with a value of type
// t, is a string that MySQL converts to a number (t is a number) and is
// not checked yet.
func needsNumericCheck(t gsql.Type, other gsql.Expression) bool {
	if _, done := other.(*strictNumber); done {
		return false
	}
	return types.IsNumber(t) && types.IsText(other.Type())
}

// strictNumber is a string compared with a number: its value, or error
// 1292 when that is not a number.
type strictNumber struct {
	child gsql.Expression
}

var _ gsql.Expression = (*strictNumber)(nil)

// Resolved implements sql.Expression.
func (s *strictNumber) Resolved() bool { return s.child.Resolved() }

// String implements sql.Expression.
func (s *strictNumber) String() string { return s.child.String() }

// Type implements sql.Expression.
func (s *strictNumber) Type() gsql.Type { return s.child.Type() }

// IsNullable implements sql.Expression.
func (s *strictNumber) IsNullable() bool { return s.child.IsNullable() }

// Children implements sql.Expression.
func (s *strictNumber) Children() []gsql.Expression { return []gsql.Expression{s.child} }

// WithChildren implements sql.Expression.
func (s *strictNumber) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(s, len(children), 1)
	}
	return &strictNumber{child: children[0]}, nil
}

// Eval implements sql.Expression.
func (s *strictNumber) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := s.child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	var str string
	switch v := v.(type) {
	case string:
		str = v
	case []byte:
		str = string(v)
	default:
		return v, nil
	}
	if !numericString.MatchString(str) {
		return nil, mysql.NewSQLError(codeTruncatedWrongValue, stateTruncatedWrongValue, "Truncated incorrect DOUBLE value: %s", quoteValue(str))
	}
	return v, nil
}

// quoteValue writes a value in an error message as MySQL does.
func quoteValue(s string) string { return fmt.Sprintf("'%s'", s) }

// unwrapStringNumber returns the string a stringNumber reads, or e.
func unwrapStringNumber(e gsql.Expression) gsql.Expression {
	if s, ok := e.(*stringNumber); ok {
		return s.Child
	}
	return e
}
