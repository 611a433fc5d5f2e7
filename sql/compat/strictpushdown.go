package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// MySQL attaches a condition of a WHERE clause that reads one table (and
// constants; an uncorrelated subquery is one) to that table's access,
// and evaluates it on every row the access reads, before the join looks
// for a match. Under a strict sql_mode an UPDATE's or DELETE's
// comparison of a number with a string that is no number is error 1292
// (strict.go), so `UPDATE t1 JOIN g ON t1.c9 = g.c9 SET … WHERE t1.c1 =
// (SELECT MIN(a) FROM t0)` fails on a t1 row whose c1 is 'a%b' even when
// that row joins nothing. GMS keeps a condition with a subquery above
// the join (its filter pushdown refuses any filter with a subquery,
// filters.go) and unnests the subquery into a semi join above it, so the
// comparison only met joined rows, and the statement ran.
//
// StrictOneTableConditions, for an UPDATE or DELETE under a strict
// sql_mode, moves each such conjunct of a filter over a join onto its
// table, below the join (a table on the inner side of an outer join is
// left alone: the WHERE clause filters its NULL rows too). The rows the
// statement changes are the same; only where the conditions are
// evaluated, and so whether the statement fails, differs.

// StrictOneTableConditions is the analyzer rule the comment above
// describes.
func StrictOneTableConditions(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	switch n.(type) {
	case *plan.Update, *plan.DeleteFrom:
	default:
		return n, transform.SameTree, nil
	}
	if !strictMode(ctx) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		j, ok := f.Child.(*plan.JoinNode)
		if !ok {
			return n, transform.SameTree, nil
		}
		var kept []gsql.Expression
		var child gsql.Node = j
		moved := false
		leaves := tableNames(j)
		for _, c := range expression.SplitConjunction(f.Expression) {
			table, ok := oneTableCondition(c)
			if ok && !subqueriesRead(c, leaves) {
				var done bool
				child, done = filterJoinLeaf(child, table, c)
				if done {
					moved = true
					continue
				}
			}
			kept = append(kept, c)
		}
		if !moved {
			return n, transform.SameTree, nil
		}
		if len(kept) == 0 {
			return child, transform.NewTree, nil
		}
		return plan.NewFilter(expression.JoinAnd(kept...), child), transform.NewTree, nil
	})
}

// oneTableCondition returns the table (its name in the statement) that
// c reads, when c reads one table outside its subqueries and holds a
// subquery, each of them uncorrelated (a condition without a subquery
// GMS pushes down itself).
func oneTableCondition(c gsql.Expression) (string, bool) {
	table, ok, subquery := "", true, false
	transform.InspectExpr(c, func(e gsql.Expression) bool {
		switch x := e.(type) {
		case *plan.Subquery:
			subquery = true
			if !x.Correlated().Empty() {
				ok = false
			}
			return false
		case *plan.InSubquery, *plan.ExistsSubquery:
			// Their subquery is a child, checked as above.
		case *expression.GetField:
			t := strings.ToLower(x.Table())
			if t == "" || (table != "" && t != table) {
				ok = false
			}
			table = t
		case *expression.BindVar, *expression.UnresolvedColumn, *expression.Star:
			ok = false
		}
		return !ok
	})
	return table, ok && subquery && table != ""
}

// tableNames returns the names (in the statement) of the tables n reads.
func tableNames(n gsql.Node) map[string]bool {
	names := map[string]bool{}
	transform.Inspect(n, func(n gsql.Node) bool {
		switch x := n.(type) {
		case *plan.ResolvedTable, *plan.TableAlias:
			names[strings.ToLower(x.(gsql.Nameable).Name())] = true
		}
		return true
	})
	return names
}

// subqueriesRead reports whether a subquery of c reads a table under one
// of names. Such a condition stays above the join: GMS unnests an IN or
// EXISTS subquery into a semi join with the table it filters, and one
// below the join would put the subquery's table beside the join's table
// of the same name, which GMS refuses (1066 Not unique table/alias).
func subqueriesRead(c gsql.Expression, names map[string]bool) bool {
	found := false
	transform.InspectExpr(c, func(e gsql.Expression) bool {
		if sq, ok := e.(*plan.Subquery); ok {
			for name := range tableNames(sq.Query) {
				if names[name] {
					found = true
				}
			}
		}
		return found
	})
	return found
}

// filterJoinLeaf returns n, a join tree, with cond filtering its leaf
// named table, and whether it found one: through inner and cross joins,
// and the left side of a left join.
func filterJoinLeaf(n gsql.Node, table string, cond gsql.Expression) (gsql.Node, bool) {
	switch x := n.(type) {
	case *plan.JoinNode:
		if !x.Op.IsInner() && !x.Op.IsCross() && !x.Op.IsLeftOuter() {
			return n, false
		}
		if l, ok := filterJoinLeaf(x.Left(), table, cond); ok {
			out, err := x.WithChildren(l, x.Right())
			return out, err == nil
		}
		if x.Op.IsLeftOuter() {
			return n, false
		}
		if r, ok := filterJoinLeaf(x.Right(), table, cond); ok {
			out, err := x.WithChildren(x.Left(), r)
			return out, err == nil
		}
		return n, false
	case *plan.ResolvedTable, *plan.TableAlias:
		if strings.EqualFold(x.(gsql.Nameable).Name(), table) {
			return plan.NewFilter(cond, n), true
		}
	}
	return n, false
}
