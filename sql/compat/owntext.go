package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// A CASE, IF, GREATEST or LEAST of integers and DECIMALs is typed
// DECIMAL at the widest argument's scale, and MySQL sends it as a result
// column at that scale (Item::send, store_decimal), but its value is the
// chosen argument's own: Item_func_case::val_decimal and val_str return
// the found argument's, as Item_func_if's do, and Item_func_min_max
// writes the found argument's val_decimal without a scale
// (my_decimal2string(..., 0, 0, 0, str)); a set operation's string
// column stores a DECIMAL value at its own scale (Field_str's
// store_decimal). So in a string UNION, EXCEPT or INTERSECT column the
// ELSE c9 branch of CASE ... THEN 0.0 ELSE c9 END, of an INT 5, is '5',
// and LEAST(c0, 2.5) of a BIGINT 2 is '2', as MariaDB answers too; GMS
// (and percdb's GREATEST and LEAST) rescale the value to the type, and
// the text was '5.0' and '2.0' (the difftest's wide run, seeds 10052,
// 10094, 10024). COALESCE and IFNULL are not so: MySQL writes them at
// the type's scale (Item_func_numhybrid).
//
// OwnDecimalText, an analyzer rule run after RetypeUnions, wraps such a
// select item of a set operation's side whose column is a string in
// ownDecimal, which keeps the DECIMAL type and gives the chosen
// argument's value at its own scale; the side's conversion to the
// string writes it as it is (StringFixed of the value's exponent).
// Read as a string elsewhere (CONCAT, CAST AS CHAR) it is left at the
// type's scale: MariaDB writes it so there (its val_str rounds to the
// type) where MySQL's val_str is the chosen argument's; left until a
// MySQL 8 can be asked.

// OwnDecimalText is the analyzer rule; see the comment above.
func OwnDecimalText(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(c gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		so, ok := c.(*plan.SetOp)
		if !ok {
			return c, transform.SameTree, nil
		}
		return ownTextSetOp(so)
	})
}

// ownTextSetOp wraps the select items of so's sides that feed a string
// column of so.
func ownTextSetOp(so *plan.SetOp) (gsql.Node, transform.TreeIdentity, error) {
	same := transform.SameTree
	sides := []gsql.Node{so.Left(), so.Right()}
	for i, col := range so.Schema() {
		if !types.IsText(col.Type) {
			continue
		}
		for s := range sides {
			side, changed, err := ownTextColumn(sides[s], i)
			if err != nil {
				return nil, transform.SameTree, err
			}
			if changed {
				sides[s], same = side, transform.NewTree
			}
		}
	}
	if same {
		return so, transform.SameTree, nil
	}
	ret, err := so.WithChildren(sides...)
	if err != nil {
		return nil, transform.SameTree, fmt.Errorf("own text of a set operation: %w", err)
	}
	return ret, transform.NewTree, nil
}

// ownTextColumn wraps the select item that gives column i of a set
// operation's side n, looking through the conversion GMS puts above a
// side (a projection of its columns, converted) and the nodes that keep
// a side's columns in place. A nested set operation's column is its own
// (converted at its own type), so it is left alone.
func ownTextColumn(n gsql.Node, i int) (gsql.Node, bool, error) {
	switch n := n.(type) {
	case *plan.Project:
		if i >= len(n.Projections) {
			return n, false, nil
		}
		item := n.Projections[i]
		inner := item
		if a, ok := inner.(*expression.Alias); ok {
			inner = a.Child
		}
		if c, ok := inner.(*expression.CollatedExpression); ok {
			inner = c.Child()
		}
		if conv, ok := inner.(*expression.Convert); ok {
			inner = conv.Child
		}
		if gf, ok := inner.(*expression.GetField); ok {
			// A projection of the columns below it in place (GMS's or
			// RetypeUnions' conversion of a side).
			if cs := n.Child.Schema(); i >= len(cs) || cs[i].Name != gf.Name() {
				return n, false, nil
			}
			child, changed, err := ownTextColumn(n.Child, i)
			if err != nil || !changed {
				return n, false, err
			}
			ret, err := n.WithChildren(child)
			return ret, err == nil, err
		}
		var w gsql.Expression
		if a, ok := item.(*expression.Alias); ok {
			if c, ok := withOwnDecimal(a.Child); ok {
				// Alias.WithChildren drops the column id the side's
				// conversion finds the column by.
				w = expression.NewAlias(a.Name(), c).WithId(a.Id()).(*expression.Alias)
				if a.Unreferencable() {
					w = w.(*expression.Alias).AsUnreferencable()
				}
			}
		} else if c, ok := withOwnDecimal(item); ok {
			w = c
		}
		if w == nil {
			return n, false, nil
		}
		projections := append([]gsql.Expression(nil), n.Projections...)
		projections[i] = w
		ret, err := n.WithExpressions(projections...)
		return ret, err == nil, err
	case *plan.Distinct, *plan.OrderedDistinct, *plan.Sort, *plan.Limit, *plan.Offset, *plan.Having, *plan.Filter, *plan.TopN:
		child, changed, err := ownTextColumn(n.Children()[0], i)
		if err != nil || !changed {
			return n, false, err
		}
		ret, err := n.WithChildren(child)
		return ret, err == nil, err
	}
	return n, false, nil
}

// withOwnDecimal returns e in an ownDecimal, and false unless e is a
// CASE, IF, GREATEST or LEAST typed DECIMAL.
func withOwnDecimal(e gsql.Expression) (gsql.Expression, bool) {
	if rc, ok := e.(*resultColumn); ok {
		// The result column's MySQL nullability (NullableResults) over
		// the function: the function's own text below it (an IF whose
		// value if false may be NULL is a nullable column, and a union
		// of it with a string wrote IF(c, 0.0, x) of an INT x 5 as 5.0).
		inner, ok := withOwnDecimal(rc.Child)
		if !ok {
			return nil, false
		}
		return &resultColumn{UnaryExpression: expression.UnaryExpression{Child: inner}, nullable: rc.nullable, typ: rc.typ}, true
	}
	if !types.IsDecimal(e.Type()) {
		return nil, false
	}
	switch e.(type) {
	case *expression.Case, *function.If, *extremum, *decimalChoice:
	default:
		return nil, false
	}
	o, err := newOwnDecimal(e)
	if err != nil {
		return nil, false
	}
	return o, true
}

// ownDecimal is a CASE, IF, GREATEST or LEAST typed DECIMAL whose value
// is the chosen argument's own, at its own scale.
type ownDecimal struct {
	expression.UnaryExpression
	// text is the CASE or IF with every possible value CAST AS CHAR,
	// which gives the chosen one's own text; nil for GREATEST and LEAST.
	text gsql.Expression
}

var _ gsql.Expression = (*ownDecimal)(nil)

func newOwnDecimal(e gsql.Expression) (*ownDecimal, error) {
	o := &ownDecimal{UnaryExpression: expression.UnaryExpression{Child: e}}
	if _, ok := e.(*extremum); ok {
		return o, nil
	}
	choice := e
	if c, ok := e.(*decimalChoice); ok {
		// MySQL's type of GMS's CASE or IF (rows.go): its value is the
		// CASE's, made that type.
		choice = c.orig
	}
	values, ok := choiceValues(choice)
	if !ok {
		return nil, fmt.Errorf("own text of %s: not a CASE or IF", e)
	}
	children := append([]gsql.Expression(nil), choice.Children()...)
	for _, i := range values {
		children[i] = expression.NewConvert(children[i], expression.ConvertToChar)
	}
	text, err := choice.WithChildren(children...)
	if err != nil {
		return nil, fmt.Errorf("own text of %s: %w", e, err)
	}
	o.text = text
	return o, nil
}

// Type implements sql.Expression: the expression's DECIMAL.
func (o *ownDecimal) Type() gsql.Type { return o.Child.Type() }

// String implements sql.Expression.
func (o *ownDecimal) String() string { return o.Child.String() }

// Eval implements sql.Expression.
func (o *ownDecimal) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	if e, ok := o.Child.(*extremum); ok {
		return e.eval(ctx, row, true)
	}
	v, err := o.text.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return o.Child.Eval(ctx, row)
	}
	d, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("own value of %s: %w", o.Child, err)
	}
	return d, nil
}

// WithChildren implements sql.Expression.
func (o *ownDecimal) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(o, len(children), 1)
	}
	return newOwnDecimal(children[0])
}
