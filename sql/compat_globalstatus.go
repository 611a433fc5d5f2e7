package sql

import (
	"sort"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// SHOW GLOBAL STATUS with percdb's counters. GMS answers it from its
// process-wide registry of status variables only, never asking the
// session (plan.ShowStatus.RowIter), so it showed GMS's constant zeros
// under InnoDB's names (Innodb_row_lock_waits, Innodb_deadlocks) and none
// of percdb's node counters, which SHOW [SESSION] STATUS shows. MySQL's
// monitoring (mysqld_exporter) reads SHOW GLOBAL STATUS. percdb's
// counters are the node's, global by nature: the global form gets them
// too (globalStatus), GMS's global variables for the rest.

// globalStatus is SHOW GLOBAL STATUS with percdb's counters.
type globalStatus struct{ *plan.ShowStatus }

var _ gsql.ExecSourceRel = globalStatus{}

// RowIter implements sql.ExecSourceRel.
func (g globalStatus) RowIter(ctx *gsql.Context, _ gsql.Row) (gsql.RowIter, error) {
	vars := gsql.StatusVariables.NewGlobalMap()
	if s, ok := ctx.Session.(*Session); ok {
		for name, v := range s.percdbStatus(ctx) {
			vars[name] = v
		}
	}
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	sort.Strings(names)
	rows := make([]gsql.Row, len(names))
	for i, name := range names {
		rows[i] = gsql.Row{name, vars[name].Value()}
	}
	return gsql.RowsToRowIter(rows...), nil
}

// WithChildren implements sql.Node.
func (g globalStatus) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(g, len(children), 0)
	}
	return g, nil
}

// globalStatusRule makes SHOW GLOBAL STATUS a globalStatus.
func globalStatusRule(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		// ShowStatus keeps its scope unexported: the global one is the
		// one equal to NewShowStatus(true).
		if ss, ok := n.(*plan.ShowStatus); ok && *ss == *plan.NewShowStatus(true) {
			return globalStatus{ss}, transform.NewTree, nil
		}
		return n, transform.SameTree, nil
	})
}
