package sql

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/procedures"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS's interpreter (procedures.Call, v0.20.0) runs a handler's statement
// (DECLARE ... HANDLER FOR ... stmt) as the first of the operations it
// makes of it, and when that operation gives rows (a SELECT, an INSERT,
// SET @user_var, anything run as a statement) it drains them and takes
// their end for a jump to operation -1: the body starts over from its
// first statement, and when the error comes again, forever, spinning a
// core with no way to KILL it (the loop does not look at the context).
// A BEGIN ... END handler runs its BEGIN only; SET a = 1, b = 2 its first
// assignment.
//
// So a CALL whose procedure declares a handler with any statement but
// those GMS runs whole and without rows, SET of one local variable or
// parameter and SIGNAL, is refused before anything of it runs, with
// MySQL's 1235 (not supported).

// procHandlersRule refuses a CALL whose procedure declares a handler GMS
// would run wrongly (see above).
func procHandlersRule(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	var bad error
	transform.Inspect(n, func(node gsql.Node) bool {
		if call, ok := node.(*plan.Call); ok && bad == nil {
			bad = checkHandlers(call.GetStatements())
		}
		return bad == nil
	})
	return n, transform.SameTree, bad
}

// checkHandlers returns MySQL's 1235 for the first handler among ops
// whose statement GMS's interpreter would not run whole and without rows.
func checkHandlers(ops []*procedures.InterpreterOperation) error {
	for _, op := range ops {
		d, ok := op.PrimaryData.(*ast.Declare)
		if op.OpCode != procedures.OpCode_Declare || !ok || d.Handler == nil {
			continue
		}
		switch st := d.Handler.Statement.(type) {
		case *ast.Signal:
			continue
		case *ast.Set:
			if len(st.Exprs) == 1 && len(st.Exprs[0].Scope) == 0 {
				continue
			}
		}
		return mysql.NewSQLError(mysql.ERNotSupportedYet, "42000",
			"This version of MySQL doesn't yet support '%s'", fmt.Sprintf("a handler whose statement is not a SET of one local variable or a SIGNAL (%s)", ast.String(d)))
	}
	return nil
}
