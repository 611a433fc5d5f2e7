package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS's join planner may run a NOT EXISTS it made an anti join as a
// left join that keeps the rows with no match (convertAntiToLeftJoin),
// under a projection of the anti join's left side. That projection
// names each column by its table's own name, not by the alias the
// query gave the table: DELETE a, b FROM t0 AS a JOIN t1 AS b ... WHERE
// NOT EXISTS (...) then found no column of "a" in the rows it deletes
// from and failed with 1105 "unable to find any columns in schema from
// source" (the difftest's application shapes, seeds 12033, 12052,
// 12078), and a self join's two tables were both "t0". A SELECT reads
// the projection by position and is not affected.
//
// AntiJoinAliases names such a projection's columns after the table
// nodes they come from, found by their table IDs, as the planner names
// every other column.

// AntiJoinAliases is the analyzer rule; see the comment above. It runs
// after GMS plans the joins, and only on plans with a left join.
func AntiJoinAliases(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if !hasLeftJoin(n) {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		p, ok := n.(*plan.Project)
		if !ok {
			return n, transform.SameTree, nil
		}
		var names map[gsql.TableId]string
		out := replacedChildren(p.Projections, func(_ int, e gsql.Expression) gsql.Expression {
			gf, ok := e.(*expression.GetField)
			if !ok || gf.TableId() == 0 {
				return nil
			}
			if names == nil {
				names = tableIdsUnder(p.Child)
			}
			if name, ok := names[gf.TableId()]; ok && !strings.EqualFold(name, gf.Table()) {
				return gf.WithTable(name)
			}
			return nil
		})
		if out == nil {
			return n, transform.SameTree, nil
		}
		ret, err := p.WithExpressions(out...)
		return ret, transform.NewTree, err
	})
}

// hasLeftJoin reports whether n's tree has a left join of any kind.
func hasLeftJoin(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		if j, ok := n.(*plan.JoinNode); ok && j.JoinType().IsLeftOuter() {
			found = true
		}
		return !found
	})
	return found
}
