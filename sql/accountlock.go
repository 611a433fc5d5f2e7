package sql

import (
	"context"
	"crypto/sha1"
	"crypto/subtle"
	"crypto/x509"
	"fmt"
	"net"
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
	"github.com/percdb/percdb/sql/privileges"
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
	self := privileges.SessionAccount(db, s)
	rd := db.Reader()
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

// A locked account's login. GMS refuses it with 1045 before it looks at
// the password; MySQL checks the password first and answers a right one
// with 3118 (ER_ACCOUNT_HAS_BEEN_LOCKED), which tells an administrator
// (and tools that retry on 1045 with another password) that the lock,
// not the password, is the cause. lockedAccountMethods are auth methods
// placed before GMS's that take only locked accounts, check the password
// as GMS would (the same stored forms), and always refuse: 3118 when it
// is right, 1045 when it is not, so that the lock tells nothing to a
// client that does not know the password.

// codeAccountLocked is MySQL's ER_ACCOUNT_HAS_BEEN_LOCKED.
const codeAccountLocked = 3118

// lockedAccountMethods returns the methods for locked accounts of
// mysql_native_password and caching_sha2_password, the plugins GMS
// authenticates.
func lockedAccountMethods(db *mysql_db.MySQLDb) []mysql.AuthMethod {
	l := lockedLogins{db: db}
	return []mysql.AuthMethod{
		mysql.NewMysqlNativeAuthMethod(l, lockedValidator{l, mysql.MysqlNativePassword}),
		mysql.NewSha2CachingAuthMethod(l, l, lockedValidator{l, mysql.CachingSha2Password}),
	}
}

// lockedLogins looks up locked accounts and refuses their logins.
type lockedLogins struct {
	db *mysql_db.MySQLDb
}

// account returns the locked account user logging in from addr, and the
// client's host as GMS matches it, or nil when the account is not
// locked (or not there).
func (l lockedLogins) account(user string, addr net.Addr) (*mysql_db.User, string) {
	if l.db == nil || !l.db.Enabled() || addr == nil {
		return nil, ""
	}
	host := "localhost"
	if addr.Network() != "unix" {
		host = addr.String()
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
	}
	rd := l.db.Reader()
	defer rd.Close()
	u := l.db.GetUser(rd, user, host, false)
	if u == nil || !u.Locked {
		return nil, host
	}
	return u, host
}

// lockedRefusal is the answer to a login of locked account u from host: 3118
// if the password was right, else 1045.
func lockedRefusal(u *mysql_db.User, user, host string, passwordRight bool) error {
	if passwordRight {
		return mysql.NewSQLError(codeAccountLocked, "HY000", "Access denied for user '%s'@'%s'. Account is locked.", u.User, host)
	}
	return mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "Access denied for user '%v'", user)
}

// UserEntryWithHash implements mysql.HashStorage for
// mysql_native_password: the reply is checked against the stored
// SHA1(SHA1(password)).
func (l lockedLogins) UserEntryWithHash(_ []*x509.Certificate, salt []byte, user string, reply []byte, addr net.Addr) (mysql.Getter, error) {
	u, host := l.account(user, addr)
	if u == nil {
		// Unlocked since the method was chosen: the client retries.
		return nil, lockedRefusal(nil, user, host, false)
	}
	right := len(reply) == 0 && u.AuthString == ""
	if u.AuthString != "" && len(reply) == sha1.Size {
		if stored, err := mysql.DecodeMysqlNativePasswordHex(u.AuthString); err == nil {
			right = mysql.VerifyHashedMysqlNativePassword(reply, salt, stored)
		}
	}
	return nil, lockedRefusal(u, user, host, right)
}

// UserEntryWithCacheHash implements mysql.CachingStorage for
// caching_sha2_password's fast path, which GMS does not keep: an empty
// reply is right only for an account without a password; any other asks
// for the password in full (over TLS, as GMS).
func (l lockedLogins) UserEntryWithCacheHash(_ []*x509.Certificate, _ []byte, user string, reply []byte, addr net.Addr) (mysql.Getter, mysql.CacheState, error) {
	u, host := l.account(user, addr)
	if u == nil {
		return nil, mysql.AuthRejected, lockedRefusal(nil, user, host, false)
	}
	if len(reply) == 0 || (len(reply) == 1 && reply[0] == 0) {
		return nil, mysql.AuthRejected, lockedRefusal(u, user, host, u.AuthString == "")
	}
	return nil, mysql.AuthNeedMoreData, nil
}

// UserEntryWithPassword implements mysql.PlainTextStorage for
// caching_sha2_password's full exchange: the password is hashed with the
// stored salt and iterations and compared with the stored string.
func (l lockedLogins) UserEntryWithPassword(_ []*x509.Certificate, user string, password string, addr net.Addr) (mysql.Getter, error) {
	u, host := l.account(user, addr)
	if u == nil {
		return nil, lockedRefusal(nil, user, host, false)
	}
	right := password == "" && u.AuthString == ""
	if u.AuthString != "" {
		_, iterations, salt, _, err := mysql.DeserializeCachingSha2PasswordAuthString([]byte(u.AuthString))
		if err == nil {
			got, err := mysql.SerializeCachingSha2PasswordAuthString(password, salt, iterations)
			right = err == nil && subtle.ConstantTimeCompare(got, []byte(u.AuthString)) == 1
		}
	}
	return nil, lockedRefusal(u, user, host, right)
}

// lockedValidator takes the locked accounts of one plugin.
type lockedValidator struct {
	logins lockedLogins
	plugin mysql.AuthMethodDescription
}

// HandleUser implements mysql.UserValidator.
func (v lockedValidator) HandleUser(user string, addr net.Addr) bool {
	u, _ := v.logins.account(user, addr)
	return u != nil && u.Plugin == string(v.plugin)
}
