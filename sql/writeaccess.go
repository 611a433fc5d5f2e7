package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/percdb/percdb/sql/planrules"
)

// GMS analyzes an UPDATE or DELETE of one table with a short rule list of
// its own (analyzer.getBatchesForNode) that chooses the access path
// (optimizeJoins) but runs none of percdb's rules: a row constructor on
// the key, UPDATE stock ... WHERE (s_w_id, s_i_id) IN ((1, 5), (1, 77)),
// scanned the whole table. planWriteAccess, called when the statement's
// iterators are built (compat_exec.go), rewrites the statement's filters
// as the analyzer's rule does for a SELECT (sql/planrules) and lets GMS's
// access path rule choose again.

// planWriteAccess returns n with its filters rewritten by
// planrules.ExpandRowComparisons and its access paths chosen again, then
// its index reads and sorts improved as the analyzer's rules do for a
// SELECT (planrules.PreferPinnedIndex, planrules.OrderByIndex), and
// whether anything changed. A rewritten plan is left as it is by the
// rewrites, so a second call returns n unchanged.
func (b *compatBuilder) planWriteAccess(ctx *gsql.Context, n gsql.Node) (gsql.Node, bool, error) {
	m, changed, err := b.expandWriteFilters(ctx, n)
	if err != nil {
		return n, false, err
	}
	var sp gsql.StatsProvider
	if b.a != nil {
		sp = b.a.Catalog.StatsProvider
	}
	m, pinned, err := planrules.PreferPinnedIndex(ctx, m, sp)
	if err != nil {
		return n, false, err
	}
	m, ordered, err := planrules.OrderByIndex(ctx, m)
	if err != nil {
		return n, false, err
	}
	return m, changed || pinned == transform.NewTree || ordered == transform.NewTree, nil
}

// expandWriteFilters returns n with its filters rewritten by
// planrules.ExpandRowComparisons and its access paths chosen again, and
// whether the rewrite changed anything.
func (b *compatBuilder) expandWriteFilters(ctx *gsql.Context, n gsql.Node) (gsql.Node, bool, error) {
	if b.a == nil || !shortRuleList(n) {
		return n, false, nil
	}
	apply := ruleApply(b.a, "optimizeJoins")
	if apply == nil {
		return n, false, nil
	}
	m, same, err := planrules.ExpandRowComparisons(ctx, n)
	if err != nil || same {
		return n, false, err
	}
	// A lookup GMS built from the filters as they were is undone: its
	// table is read by the filters as they are now.
	m, _, err = transform.Node(m, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		ita, ok := f.Child.(*plan.IndexedTableAccess)
		if !ok || !ita.IsStatic() {
			return n, transform.SameTree, nil
		}
		t, ok := ita.TableNode.(gsql.Node)
		if !ok {
			return n, transform.SameTree, nil
		}
		ret, err := f.WithChildren(t)
		return ret, transform.NewTree, err
	})
	if err != nil {
		return n, false, err
	}
	m, _, err = apply(ctx, b.a, m, nil, analyzer.DefaultRuleSelector, &gsql.QueryFlags{})
	if err != nil {
		return n, false, err
	}
	return m, true, nil
}

// shortRuleList reports whether GMS analyzed the UPDATE or DELETE n with
// its short rule list (analyzer.getBatchesForNode: a statement of one
// table with no subquery). Any other ran the whole list, percdb's rules
// and the field indexes assigned after the join order was chosen
// included: choosing the join order again here left those indexes
// pointing into the old order (DELETE FROM b USING t1 AS a JOIN t0 AS b
// ON a.c9 = b.c9 WHERE (a.a, b.c9) >= (5, -1) swapped its join and
// compared other columns than it named, deleting a row no joined row
// held; an UPDATE through a LEFT JOIN failed with 1105 "unable to find
// field with index"; the difftest's application shapes, seeds 12033,
// 12088, 12093). Told by the plan, not by the flags GMS's planner set
// (DeleteFrom.WithChildren drops RefsSingleRel): a single-table
// statement joins nothing, its subqueries unnested or not, and does not
// name its targets.
func shortRuleList(n gsql.Node) bool {
	switch d := n.(type) {
	case *plan.Update:
	case *plan.DeleteFrom:
		if d.HasExplicitTargets() {
			return false
		}
	default:
		return false
	}
	single := true
	transform.Inspect(n, func(n gsql.Node) bool {
		if _, ok := n.(*plan.JoinNode); ok {
			single = false
		}
		return single
	})
	return single && !hasSubquery(n)
}
