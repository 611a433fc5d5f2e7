package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// COLLATION(x) names x's collation, which its type gives, whatever its
// value: MySQL's Item_func_collation reads args[0]->collation and never
// the value. GMS answered 'binary' whenever the value was NULL, so
// COLLATION(NULLIF('a', 'a')) and COLLATION of a NULL in a string column
// were 'binary' (MySQL: the string's collation). NULL itself (the
// literal) is binary in MySQL too; GMS's coercibility of it says so.

// collationFunctions is COLLATION, by name.
var collationFunctions = map[string]gsql.Function{
	"collation": gsql.Function1{Name: "collation", Fn: func(x gsql.Expression) gsql.Expression {
		return &collationName{UnaryExpression: expression.UnaryExpression{Child: x}}
	}},
}

// collationName is COLLATION(Child).
type collationName struct {
	expression.UnaryExpression
}

var _ gsql.FunctionExpression = (*collationName)(nil)
var _ gsql.CollationCoercible = (*collationName)(nil)

// FunctionName implements sql.FunctionExpression.
func (c *collationName) FunctionName() string { return "collation" }

// Description implements sql.FunctionExpression.
func (c *collationName) Description() string { return "MySQL's COLLATION" }

// Type implements sql.Expression: a string in utf8mb3, as MySQL's.
func (c *collationName) Type() gsql.Type { return types.LongText }

// IsNullable implements sql.Expression: never NULL.
func (c *collationName) IsNullable() bool { return false }

// CollationCoercibility implements sql.CollationCoercible: a coercible
// utf8mb3 string (COERCIBILITY(COLLATION('a')) is 4 in MariaDB and GMS).
func (c *collationName) CollationCoercibility(*gsql.Context) (gsql.CollationID, byte) {
	return gsql.Collation_utf8mb3_general_ci, 4
}

// String implements sql.Expression.
func (c *collationName) String() string { return "collation(" + c.Child.String() + ")" }

// Eval implements sql.Expression: the collation of the argument's type
// and derivation; the argument is not evaluated.
func (c *collationName) Eval(ctx *gsql.Context, _ gsql.Row) (any, error) {
	collation, _ := gsql.GetCoercibility(ctx, c.Child)
	return collation.Name(), nil
}

// WithChildren implements sql.Expression.
func (c *collationName) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	return &collationName{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}
