package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// Column pruning above subqueries. GMS's pruneTables gives a table only
// the columns its statement reads, but it stops at the first node whose
// expressions hold a subquery: below a select list or a WHERE with a
// subquery every table is read whole. TPC-C's consistency check 3.3.2.12
// (a derived table whose select list has a correlated SUM) read all 21
// columns of CUSTOMER, C_DATA's 500 bytes among them, to use four: a
// quarter of the statement's CPU was decoding columns nobody read.
//
// This rule does the same pruning through those nodes. It runs before
// pushFilters, once GMS has unnested the IN and EXISTS subqueries it can
// (a table pruned before the unnesting cost an IN subquery its lookup
// join) and while the tables are not yet index reads. Walking down from the statement's root it keeps the column ids
// the nodes above need (every column of the root's output; then what
// each node's expressions read, including the outer columns its
// subqueries read, found by walking their plans), and
//
//   - drops from a Project the plain column projections (a column, or an
//     alias of one) that nothing above reads: evaluating them has no
//     effect, and the ids the nodes above read are left as they were;
//   - gives a table with no projections yet the columns needed.
//
// It only passes through nodes whose output is their input's
// (Filter, Having, Sort, TopN, Limit, Offset, a table alias) or whose
// output is computed from expressions (Project, GroupBy); a Distinct
// needs every column of its input; any other node (a join, a derived
// table, a window, a write, a union) stops it, and what is below keeps
// every column. Only read statements, and no MATCH ... AGAINST (as
// GMS). @percdb_prune_subqueries = 0 turns it off (the differential test
// compares both).
const pruneSubqueriesUserVar = "percdb_prune_subqueries"

// pruneUnderSubqueries is the analyzer rule; see the comment at the top
// of the file.
func pruneUnderSubqueries(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if !n.IsReadOnly() || !userVarOn(ctx, pruneSubqueriesUserVar) || !hasSubquery(n) || hasMatchAgainst(n) {
		return n, transform.SameTree, nil
	}
	return pruneNode(n, neededColumns{all: true})
}

// hasMatchAgainst reports whether n holds MATCH ... AGAINST, which reads
// its table's whole schema.
func hasMatchAgainst(n gsql.Node) bool {
	found := false
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		if _, ok := e.(*expression.MatchAgainst); ok {
			found = true
		}
		return !found
	})
	return found
}

// neededColumns are the column ids the nodes above a node read; all
// says every column of its output is needed. unnamed says a read by a
// column of no id was met: nothing below is pruned then.
type neededColumns struct {
	ids     gsql.ColSet
	all     bool
	unnamed bool
}

// with returns a copy of need with the columns exprs read.
func (need neededColumns) with(exprs ...gsql.Expression) neededColumns {
	out := neededColumns{all: need.all, unnamed: need.unnamed}
	out.ids.UnionWith(need.ids)
	for _, e := range exprs {
		addReads(&out, e)
	}
	return out
}

// addReads adds the columns e reads to need, the outer columns of its
// subqueries included.
func addReads(need *neededColumns, e gsql.Expression) {
	transform.InspectExpr(e, func(e gsql.Expression) bool {
		switch e := e.(type) {
		case *expression.GetField:
			if e.Id() == 0 {
				need.unnamed = true
			}
			need.ids.Add(e.Id())
		case *plan.Subquery:
			need.ids.UnionWith(e.Correlated())
			if e.Query != nil {
				// Every column its plan reads, at any depth of
				// subqueries: ids are unique in a statement, so the
				// inner ones name nothing here.
				transform.InspectExpressions(e.Query, func(in gsql.Expression) bool {
					addReads(need, in)
					return false
				})
			}
		}
		return false
	})
}

// pruneNode prunes n's subtree given need, what the nodes above read of
// n's output.
func pruneNode(n gsql.Node, need neededColumns) (gsql.Node, transform.TreeIdentity, error) {
	if need.unnamed {
		return n, transform.SameTree, nil
	}
	switch n := n.(type) {
	case *plan.Project:
		projs := n.Projections
		if !need.all {
			projs = keptProjections(n.Projections, need.ids)
		}
		child, same, err := pruneNode(n.Child, neededColumns{}.with(projs...))
		if err != nil {
			return n, transform.SameTree, err
		}
		if same && len(projs) == len(n.Projections) {
			return n, transform.SameTree, nil
		}
		return plan.NewProject(projs, child).WithCanDefer(n.CanDefer), transform.NewTree, nil
	case *plan.GroupBy:
		below := neededColumns{}.with(n.SelectedExprs...).with(n.GroupByExprs...)
		return pruneChild(n, below)
	case *plan.Filter, *plan.Having, *plan.Sort, *plan.TopN, *plan.Limit, *plan.Offset, *plan.StripRowNode:
		below := need
		if ex, ok := n.(gsql.Expressioner); ok {
			below = need.with(ex.Expressions()...)
		}
		return pruneChild(n, below)
	case *plan.Distinct:
		return pruneChild(n, neededColumns{all: true})
	case *plan.TableAlias:
		if rt, ok := n.Child.(*plan.ResolvedTable); ok && !need.all {
			t, same, err := pruneTable(rt, need.ids)
			if err != nil || same {
				return n, transform.SameTree, err
			}
			out, err := n.WithChildren(t)
			return out, transform.NewTree, err
		}
	case *plan.ResolvedTable:
		if !need.all {
			return pruneTable(n, need.ids)
		}
	}
	return n, transform.SameTree, nil
}

// pruneChild prunes the one child of n under below.
func pruneChild(n gsql.Node, below neededColumns) (gsql.Node, transform.TreeIdentity, error) {
	ch := n.Children()
	if len(ch) != 1 {
		return n, transform.SameTree, nil
	}
	child, same, err := pruneNode(ch[0], below)
	if err != nil || same {
		return n, transform.SameTree, err
	}
	out, err := n.WithChildren(child)
	return out, transform.NewTree, err
}

// keptProjections returns projs without the plain column projections
// whose ids are not in ids, keeping at least one projection.
func keptProjections(projs []gsql.Expression, ids gsql.ColSet) []gsql.Expression {
	kept := make([]gsql.Expression, 0, len(projs))
	for _, p := range projs {
		if id, plain := plainColumnProjection(p); plain && id != 0 && !ids.Contains(id) {
			continue
		}
		kept = append(kept, p)
	}
	if len(kept) == 0 {
		return projs[:1]
	}
	return kept
}

// plainColumnProjection returns the output id of p when p is a column or
// an alias of one, whose evaluation cannot fail or have an effect.
func plainColumnProjection(p gsql.Expression) (gsql.ColumnId, bool) {
	switch p := p.(type) {
	case *expression.GetField:
		return p.Id(), true
	case *expression.Alias:
		if _, ok := p.Child.(*expression.GetField); ok {
			return p.Id(), true
		}
	}
	return 0, false
}

// pruneTable gives rt, a table not yet projected, the columns of ids.
func pruneTable(rt *plan.ResolvedTable, ids gsql.ColSet) (gsql.Node, transform.TreeIdentity, error) {
	pt, ok := rt.Table.(gsql.ProjectedTable)
	if !ok || plan.IsDualTable(rt.Table) || len(pt.Projections()) > 0 {
		return rt, transform.SameTree, nil
	}
	if _, virtual := rt.WrappedTable().(*plan.VirtualColumnTable); virtual {
		return rt, transform.SameTree, nil
	}
	cols := rt.Columns()
	first, ok := cols.Next(1)
	sch := rt.Table.Schema()
	if !ok || cols.Len() != len(sch) {
		return rt, transform.SameTree, nil
	}
	names := make([]string, 0, len(sch))
	for i, c := range sch {
		if ids.Contains(first + gsql.ColumnId(i)) {
			names = append(names, c.Name)
		}
	}
	if len(names) == len(sch) {
		return rt, transform.SameTree, nil
	}
	out, err := rt.WithTable(pt.WithProjections(names))
	if err != nil {
		// As GMS's pruneTables: a table that cannot take the
		// projection is read whole.
		return rt, transform.SameTree, nil
	}
	return out, transform.NewTree, nil
}
