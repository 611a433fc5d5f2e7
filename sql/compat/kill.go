package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
)

// GMS runs KILL [CONNECTION | QUERY] n without looking whether connection
// n exists and answers OK, so a script or an operator that mistyped the
// id (or whose target had already left) believes it killed something.
// MySQL answers ER_NO_SUCH_THREAD (1094, "Unknown thread id: n"). KnownKill
// puts a node before GMS's that looks n up in the process list, which
// holds every connection from its accept (authenticated or not), and
// lets GMS's Kill run only for one it holds.

// codeNoSuchThread is MySQL's ER_NO_SUCH_THREAD.
const codeNoSuchThread = 1094

// KnownKill is the analyzer rule; see the comment above.
func KnownKill(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if k, ok := n.(*plan.Kill); ok {
		return knownKill{k}, transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

// knownKill runs its Kill when the process list holds the connection.
type knownKill struct{ *plan.Kill }

var _ gsql.ExecSourceRel = knownKill{}

// RowIter implements sql.ExecSourceRel.
func (k knownKill) RowIter(ctx *gsql.Context, row gsql.Row) (gsql.RowIter, error) {
	known := false
	if ctx.ProcessList != nil {
		for _, p := range ctx.ProcessList.Processes() {
			if p.Connection == k.ConnID {
				known = true
				break
			}
		}
	}
	if !known {
		return nil, mysql.NewSQLError(codeNoSuchThread, "HY000", "Unknown thread id: %d", k.ConnID)
	}
	return rowexec.DefaultBuilder.Build(ctx, k.Kill, row)
}

// WithChildren implements sql.Node.
func (k knownKill) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(k, len(children), 0)
	}
	return k, nil
}
