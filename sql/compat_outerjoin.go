package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS's join planner loses conditions when it reorders an inner join
// over a LEFT JOIN: in
//
//	t1 x1 LEFT JOIN t1 x2 ON x1.dt = x2.dt JOIN t0 x3 ON x1.c = x3.c AND x2.dt = x3.dt
//
// it joined x3 to x1 first, then left-joined x2, and the condition
// x2.dt = x3.dt was gone: rows came back that the condition rejects.
//
// A condition like x2.dt = x3.dt is never true on a row that the LEFT
// JOIN extended with NULLs for x2, so above it the LEFT JOIN is an inner
// join, and MySQL's optimizer turns it into one (outer join
// simplification). simplifyOuterJoins does the same before GMS plans the
// joins: a LEFT JOIN becomes an inner join when a condition of an inner
// join or a WHERE above it compares a column of its right side with =,
// <>, <, <=, >, >= or LIKE (each NULL when that column is). GMS then
// plans plain inner joins, whose reordering keeps every condition. A
// condition that does not reject NULLs (x2.dt <=> x3.dt, x2.dt IS NULL)
// keeps the LEFT JOIN as it is.

// simplifyOuterJoins is the analyzer rule; see the comment above.
func simplifyOuterJoins(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		switch n := n.(type) {
		case *plan.Filter:
			rejected := nullRejectedColumns(n.Expression)
			if rejected.Empty() {
				break
			}
			child, same := innerJoinsRejecting(n.Child, rejected)
			if same {
				break
			}
			return plan.NewFilter(n.Expression, child), transform.NewTree, nil
		case *plan.JoinNode:
			if n.Op != plan.JoinTypeInner || n.Filter == nil {
				break
			}
			rejected := nullRejectedColumns(n.Filter)
			if rejected.Empty() {
				break
			}
			left, sameL := innerJoinsRejecting(n.Left(), rejected)
			right, sameR := innerJoinsRejecting(n.Right(), rejected)
			if sameL && sameR {
				break
			}
			j, err := n.WithChildren(left, right)
			return j, transform.NewTree, err
		}
		return n, transform.SameTree, nil
	})
}

// innerJoinsRejecting turns into inner joins the LEFT JOINs of n whose
// right side has a column in rejected, looking through inner joins and
// the left (preserved) side of LEFT JOINs, where a row of n is a row of
// the LEFT JOIN.
func innerJoinsRejecting(n gsql.Node, rejected gsql.ColSet) (gsql.Node, bool) {
	j, ok := n.(*plan.JoinNode)
	if !ok {
		return n, true
	}
	switch {
	case j.Op == plan.JoinTypeInner || j.Op == plan.JoinTypeCross:
		left, sameL := innerJoinsRejecting(j.Left(), rejected)
		right, sameR := innerJoinsRejecting(j.Right(), rejected)
		if sameL && sameR {
			return n, true
		}
		ret, _ := j.WithChildren(left, right) // two children: no error
		return ret, false
	case j.Op == plan.JoinTypeLeftOuter:
		left, sameL := innerJoinsRejecting(j.Left(), rejected)
		c, _ := j.WithChildren(left, j.Right()) // two children: no error
		ret := c.(*plan.JoinNode)
		if rejected.Intersects(outputColumns(j.Right())) {
			ret.Op = plan.JoinTypeInner
			if ret.Filter == nil {
				ret.Filter = expression.NewLiteral(true, types.Boolean)
			}
		} else if sameL {
			return n, true
		}
		return ret, false
	}
	return n, true
}

// nullRejectedColumns returns the columns that, when NULL, make a
// conjunct of cond NULL: those compared directly by a conjunct.
func nullRejectedColumns(cond gsql.Expression) gsql.ColSet {
	var cols gsql.ColSet
	add := func(e gsql.Expression) {
		if gf, ok := e.(*expression.GetField); ok && gf.Id() != 0 {
			cols.Add(gf.Id())
		}
	}
	for _, c := range expression.SplitConjunction(cond) {
		if not, ok := c.(*expression.Not); ok {
			if eq, ok := not.Child.(*expression.Equals); ok {
				c = eq
			}
		}
		switch c := c.(type) {
		case *expression.Equals, *expression.LessThan, *expression.LessThanOrEqual,
			*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.Like:
			b := c.(expression.BinaryExpression)
			add(b.Left())
			add(b.Right())
		}
	}
	return cols
}

// outputColumns returns the columns of the tables of n, a join tree.
func outputColumns(n gsql.Node) gsql.ColSet {
	var cols gsql.ColSet
	transform.Inspect(n, func(n gsql.Node) bool {
		if t, ok := n.(plan.TableIdNode); ok {
			cols = cols.Union(t.Columns())
			return false
		}
		return true
	})
	return cols
}
