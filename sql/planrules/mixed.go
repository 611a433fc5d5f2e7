package planrules

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL compares a string with a number as two doubles, so s = 5 holds
// for s '5', '5.0' and ' 5': no range of an index on s holds exactly
// those strings, and MySQL reads such a comparison by a scan. GMS built
// a range from the number converted to the column's type instead (the
// single string '5', which missed '5.0'; a number longer than the column
// failed the statement with "too large for column"). unsargableStrings
// hides the column of such a comparison from GMS's range builder (a
// notSargable over it), leaving its answer as it was.

// unsargableStrings returns e with every string column compared with a
// number that is not a column wrapped in notSargable.
func unsargableStrings(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	return transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		var l, r gsql.Expression
		switch c := e.(type) {
		case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.GreaterThan, *expression.GreaterThanOrEqual:
			ch := c.Children()
			l, r = ch[0], ch[1]
		case *expression.InTuple:
			l, r = c.Left(), c.Right()
		case *expression.HashInTuple:
			l, r = c.Left(), c.Right()
		default:
			return e, transform.SameTree, nil
		}
		ch := e.Children()
		switch {
		case stringColumn(l) && numberValue(r):
			ch = []gsql.Expression{&notSargable{expression.UnaryExpression{Child: l}}, r}
		case stringColumn(r) && numberValue(l):
			ch = []gsql.Expression{l, &notSargable{expression.UnaryExpression{Child: r}}}
		default:
			return e, transform.SameTree, nil
		}
		ret, err := e.WithChildren(ch...)
		if err != nil {
			return e, transform.SameTree, err
		}
		return ret, transform.NewTree, nil
	})
}

// stringColumn reports whether e is a column of a string type.
func stringColumn(e gsql.Expression) bool {
	gf, ok := e.(*expression.GetField)
	return ok && types.IsText(gf.Type())
}

// numberValue reports whether e is a number, or a list holding one,
// that does not depend on a column.
func numberValue(e gsql.Expression) bool {
	number, column := false, false
	check := func(v gsql.Expression) {
		if types.IsNumber(v.Type()) {
			number = true
		}
		transform.InspectExpr(v, func(x gsql.Expression) bool {
			if _, ok := x.(*expression.GetField); ok {
				column = true
			}
			return column
		})
	}
	if t, ok := e.(expression.Tuple); ok {
		for _, v := range t {
			check(v)
		}
	} else {
		check(e)
	}
	return number && !column
}

// notSargable is a column GMS does not build index ranges from: it is
// the column in every other respect.
type notSargable struct {
	expression.UnaryExpression
}

var _ gsql.CollationCoercible = (*notSargable)(nil)

// Type implements sql.Expression.
func (e *notSargable) Type() gsql.Type { return e.Child.Type() }

// Eval implements sql.Expression.
func (e *notSargable) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	return e.Child.Eval(ctx, row)
}

// String implements sql.Expression.
func (e *notSargable) String() string { return e.Child.String() }

// WithChildren implements sql.Expression.
func (e *notSargable) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	return &notSargable{expression.UnaryExpression{Child: children[0]}}, nil
}

// CollationCoercibility implements sql.CollationCoercible.
func (e *notSargable) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, e.Child)
}
