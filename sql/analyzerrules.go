package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"

	"github.com/percdb/percdb/sql/joinrules"
)

// Where newAnalyzer (analyzer.go) puts percdb's rules among GMS's, and
// the rules of package joinrules it puts there.

// insertRule puts rule into a's batches right before (or, with after,
// right after) the GMS rule named at (RuleId's String, e.g.
// "optimizeJoins"), and reports whether that rule was found.
func insertRule(a *analyzer.Analyzer, at string, after bool, rule analyzer.Rule) bool {
	for _, b := range a.Batches {
		for i, r := range b.Rules {
			if r.Id.String() != at {
				continue
			}
			if after {
				i++
			}
			rules := make([]analyzer.Rule, 0, len(b.Rules)+1)
			rules = append(rules, b.Rules[:i]...)
			rules = append(rules, rule)
			rules = append(rules, b.Rules[i:]...)
			b.Rules = rules
			return true
		}
	}
	return false
}

// removeRule takes the GMS rule named name (RuleId's String) out of a's
// batches and reports whether it was there.
func removeRule(a *analyzer.Analyzer, name string) bool {
	found := false
	for _, b := range a.Batches {
		rules := b.Rules[:0:0]
		for _, r := range b.Rules {
			if r.Id.String() == name {
				found = true
				continue
			}
			rules = append(rules, r)
		}
		b.Rules = rules
	}
	return found
}

// ruleIDNamed returns the id of a's rule named name, 0 when a has none.
func ruleIDNamed(a *analyzer.Analyzer, name string) analyzer.RuleId {
	for _, b := range a.Batches {
		for _, r := range b.Rules {
			if r.Id.String() == name {
				return r.Id
			}
		}
	}
	return 0
}

// greedyJoinOrder orders the tables of a many-table join before GMS's
// join planner (joinrules.GreedyJoinOrder).
func greedyJoinOrder(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qf *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return joinrules.GreedyJoinOrder(ctx, a, n, scope, sel, qf)
}

// cacheJoinInputs keeps the right inputs of nested-loop joins that do not
// depend on the outer row (joinrules.CacheJoinInputs).
func cacheJoinInputs(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qf *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return joinrules.CacheJoinInputs(ctx, a, n, scope, sel, qf)
}
