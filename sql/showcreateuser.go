package sql

import (
	"context"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/privileges"
)

// SHOW CREATE USER, which vitess does not parse (1064), is what
// mariadb-dump --system=users, account tools (Ansible's mysql_user,
// Terraform's MySQL provider) and backup scripts read an account by: the
// handler runs it (ownStatement) from GMS's accounts, as MySQL 8 writes
// it, so that the statement it answers creates the same account again
// (the password by its hash, IDENTIFIED WITH 'plugin' AS 'hash').

// isShowCreateUser reports whether query starts with SHOW CREATE USER (a
// cheap test before the TiDB parser reads it: the handler asks it of
// every statement).
func isShowCreateUser(query string) bool {
	// Most statements fail the first test, which builds nothing.
	if !lexical.LeadingWordIs(query, "show") {
		return false
	}
	_, q := nextToken(lexical.TrimLeading(query, " \t\r\n"))
	w, q := nextToken(q)
	if !strings.EqualFold(w, "create") {
		return false
	}
	w, _ = nextToken(q)
	return strings.EqualFold(w, "user")
}

// parseShowCreateUser returns the account SHOW CREATE USER names (nil
// for CURRENT_USER), and whether query is one.
func parseShowCreateUser(query string) (*mysql_db.UserPrimaryKey, bool) {
	if !isShowCreateUser(query) {
		return nil, false
	}
	stmts, _, err := parser.New().Parse(query, "", "")
	if err != nil || len(stmts) != 1 {
		return nil, false
	}
	st, ok := stmts[0].(*ast.ShowStmt)
	if !ok || st.Tp != ast.ShowCreateUser || st.User == nil {
		return nil, false
	}
	if st.User.CurrentUser {
		return nil, true
	}
	return &mysql_db.UserPrimaryKey{User: st.User.Username, Host: st.User.Hostname}, true
}

// showCreateUser answers SHOW CREATE USER of account (nil: the session's
// own). Another account than one's own needs SELECT on the mysql
// database or CREATE USER, as in MySQL (1142 otherwise); an account that
// does not exist is 1396.
func (h *handler) showCreateUser(_ context.Context, c *mysql.Conn, account *mysql_db.UserPrimaryKey, cb mysql.ResultSpoolFn) error {
	s, db, err := h.accountStatement(c)
	if err != nil {
		return err
	}
	rd := db.Reader()
	defer rd.Close()
	client := s.Client()
	self := db.GetUser(rd, client.User, client.Address, false)
	if account == nil {
		if self == nil {
			return mysql.NewSQLError(1396, "HY000", "Operation SHOW CREATE USER failed for CURRENT_USER")
		}
		account = &mysql_db.UserPrimaryKey{User: self.User, Host: self.Host}
	}
	own := self != nil && self.User == account.User && self.Host == account.Host
	if !own && (self == nil || !mayReadAccounts(self.PrivilegeSet)) {
		// MySQL's 1142 for the mysql.user table it reads.
		return mysql.NewSQLError(1142, "42000", "SELECT command denied to user '%s'@'%s' for table 'user'", client.User, client.Address)
	}
	u, ok := rd.GetUser(*account)
	if !ok || u.IsRole {
		return mysql.NewSQLError(1396, "HY000", "Operation SHOW CREATE USER failed for '%s'@'%s'", account.User, account.Host)
	}
	name := "CREATE USER for " + u.User + "@" + u.Host
	res := &sqltypes.Result{
		Fields: []*querypb.Field{{Name: name, Type: sqltypes.VarChar, Charset: uint32(gsql.CharacterSet_utf8mb4), ColumnLength: 4096 * 4}},
		Rows:   [][]sqltypes.Value{{sqltypes.MakeTrusted(sqltypes.VarChar, []byte(createUserText(u)))}},
	}
	return cb(res, false)
}

// accountStatement starts an account statement the handler runs itself
// (SHOW CREATE USER, ALTER USER ... ACCOUNT LOCK) on c's session: its
// warnings replace the last statement's. It returns the session and GMS's
// accounts.
func (h *handler) accountStatement(c *mysql.Conn) (*Session, *mysql_db.MySQLDb, error) {
	s, err := h.sessionFor(c)
	if err != nil {
		return nil, nil, err
	}
	s.ClearWarnings()
	if h.accounts == nil || !h.accounts.Enabled() {
		return nil, nil, mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "accounts are not enabled")
	}
	return s, h.accounts, nil
}

// mayReadAccounts reports whether privileges let a user read other
// accounts' definitions: SELECT on the mysql database (or on every
// database), or CREATE USER.
func mayReadAccounts(p mysql_db.PrivilegeSet) bool {
	return p.Has(gsql.PrivilegeType_CreateUser) || p.Has(gsql.PrivilegeType_Select) ||
		p.Database("mysql").Has(gsql.PrivilegeType_Select)
}

// createUserText writes u as MySQL 8's SHOW CREATE USER does. GMS keeps
// no TLS requirements, password policies or resource limits of an
// account, so those are MySQL's defaults, which is what percdb applies;
// the account is locked only when GMS's record says so.
func createUserText(u *mysql_db.User) string {
	var b strings.Builder
	b.WriteString("CREATE USER ")
	b.WriteString(privileges.QuoteAccountPart(u.User))
	b.WriteByte('@')
	b.WriteString(privileges.QuoteAccountPart(u.Host))
	plugin := u.Plugin
	if plugin == "" {
		plugin = "mysql_native_password"
	}
	b.WriteString(" IDENTIFIED WITH ")
	b.WriteString(quoteString(plugin))
	if u.AuthString != "" {
		b.WriteString(" AS ")
		b.WriteString(quoteString(u.AuthString))
	}
	b.WriteString(" REQUIRE NONE PASSWORD EXPIRE DEFAULT")
	if u.Locked {
		b.WriteString(" ACCOUNT LOCK")
	} else {
		b.WriteString(" ACCOUNT UNLOCK")
	}
	b.WriteString(" PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT")
	return b.String()
}

// quoteString quotes s as a string literal: in single quotes, with a
// quote or backslash escaped.
func quoteString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(s) + "'"
}
