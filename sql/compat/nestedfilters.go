package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS v0.20.0's pushFilters loses the conditions of a Filter directly
// under another Filter when that lower Filter sits on a table
// (pushdown.go): for the upper Filter it gathers the one-table
// conjuncts of every Filter below it (getFiltersByTable), pushes them
// into a new Filter above their table, which the lower Filter then
// becomes, merges that into the upper Filter, and removes the pushed
// conjuncts from the merged Filter as handled: they are nowhere in the
// plan any more. `UPDATE k1 JOIN k0 ON … WHERE k1.c9 > 100 AND k1.c1 <=
// (SELECT …)` planned as Filter(subquery) over Filter(k1.c9 > 100) over
// k1 changed rows whose c9 is not above 100. Any rule that stacks two
// Filters over a table before pushFilters (GMS's or percdb's) meets it.
//
// MergedNestedFilters merges such stacks into one Filter before
// pushFilters runs, the lower Filter's conjuncts first, so that AND
// evaluates them in the order the stack did (a conjunct that fails on
// a row, 1292 of a strict UPDATE, is still not reached when an earlier
// one is false). The rows are those of the stack.

// MergedNestedFilters wraps GMS's pushFilters; see above.
func MergedNestedFilters(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		merged, same, err := mergeNestedFilters(n)
		if err != nil {
			return n, transform.SameTree, err
		}
		out, pushed, err := apply(ctx, a, merged, scope, sel, qFlags)
		if err != nil {
			return out, pushed, err
		}
		if same == transform.NewTree {
			pushed = transform.NewTree
		}
		return out, pushed, nil
	}
}

// mergeNestedFilters returns n with every Filter whose child is a Filter
// made one Filter of both conditions, the child's first.
func mergeNestedFilters(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		upper, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		lower, ok := upper.Child.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		return plan.NewFilter(expression.JoinAnd(lower.Expression, upper.Expression), lower.Child), transform.NewTree, nil
	})
}
