package privileges

import (
	"fmt"
	"sort"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/auth"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// Roles. GMS keeps roles and their grants (CREATE ROLE, GRANT role TO
// user, mysql.role_edges) and makes every role granted to an account
// active in each of its sessions, as MySQL does with
// activate_all_roles_on_login = ON; it has no CURRENT_ROLE(), SET ROLE
// or GRANT ... TO CURRENT_USER() (1105 and 1064). Dumps of accounts
// (mariadb-dump --system=users) and account tools use all three. percdb:
//   - CURRENT_ROLE() names the roles active in the session: every role
//     granted to its account, as MySQL writes them (`r`@`%`, sorted,
//     comma separated), NONE when there are none;
//   - SET ROLE DEFAULT | ALL is what the session already has; SET ROLE
//     NONE, SET ROLE ALL EXCEPT ... and SET ROLE r, ... check that the
//     roles are granted (3530 otherwise, as MySQL), but the session keeps
//     every granted role active, with a warning 1235 saying so: GMS
//     computes a session's privileges from all of them;
//   - SET DEFAULT ROLE and ALTER USER ... DEFAULT ROLE check the accounts
//     and that the roles are granted (1396, 3530) and keep nothing: GMS
//     has no default roles (mysql.default_roles is empty,
//     package sql's mysqlextra.go); a warning 1235 when they ask for fewer than all;
//   - GRANT and REVOKE (of privileges or of roles) naming CURRENT_USER()
//     run with the session's account in its place.

// codeRoleNotGranted is MySQL's ER_ROLE_NOT_GRANTED.
const codeRoleNotGranted = 3530

// currentRole is CURRENT_ROLE().
type currentRole struct {
	function.NoArgFunc
	accounts *mysql_db.MySQLDb
}

// NewCurrentRole returns CURRENT_ROLE() over accounts.
func NewCurrentRole(accounts *mysql_db.MySQLDb) gsql.Function {
	return gsql.NewFunction0("current_role", func() gsql.Expression {
		return currentRole{NoArgFunc: function.NoArgFunc{Name: "current_role", SQLType: types.LongText}, accounts: accounts}
	})
}

// Eval implements gsql.Expression.
func (f currentRole) Eval(ctx *gsql.Context, _ gsql.Row) (interface{}, error) {
	roles := activeRoles(ctx, f.accounts)
	if len(roles) == 0 {
		return "NONE", nil
	}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = QuoteAccountPart(r.User) + "@" + QuoteAccountPart(r.Host)
	}
	return strings.Join(names, ","), nil
}

// WithChildren implements gsql.Expression.
func (f currentRole) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	return function.NoArgFuncWithChildren(f, children)
}

// CollationCoercibility implements gsql.CollationCoercible: a system
// constant, as CURRENT_USER().
func (currentRole) CollationCoercibility(*gsql.Context) (gsql.CollationID, byte) {
	return gsql.Collation_utf8mb3_general_ci, 3
}

// activeRoles returns the roles active in ctx's session, which are the
// roles granted to its account (GMS's UserActivePrivilegeSet), sorted.
func activeRoles(ctx *gsql.Context, accounts *mysql_db.MySQLDb) []mysql_db.UserPrimaryKey {
	if accounts == nil || !accounts.Enabled() || ctx.Session == nil {
		return nil
	}
	rd := accounts.Reader()
	defer rd.Close()
	client := ctx.Session.Client()
	u := accounts.GetUser(rd, client.User, client.Address, false)
	if u == nil {
		return nil
	}
	var roles []mysql_db.UserPrimaryKey
	for _, e := range rd.GetToUserRoleEdges(mysql_db.RoleEdgesToKey{ToHost: u.Host, ToUser: u.User}) {
		roles = append(roles, mysql_db.UserPrimaryKey{User: e.FromUser, Host: e.FromHost})
	}
	sort.Slice(roles, func(i, j int) bool {
		if roles[i].User != roles[j].User {
			return roles[i].User < roles[j].User
		}
		return roles[i].Host < roles[j].Host
	})
	return roles
}

// RoleStatement is a statement about roles the handler runs: SET ROLE,
// or a GRANT or REVOKE naming CURRENT_USER(). One field is set.
type RoleStatement struct {
	// SetRole is SET ROLE.
	SetRole *ast.SetRoleStmt
	// SetDefault is SET DEFAULT ROLE, or ALTER USER ... DEFAULT ROLE
	// written as it.
	SetDefault *ast.SetDefaultRoleStmt
	// Account is a GRANT or REVOKE naming CURRENT_USER(), which the
	// handler rewrites with the session's account (AccountUsers).
	Account ast.StmtNode
}

// ParseRoleStatement recognises SET ROLE, SET DEFAULT ROLE, ALTER USER
// ... DEFAULT ROLE and GRANT or REVOKE naming CURRENT_USER(), which
// vitess does not parse.
func ParseRoleStatement(query string) (RoleStatement, bool) {
	// Most statements fail the first tests, which build nothing.
	switch {
	case lexical.LeadingWordIs(query, "set"):
		_, q := lexical.NextToken(lexical.TrimLeading(query, " \t\r\n"))
		w, q := lexical.NextToken(q)
		if strings.EqualFold(w, "default") {
			w, _ = lexical.NextToken(q)
		}
		if !strings.EqualFold(w, "role") {
			return RoleStatement{}, false
		}
	case lexical.LeadingWordIs(query, "alter"):
		text, ok := alterUserDefaultRole(query)
		if !ok {
			return RoleStatement{}, false
		}
		query = text
	case lexical.LeadingWordIs(query, "grant"), lexical.LeadingWordIs(query, "revoke"):
		if lexical.IndexFold(query, "current_user") < 0 {
			return RoleStatement{}, false
		}
	default:
		return RoleStatement{}, false
	}
	stmts, _, err := parser.New().Parse(query, "", "")
	if err != nil || len(stmts) != 1 {
		return RoleStatement{}, false
	}
	switch st := stmts[0].(type) {
	case *ast.SetRoleStmt:
		return RoleStatement{SetRole: st}, true
	case *ast.SetDefaultRoleStmt:
		return RoleStatement{SetDefault: st}, true
	case *ast.GrantRoleStmt:
		return RoleStatement{Account: st}, namesCurrentUser(st.Users)
	case *ast.RevokeRoleStmt:
		return RoleStatement{Account: st}, namesCurrentUser(st.Users)
	case *ast.GrantStmt:
		return RoleStatement{Account: st}, namesCurrentUser(specUsers(st.Users))
	case *ast.RevokeStmt:
		return RoleStatement{Account: st}, namesCurrentUser(specUsers(st.Users))
	}
	return RoleStatement{}, false
}

// specUsers returns the accounts of specs.
func specUsers(specs []*ast.UserSpec) []*auth.UserIdentity {
	users := make([]*auth.UserIdentity, 0, len(specs))
	for _, s := range specs {
		users = append(users, s.User)
	}
	return users
}

// namesCurrentUser reports whether users include CURRENT_USER().
func namesCurrentUser(users []*auth.UserIdentity) bool {
	for _, u := range users {
		if u != nil && u.CurrentUser {
			return true
		}
	}
	return false
}

// AccountUsers returns the accounts a GRANT or REVOKE statement grants
// to or revokes from, which the caller may change in place.
func AccountUsers(st ast.StmtNode) []*auth.UserIdentity {
	switch st := st.(type) {
	case *ast.GrantRoleStmt:
		return st.Users
	case *ast.RevokeRoleStmt:
		return st.Users
	case *ast.GrantStmt:
		return specUsers(st.Users)
	case *ast.RevokeStmt:
		return specUsers(st.Users)
	}
	return nil
}

// alterUserDefaultRole returns ALTER USER account, ... DEFAULT ROLE
// roles written as SET DEFAULT ROLE roles TO account, ..., which the TiDB
// parser reads, and whether query is such a statement.
func alterUserDefaultRole(query string) (string, bool) {
	_, q := lexical.NextToken(lexical.TrimLeading(query, " \t\r\n"))
	w, q := lexical.NextToken(q)
	if !strings.EqualFold(w, "user") {
		return "", false
	}
	i := lexical.IndexFold(q, "default")
	if i < 0 {
		return "", false
	}
	w, rest := lexical.NextToken(q[i+len("default"):])
	if !strings.EqualFold(w, "role") {
		return "", false
	}
	accounts := strings.TrimSpace(q[:i])
	if strings.HasPrefix(strings.ToLower(accounts), "if exists") {
		return "", false
	}
	return "SET DEFAULT ROLE " + strings.TrimRight(rest, "; \t\r\n") + " TO " + accounts, true
}

// SetDefaultRole runs SET DEFAULT ROLE: it needs CREATE USER (1227,
// as MySQL, for another account than one's own), the accounts must exist
// (1396) and the roles be granted to each (3530). GMS keeps no default
// roles: every granted role is active in each session, which a warning
// 1235 says when the statement asks for fewer.
func SetDefaultRole(ctx *gsql.Context, db *mysql_db.MySQLDb, st *ast.SetDefaultRoleStmt) error {
	client := ctx.Session.Client()
	rd := db.Reader()
	defer rd.Close()
	self := db.GetUser(rd, client.User, client.Address, false)
	narrows := false
	for _, u := range st.UserList {
		pk := mysql_db.UserPrimaryKey{User: u.Username, Host: u.Hostname}
		if u.CurrentUser && self != nil {
			pk = mysql_db.UserPrimaryKey{User: self.User, Host: self.Host}
		}
		if self == nil || (pk != (mysql_db.UserPrimaryKey{User: self.User, Host: self.Host}) && !self.PrivilegeSet.Has(gsql.PrivilegeType_CreateUser)) {
			return mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, "42000", "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation")
		}
		if _, ok := rd.GetUser(pk); !ok {
			return mysql.NewSQLError(1396, "HY000", "Operation SET DEFAULT ROLE failed for '%s'@'%s'", pk.User, pk.Host)
		}
		granted := map[mysql_db.UserPrimaryKey]bool{}
		for _, e := range rd.GetToUserRoleEdges(mysql_db.RoleEdgesToKey{ToHost: pk.Host, ToUser: pk.User}) {
			granted[mysql_db.UserPrimaryKey{User: e.FromUser, Host: e.FromHost}] = true
		}
		for _, r := range st.RoleList {
			if !granted[mysql_db.UserPrimaryKey{User: r.Username, Host: r.Hostname}] {
				return mysql.NewSQLError(codeRoleNotGranted, "HY000", "`%s`@`%s` is not granted to `%s`@`%s`", r.Username, r.Hostname, pk.User, pk.Host)
			}
		}
		narrows = narrows || fewerRoles(st.SetRoleOpt, len(st.RoleList), len(granted))
	}
	if narrows {
		warnAllRolesActive(ctx, "SET DEFAULT ROLE")
	}
	return nil
}

// fewerRoles reports whether a SET ROLE or SET DEFAULT ROLE of kind opt
// naming n roles asks for fewer than the granted ones.
func fewerRoles(opt ast.SetRoleStmtType, n, granted int) bool {
	switch opt {
	case ast.SetRoleNone:
		return granted > 0
	case ast.SetRoleAllExcept:
		return n > 0
	case ast.SetRoleRegular:
		return n < granted
	}
	return false
}

// warnAllRolesActive warns that every granted role stays active.
func warnAllRolesActive(ctx *gsql.Context, what string) {
	ctx.Session.Warn(&gsql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet,
		Message: fmt.Sprintf("This version of percdb doesn't yet support '%s to fewer roles than are granted': every granted role stays active", what)})
}

// SetRole runs SET ROLE for account self: the roles it names must be
// granted to self (3530). Every granted role stays active: a warning
// says so when the statement asks for fewer.
func SetRole(ctx *gsql.Context, db *mysql_db.MySQLDb, self *mysql_db.User, st *ast.SetRoleStmt) error {
	granted := map[mysql_db.UserPrimaryKey]bool{}
	for _, r := range activeRoles(ctx, db) {
		granted[r] = true
	}
	for _, r := range st.RoleList {
		pk := mysql_db.UserPrimaryKey{User: r.Username, Host: r.Hostname}
		if !granted[pk] {
			return mysql.NewSQLError(codeRoleNotGranted, "HY000", "`%s`@`%s` is not granted to `%s`@`%s`", r.Username, r.Hostname, self.User, self.Host)
		}
	}
	if fewerRoles(st.SetRoleOpt, len(st.RoleList), len(granted)) {
		warnAllRolesActive(ctx, "SET ROLE")
	}
	return nil
}

// SessionAccount returns the account s logged in as (nil if it is gone).
func SessionAccount(db *mysql_db.MySQLDb, s gsql.Session) *mysql_db.User {
	client := s.Client()
	rd := db.Reader()
	defer rd.Close()
	return db.GetUser(rd, client.User, client.Address, false)
}

// QuoteAccountPart quotes a user or host name as MySQL writes it in SHOW
// CREATE USER: in backquotes, a backquote doubled.
func QuoteAccountPart(s string) string {
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}
