package sql

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/perfschema"
)

// Table locks: LOCK TABLES, UNLOCK TABLES and FLUSH TABLES WITH READ LOCK
// as MySQL runs them (GMS v0.20.0 accepts them and takes no lock, so a
// mariadb-dump with its default --lock-tables was not consistent across
// tables while others wrote).
//
//   - LOCK TABLES t READ lets every session read t and none write it; t
//     WRITE lets no other session read or write it. A statement of
//     another session that would conflict waits until the lock is
//     released, up to lock_wait_timeout (1205). LOCK TABLES itself waits
//     for conflicting locks of other sessions, and first releases the
//     session's own.
//   - The locking session may use only the tables it locked, under the
//     names (aliases) it locked them by: 1100 for another table, 1099 for a
//     write to a table locked READ. information_schema,
//     performance_schema and the session's temporary tables are exempt, as
//     in MySQL.
//   - FLUSH TABLES WITH READ LOCK takes the global read lock: every
//     writing statement of other sessions waits until it is released, and
//     the holder's own fail with 1223. FLUSH TABLES t, u WITH READ LOCK is
//     LOCK TABLES t READ, u READ.
//   - UNLOCK TABLES, and the end of the session, release all of them.
//
// Which tables a statement reads and writes comes from the parser's
// privilege annotations (the tables GMS checks privileges on), parsed
// again only while some session holds a lock: otherwise a statement pays
// one atomic load. The locks are this SQL node's (tableLocks, one per
// DatabaseProvider): sessions on other nodes of a cluster do not see them
// (docs/compatibility.md).

// Error codes of table locks.
const (
	codeTableNotLockedForWrite = 1099 // ER_TABLE_NOT_LOCKED_FOR_WRITE
	codeTableNotLocked         = 1100 // ER_TABLE_NOT_LOCKED
	codeCantUpdateWithReadLock = 1223 // ER_CANT_UPDATE_WITH_READLOCK
	codeLockOrActiveTxn        = 1192 // ER_LOCK_OR_ACTIVE_TRANSACTION
	codeNonUniqTable           = 1066 // ER_NONUNIQ_TABLE
	varLockWaitTimeoutMDL      = "lock_wait_timeout"
)

// tableLocks are the table locks held on one SQL node, by session.
type tableLocks struct {
	mu sync.Mutex
	// held are the locks of each session that holds any.
	held map[uint32]*heldLocks
	// released is closed, and replaced, whenever a lock is released:
	// waiters look again.
	released chan struct{}
	// holders is len(held), read without mu by every statement.
	holders atomic.Int32
}

// heldLocks are one session's locks.
type heldLocks struct {
	// tables are its LOCK TABLES locks.
	tables []tableUse
	// global is whether it holds the global read lock (FLUSH TABLES
	// WITH READ LOCK).
	global bool
}

// tableUse is a table a statement reads or writes, or a table lock: the
// database, table and the name the statement uses for it (its alias, or
// its name), all lower-cased.
type tableUse struct {
	db, name, alias string
	write           bool
}

// active reports whether any session of the node holds a table lock.
func (m *tableLocks) active() bool { return m.holders.Load() > 0 }

// setLocked records h as the locks of session id (none when h is empty),
// releasing what it held before. Called with mu held.
func (m *tableLocks) setLocked(id uint32, h *heldLocks) {
	if _, had := m.held[id]; had {
		delete(m.held, id)
		m.wake()
	}
	if h != nil && (h.global || len(h.tables) > 0) {
		if m.held == nil {
			m.held = make(map[uint32]*heldLocks)
		}
		m.held[id] = h
	}
	m.holders.Store(int32(len(m.held)))
}

// wake tells the waiters that a lock went. Called with mu held.
func (m *tableLocks) wake() {
	if m.released != nil {
		close(m.released)
	}
	m.released = make(chan struct{})
}

// release drops every lock of session id: UNLOCK TABLES, or its end.
func (m *tableLocks) release(id uint32) {
	if !m.active() {
		return
	}
	m.mu.Lock()
	m.setLocked(id, nil)
	m.mu.Unlock()
}

// blocked reports whether a use of a table by session self conflicts with
// a lock of another session (write says whether the statement writes at
// all, for the global read lock). Called with mu held.
func (m *tableLocks) blocked(self uint32, uses []tableUse, write bool) bool {
	for id, h := range m.held {
		if id == self {
			continue
		}
		if h.global && write {
			return true
		}
		for _, l := range h.tables {
			for _, u := range uses {
				if l.db == u.db && l.name == u.name && (l.write || u.write) {
					return true
				}
			}
		}
	}
	return false
}

// await waits until try, called with mu held, reports done or fails, up
// to timeout.
func (m *tableLocks) await(ctx context.Context, timeout time.Duration, try func() (bool, error)) error {
	var expired <-chan time.Time
	for {
		m.mu.Lock()
		done, err := try()
		if m.released == nil {
			m.released = make(chan struct{})
		}
		released := m.released
		m.mu.Unlock()
		if done || err != nil {
			return err
		}
		if expired == nil {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-released:
		case <-expired:
			return mysql.NewSQLError(codeLockWaitTimeout, stateGeneral, "%s", msgLockWaitTimeout)
		case <-ctx.Done():
			// KILL QUERY, KILL CONNECTION or the client gone (stmtctx.go).
			return mysql.NewSQLError(codeQueryInterrupted, stateQueryInterrupted, "%s", msgQueryInterrupted)
		}
	}
}

// lock takes the LOCK TABLES locks of session id, releasing its own
// before; global tells whether it holds the global read lock, which it
// keeps.
func (m *tableLocks) lock(ctx context.Context, id uint32, locks []tableUse, timeout time.Duration) error {
	m.mu.Lock()
	global := false
	if h, ok := m.held[id]; ok {
		global = h.global
	}
	m.setLocked(id, &heldLocks{global: global})
	m.mu.Unlock()
	if global {
		for _, l := range locks {
			if l.write {
				return errCantUpdateWithReadLock()
			}
		}
	}
	return m.await(ctx, timeout, func() (bool, error) {
		if m.blocked(id, locks, false) {
			return false, nil
		}
		m.setLocked(id, &heldLocks{tables: locks, global: global})
		return true, nil
	})
}

// lockGlobal takes the global read lock for session id once no other
// session holds a WRITE table lock.
func (m *tableLocks) lockGlobal(ctx context.Context, id uint32, timeout time.Duration) error {
	m.mu.Lock()
	h := m.held[id]
	m.mu.Unlock()
	if h != nil && len(h.tables) > 0 {
		return mysql.NewSQLError(codeLockOrActiveTxn, stateGeneral,
			"Can't execute the given command because you have active locked tables or an active transaction")
	}
	return m.await(ctx, timeout, func() (bool, error) {
		for other, h := range m.held {
			if other == id {
				continue
			}
			for _, l := range h.tables {
				if l.write {
					return false, nil
				}
			}
		}
		m.setLocked(id, &heldLocks{global: true})
		return true, nil
	})
}

// admit decides whether session id may run a statement that uses uses
// (write: it writes at all): the holder of locks gets 1100, 1099 or 1223
// at once, another session waits while a lock conflicts.
func (m *tableLocks) admit(ctx context.Context, id uint32, uses []tableUse, write bool, timeout time.Duration) error {
	m.mu.Lock()
	h := m.held[id]
	m.mu.Unlock()
	if h != nil {
		return h.check(uses, write)
	}
	return m.await(ctx, timeout, func() (bool, error) { return !m.blocked(id, uses, write), nil })
}

// check returns the error of a statement of the session holding h that
// uses uses, or nil.
func (h *heldLocks) check(uses []tableUse, write bool) error {
	if h.global && write {
		return errCantUpdateWithReadLock()
	}
	if len(h.tables) == 0 {
		return nil
	}
	for _, u := range uses {
		var l *tableUse
		for i := range h.tables {
			if t := &h.tables[i]; t.db == u.db && t.name == u.name && t.alias == u.alias {
				l = t
				break
			}
		}
		switch {
		case l == nil:
			return mysql.NewSQLError(codeTableNotLocked, stateGeneral, "Table '%s' was not locked with LOCK TABLES", u.alias)
		case u.write && !l.write:
			return mysql.NewSQLError(codeTableNotLockedForWrite, stateGeneral, "Table '%s' was locked with a READ lock and can't be updated", u.alias)
		}
	}
	return nil
}

func errCantUpdateWithReadLock() error {
	return mysql.NewSQLError(codeCantUpdateWithReadLock, stateGeneral, "Can't execute the query because you have a conflicting read lock")
}

// mdlWaitTimeout returns the session's lock_wait_timeout, which bounds
// waits for table locks (MySQL's metadata locks).
func (s *Session) mdlWaitTimeout() time.Duration {
	const fallback = 31536000 * time.Second // MySQL's default
	v, err := s.GetSessionVariable(nil, varLockWaitTimeoutMDL)
	if err != nil {
		return fallback
	}
	switch n := v.(type) {
	case int64:
		if n > 0 {
			return time.Duration(n) * time.Second
		}
	case uint64:
		if n > 0 {
			return time.Duration(n) * time.Second
		}
	case int32:
		if n > 0 {
			return time.Duration(n) * time.Second
		}
	}
	return fallback
}

// admitStatement makes the statement that begins query wait for, or fail
// on, the table locks of the node (see above). It costs one atomic load
// while nobody holds a lock.
func (s *Session) admitStatement(ctx context.Context, query string) error {
	m := &s.provider.tableLocks
	if !m.active() {
		return nil
	}
	stmt, _, err := ast.ParseOne(ctx, query)
	if err != nil {
		return nil // GMS reports it
	}
	uses, write := s.statementTableUses(stmt)
	if len(uses) == 0 && !write {
		return nil
	}
	return m.admit(ctx, s.ID(), uses, write, s.mdlWaitTimeout())
}

// statementTableUses returns the tables stmt reads and writes, and
// whether it writes at all (a DML statement or DDL), from the parser's
// privilege annotations. Tables exempt from LOCK TABLES are left out.
func (s *Session) statementTableUses(stmt ast.Statement) (uses []tableUse, write bool) {
	switch stmt.(type) {
	case *ast.Insert, *ast.Update, *ast.Delete, *ast.Load, *ast.DDL, *ast.AlterTable, *ast.DBDDL:
		write = true
	case *ast.LockTables, *ast.UnlockTables:
		return nil, false
	}
	cur := strings.ToLower(s.GetCurrentDatabase())
	add := func(db, name, alias string, w bool) {
		db, name, alias = strings.ToLower(db), strings.ToLower(name), strings.ToLower(alias)
		if db == "" {
			db = cur
		}
		if alias == "" {
			alias = name
		}
		if db == "" || name == "" || db == "information_schema" || perfschema.IsDatabase(db) || s.temps.get(db, name) != nil {
			return
		}
		uses = append(uses, tableUse{db: db, name: name, alias: alias, write: w})
	}
	written := writtenNames(stmt)
	ast.WalkAuthNodes(stmt, func(n ast.AuthNode, a ast.AuthInformation) {
		var w bool
		switch a.AuthType {
		case ast.AuthType_SELECT:
		case ast.AuthType_INSERT, ast.AuthType_REPLACE, ast.AuthType_UPDATE, ast.AuthType_DELETE,
			ast.AuthType_DROP, ast.AuthType_ALTER, ast.AuthType_INDEX:
			w = true
		default:
			return
		}
		if a.TargetType != ast.AuthTargetType_SingleTableIdentifier && a.TargetType != ast.AuthTargetType_MultipleTableIdentifiers {
			return
		}
		alias := ""
		if t, ok := n.(*ast.AliasedTableExpr); ok {
			alias = t.As.String()
		}
		for i := 0; i+1 < len(a.TargetNames); i += 2 {
			db, name := a.TargetNames[i], a.TargetNames[i+1]
			used := alias
			if used == "" {
				used = name
			}
			ww := w
			if w && written != nil {
				_, ww = written[strings.ToLower(used)]
			}
			add(db, name, alias, ww)
		}
	})
	switch st := stmt.(type) {
	case *ast.Load:
		add(st.Table.DbQualifier.String(), st.Table.Name.String(), "", true)
	case *ast.DDL:
		if st.Action == ast.RenameStr {
			for _, t := range st.FromTables {
				add(t.DbQualifier.String(), t.Name.String(), "", true)
			}
		}
	}
	return uses, write
}

// writtenNames returns the names (aliases, or table names) of the tables
// a multiple-table UPDATE or DELETE writes, lower-cased, or nil when it
// writes every table it names: a DELETE's targets, an UPDATE's tables
// whose columns its SET qualifies (every table when a column is not
// qualified).
func writtenNames(stmt ast.Statement) map[string]struct{} {
	names := make(map[string]struct{})
	switch st := stmt.(type) {
	case *ast.Delete:
		if len(st.Targets) == 0 {
			return nil
		}
		for _, t := range st.Targets {
			names[strings.ToLower(t.Name.String())] = struct{}{}
		}
	case *ast.Update:
		if len(st.TableExprs) == 1 {
			if _, ok := st.TableExprs[0].(*ast.AliasedTableExpr); ok {
				return nil
			}
		}
		for _, e := range st.Exprs {
			q := e.Name.Qualifier.Name.String()
			if q == "" {
				return nil
			}
			names[strings.ToLower(q)] = struct{}{}
		}
	default:
		return nil
	}
	return names
}

// lockTablesStatement runs LOCK TABLES for ctx's session.
func lockTablesStatement(ctx *gsql.Context) error {
	s, err := sessionOf(ctx)
	if err != nil {
		return err
	}
	stmt, _, err := ast.ParseOne(ctx, ctx.Query())
	if err != nil {
		return err
	}
	lt, ok := stmt.(*ast.LockTables)
	if !ok {
		return nil
	}
	cur := strings.ToLower(s.GetCurrentDatabase())
	locks := make([]tableUse, 0, len(lt.Tables))
	for _, e := range lt.Tables {
		at, ok := e.Table.(*ast.AliasedTableExpr)
		if !ok {
			continue
		}
		tn, ok := at.Expr.(ast.TableName)
		if !ok {
			continue
		}
		l := tableUse{
			db:    strings.ToLower(tn.DbQualifier.String()),
			name:  strings.ToLower(tn.Name.String()),
			alias: strings.ToLower(at.As.String()),
			write: e.Lock == ast.LockWrite || e.Lock == ast.LockLowPriorityWrite,
		}
		if l.db == "" {
			l.db = cur
		}
		if l.alias == "" {
			l.alias = l.name
		}
		for _, o := range locks {
			if o.alias == l.alias && o.db == l.db {
				return mysql.NewSQLError(codeNonUniqTable, "42000", "Not unique table/alias: '%s'", l.alias)
			}
		}
		locks = append(locks, l)
	}
	return s.provider.tableLocks.lock(ctx, s.ID(), locks, s.mdlWaitTimeout())
}

// flushStatement runs for session s the FLUSH statements GMS does not
// run: FLUSH TABLES [t, …] WITH READ LOCK (GMS: a statement that does
// nothing), which takes the global read lock or READ locks on the tables
// named, and FLUSH STATUS (GMS: 1105), which resets the session's status
// counters (flushStatus). It reports whether query was one of them.
// Before FLUSH PRIVILEGES, which GMS runs, the grant tables a reload
// staged are applied (applyReload).
func (s *Session) flushStatement(ctx context.Context, query string) (bool, error) {
	if !lexical.LeadingWordIs(query, "flush") {
		return false, nil
	}
	stmt, _, err := ast.ParseOne(ctx, query)
	if err != nil {
		return false, nil
	}
	f, ok := stmt.(*ast.Flush)
	if !ok || f.Option == nil {
		return false, nil
	}
	if strings.EqualFold(f.Option.Name, "status") {
		s.flushStatus()
		return true, nil
	}
	if strings.EqualFold(f.Option.Name, "privileges") {
		// The grant tables a reload staged take effect before GMS's
		// FLUSH PRIVILEGES runs (grantreload.go).
		return false, s.applyReload(ctx)
	}
	if !f.Option.ReadLock {
		return false, nil
	}
	m := &s.provider.tableLocks
	if len(f.Option.Tables) == 0 {
		return true, m.lockGlobal(ctx, s.ID(), s.mdlWaitTimeout())
	}
	cur := strings.ToLower(s.GetCurrentDatabase())
	locks := make([]tableUse, 0, len(f.Option.Tables))
	for _, t := range f.Option.Tables {
		l := tableUse{db: strings.ToLower(t.DbQualifier.String()), name: strings.ToLower(t.Name.String())}
		if l.db == "" {
			l.db = cur
		}
		l.alias = l.name
		locks = append(locks, l)
	}
	return true, m.lock(ctx, s.ID(), locks, s.mdlWaitTimeout())
}
