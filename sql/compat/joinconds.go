package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS's join planner can lose a condition of an inner join. Its
// conflict rules (memo.edge.calcTES, from the CD-C algorithm) forbid an
// edge for a split that would "estrange" a table the edge's join had
// below it, even among inner joins; and the transitive edges it adds for
// a chain of equalities (ensureClosure) make splits the written joins do
// not have. When another edge joins such a split, the join is built
// without the forbidden edge's condition, and no join above has it: in
//
//	x1 JOIN x2 ON x1.c9 = x2.c9 JOIN x3 ON x1.a = x3.c3
//	   JOIN x4 ON x2.c0 = x4.c0 AND x3.c3 = x4.b AND x4.c1 <= '…'
//
// planned as x3 ⋈ (x2 ⋈ (x4 ⋈ x1 on the transitive x1.a = x4.b)), the
// join of x2 kept x1.c9 = x2.c9 and lost x2.c0 = x4.c0: every (x2, x4)
// pair came back (difftest, seed 10104).
//
// KeepJoinConditions checks the plan: every condition of the inner joins
// it was given must be somewhere in the planned joins (a join's filter,
// a filter, or an equality a lookup join reads by its index). A lost one
// is put back as a filter above the top join, which for a tree of inner
// joins only is the same condition, evaluated later. Trees with any
// other join (LEFT, semi, anti …) are left alone: a filter above them
// would not mean the same.

// KeepJoinConditions wraps GMS's optimizeJoins; see above.
func KeepJoinConditions(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		out, same, err := apply(ctx, a, n, scope, sel, qFlags)
		if err != nil || same == transform.SameTree {
			return out, same, err
		}
		before := onlyJoinTree(n)
		if before == nil {
			return out, same, err
		}
		var conds []gsql.Expression
		if !innerJoinConditions(before, &conds) || len(conds) == 0 {
			return out, same, err
		}
		after := onlyJoinTree(out)
		if after == nil {
			return out, same, err
		}
		present := map[string]bool{}
		keys := map[string]bool{}
		plannedConditions(after, present, keys)
		var lost []gsql.Expression
		for _, c := range conds {
			if present[conditionKey(c)] || readByLookup(c, keys) {
				continue
			}
			lost = append(lost, c)
		}
		if len(lost) == 0 {
			return out, same, err
		}
		fixed, _, ferr := transform.Node(out, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
			if j, ok := n.(*plan.JoinNode); ok && j == after {
				return plan.NewFilter(expression.JoinAnd(lost...), j), transform.NewTree, nil
			}
			return n, transform.SameTree, nil
		})
		if ferr != nil {
			return out, same, ferr
		}
		return fixed, transform.NewTree, nil
	}
}

// onlyJoinTree returns the top join of n's only tree of joins (not
// looking into a join's operands for more), nil when n has none or more
// than one.
func onlyJoinTree(n gsql.Node) *plan.JoinNode {
	var top *plan.JoinNode
	count := 0
	transform.Inspect(n, func(n gsql.Node) bool {
		if j, ok := n.(*plan.JoinNode); ok {
			top = j
			count++
			return false
		}
		return count < 2
	})
	if count != 1 {
		return nil
	}
	return top
}

// innerJoinConditions appends the conjuncts of the conditions of the
// join tree under j (joins below joins, through filters) to conds, and
// reports false when a join of it is neither inner nor cross.
func innerJoinConditions(n gsql.Node, conds *[]gsql.Expression) bool {
	switch n := n.(type) {
	case *plan.JoinNode:
		if n.Op != plan.JoinTypeInner && n.Op != plan.JoinTypeCross {
			return false
		}
		if n.Filter != nil {
			*conds = append(*conds, expression.SplitConjunction(n.Filter)...)
		}
		return innerJoinConditions(n.Left(), conds) && innerJoinConditions(n.Right(), conds)
	case *plan.Filter:
		return innerJoinConditions(n.Child, conds)
	}
	// An operand: its own joins, if any, are another tree.
	return true
}

// plannedConditions records the conditions of the planned tree under n
// (joins' filters and filters, by conditionKey) in present, and the keys
// its index reads look up by in keys.
func plannedConditions(n gsql.Node, present, keys map[string]bool) {
	transform.Inspect(n, func(n gsql.Node) bool {
		var e gsql.Expression
		switch n := n.(type) {
		case *plan.JoinNode:
			e = n.Filter
		case *plan.Filter:
			e = n.Expression
		case *plan.IndexedTableAccess:
			for _, k := range n.Expressions() {
				keys[k.String()] = true
			}
		}
		if e != nil {
			for _, c := range expression.SplitConjunction(e) {
				present[conditionKey(c)] = true
			}
		}
		return true
	})
}

// conditionKey names a condition so that a = b and b = a are one.
func conditionKey(c gsql.Expression) string {
	if eq, ok := c.(*expression.Equals); ok {
		l, r := eq.Left().String(), eq.Right().String()
		if r < l {
			l, r = r, l
		}
		return "=\x00" + l + "\x00" + r
	}
	return c.String()
}

// readByLookup reports whether c is an equality one of whose sides an
// index read looks up by: a lookup join takes such a condition out of its
// filter.
func readByLookup(c gsql.Expression, keys map[string]bool) bool {
	eq, ok := c.(*expression.Equals)
	return ok && (keys[eq.Left().String()] || keys[eq.Right().String()])
}
