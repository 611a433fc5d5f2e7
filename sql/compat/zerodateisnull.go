package compat

import (
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL finds the zero date of a DATE or DATETIME column declared NOT
// NULL by date_column IS NULL in a WHERE (the MySQL 8 reference manual,
// Comparison Functions and Operators, IS NULL: "needed to get some ODBC
// applications to work"): its optimizer replaces such a condition, when
// it is the WHERE or a term of the WHERE's ANDs and ORs, by
// date_column = 0, or by date_column IS NULL OR date_column = 0 when the
// column's table is the inner side of an outer join (sql_optimizer.cc,
// internal_remove_eq_conds, BUG#12594011). An inner join's ON condition
// is part of the WHERE there. Elsewhere (the select list, under NOT, an
// outer join's ON) IS NULL is what it says. A NOT NULL column holds the zero date after an INSERT
// IGNORE of a value that is no date, or under a sql_mode without
// NO_ZERO_DATE; GMS found no row (the difftest's application shapes,
// seeds 12046 and 12087).
//
// ZeroDateIsNull makes such a condition date_column = the zero date.

// ZeroDateIsNull is the analyzer rule; see the comment above. It runs
// before GMS pushes filters down, while a WHERE is a Filter over its
// joins.
func ZeroDateIsNull(_ *gsql.Context, _ *analyzer.Analyzer, root gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	var outer map[gsql.TableId]bool
	return transform.Node(root, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		var cond gsql.Expression
		switch n := n.(type) {
		case *plan.Filter:
			cond = n.Expression
		case *plan.JoinNode:
			if !n.Op.IsInner() || n.Filter == nil {
				return n, transform.SameTree, nil
			}
			cond = n.Filter
		default:
			return n, transform.SameTree, nil
		}
		if !hasNotNullDateIsNull(cond) {
			return n, transform.SameTree, nil
		}
		if outer == nil {
			outer = innerSidesOfOuterJoins(root)
		}
		own := baseTableIdsUnder(n)
		c, same := zeroDateTerms(cond, func(gf *expression.GetField) (bool, bool) {
			return own[gf.TableId()], outer[gf.TableId()]
		})
		if same {
			return n, transform.SameTree, nil
		}
		ret, err := n.(gsql.Expressioner).WithExpressions(c)
		return ret, transform.NewTree, err
	})
}

// notNullDate returns e as a column of type DATE or DATETIME declared
// NOT NULL, if it is one.
func notNullDate(e gsql.Expression) (*expression.GetField, bool) {
	gf, ok := e.(*expression.GetField)
	if !ok || gf.IsNullable() || !(types.IsDateType(gf.Type()) || types.IsDatetimeType(gf.Type())) {
		return nil, false
	}
	return gf, true
}

// hasNotNullDateIsNull reports whether cond has an IS NULL of a NOT NULL
// DATE or DATETIME column among the terms of its ANDs and ORs.
func hasNotNullDateIsNull(cond gsql.Expression) bool {
	if zeroDateOr(cond) {
		return false
	}
	switch c := cond.(type) {
	case *expression.And, *expression.Or:
		kids := c.Children()
		return hasNotNullDateIsNull(kids[0]) || hasNotNullDateIsNull(kids[1])
	case *expression.IsNull:
		_, ok := notNullDate(c.Child)
		return ok
	}
	return false
}

// zeroDateTerms returns cond with each IS NULL among the terms of its
// ANDs and ORs of a NOT NULL DATE or DATETIME column that applies made
// an equality with the zero date (or that IS NULL or the equality, for
// a column of an outer join's inner side), and whether it is unchanged.
func zeroDateTerms(cond gsql.Expression, applies func(*expression.GetField) (ok, inner bool)) (gsql.Expression, bool) {
	if zeroDateOr(cond) {
		return cond, true // made so already
	}
	switch c := cond.(type) {
	case *expression.And, *expression.Or:
		kids := c.Children()
		l, lsame := zeroDateTerms(kids[0], applies)
		r, rsame := zeroDateTerms(kids[1], applies)
		if lsame && rsame {
			return cond, true
		}
		ret, err := c.WithChildren(l, r)
		if err != nil {
			return cond, true
		}
		return ret, false
	case *expression.IsNull:
		gf, ok := notNullDate(c.Child)
		if !ok {
			return cond, true
		}
		ok, inner := applies(gf)
		if !ok {
			return cond, true
		}
		zero := expression.NewEquals(gf, expression.NewLiteral(zeroDatetime, gf.Type()))
		if inner {
			return expression.NewOr(c, zero), false
		}
		return zero, false
	}
	return cond, true
}

// zeroDateOr reports whether cond is the col IS NULL OR col = the zero
// date zeroDateTerms makes of an outer join's inner column, which is not
// made again (the rule runs more than once on a plan).
func zeroDateOr(cond gsql.Expression) bool {
	or, ok := cond.(*expression.Or)
	if !ok {
		return false
	}
	isNull, ok := or.LeftChild.(*expression.IsNull)
	if !ok {
		return false
	}
	eq, ok := or.RightChild.(*expression.Equals)
	if !ok {
		return false
	}
	lit, ok := eq.Right().(*expression.Literal)
	if !ok {
		return false
	}
	t, ok := lit.Value().(time.Time)
	return ok && t.Equal(zeroDatetime) && isNull.Child.String() == eq.Left().String()
}

// baseTableIdsUnder returns the ids of the stored tables under n, by
// their aliases: MySQL's rewrite is of a stored column's IS NULL. A
// derived table's or CTE's column is NULL when it is (a ROLLUP's NULL
// rows under a NOT NULL date column, an outer join's), whatever the
// type its column reports.
func baseTableIdsUnder(n gsql.Node) map[gsql.TableId]bool {
	ids := map[gsql.TableId]bool{}
	stored := func(n gsql.Node) bool {
		switch n.(type) {
		case *plan.ResolvedTable, *plan.IndexedTableAccess:
			return true
		}
		return false
	}
	transform.Inspect(n, func(n gsql.Node) bool {
		switch t := n.(type) {
		case *plan.TableAlias:
			if stored(t.Child) {
				ids[t.Id()] = true
			}
		case *plan.ResolvedTable:
			ids[t.Id()] = true
		case *plan.IndexedTableAccess:
			ids[t.Id()] = true
		}
		return true
	})
	return ids
}

// innerSidesOfOuterJoins returns the ids of the tables under n that an
// outer join may give as NULLs: a LEFT JOIN's right side, a
// RIGHT JOIN's left side, both sides of a FULL JOIN.
func innerSidesOfOuterJoins(n gsql.Node) map[gsql.TableId]bool {
	ids := map[gsql.TableId]bool{}
	add := func(n gsql.Node) {
		for id := range tableIdsUnder(n) {
			ids[id] = true
		}
	}
	transform.Inspect(n, func(n gsql.Node) bool {
		j, ok := n.(*plan.JoinNode)
		if !ok {
			return true
		}
		switch {
		case j.Op.IsLeftOuter():
			add(j.Right())
		case j.Op.IsRightOuter():
			add(j.Left())
		case j.Op.IsFullOuter():
			add(j.Left())
			add(j.Right())
		}
		return true
	})
	return ids
}
