package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS turns WHERE x NOT IN (SELECT c ...) into an anti join of the outer
// query and the subquery (unnestInSubqueries), and its join planner then
// offers, as an alternative it may pick, a left join that keeps the outer
// rows whose c came out NULL (convertAntiToLeftJoin). That alternative
// forgets NOT IN's rule for NULL: when c is NULL for some row of the
// subquery, x NOT IN (...) is never true, yet the rows came back (with
// a WHERE in the subquery, which makes the left join the cheaper plan).
// The same rewrite of x <> (SELECT c ...) keeps the outer rows when the
// subquery returns no row or a NULL, where the comparison is NULL.
//
// KeepNullAwareNotIn, run right before unnestInSubqueries, leaves such a
// condition to be evaluated as an expression, which GMS gets right (it
// hashes the subquery's rows once when the subquery is not correlated),
// by wrapping it as (cond) IS TRUE: the same inside a WHERE, and a shape
// the unnesting does not match. It does so only where a NULL can occur:
// for NOT IN when x or c is nullable, for a negated scalar comparison
// always (an empty subquery is NULL too).

// KeepNullAwareNotIn is the analyzer rule; see the comment above.
func KeepNullAwareNotIn(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.SubqueryIsSet() {
		return n, transform.SameTree, nil
	}
	// GMS's UPDATE over an anti join fails ("unable to find field with
	// index 2 in row of 2 columns"): the anti join's left-join form
	// projects the subquery's columns away before the update reads
	// them. An UPDATE keeps every NOT IN as an expression.
	_, update := n.(*plan.Update)
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		conds := expression.SplitConjunction(f.Expression)
		changed := false
		extended := nullExtendedColumns(f.Child)
		for i, c := range conds {
			if nullAwareNotIn(c, update, extended) {
				conds[i] = expression.NewIsTrue(c)
				changed = true
			}
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		return plan.NewFilter(expression.JoinAnd(conds...), f.Child), transform.NewTree, nil
	})
}

// nullAwareNotIn reports whether c is a negated IN or comparison with a
// subquery that GMS would unnest into an anti join and where a NULL
// changes the answer, or any such when all is set. The columns of
// extended are NULL in the rows a LEFT JOIN extends, whatever their
// declaration says: x2.b NOT IN (SELECT ...) of a NOT NULL b over
// x1 LEFT JOIN x2 kept the rows without an x2 (seed 5042).
func nullAwareNotIn(c gsql.Expression, all bool, extended gsql.ColSet) bool {
	not, ok := c.(*expression.Not)
	if !ok {
		return false
	}
	switch e := not.Child.(type) {
	case *plan.InSubquery:
		sq, ok := e.RightChild.(*plan.Subquery)
		if !ok {
			return false
		}
		if all || e.LeftChild.IsNullable() || readsAny(e.LeftChild, extended) {
			return true
		}
		for _, col := range sq.Query.Schema() {
			if col.Nullable {
				return true
			}
		}
		return false
	case expression.Comparer:
		_, ok := e.Right().(*plan.Subquery)
		return ok
	}
	return false
}

// readsAny reports whether e reads a column of cols.
func readsAny(e gsql.Expression, cols gsql.ColSet) bool {
	if cols.Empty() {
		return false
	}
	return transform.InspectExpr(e, func(e gsql.Expression) bool {
		gf, ok := e.(*expression.GetField)
		return ok && gf.Id() != 0 && cols.Contains(gf.Id())
	})
}
