package sql

import (
	"context"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/pingcap/tidb/pkg/parser/auth"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/percdb/percdb/sql/privileges"
)

// The handler's side of package privileges: recognising a role
// statement and running it in a session.

// parseRoleStatement recognises the statements about roles the handler
// runs (privileges.ParseRoleStatement).
func parseRoleStatement(query string) (privileges.RoleStatement, bool) {
	return privileges.ParseRoleStatement(query)
}

// roleStatement runs st for c's session.
func (h *handler) roleStatement(ctx context.Context, c *mysql.Conn, st privileges.RoleStatement, cb mysql.ResultSpoolFn) error {
	s, db, err := h.accountStatement(c)
	if err != nil {
		return err
	}
	self := privileges.SessionAccount(db, s)
	if self == nil {
		client := s.Client()
		return mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "no account for '%s'@'%s'", client.User, client.Address)
	}
	if st.SetRole != nil || st.SetDefault != nil {
		sctx := gsql.NewContext(ctx, gsql.WithSession(s))
		if st.SetRole != nil {
			err = privileges.SetRole(sctx, db, self, st.SetRole)
		} else {
			err = privileges.SetDefaultRole(sctx, db, st.SetDefault)
		}
		if err != nil {
			return err
		}
		return cb(&sqltypes.Result{}, false)
	}
	for _, u := range privileges.AccountUsers(st.Account) {
		if u != nil && u.CurrentUser {
			*u = auth.UserIdentity{Username: self.User, Hostname: self.Host}
		}
	}
	var b strings.Builder
	if err := st.Account.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &b)); err != nil {
		return fmt.Errorf("write the statement with CURRENT_USER() replaced: %w", err)
	}
	return h.Handler.ComQuery(ctx, c, b.String(), h.temporalFieldFilter(c, cb))
}
