package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS's planner names a select item by its text, and gives it no alias
// when the text is the expression's own String(): s0.c COLLATE
// utf8mb4_bin stays a bare expression in its projection. unnestInSubqueries
// then makes x IN (SELECT s0.c COLLATE utf8mb4_bin FROM t s0), and its NOT
// IN, a semi (anti) join whose condition is that bare expression
// (getHighestProjection reads a projection's aliases and fields as
// columns, anything else as itself), evaluated over the projection's row
// with the field's index into the table's: 1105 "unable to find field
// with index 5 in row of 4 columns". With the item parenthesized or
// aliased it has an alias and the join reads its column.
//
// UnnamedSubqueryItems, run right before unnestInSubqueries, gives such
// an item of an IN subquery's select list (an expression over columns
// that is neither a field nor an alias) an alias of its own name that
// cannot be referenced, as GMS gives one whose text differs from its
// String(); the unnesting then leaves the IN to be evaluated as an
// expression, which answers right.

// UnnamedSubqueryItems is the analyzer rule; see the comment above.
func UnnamedSubqueryItems(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.SubqueryIsSet() {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		in, ok := e.(*plan.InSubquery)
		if !ok {
			return e, transform.SameTree, nil
		}
		sq, ok := in.Right().(*plan.Subquery)
		if !ok {
			return e, transform.SameTree, nil
		}
		q, changed, err := namedSelectItems(sq.Query)
		if err != nil || !changed {
			return e, transform.SameTree, err
		}
		ret, err := in.WithChildren(in.Left(), sq.WithQuery(q))
		if err != nil {
			return e, transform.SameTree, err
		}
		return ret, transform.NewTree, nil
	})
}

// namedSelectItems returns n, a subquery's plan, with the unnamed items
// of the projection its rows come from (the highest, through nodes that
// keep its columns) under an unreferencable alias, and whether it
// changed.
func namedSelectItems(n gsql.Node) (gsql.Node, bool, error) {
	if p, ok := n.(*plan.Project); ok {
		var out []gsql.Expression
		for i, e := range p.Projections {
			switch e.(type) {
			case *expression.GetField, *expression.Alias:
				continue
			}
			if !readsColumn(e) {
				continue // a constant reads no row: the join evaluates it anywhere
			}
			if out == nil {
				out = append([]gsql.Expression(nil), p.Projections...)
			}
			out[i] = expression.NewAlias(e.String(), e).AsUnreferencable()
		}
		if out == nil {
			return n, false, nil
		}
		ret, err := p.WithExpressions(out...)
		return ret, err == nil, err
	}
	children := n.Children()
	if len(children) != 1 || !n.Schema().Equals(children[0].Schema()) {
		return n, false, nil
	}
	c, changed, err := namedSelectItems(children[0])
	if err != nil || !changed {
		return n, false, err
	}
	ret, err := n.WithChildren(c)
	return ret, err == nil, err
}

// readsColumn reports whether e reads a column of its row.
func readsColumn(e gsql.Expression) bool {
	return transform.InspectExpr(e, func(e gsql.Expression) bool {
		_, ok := e.(*expression.GetField)
		return ok
	})
}
