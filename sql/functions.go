package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/compat"
)

// Function implements sql.FunctionProvider: percdb's functions
// (compat.Function), which GMS's catalog looks up before its built-in
// ones.
func (p *DatabaseProvider) Function(_ *gsql.Context, name string) (gsql.Function, bool) {
	return compat.Function(name)
}
