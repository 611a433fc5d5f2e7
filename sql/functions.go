package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
)

// Function implements sql.FunctionProvider: percdb's functions
// (Function, compat_functions.go), which GMS's catalog looks up before
// its built-in ones.
func (p *DatabaseProvider) Function(_ *gsql.Context, name string) (gsql.Function, bool) {
	return Function(name)
}
