package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
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
// NoMergeJoinsForSemiJoins plans a query that has a semi or anti join
// without merge joins (GMS's disable_merge_join for the duration of the
// rule); its other joins still get hash and lookup joins.

// NoMergeJoinsForSemiJoins wraps GMS's optimizeJoins; see above.
func NoMergeJoinsForSemiJoins(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		if ctx == nil || ctx.Session == nil || !hasSemiJoin(n) {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		return withoutMergeJoins(ctx, func() (gsql.Node, transform.TreeIdentity, error) {
			return apply(ctx, a, n, scope, sel, qFlags)
		})
	}
}

// withoutMergeJoins runs plan with GMS's disable_merge_join set for its
// duration (as it was, if the session's value cannot be set). The
// session's value is the same before and after, so where the session
// can set a variable for an analysis's duration (AnalysisVariables), the
// two settings are not changes of its variables: package sql's session
// counts each change in an epoch that its plan cache's plans and its
// fast path's cached variables are valid under, and a statement whose
// analysis changed it could never run a cached plan (an IN or EXISTS
// subquery's semi join missed the prepared statements' plan cache at
// every execution).
func withoutMergeJoins(ctx *gsql.Context, plan func() (gsql.Node, transform.TreeIdentity, error)) (gsql.Node, transform.TreeIdentity, error) {
	old, err := ctx.GetSessionVariable(ctx, gsql.DisableMergeJoin)
	if err != nil {
		return plan()
	}
	if v, ok := old.(int8); ok && v != 0 {
		return plan()
	}
	set := ctx.SetSessionVariable
	if av, ok := ctx.Session.(AnalysisVariables); ok {
		set = av.SetAnalysisVariable
	}
	if err := set(ctx, gsql.DisableMergeJoin, int8(1)); err != nil {
		return plan()
	}
	defer func() { _ = set(ctx, gsql.DisableMergeJoin, old) }()
	return plan()
}

// AnalysisVariables is a session that can set a session variable for the
// duration of one analysis, the rule that sets it restoring its value
// afterwards, without recording a change of the session's variables.
type AnalysisVariables interface {
	SetAnalysisVariable(ctx *gsql.Context, name string, value any) error
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
// HashedDistincts, run after flattenDistinct, puts a Distinct (by hash,
// whatever the order) in place of every OrderedDistinct.
func HashedDistincts(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		if d, ok := n.(*plan.OrderedDistinct); ok {
			return plan.NewDistinct(d.Child), transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
}

// The inner-join alternative of a semi join (x JOIN DISTINCT s, above)
// is right only when the DISTINCT tells values apart at least as finely
// as the join condition compares them. CollationKeys makes a DISTINCT of
// a case-insensitive column keep one of 'A' and 'a' (as MySQL's DISTINCT
// does); but x.b IN (SELECT s.c ...) with x.b under utf8mb4_bin and s.c
// under utf8mb4_general_ci compares in the binary collation (of two
// columns' implicit collations, the _bin one wins), so the 'a' of x
// found only the kept 'A' and the row was lost (tests/difftest seed
// 5033). bytesDistinctsForBinaryKeys puts the DISTINCT by bytes back
// under such a join: bytes are as fine as any collation.

// bytesDistinctsForBinaryKeys returns j with each collated DISTINCT
// child (under a hash join's lookup too) that j's condition compares in
// a binary collation made a DISTINCT by bytes.
func bytesDistinctsForBinaryKeys(j *plan.JoinNode) (gsql.Node, transform.TreeIdentity) {
	if j.Filter == nil {
		return j, transform.SameTree
	}
	children := []gsql.Node{j.Left(), j.Right()}
	changed := false
	for i, c := range children {
		h, lookup := c.(*plan.HashLookup)
		if lookup {
			c = h.Child
		}
		d, ok := c.(*CollatedDistinct)
		if !ok || !comparedAsBytes(j.Filter, d.Child.Schema()) {
			continue
		}
		var out gsql.Node = plan.NewDistinct(d.Child)
		if lookup {
			hl := *h
			hl.Child = out
			out = &hl
		}
		children[i], changed = out, true
	}
	if !changed {
		return j, transform.SameTree
	}
	ret, err := j.WithChildren(children...)
	if err != nil {
		return j, transform.SameTree
	}
	return ret, transform.NewTree
}

// comparedAsBytes reports whether cond has an equality of a
// case-insensitive string column of sch with a string under a binary
// collation.
func comparedAsBytes(cond gsql.Expression, sch gsql.Schema) bool {
	inSchema := func(e gsql.Expression) bool {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return false
		}
		for _, c := range sch {
			if strings.EqualFold(c.Name, gf.Name()) && strings.EqualFold(c.Source, gf.Table()) {
				return foldingStringType(c.Type)
			}
		}
		return false
	}
	binary := func(e gsql.Expression) bool {
		return types.IsText(e.Type()) && !foldingStringType(e.Type())
	}
	return transform.InspectExpr(cond, func(e gsql.Expression) bool {
		eq, ok := e.(*expression.Equals)
		if !ok {
			return false
		}
		l, r := eq.Left(), eq.Right()
		return inSchema(l) && binary(r) || inSchema(r) && binary(l)
	})
}
