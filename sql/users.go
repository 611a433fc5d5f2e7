package sql

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/dolthub/go-mysql-server/server"
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/txn"
)

// Accounts and privileges are GMS's: its mysql_db keeps users, roles and
// grants in memory, runs CREATE/ALTER/DROP USER, GRANT, REVOKE and SET
// PASSWORD on them, checks privileges while it plans a statement, and
// authenticates connections. After every change it hands the whole account
// set, serialized as one flatbuffer, to a persister; percdb's persister
// (userStore) writes that blob under keyUsers in a Percolator transaction
// of its own, and Open loads it back.
//
// keyUsers sits outside the catalog's "m:" keys (package catalog), so the
// catalog's scans never meet it.
var keyUsers = []byte("m_users")

// rootHosts are the hosts of the root accounts percdb creates: the local
// one (GMS matches 127.0.0.1 and ::1 to it) and any host.
var rootHosts = []string{"localhost", "%"}

// userStore persists GMS's account tables in the key-value store. It
// implements mysql_db.MySQLDbPersistence.
type userStore struct {
	store *txn.Store
}

// Persist implements mysql_db.MySQLDbPersistence. GMS calls it with its
// account lock held, after it changed the accounts in memory: the write
// is its own transaction, committed before the statement returns, as
// MySQL commits account statements implicitly. Were the commit to fail,
// the statement fails while the change stays in memory until a restart
// (GMS offers no undo of its edit).
func (u *userStore) Persist(ctx *gsql.Context, data []byte) error {
	return u.save(ctx, data)
}

func (u *userStore) save(ctx context.Context, data []byte) error {
	t, err := u.store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("persist accounts: %w", err)
	}
	if err := t.Set(keyUsers, data); err != nil {
		_ = t.Rollback(ctx)
		return fmt.Errorf("persist accounts: %w", err)
	}
	if err := t.Commit(ctx); err != nil {
		return fmt.Errorf("persist accounts: %w", err)
	}
	return nil
}

// load returns the stored account blob, if any.
func (u *userStore) load(ctx context.Context) ([]byte, bool, error) {
	t, err := u.store.Begin(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("load accounts: %w", err)
	}
	defer func() { _ = t.Rollback(ctx) }()
	v, ok, err := t.Get(ctx, keyUsers)
	if err != nil {
		return nil, false, fmt.Errorf("load accounts: %w", err)
	}
	return v, ok, nil
}

// openAccounts loads the stored accounts into GMS's mysql_db, applies the
// root-password rule and turns authentication on. The rule:
//   - a fresh node (no stored accounts) gets root@localhost and root@%,
//     superusers, with password rootPassword (none when empty), as MySQL's
//     --initialize-insecure does for an empty password;
//   - on every later start a non-empty rootPassword sets root's password
//     again: both root accounts are re-created as superusers with it, so
//     that the operator can always get in with the flag. An empty
//     rootPassword leaves the stored accounts as they are (passwords set
//     by ALTER USER or SET PASSWORD stay).
func openAccounts(ctx context.Context, db *mysql_db.MySQLDb, store *txn.Store, rootPassword string) error {
	us := &userStore{store: store}
	blob, found, err := us.load(ctx)
	if err != nil {
		return err
	}
	sctx := gsql.NewContext(ctx)
	ed := db.Editor()
	defer ed.Close()
	if found {
		if err := db.OverwriteUsersAndGrantData(sctx, ed, blob); err != nil {
			return fmt.Errorf("load accounts: %w", err)
		}
	}
	db.SetPersister(us)
	db.SetEnabled(true)
	if found && rootPassword == "" {
		return nil
	}
	for _, host := range rootHosts {
		ed.RemoveUser(mysql_db.UserPrimaryKey{User: "root", Host: host})
		db.AddSuperUser(ed, "root", host, rootPassword)
	}
	if err := db.Persist(sctx, ed); err != nil {
		return fmt.Errorf("store root accounts: %w", err)
	}
	return nil
}

// fastPathPrivileges are the global privileges a user needs for the fast
// path, which runs SELECT, INSERT, UPDATE and DELETE without GMS's
// planner and so without its privilege checks.
var fastPathPrivileges = []gsql.PrivilegeType{
	gsql.PrivilegeType_Select, gsql.PrivilegeType_Insert,
	gsql.PrivilegeType_Update, gsql.PrivilegeType_Delete,
}

// mayUseFastPath reports whether the session's user may have statements
// run on the fast path: whether it holds every privilege the fast path
// could use on every table. Everyone else goes through GMS, which checks
// each statement's privileges (and answers 1142 when one is missing).
// Checked at each statement, so that a REVOKE takes effect at once. A
// session with temporary tables goes through GMS too: the fast path
// resolves names in the catalog, where a temporary table is not.
func mayUseFastPath(db *mysql_db.MySQLDb, s *Session) bool {
	if s.temps.any() {
		return false
	}
	if db == nil || !db.Enabled() {
		return true
	}
	client := s.Client()
	rd := db.Reader()
	defer rd.Close()
	u := db.GetUser(rd, client.User, client.Address, false)
	return u != nil && u.PrivilegeSet.Has(fastPathPrivileges...)
}

// accountAuth is the listener's authentication: locked accounts' methods
// (accountlock.go), GMS's methods
// (mysql_native_password, caching_sha2_password and its clear-text
// extension), then one that takes every user the others do not, an
// unknown user or a caching_sha2_password account without TLS, and
// refuses it with MySQL's 1045. Without it vitess answers those with 2012
// "No authentication methods available", which clients report as a
// handshake failure rather than a wrong password. Each method first tells
// vitess whether the client switched to TLS, which percdb terminates
// (secureMethod, compat_wire.go).
type accountAuth struct {
	mysql.AuthServer
	methods []mysql.AuthMethod
}

func newAccountAuth(inner mysql.AuthServer, accounts *mysql_db.MySQLDb) *accountAuth {
	others := inner.AuthMethods()
	refuse := &refusingMethod{
		AuthMethod: mysql.NewMysqlNativeAuthMethod(refusedAccounts{}, refusedAccounts{}),
		others:     others,
	}
	// Locked accounts first (accountlock.go): vitess takes the first
	// method that takes the user.
	methods := secureMethods(append(append(lockedAccountMethods(accounts), others...), refuse))
	return &accountAuth{AuthServer: inner, methods: methods}
}

// AuthMethods implements mysql.AuthServer.
func (a *accountAuth) AuthMethods() []mysql.AuthMethod { return a.methods }

// refusingMethod is a mysql_native_password exchange that refuses every
// user it takes, which are the users no other method takes: vitess picks
// the method by the client's plugin name first, so it must not take a
// user another method would have got by an auth switch.
type refusingMethod struct {
	mysql.AuthMethod
	others []mysql.AuthMethod
}

// HandleUser implements mysql.AuthMethod.
func (m *refusingMethod) HandleUser(c *mysql.Conn, user string) bool {
	for _, o := range m.others {
		if o.HandleUser(c, user) {
			return false
		}
	}
	return true
}

// refusedAccounts is the user validator and hash storage of
// refusingMethod.
type refusedAccounts struct{}

// HandleUser implements mysql.UserValidator: every user.
func (refusedAccounts) HandleUser(string, net.Addr) bool { return true }

// UserEntryWithHash implements mysql.HashStorage: access denied.
func (refusedAccounts) UserEntryWithHash(_ []*x509.Certificate, _ []byte, user string, _ []byte, _ net.Addr) (mysql.Getter, error) {
	return nil, mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "Access denied for user '%v'", user)
}

// accountErrorCodes give GMS's privilege errors, which reach the client as
// 1105, MySQL's codes. Built once and never changed.
var accountErrorCodes = []gmsErrorCode{
	kindCode(gsql.ErrTableAccessDeniedForUser, 1142, "42000"),    // ER_TABLEACCESS_DENIED_ERROR
	kindCode(gsql.ErrDatabaseAccessDeniedForUser, 1044, "42000"), // ER_DBACCESS_DENIED_ERROR
	kindCode(gsql.ErrPrivilegeCheckFailed, 1142, "42000"),        // ER_TABLEACCESS_DENIED_ERROR, "command denied"
}

// accountError returns err with MySQL's code if it is one of GMS's
// privilege errors, else err.
func accountError(err error) error {
	var se *mysql.SQLError
	if !errors.As(err, &se) || se.Num != mysql.ERUnknownError {
		return err
	}
	for _, c := range accountErrorCodes {
		if c.pattern.MatchString(se.Message) {
			return mysql.NewSQLError(c.code, c.state, "%s", se.Message)
		}
	}
	return err
}

// protocolListener returns a factory of GMS's MySQL listener with
// accountAuth, over the accounts of accounts, in place of GMS's own
// authentication.
func protocolListener(accounts *mysql_db.MySQLDb) server.ProtocolListenerFunc {
	return func(cfg server.Config, lc mysql.ListenerConfig, sel server.ServerEventListener) (server.ProtocolListener, error) {
		lc.AuthServer = newAccountAuth(lc.AuthServer, accounts)
		return server.MySQLProtocolListenerFactory(cfg, lc, sel)
	}
}

// requireTablePrivilege answers MySQL's 1142 unless the session's user
// holds priv on db.table, granted globally, on the database or on the
// table. The statements percdb serves itself (CHANGEFEED, ADMIN WATCH)
// run outside GMS's planner and so outside its privilege checks.
func (h *handler) requireTablePrivilege(ctx context.Context, s *Session, priv gsql.PrivilegeType, command, db, table string) error {
	if h.accounts == nil || !h.accounts.Enabled() {
		return nil
	}
	ps := h.accounts.UserActivePrivilegeSet(gsql.NewContext(ctx, gsql.WithSession(s)))
	dbs := ps.Database(db)
	if ps.Has(priv) || dbs.Has(priv) || dbs.Table(table).Has(priv) {
		return nil
	}
	client := s.Client()
	return mysql.NewSQLError(codeTableAccess, "42000", "%s command denied to user '%s'@'%s' for table '%s'", command, client.User, client.Address, table)
}

// requireGlobalPrivilege answers MySQL's 1227 unless the session's user
// holds priv globally (what is the name MySQL's message gives it).
func (h *handler) requireGlobalPrivilege(ctx context.Context, s *Session, priv gsql.PrivilegeType, what string) error {
	if h.accounts == nil || !h.accounts.Enabled() {
		return nil
	}
	if h.accounts.UserActivePrivilegeSet(gsql.NewContext(ctx, gsql.WithSession(s))).Has(priv) {
		return nil
	}
	return mysql.NewSQLError(mysql.ERSpecifiedAccessDenied, "42000", "Access denied; you need (at least one of) the %s privilege(s) for this operation", what)
}
