package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// A merge join steps through its two sides by its first condition's
// Compare, and GMS's comparison.Compare converts both operands to the
// type of a column operand (the left one's first) when their types
// differ: with ON x.big = y.dec (BIGINT against DECIMAL) -1.25 became -1,
// and the merge join joined a row of -1 with one of -1.25 (Eval, which
// percdb's rules make exact, never sees the pair). Other joins compare
// with the condition's Eval.
//
// NoLossyMergeJoins plans a query again without merge joins (GMS's
// disable_merge_join for the duration of the rule) when the plan GMS
// chose has a merge join whose first condition compares operands of two
// types other than two integers of one signedness (which compare as
// 64-bit integers).

// NoLossyMergeJoins wraps GMS's optimizeJoins; see above.
func NoLossyMergeJoins(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		out, same, err := apply(ctx, a, n, scope, sel, qFlags)
		if err != nil || ctx == nil || ctx.Session == nil || !hasLossyMergeJoin(out) {
			return out, same, err
		}
		return withoutMergeJoins(ctx, func() (gsql.Node, transform.TreeIdentity, error) {
			return apply(ctx, a, n, scope, sel, qFlags)
		})
	}
}

// hasLossyMergeJoin reports whether n has a merge join whose first
// condition compares operands of types that its Compare converts.
func hasLossyMergeJoin(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		j, ok := n.(*plan.JoinNode)
		if !ok || !j.Op.IsMerge() || j.Filter == nil {
			return !found
		}
		cmp, ok := expression.SplitConjunction(j.Filter)[0].(expression.BinaryExpression)
		if ok && !comparesAlike(cmp.Left().Type(), cmp.Right().Type()) {
			found = true
		}
		return !found
	})
	return found
}

// comparesAlike reports whether values of types l and r compare the same
// converted to either type: the same type, or two integer types of one
// signedness.
func comparesAlike(l, r gsql.Type) bool {
	if types.TypesEqual(l, r) {
		return true
	}
	return types.IsInteger(l) && types.IsInteger(r) && types.IsSigned(l) == types.IsSigned(r)
}
