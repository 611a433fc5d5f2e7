package sql

import (
	"context"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/internal/lexical"
)

// Locked accounts (CREATE USER ... ACCOUNT LOCK, ALTER USER ... ACCOUNT
// LOCK | UNLOCK). GMS keeps a Locked flag per account, persists it and
// refuses a locked account's login, but its CREATE USER drops the clause
// and vitess does not parse ALTER USER's: an account created locked could
// log in, and none could be locked. percdb:
//   - CREATE USER ... ACCOUNT LOCK locks the accounts the statement
//     created (createUserLocked, from the row-iterator builder);
//   - ALTER USER ... ACCOUNT LOCK | UNLOCK is run by the handler
//     (alterUserLock).
// A session already open goes on, as in MySQL.

// createUserLocked runs CREATE USER ... ACCOUNT LOCK: GMS's CREATE USER,
// then the accounts it created locked (not those IF NOT EXISTS left as
// they were), persisted as GMS persists accounts. It returns no iterator
// for a CREATE USER without the clause, which GMS runs alone.
func createUserLocked(ctx *gsql.Context, accounts *mysql_db.MySQLDb, n *plan.CreateUser, row gsql.Row) (gsql.RowIter, error) {
	if !n.Locked || accounts == nil {
		return nil, nil
	}
	existed := make(map[mysql_db.UserPrimaryKey]bool, len(n.Users))
	rd := accounts.Reader()
	for _, u := range n.Users {
		pk := mysql_db.UserPrimaryKey{User: u.UserName.Name, Host: u.UserName.Host}
		_, existed[pk] = rd.GetUser(pk)
	}
	rd.Close()
	rows, err := compat.DefaultRows(ctx, n, row)
	if err != nil {
		return nil, err
	}
	var keys []mysql_db.UserPrimaryKey
	for pk, ok := range existed {
		if !ok {
			keys = append(keys, pk)
		}
	}
	if err := setLocked(ctx, accounts, keys, true); err != nil {
		return nil, fmt.Errorf("lock the accounts created: %w", err)
	}
	return gsql.RowsToRowIter(rows...), nil
}

// setLocked sets the Locked flag of accounts keys (which exist) and
// persists the accounts.
func setLocked(ctx *gsql.Context, accounts *mysql_db.MySQLDb, keys []mysql_db.UserPrimaryKey, locked bool) error {
	if len(keys) == 0 {
		return nil
	}
	ed := accounts.Editor()
	defer ed.Close()
	for _, pk := range keys {
		u, ok := ed.GetUser(pk)
		if !ok {
			continue
		}
		// A copy, put in place of the old record (which readers may
		// hold): PutUser finds the record to replace by all of its
		// fields, so the old one is removed by its key first.
		c := *u
		c.Locked = locked
		ed.RemoveUser(pk)
		ed.PutUser(&c)
	}
	return accounts.Persist(ctx, ed)
}

// accountLockStatement is ALTER USER [IF EXISTS] account, ... ACCOUNT LOCK
// | UNLOCK.
type accountLockStatement struct {
	ifExists bool
	// users are the accounts; nil User for CURRENT_USER().
	users  []*mysql_db.UserPrimaryKey
	locked bool
}

// parseAccountLock recognises ALTER USER statements that only lock or
// unlock accounts (with the other password and lock options MySQL's
// defaults, which are what percdb applies), which vitess does not parse.
// One that changes anything else (a password) is left to GMS.
func parseAccountLock(query string) (accountLockStatement, bool) {
	// Most statements fail the first test, which builds nothing.
	if !lexical.LeadingWordIs(query, "alter") {
		return accountLockStatement{}, false
	}
	_, q := nextToken(lexical.TrimLeading(query, " \t\r\n"))
	if w, _ := nextToken(q); !strings.EqualFold(w, "user") || indexFold(q, "account") < 0 {
		return accountLockStatement{}, false
	}
	stmts, _, err := parser.New().Parse(query, "", "")
	if err != nil || len(stmts) != 1 {
		return accountLockStatement{}, false
	}
	st, ok := stmts[0].(*ast.AlterUserStmt)
	if !ok || st.CurrentAuth != nil || len(st.AuthTokenOrTLSOptions) > 0 || len(st.ResourceOptions) > 0 ||
		st.CommentOrAttributeOption != nil || st.ResourceGroupNameOption != nil {
		return accountLockStatement{}, false
	}
	out := accountLockStatement{ifExists: st.IfExists}
	lockSet := false
	for _, o := range st.PasswordOrLockOptions {
		switch o.Type {
		case ast.Lock:
			out.locked, lockSet = true, true
		case ast.Unlock:
			out.locked, lockSet = false, true
		default:
			return accountLockStatement{}, false
		}
	}
	if !lockSet {
		return accountLockStatement{}, false
	}
	for _, spec := range st.Specs {
		if spec.AuthOpt != nil || spec.User == nil {
			return accountLockStatement{}, false
		}
		if spec.User.CurrentUser {
			out.users = append(out.users, nil)
			continue
		}
		out.users = append(out.users, &mysql_db.UserPrimaryKey{User: spec.User.Username, Host: spec.User.Hostname})
	}
	return out, true
}

// alterUserLock runs ALTER USER ... ACCOUNT LOCK | UNLOCK: it needs the
// CREATE USER privilege or UPDATE on the mysql database (1227 otherwise,
// as MySQL), and changes nothing when an account does not exist (1396
// naming them), unless IF EXISTS (a note 3162 for each, the others
// changed).
func (h *handler) alterUserLock(ctx context.Context, c *mysql.Conn, st accountLockStatement, cb mysql.ResultSpoolFn) error {
	s, db, err := h.accountStatement(c)
	if err != nil {
		return err
	}
	client := s.Client()
	rd := db.Reader()
	self := db.GetUser(rd, client.User, client.Address, false)
	var keys []mysql_db.UserPrimaryKey
	var missing []string
	for _, pk := range st.users {
		if pk == nil {
			if self == nil {
				continue
			}
			pk = &mysql_db.UserPrimaryKey{User: self.User, Host: self.Host}
		}
		if u, ok := rd.GetUser(*pk); !ok || u.IsRole {
			missing = append(missing, fmt.Sprintf("'%s'@'%s'", pk.User, pk.Host))
			continue
		}
		keys = append(keys, *pk)
	}
	rd.Close()
	if self == nil || !(self.PrivilegeSet.Has(gsql.PrivilegeType_CreateUser) || self.PrivilegeSet.Has(gsql.PrivilegeType_Update) ||
		self.PrivilegeSet.Database("mysql").Has(gsql.PrivilegeType_Update)) {
		return mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, "42000", "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation")
	}
	sctx := gsql.NewContext(ctx, gsql.WithSession(s))
	if len(missing) > 0 {
		if !st.ifExists {
			return mysql.NewSQLError(1396, "HY000", "Operation ALTER USER failed for %s", strings.Join(missing, ","))
		}
		for _, m := range missing {
			s.Warn(&gsql.Warning{Level: "Note", Code: 3162, Message: fmt.Sprintf("Authorization ID %s does not exist.", m)})
		}
	}
	if err := setLocked(sctx, db, keys, st.locked); err != nil {
		return err
	}
	return cb(&sqltypes.Result{}, false)
}
