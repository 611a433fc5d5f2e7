package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS's join planner gives every semi join (WHERE EXISTS, IN (SELECT ...)
// unnested) an inner-join alternative over the distinct rows of its
// inner side (convertSemiToInnerJoin: x SEMI JOIN s = x JOIN DISTINCT
// s). When that inner join becomes a merge join, the merge join reads
// the inner side's index directly and the DISTINCT is gone: every
// matching row of s joins, and an outer row with two matches came back
// twice (SELECT x.b FROM t x WHERE EXISTS (SELECT 1 FROM t s WHERE s.a =
// x.a) returned each row once per row of its a). The same holds for an
// anti join's left-join alternative.
//
// noMergeJoinsForSemiJoins plans a query that has a semi or anti join
// without merge joins (GMS's disable_merge_join for the duration of the
// rule); its other joins still get hash and lookup joins.

// noMergeJoinsForSemiJoins wraps GMS's optimizeJoins; see above.
func noMergeJoinsForSemiJoins(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		if ctx == nil || ctx.Session == nil || !hasSemiJoin(n) {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		old, err := ctx.GetSessionVariable(ctx, gsql.DisableMergeJoin)
		if err != nil {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		if v, ok := old.(int8); ok && v != 0 {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		if err := ctx.SetSessionVariable(ctx, gsql.DisableMergeJoin, int8(1)); err != nil {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		defer func() { _ = ctx.SetSessionVariable(ctx, gsql.DisableMergeJoin, old) }()
		return apply(ctx, a, n, scope, sel, qFlags)
	}
}

// hasSemiJoin reports whether n has a semi or anti join (subqueries'
// plans not included: the rule plans each on its own).
func hasSemiJoin(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		if j, ok := n.(*plan.JoinNode); ok && (j.Op.IsSemi() || j.Op.IsAnti()) {
			found = true
		}
		return !found
	})
	return found
}

// GMS's OrderedDistinct drops a row only when it equals the row before
// it, which is DISTINCT only over sorted rows, and GMS puts it over rows
// in no such order: the inner side of a semi join planned as a lookup
// join (x SEMI JOIN s on s.b = x.a read as DISTINCT s.b, then a lookup
// of x), with s read in its primary key order; and flattenDistinct turns
// OrderedDistinct(Distinct(r)) into OrderedDistinct(r). An EXISTS then
// returned an outer row once per run of equal inner keys.
// hashedDistincts, run after flattenDistinct, puts a Distinct (by hash,
// whatever the order) in place of every OrderedDistinct.
func hashedDistincts(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		if d, ok := n.(*plan.OrderedDistinct); ok {
			return plan.NewDistinct(d.Child), transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
}
