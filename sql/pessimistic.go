package sql

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/txn"
)

// Transaction modes (percdb_txn_mode, BEGIN PESSIMISTIC | OPTIMISTIC).
const (
	varTxnMode         = "percdb_txn_mode"
	varLockWaitTimeout = "innodb_lock_wait_timeout"
	modePessimistic    = "pessimistic"
	modeOptimistic     = "optimistic"
	// defaultTxnMode is the mode of new sessions: pessimistic, as
	// TiDB's since 3.0.8, so that MySQL applications see writers wait
	// for each other instead of failing at commit (docs/transactions.md,
	// "Choosing a mode"). Autocommit statements still run optimistically
	// until they lose a conflict (autocommitRetries).
	defaultTxnMode = modePessimistic
	// maxStatementRetries bounds how often a pessimistic statement runs
	// again after moving its transaction's snapshot past a conflicting
	// commit: each retry found a commit newer than its snapshot, so a
	// key busy enough to exhaust them gets 1213.
	maxStatementRetries = 100
)

var registerVariables sync.Once

// registerTxnVariables adds percdb_txn_mode and replaces GMS's
// innodb_lock_wait_timeout, which v0.20.0 pins to 1 and global scope only
// (it has no row locks): percdb's is MySQL's, session and global, 1 to
// 1073741824 seconds, default 50 (docs/compatibility.md); and
// percdb_text_plan_cache, the fast path's cache of text statements' shapes
// (fastpath_literals.go). GMS keeps system variables in one registry per
// process, so this is done once.
func registerTxnVariables() {
	registerVariables.Do(func() {
		gsql.SystemVariables.AddSystemVariables([]gsql.SystemVariable{
			&gsql.MysqlSystemVariable{
				Name:    varTxnMode,
				Scope:   gsql.GetMysqlScope(gsql.SystemVariableScope_Both),
				Dynamic: true,
				Type:    types.NewSystemEnumType(varTxnMode, modePessimistic, modeOptimistic),
				Default: defaultTxnMode,
			},
			&gsql.MysqlSystemVariable{
				Name:    varLockWaitTimeout,
				Scope:   gsql.GetMysqlScope(gsql.SystemVariableScope_Both),
				Dynamic: true,
				Type:    types.NewSystemIntType(varLockWaitTimeout, 1, 1073741824, false),
				Default: int64(50),
			},
			&gsql.MysqlSystemVariable{
				Name:    varTextPlanCache,
				Scope:   gsql.GetMysqlScope(gsql.SystemVariableScope_Both),
				Dynamic: true,
				Type:    types.NewSystemBoolType(varTextPlanCache),
				Default: int8(1),
			},
		})
	})
}

// beginMode recognises BEGIN PESSIMISTIC and BEGIN OPTIMISTIC (TiDB's
// syntax, which GMS does not parse): it returns the mode and the plain
// BEGIN to run instead.
func beginMode(query string) (mode string, begin string, ok bool) {
	if !lexical.LeadingWordIs(query, "begin") {
		return "", "", false
	}
	f := strings.Fields(strings.TrimRight(strings.TrimSpace(query), ";"))
	if len(f) != 2 || !strings.EqualFold(f[0], "begin") {
		return "", "", false
	}
	switch strings.ToLower(f[1]) {
	case modePessimistic:
		return modePessimistic, "BEGIN", true
	case modeOptimistic:
		return modeOptimistic, "BEGIN", true
	}
	return "", "", false
}

// isBegin reports whether query opens an explicit transaction.
func isBegin(query string) bool {
	if !lexical.LeadingWordIs(query, "begin") && !lexical.LeadingWordIs(query, "start") {
		return false
	}
	f := strings.Fields(strings.ToLower(strings.TrimRight(strings.TrimSpace(query), ";")))
	if len(f) == 0 {
		return false
	}
	return f[0] == "begin" && (len(f) == 1 || f[1] == "work" || f[1] == modePessimistic || f[1] == modeOptimistic) ||
		f[0] == "start" && len(f) > 1 && f[1] == "transaction"
}

// txnMode returns the mode of a transaction the session starts now: the
// mode a BEGIN named, else percdb_txn_mode.
func (s *Session) txnMode(ctx *gsql.Context) string {
	if s.beginMode != "" {
		return s.beginMode
	}
	v, err := s.GetSessionVariable(ctx, varTxnMode)
	if m, ok := v.(string); err == nil && ok {
		return strings.ToLower(m)
	}
	return defaultTxnMode
}

// lockWaitTimeout returns the session's innodb_lock_wait_timeout.
func (s *Session) lockWaitTimeout(ctx *gsql.Context) time.Duration {
	v, err := s.GetSessionVariable(ctx, varLockWaitTimeout)
	if err != nil {
		return 50 * time.Second
	}
	n, ok := types.CoalesceInt(v)
	if !ok || n < 1 {
		return 50 * time.Second
	}
	return time.Duration(n) * time.Second
}

// setPessimistic makes t's transaction pessimistic when the session that
// starts it is in an explicit transaction in pessimistic mode. An
// autocommit statement stays optimistic: it is its own transaction, so a
// conflict at its commit can be retried by the server as a whole
// (the DDL retry in handler.go) or is reported before anything else
// depended on it.
func (s *Session) setPessimistic(ctx *gsql.Context, t *Transaction) {
	if s.txnMode(ctx) != modePessimistic || !(s.beginning || s.inExplicitTransaction() || s.lockAutocommit) {
		return
	}
	t.pessimistic = true
	t.readCommitted = s.readCommittedTxn()
	t.lockWait = s.lockWaitTimeout(ctx)
	t.connID = s.ID()
}

// beginPessimistic prepares a new Percolator transaction of t for
// pessimistic mode.
func (t *Transaction) beginPessimistic(k *txn.Txn) error {
	if !t.pessimistic {
		return nil
	}
	if err := k.SetPessimistic(); err != nil {
		return err
	}
	if t.readCommitted {
		if err := k.SetReadCommitted(); err != nil {
			return err
		}
	}
	k.SetLockWaitTimeout(t.lockWait)
	return nil
}

// lockWritten locks, in a pessimistic transaction, the keys k's statement
// wrote since mark (a row and its index entries), at the snapshot the
// statement read them at; see lockError for the failures. At REPEATABLE
// READ the entries of non-unique indexes are left to their row's lock
// (txn.Txn.LockableSince), as TiDB leaves them: their prewrite checks
// them for commits newer than the transaction's snapshot, which moved
// past any commit the row's lock met. READ COMMITTED locks them too: its
// statements lock at snapshots newer than the one that check uses.
func lockWritten(ctx context.Context, tx *Transaction, k *txn.Txn, mark txn.WriteMark) error {
	if !k.IsPessimistic() {
		return nil
	}
	var keys [][]byte
	if lockBeforeRead(tx, k) {
		keys = k.LockableSince(mark)
	} else {
		keys = k.WrittenSince(mark)
	}
	if len(keys) == 0 {
		return nil
	}
	ts, err := k.SnapshotTS(ctx)
	if err == nil {
		tx.noteLocking(ctx)
		err = k.LockKeys(ctx, ts, keys...)
	}
	return tx.lockError(ctx, err)
}

// lockKeysReading locks keys a statement of tx writes next, in a
// pessimistic transaction, with their values (txn.Txn.LockKeysReading),
// at the snapshot the statement reads at, before it reads them: an
// INSERT's row key and index entries before its duplicate check (the
// caller checks lockBeforeRead). See lockError for the failures.
func lockKeysReading(ctx context.Context, tx *Transaction, k *txn.Txn, keys [][]byte) error {
	ts, err := k.SnapshotTS(ctx)
	if err == nil {
		tx.noteLocking(ctx)
		err = k.LockKeysReading(ctx, ts, keys...)
	}
	return tx.lockError(ctx, err)
}

// lockWaitView maps the transactions that take pessimistic locks to their
// connections, so that the store's lock waits can be shown by connection.
type lockWaitView struct {
	// store is the node's own store (nil on a SQL node of a cluster),
	// for its lock-wait counts; client lists the waits of every store
	// (kv.Client.LockWaitInfo: the KV nodes' in a cluster).
	store  *kv.Store
	client kv.Client
	conns  sync.Map // start_ts (uint64) -> connection id (uint32)
}

// noteLocking records t's connection before it takes locks.
func (t *Transaction) noteLocking(ctx context.Context) {
	if t.kv == nil || t.connID == 0 {
		return
	}
	if ts, err := t.kv.StartTS(ctx); err == nil && t.shownTS == 0 {
		t.shownTS = ts
		t.provider.lockWaits.conns.Store(ts, t.connID)
	}
}

// forgetLocks drops t from the view when it ends.
func (t *Transaction) forgetLocks() {
	if t.shownTS != 0 {
		t.provider.lockWaits.conns.Delete(t.shownTS)
		t.shownTS = 0
	}
}

// isShowLockWaits recognises ADMIN SHOW LOCK WAITS, percdb's view of the
// lock waits in progress (MySQL 8 has performance_schema.data_lock_waits,
// TiDB information_schema.DATA_LOCK_WAITS).
func isShowLockWaits(query string) bool { return isAdminWords(query, "admin", "show", "lock", "waits") }

// isAdminWords reports whether query is exactly words, in any case and
// spacing, with or without a final semicolon.
func isAdminWords(query string, words ...string) bool {
	if !lexical.LeadingWordIs(query, "admin") {
		return false
	}
	f := strings.Fields(strings.ToLower(strings.TrimRight(strings.TrimSpace(query), ";")))
	return slices.Equal(f, words)
}

// show lists the lock waits in progress, one row per waiting request:
// the waiting connection and transaction, the key (hex), and the
// connection and transaction holding the lock (connection 0: not a
// pessimistic transaction of this node). A store that cannot be asked
// fails the statement: the list would be missing its waits.
func (v *lockWaitView) show(ctx context.Context) (*sqltypes.Result, error) {
	rows, err := v.rows(ctx)
	if err != nil {
		return nil, toSQLError(err)
	}
	res := &sqltypes.Result{}
	for _, c := range []string{"CONNECTION_ID", "TRX_ID", "KEY", "HOLDING_CONNECTION_ID", "HOLDING_TRX_ID"} {
		res.Fields = append(res.Fields, &querypb.Field{Name: c, Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8})
	}
	for _, w := range rows {
		res.Rows = append(res.Rows, []sqltypes.Value{
			sqltypes.NewVarChar(strconv.FormatUint(w.txnConn, 10)),
			sqltypes.NewVarChar(strconv.FormatUint(w.txn, 10)),
			sqltypes.NewVarChar(hex.EncodeToString(w.key)),
			sqltypes.NewVarChar(strconv.FormatUint(w.holderConn, 10)),
			sqltypes.NewVarChar(strconv.FormatUint(w.holder, 10)),
		})
	}
	return res, nil
}

// lockError turns a pessimistic lock failure into the statement's error:
//   - a commit newer than the snapshot on a key the statement locks, or
//     a row inserted after the snapshot where the statement inserts: the
//     handler moves the snapshot past it, if nothing the transaction read
//     before the statement changed since, and runs the statement again
//     (retryAfterConflict); else 1213, and the whole transaction is
//     rolled back, as MySQL does after a deadlock;
//   - a deadlock: 1213, the transaction already rolled back;
//   - a lock wait timeout: 1205, the statement alone rolled back (the
//     handler undoes its writes; its locks stay, as InnoDB's do).
func (t *Transaction) lockError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, txn.ErrForUpdateConflict) && t.kv.CanRefreshSnapshot():
		t.retryStatement = true
	case errors.Is(err, txn.ErrAlreadyExists) && t.kv.CanRefreshSnapshot():
		// A key the statement read as absent at its snapshot was
		// inserted by a commit after it: the statement decided on a
		// stale read. Run again at a fresh snapshot it sees the row:
		// INSERT ... ON DUPLICATE KEY UPDATE updates it and REPLACE
		// replaces it, as MySQL's statement does after waiting for the
		// inserter; a plain INSERT then fails with 1062 by itself. In
		// an explicit transaction the snapshot moves (retryAfterConflict);
		// an autocommit statement's transaction is gone with its
		// failure, so the handler runs it again in a new one.
		t.retryStatement = true
		if gc, ok := ctx.(*gsql.Context); ok {
			if s, ok := gc.Session.(*Session); ok {
				s.insertRaced = true
			}
		}
	case errors.Is(err, txn.ErrWriteConflict), errors.Is(err, txn.ErrDeadlock):
		_ = t.rollback(ctx)
	}
	return toSQLError(err)
}

// retryAfterConflict prepares the session's transaction to run the
// statement that just failed again, when its failure asked for it
// (lockError), nothing of it reached the client and no part of it kept
// its writes (keptInStatement): the snapshot moves to a fresh timestamp
// after its earlier reads are validated. The statement's writes are
// already undone. When the statement cannot run again, the transaction
// is rolled back: its error is a 1213, and the second result says why
// the snapshot did not move (withRefusal adds it to the client's
// message, so that an application's log tells a refused move, an
// earlier read that changed, from a deadlock).
func (s *Session) retryAfterConflict(ctx context.Context, sent bool) (bool, error) {
	t, ok := s.GetTransaction().(*Transaction)
	if !ok || !t.retryStatement {
		return false, nil
	}
	t.retryStatement = false
	if t.finished || t.kv == nil {
		return false, nil
	}
	var why error
	switch {
	case sent:
		why = errors.New("the statement had sent rows already")
	case t.keptInStatement:
		why = errors.New("part of the statement kept its writes")
	default:
		if why = t.kv.RefreshSnapshot(ctx); why == nil {
			return true, nil
		}
	}
	_ = t.rollback(ctx)
	s.SetIgnoreAutoCommit(false)
	s.SetTransaction(nil)
	return false, why
}

// withRefusal adds to err, a statement's 1213 for a commit newer than
// its snapshot, why the transaction's snapshot could not move past that
// commit (retryAfterConflict). The error number and state stay MySQL's.
func withRefusal(err, why error) error {
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		return err
	}
	return mysql.NewSQLError(se.Num, se.State, "%s; the transaction's snapshot could not move past that commit: %v", se.Message, why)
}

// autocommitRetries reports whether query, about to run in session s, is
// an autocommit write of a session in pessimistic mode. Such a statement
// is its own transaction and runs optimistically (setPessimistic): it
// takes no lock before its commit, which spares the lock round trips
// when nothing conflicts. A write conflict at that commit (or a lock it
// may not wait for: the committer's wait-die) is what a pessimistic
// statement would have waited out and then run over, so the handler runs
// the statement again in a new, pessimistic transaction instead
// (lockAutocommit; handler.run), which waits for the locks in its way.
// That is equivalent to running it pessimistically from the start:
// nothing of the failed transaction remains and nothing reached the
// client, since the result of an INSERT, UPDATE, DELETE or REPLACE is
// sent after its commit (one that sent rows is not run again). Auto-
// increment values the failed run took are skipped, as after any
// rollback in MySQL.
func (s *Session) autocommitRetries(query string) bool {
	if s.inExplicitTransaction() || s.GetTransaction() != nil || !s.provider.fast.sessionVars(s).pessimistic {
		return false
	}
	return startsWithWord(query, "insert", "update", "delete", "replace")
}

// isConflict reports whether err, a statement's error for the client, is
// MySQL's 1213.
func isConflict(err error) bool {
	var se *mysql.SQLError
	return errors.As(err, &se) && se.Num == codeDeadlock
}

// conflictAfterRetries is the error of a statement that ran
// maxStatementRetries times and met a newer commit every time.
func conflictAfterRetries(err error) error {
	return mysql.NewSQLError(codeDeadlock, stateSerialization, "%s (%d attempts: %v)", msgDeadlock, maxStatementRetries, err)
}

// selectLocks reports whether the statement is a SELECT ... FOR UPDATE
// that opens a pessimistic transaction (autocommit off, no transaction
// open yet). That one skips the fast path for GMS's, which begins the
// transaction in the session's mode. A locking read inside an open
// transaction runs on either path: both lock the rows they read through
// txn.Txn.LockKeys, which takes pessimistic locks in a pessimistic
// transaction (waiting for their holders) and optimistic ones otherwise;
// TestFastPathPessimisticForUpdate.
func (s *Session) selectLocks() bool {
	if !s.forUpdate {
		return false
	}
	if t, ok := s.GetTransaction().(*Transaction); ok && !t.finished {
		return false
	}
	return s.lockingTxn()
}

// lockingTxn reports whether the session's statements run in a
// pessimistic transaction: one is open, or the statement opens one.
func (s *Session) lockingTxn() bool {
	if t, ok := s.GetTransaction().(*Transaction); ok && !t.finished {
		// An open transaction's own mode decides (BEGIN OPTIMISTIC in
		// a pessimistic session is optimistic).
		return t.pessimistic
	}
	if s.beginMode != "" {
		return s.beginMode == modePessimistic
	}
	if !s.beginning && !s.inExplicitTransaction() {
		return false
	}
	v, err := s.GetSessionVariable(nil, varTxnMode)
	m, ok := v.(string)
	return err == nil && ok && strings.EqualFold(m, modePessimistic)
}
