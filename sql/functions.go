package sql

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/privileges"
)

// Function implements sql.FunctionProvider: percdb's functions
// (compat.Function), CURRENT_ROLE() (package privileges) and UUID_SHORT()
// (this server's, compat.UUIDShort), which GMS's catalog
// looks up before its built-in ones.
// A stored function of the current database comes after them
// (storedfunc.go).
func (p *DatabaseProvider) Function(ctx *gsql.Context, name string) (gsql.Function, bool) {
	if f, ok := compat.Function(name); ok {
		return f, true
	}
	if strings.EqualFold(name, "current_role") {
		return privileges.NewCurrentRole(p.accounts), true
	}
	if strings.EqualFold(name, "uuid_short") {
		return p.uuidShort.Function(), true
	}
	return p.storedFunction(ctx, name)
}
