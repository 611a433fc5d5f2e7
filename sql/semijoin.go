package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS's join planner also plans a semi join (x IN (SELECT y ...), EXISTS)
// as an inner join of the distinct rows of its right side, and when it
// makes that inner join a merge join it reads the right side's table
// through an index directly, without the DISTINCT: a left row came out
// once per matching right row (SELECT a FROM t WHERE c IN (SELECT e FROM
// t y) with duplicate e values, TestSargableDifferential). noMergeSemiJoins
// plans a statement holding a semi join with merge joins off (GMS's
// disable_merge_join, set for the planning only); its other joins are
// planned as hash or lookup joins instead.

// noMergeSemiJoins wraps GMS's join planning rule; see above.
func noMergeSemiJoins(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		if !hasSemiJoin(n) {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		was, err := ctx.GetSessionVariable(ctx, gsql.DisableMergeJoin)
		if err != nil {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		if err := ctx.SetSessionVariable(ctx, gsql.DisableMergeJoin, int8(1)); err != nil {
			return n, transform.SameTree, err
		}
		defer func() {
			// The value read back is valid; setting it cannot fail.
			_ = ctx.SetSessionVariable(ctx, gsql.DisableMergeJoin, was)
		}()
		return apply(ctx, a, n, scope, sel, qFlags)
	}
}

// hasSemiJoin reports whether n's tree holds a semi join.
func hasSemiJoin(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		if j, ok := n.(*plan.JoinNode); ok && j.Op.IsSemi() {
			found = true
		}
		return !found
	})
	return found
}
