package joinrules

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// GMS executes a nested-loop join (a cross join, or an inner or left join
// it found no index or hash plan for) by building its right input again
// for every row of the left one. When the right input is itself a join,
// that is the whole subtree again: FROM t1, t8, (t2 JOIN t7 ...) ran the
// join of t2 and t7, and the cross joins under it, once per row of t1×t8
// (sqllogictest select4: seconds per query, timeouts under load). The
// answer of such a subtree cannot change between two rows of the outer
// input when nothing in it refers to the outer row, so percdb has GMS
// keep it: the right input is wrapped in GMS's CachedResults node, which
// reads its child once per query and replays the rows (and falls back to
// reading the child again when the query's memory budget refuses the
// cache). Single tables are left to percdb's scan cache (package sql's scancache.go).

// CacheJoinInputs is the analyzer rule; see the comment at the top of the
// file. It runs after GMS has assigned execution indexes and placed its
// own CachedResults (OnceAfterAll), on read-only statements of the top
// scope only: inside a subquery the right input may depend on the outer
// query's row, which changes between executions of the subquery.
func CacheJoinInputs(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if !scope.IsEmpty() || !n.IsReadOnly() {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || !isNestedLoop(j) || !worthCaching(j.Right()) {
			return n, transform.SameTree, nil
		}
		ret, err := j.WithChildren(j.Left(), plan.NewCachedResults(j.Right()))
		if err != nil {
			return nil, transform.SameTree, err
		}
		return ret, transform.NewTree, nil
	})
}

// isNestedLoop reports whether GMS runs j by reading its right input
// again for each left row, independently of that row.
func isNestedLoop(j *plan.JoinNode) bool {
	switch j.Op {
	case plan.JoinTypeCross, plan.JoinTypeInner, plan.JoinTypeLeftOuter:
		return j.ScopeLen == 0
	}
	return false
}

// worthCaching reports whether n is a join subtree whose rows depend on
// nothing outside it: every column it reads belongs to one of its own
// tables, it has no subquery, nothing nondeterministic (RAND() must be
// drawn again for each row) and no join that passes an outer scope. A
// cache inside it (of a nested loop within) replays the same rows too.
func worthCaching(n gsql.Node) bool {
	hasJoin, ok := false, true
	own := make(map[gsql.TableId]bool)
	transform.Inspect(n, func(n gsql.Node) bool {
		switch n := n.(type) {
		case *plan.JoinNode:
			hasJoin = true
			if n.ScopeLen != 0 || n.Op.IsLateral() {
				ok = false
			}
		case *plan.SubqueryAlias:
			ok = false
		case plan.TableIdNode:
			own[n.Id()] = true
		}
		return ok
	})
	if !ok || !hasJoin {
		return false
	}
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		switch e := e.(type) {
		case *plan.Subquery:
			ok = false
		case *expression.GetField:
			if !own[e.TableId()] {
				ok = false
			}
		case gsql.NonDeterministicExpression:
			if e.IsNonDeterministic() {
				ok = false
			}
		}
		return ok
	})
	return ok
}
