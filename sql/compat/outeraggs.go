package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// An aggregate inside a subquery belongs to the outer query when the
// subquery cannot aggregate it: in MySQL, COUNT(*) in the WHERE clause of
// a subquery of a grouped query's HAVING or select list (SELECT b FROM t
// GROUP BY b HAVING EXISTS (SELECT 1 FROM s WHERE s.c = COUNT(*))) counts
// the outer group's rows (Item_sum::check_sum_func: a set function with
// no column of its own query block is aggregated in the nearest outer
// block where aggregation is allowed). GMS's planner builds every
// aggregate in the scope it is written in: it made the subquery a grouped
// query of its own whose WHERE read the aggregate's result from below
// the GroupBy, which failed at run time with "unable to find field with
// index 6 in row of 2 columns", or, when the outer query happened to
// compute the same aggregate, answered from the wrong rows.
//
// OuterAggregates, an analyzer rule run first (before GMS analyzes the
// subqueries), moves such an aggregate to the outer query: it is taken
// out of the subquery's GroupBy (and the GroupBy dropped when nothing is
// left in it), added to the outer GroupBy's outputs under its own column
// id, and the subquery, whose WHERE now reads that column from the outer
// row, is marked correlated with it so that it is not cached across
// groups. When the outer GroupBy's outputs are the query's outputs (a
// HAVING with no projection above it), a projection of the original
// columns keeps the added one out of the result.
//
// An aggregate qualifies when it is read below its own GroupBy (where it
// cannot be computed) and its arguments read no column of the subquery's
// own tables; anything else is left to GMS.

// OuterAggregates is the analyzer rule; see the comment above.
func OuterAggregates(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if qFlags != nil && !qFlags.SubqueryIsSet() {
		return n, transform.SameTree, nil
	}
	return hoistOuterAggregates(n)
}

// hoistOuterAggregates applies the rewrite to every grouped query block
// of n, top down: a Project over Havings over a GroupBy is one block, so
// the Project is handled before (and instead of) the Havings below it.
func hoistOuterAggregates(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	var top []gsql.Node // the nodes of the current block above its GroupBy
	gb := blockGroupBy(n, &top)
	if gb != nil {
		if out, ok := hoistInto(top, gb); ok {
			return out, transform.NewTree, nil
		}
	}
	children := n.Children()
	if len(children) == 0 {
		return n, transform.SameTree, nil
	}
	newChildren := make([]gsql.Node, len(children))
	same := transform.SameTree
	for i, c := range children {
		nc, s, err := hoistOuterAggregates(c)
		if err != nil {
			return nil, transform.SameTree, err
		}
		newChildren[i] = nc
		if s == transform.NewTree {
			same = transform.NewTree
		}
	}
	if same == transform.SameTree {
		return n, transform.SameTree, nil
	}
	out, err := n.WithChildren(newChildren...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return out, transform.NewTree, nil
}

// blockGroupBy returns the GroupBy under n when n is a Project or Having
// of a grouped query block (Projects and Havings down to the GroupBy),
// and the nodes above it in top, outermost first.
func blockGroupBy(n gsql.Node, top *[]gsql.Node) *plan.GroupBy {
	*top = (*top)[:0]
	for {
		switch c := n.(type) {
		case *plan.Project:
			*top = append(*top, c)
			n = c.Child
			continue
		case *plan.Having:
			*top = append(*top, c)
			n = c.Child
			continue
		}
		break
	}
	gb, ok := n.(*plan.GroupBy)
	if !ok || len(*top) == 0 {
		return nil
	}
	return gb
}

// hoistInto moves the outer aggregates of the subqueries of top's
// expressions into gb, and returns the rebuilt block; false when there
// are none. Projects under the first node pass the moved aggregates on;
// when the first node is not a Project, a Project of what it gave before
// is put over it.
func hoistInto(top []gsql.Node, gb *plan.GroupBy) (gsql.Node, bool) {
	own := tableIdsUnder(gb.Child)
	var moved []gsql.Expression
	rebuilt := make([]gsql.Node, len(top))
	for i, n := range top {
		exprs := n.(gsql.Expressioner).Expressions()
		changed := false
		newExprs := make([]gsql.Expression, len(exprs))
		for j, e := range exprs {
			ne, same, _ := transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
				sq, ok := e.(*plan.Subquery)
				if !ok {
					return e, transform.SameTree, nil
				}
				q, aggs := takeOuterAggregates(sq.Query, own)
				if len(aggs) == 0 {
					return e, transform.SameTree, nil
				}
				corr := sq.Correlated()
				for _, a := range aggs {
					corr.Add(a.(gsql.IdExpression).Id())
				}
				moved = append(moved, aggs...)
				return sq.WithQuery(q).WithCorrelated(corr), transform.NewTree, nil
			})
			newExprs[j] = ne
			changed = changed || same == transform.NewTree
		}
		if !changed {
			rebuilt[i] = n
			continue
		}
		nn, err := n.(gsql.Expressioner).WithExpressions(newExprs...)
		if err != nil {
			return nil, false
		}
		rebuilt[i] = nn
	}
	if len(moved) == 0 {
		return nil, false
	}
	var original []gsql.Expression
	if _, projected := top[0].(*plan.Project); !projected {
		below := gb.SelectedExprs
		if len(top) > 1 {
			p, ok := top[1].(*plan.Project)
			if !ok {
				return nil, false
			}
			below = p.Projections
		}
		var ok bool
		if original, ok = outputRefs(below); !ok {
			return nil, false
		}
	}
	movedRefs, ok := outputRefs(moved)
	if !ok {
		return nil, false
	}
	selected := append(append([]gsql.Expression{}, gb.SelectedExprs...), moved...)
	var out gsql.Node = plan.NewGroupBy(selected, gb.GroupByExprs, gb.Child)
	for i := len(rebuilt) - 1; i >= 0; i-- {
		n := rebuilt[i]
		if p, ok := n.(*plan.Project); ok && i > 0 {
			n = plan.NewProject(append(append([]gsql.Expression{}, p.Projections...), movedRefs...), p.Child)
		}
		nn, err := n.WithChildren(out)
		if err != nil {
			return nil, false
		}
		out = nn
	}
	if original != nil {
		out = plan.NewProject(original, out)
	}
	return out, true
}

// takeOuterAggregates takes out of a subquery's query the aggregates its
// GroupBy computes but its own rows read below it, when their arguments
// read none of the subquery's tables; own are the outer block's tables,
// which the arguments may read.
func takeOuterAggregates(q gsql.Node, own map[gsql.TableId]string) (gsql.Node, []gsql.Expression) {
	var taken []gsql.Expression
	readAll := columnsReadUnder(q)
	out, _, err := transform.Node(q, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		gb, ok := n.(*plan.GroupBy)
		if !ok {
			return n, transform.SameTree, nil
		}
		readBelow := columnsReadUnder(gb.Child)
		var keep []gsql.Expression
		for _, e := range gb.SelectedExprs {
			agg, ok := e.(gsql.Aggregation)
			// Read above the GroupBy too, it is the subquery's own
			// aggregate as well (GMS gives two COUNT(*)s one column):
			// left as it is.
			if ok && readBelow[agg.Id()] > 0 && readBelow[agg.Id()] == readAll[agg.Id()] && argumentsReadOnly(agg, own) {
				taken = append(taken, agg)
				continue
			}
			keep = append(keep, e)
		}
		if len(keep) == len(gb.SelectedExprs) {
			return n, transform.SameTree, nil
		}
		if len(keep) == 0 && len(gb.GroupByExprs) == 0 {
			return gb.Child, transform.NewTree, nil
		}
		return plan.NewGroupBy(keep, gb.GroupByExprs, gb.Child), transform.NewTree, nil
	})
	if err != nil || len(taken) == 0 {
		return q, nil
	}
	return out, taken
}

// argumentsReadOnly reports whether every column agg's arguments read is
// of a table in tables.
func argumentsReadOnly(agg gsql.Expression, tables map[gsql.TableId]string) bool {
	ok := true
	for _, c := range agg.Children() {
		transform.InspectExpr(c, func(e gsql.Expression) bool {
			switch e := e.(type) {
			case *expression.GetField:
				if _, in := tables[e.TableId()]; !in {
					ok = false
				}
			case *plan.Subquery:
				ok = false
			}
			return !ok
		})
	}
	return ok
}

// tableIdsUnder returns the ids of the tables under n, not those of
// subqueries, each with the name the query reads it by (an alias where
// it gave one: the outermost node of an id).
func tableIdsUnder(n gsql.Node) map[gsql.TableId]string {
	ids := map[gsql.TableId]string{}
	transform.Inspect(n, func(n gsql.Node) bool {
		if t, ok := n.(plan.TableIdNode); ok {
			if _, seen := ids[t.Id()]; !seen {
				ids[t.Id()] = t.Name()
			}
		}
		return true
	})
	return ids
}

// columnsReadUnder returns how many times the expressions of n and the
// nodes under it read each column id.
func columnsReadUnder(n gsql.Node) map[gsql.ColumnId]int {
	ids := map[gsql.ColumnId]int{}
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		if gf, ok := e.(*expression.GetField); ok {
			ids[gf.Id()]++
		}
		return true
	})
	return ids
}

// outputRefs returns references to the outputs of a GroupBy's selected
// expressions, by column id, for a projection that keeps only them.
func outputRefs(selected []gsql.Expression) ([]gsql.Expression, bool) {
	out := make([]gsql.Expression, len(selected))
	for i, e := range selected {
		switch e := e.(type) {
		case *expression.GetField:
			out[i] = e
		case *expression.Alias:
			out[i] = expression.NewGetFieldWithTable(int(e.Id()), 0, e.Type(), "", "", e.Name(), e.IsNullable())
		case gsql.Aggregation:
			out[i] = expression.NewGetFieldWithTable(int(e.Id()), 0, e.Type(), "", "", strings.ToLower(e.String()), e.IsNullable())
		default:
			return nil, false
		}
	}
	return out, true
}
