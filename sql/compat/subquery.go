package compat

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS turns WHERE NOT EXISTS (SELECT ... WHERE inner.x = outer.y) into an
// anti join of the outer and inner tables on the subquery's correlated
// conditions (unnestExistsSubqueries), and so it does for NOT IN. Its
// anti joins all have NOT IN's rule for NULL: an outer row is dropped
// when the join condition is NULL for some inner row, as it must be for
// x NOT IN (1, NULL). For NOT EXISTS that is wrong: a NULL condition is
// no match, and the outer row must stay. One NULL in the inner column
// made NOT EXISTS return nothing at all.
//
// NotExistsNullAsFalse rewrites, before GMS unnests them, the conditions
// of a NOT EXISTS subquery that refer to the outer query so that they
// are never NULL: a condition c becomes c AND (c IS TRUE). The two are
// the same inside the subquery's WHERE (which keeps a row only when it is
// TRUE), but once hoisted into the anti join the second makes a NULL a
// FALSE, and the first is still there for GMS's join planner to turn an
// equality into a hash or index lookup. Conditions that are never NULL
// (<=>, IS NULL) are left alone.

// NotExistsNullAsFalse is the analyzer rule, run right before GMS's
// unnestExistsSubqueries; see the comment at the top of the file.
func NotExistsNullAsFalse(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.SubqueryIsSet() {
		return n, transform.SameTree, nil
	}
	return rewriteNotExists(n)
}

// rewriteNotExists rewrites the correlated conditions of the NOT EXISTS
// subqueries in n's filters, and of those in the filters of every
// subquery's query there: GMS unnests a NOT EXISTS inside an EXISTS or
// a NOT EXISTS in the same pass.
func rewriteNotExists(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		e, same, err := transform.Expr(f.Expression, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			if sq, ok := e.(*plan.Subquery); ok {
				// A NOT EXISTS inside another subquery (EXISTS, IN,
				// a scalar one), which GMS unnests with it: its
				// anti join had NOT IN's rule for NULL, and
				// WHERE EXISTS (... AND NOT EXISTS (... s.c = x.c))
				// returned nothing when s.c held a NULL.
				q, same, err := rewriteNotExists(sq.Query)
				if err != nil || same {
					return e, transform.SameTree, err
				}
				return sq.WithQuery(q), transform.NewTree, nil
			}
			not, ok := e.(*expression.Not)
			if !ok {
				return e, transform.SameTree, nil
			}
			ex, ok := not.Child.(*plan.ExistsSubquery)
			if !ok {
				return e, transform.SameTree, nil
			}
			// The NOT EXISTS's own query was rewritten already: the
			// walk is bottom up and reached its Subquery first.
			q, same, err := correlatedNullAsFalse(ex.Query.Query, ex.Query.Correlated(), f.Child)
			if err != nil || same {
				return e, transform.SameTree, err
			}
			return expression.NewNot(plan.NewExistsSubquery(ex.Query.WithQuery(q))), transform.NewTree, nil
		})
		if err != nil || same {
			return n, transform.SameTree, err
		}
		return plan.NewFilter(e, f.Child), transform.NewTree, nil
	})
}

// correlatedNullAsFalse rewrites the conditions of q's filters that
// refer to a column of corr (the outer query's, outer its rows) as c AND
// (c IS TRUE). A filter already rewritten is left as it is.
func correlatedNullAsFalse(q gsql.Node, corr gsql.ColSet, outer gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	if corr.Empty() {
		return q, transform.SameTree, nil
	}
	notNull := map[gsql.TableId]bool{}
	notNullTables(outer, notNull)
	notNullTables(q, notNull)
	return transform.Node(q, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		conds := expression.SplitConjunction(f.Expression)
		for _, c := range conds {
			if _, done := c.(*nullAsFalse); done {
				return n, transform.SameTree, nil
			}
		}
		out := make([]gsql.Expression, 0, 2*len(conds))
		same := transform.SameTree
		for _, c := range conds {
			out = append(out, c)
			if RefersTo(c, corr) && mayBeNull(c) && !notNullEquality(c, notNull) {
				out = append(out, &nullAsFalse{cond: c})
				same = transform.NewTree
			}
		}
		if same {
			return n, transform.SameTree, nil
		}
		return plan.NewFilter(expression.JoinAnd(out...), f.Child), transform.NewTree, nil
	})
}

// RefersTo reports whether e reads a column of cols, itself or through
// a subquery.
func RefersTo(e gsql.Expression, cols gsql.ColSet) bool {
	return transform.InspectExpr(e, func(e gsql.Expression) bool {
		switch e := e.(type) {
		case *expression.GetField:
			return cols.Contains(e.Id())
		case *plan.Subquery:
			return !e.Correlated().Intersection(cols).Empty()
		}
		return false
	})
}

// mayBeNull reports whether the condition c can be NULL. GMS's
// IsNullable is not asked: a column of a NOT NULL definition is NULL on
// the outer side of an outer join.
func mayBeNull(c gsql.Expression) bool {
	switch c.(type) {
	case *expression.NullSafeEquals, *expression.IsNull, *expression.IsTrue, *nullAsFalse:
		return false
	}
	return true
}

// The wrapper costs the anti join its plan: GMS offers a NOT EXISTS's
// anti join a LEFT JOIN alternative (its convertAntiToLeftJoin, which can
// read the inner table by an index, row by row) only when the join's
// conditions are equalities, literals, arithmetic, AND and OR, so with
// an IS TRUE in them the anti join is a nested loop over both tables (a
// correlated NOT EXISTS by the primary key of a 100,000-row table took
// over 30 s, MariaDB 0.2 s). An equality of two columns that are never
// NULL is never NULL and needs no wrapper (notNullEquality).

// notNullEquality reports whether c is col = col of two columns of the
// tables of notNull that their definitions make NOT NULL: never NULL.
func notNullEquality(c gsql.Expression, notNull map[gsql.TableId]bool) bool {
	eq, ok := c.(*expression.Equals)
	if !ok {
		return false
	}
	for _, side := range []gsql.Expression{eq.Left(), eq.Right()} {
		gf, ok := side.(*expression.GetField)
		if !ok || gf.IsNullable() || !notNull[gf.TableId()] {
			return false
		}
	}
	return true
}

// notNullTables adds to ids the tables of n whose NOT NULL columns are
// never NULL in n's rows: base tables (aliased or not) that are not on
// the NULL side of an outer join. Derived tables and anything under
// another kind of join are left out.
func notNullTables(n gsql.Node, ids map[gsql.TableId]bool) {
	switch n := n.(type) {
	case *plan.ResolvedTable:
		ids[n.Id()] = true
		return
	case *plan.TableAlias:
		if rt, ok := n.Child.(*plan.ResolvedTable); ok {
			ids[n.Id()] = true
			ids[rt.Id()] = true
		}
		return
	case *plan.SubqueryAlias:
		return
	case *plan.JoinNode:
		switch {
		case n.Op.IsInner():
			notNullTables(n.Left(), ids)
			notNullTables(n.Right(), ids)
		case n.Op.IsLeftOuter():
			notNullTables(n.Left(), ids)
		}
		return
	}
	for _, c := range n.Children() {
		notNullTables(c, ids)
	}
}

// nullAsFalse is cond IS TRUE: TRUE when cond is, FALSE when cond is
// FALSE or NULL. It is GMS's IsTrue under a type of percdb's own, so
// that a filter already rewritten is told from one with a condition of
// its own IS TRUE.
type nullAsFalse struct {
	cond gsql.Expression
}

var _ gsql.Expression = (*nullAsFalse)(nil)

// Resolved implements sql.Expression.
func (e *nullAsFalse) Resolved() bool { return e.cond.Resolved() }

// String implements sql.Expression.
func (e *nullAsFalse) String() string {
	return fmt.Sprintf("(%s) %s", e.cond, expression.IsTrueStr)
}

// Type implements sql.Expression.
func (e *nullAsFalse) Type() gsql.Type { return types.Boolean }

// IsNullable implements sql.Expression.
func (e *nullAsFalse) IsNullable() bool { return false }

// Eval implements sql.Expression.
func (e *nullAsFalse) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := e.cond.Eval(ctx, row)
	if err != nil || v == nil {
		return false, err
	}
	return gsql.ConvertToBool(ctx, v)
}

// Children implements sql.Expression.
func (e *nullAsFalse) Children() []gsql.Expression { return []gsql.Expression{e.cond} }

// WithChildren implements sql.Expression.
func (e *nullAsFalse) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(e, len(children), 1)
	}
	return &nullAsFalse{cond: children[0]}, nil
}

// NullAsFalseCond returns the condition e wraps when e is the wrapper
// NotExistsNullAsFalse added to a NOT EXISTS's correlated condition:
// the anti join it becomes is then one whose conditions are never NULL,
// which a lookup of the inner table may decide (sql/antilookup.go).
func NullAsFalseCond(e gsql.Expression) (gsql.Expression, bool) {
	w, ok := e.(*nullAsFalse)
	if !ok {
		return nil, false
	}
	return w.cond, true
}
