package sql

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/sirupsen/logrus"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/plancache"
)

// Session is one client connection's state: GMS's BaseSession (variables,
// current database, warnings) plus the connection's open Transaction. It
// implements sql.TransactionSession so that BEGIN, COMMIT, ROLLBACK and
// autocommit map onto Percolator transactions, and LifecycleAwareSession so
// that a connection that goes away rolls its transaction back.
type Session struct {
	*gsql.BaseSession
	provider *DatabaseProvider
	// forUpdate is set by the handler for the duration of a SELECT ... FOR
	// UPDATE (GMS ignores the clause): row iterators then lock what they
	// return.
	forUpdate bool
	// lockWait is what the statement's FOR UPDATE does with rows other
	// transactions have locked: wait, NOWAIT or SKIP LOCKED (set with
	// forUpdate; lockRows).
	lockWait compat.LockWait
	// readWrite is set by the handler for the duration of a START
	// TRANSACTION ... READ WRITE, setNext for a SET TRANSACTION; saved
	// holds the characteristics that one changed for the next
	// transaction only (txnchars.go).
	readWrite, setNext bool
	saved              *savedCharacteristics
	// procResults keeps the result sets of the SELECTs of the CALL
	// the session runs as a query (procresults.go); nil otherwise.
	procResults *procSpool
	// activeFunctions are the stored functions running (storedfunc.go):
	// one calling itself is MySQL's 1424.
	activeFunctions functionStack
	// aliasSpellings maps the lowercase of each table alias of the last
	// statement parsed to its spelling, when they differ
	// (compat_aliascase.go).
	aliasSpellings map[string]string
	// ignoredGenerated are the warnings for values of generated columns
	// the last statement parsed ignored, until its INSERT is built
	// (compat_genvalues.go).
	ignoredGenerated []string
	// divisionsByZero counts the warnings 1365 the session raised, which
	// a strict INSERT or UPDATE under ERROR_FOR_DIVISION_BY_ZERO turns
	// into its error (sql/compat/zerodates.go; compat_ignorewarn.go).
	divisionsByZero int
	// lastDiag is the conditions the statement before the running one
	// left, and lastError the error the last failed statement answered
	// (compat_diagarea.go).
	lastDiag  diagnostics
	lastError *mysql.SQLError
	// keptDiag is set while the running statement, which uses no table,
	// keeps lastDiag's conditions as the session's warnings until it
	// raises one (compat_diagarea.go).
	keptDiag bool
	// drop is the running DROP TABLE or DROP VIEW (compat_dropnames.go).
	drop *dropStatement
	// stepsCommitted is set when the running statement committed a
	// schema change step of its own (an online index build): the
	// statement is then never run again after a conflict, which would
	// repeat the step. The handler clears it before each attempt.
	stepsCommitted bool
	// insertRaced is set when the running statement's lock found a row
	// inserted after its snapshot where it inserts (lockError); an
	// autocommit statement then runs again in a new transaction. The
	// handler clears it before each attempt.
	insertRaced bool
	// fullScan is set when the running statement reads a table by a full
	// scan (no index), for SERVER_QUERY_NO_INDEX_USED (status.go). Set
	// by row iterators, which GMS may run in goroutines of its own.
	fullScan atomic.Bool
	// rowsExamined counts the rows the running statement read from its
	// tables, for the slow query log's Rows_examined (observe.go); added
	// to by row iterators when they close and by the fast path.
	rowsExamined atomic.Uint64
	// temps are the session's temporary tables (temptable.go).
	temps tempTables
	// reload is the session's reload of mysql's tables
	// (grantreload.go).
	reload grantReload
	// ownPrepared are the texts of the statements the handler serves
	// that SQL PREPARE prepared, by lower-case name (ownprepared.go).
	ownPrepared map[string]string
	// fast is the issue-6 fast path's state of the session.
	fast fastSession
	// beginning is set by the handler for the duration of a BEGIN or START
	// TRANSACTION; beginMode for a BEGIN PESSIMISTIC | OPTIMISTIC.
	beginning bool
	beginMode string
	// maintenanceOp is set by the handler while an OPTIMIZE or REPAIR
	// TABLE runs as ANALYZE TABLE (maintenance.go).
	maintenanceOp string
	// lockAutocommit is set by the handler while it runs again an
	// autocommit write that lost a write conflict: its transaction is
	// then pessimistic (autocommitRetries).
	lockAutocommit bool
	// sentRows is set once a statement's rows started to reach the
	// client: it can no longer run again (pessimistic.go).
	sentRows bool
	// onEnd is called once when the connection ends.
	onEnd func()
	// started is the transaction StartTransaction last handed out. GMS
	// sometimes drops an autocommit transaction after an error without
	// ending it (clearAutocommitTransaction); the handler ends it then
	// (releaseDropped), so that it does not stay registered with the
	// schema tracker.
	started *Transaction
	// ended holds the timestamps of the transaction releaseDropped let go
	// of last, for the slow query log (observe.go), which looks after the
	// statement is over; endedSeq counts those releases.
	ended    endedTxn
	endedSeq uint64
	// digests are the statement digests the session computed
	// (digests.go).
	digests sessionDigests
	// observed is what the outermost handler keeps of the session's
	// statements (observe.go).
	observed observedSession
	// activity is what the session is doing, for the process list
	// (processlist.go).
	activity sessionActivity
	// plans are the analysed plans of its prepared statements
	// (plancache.go).
	plans plancache.Cache
	// textPlans are the analysed plans of its text SELECTs, by their
	// text (textplancache.go).
	textPlans plancache.Cache
	// planDBs are the databases GMS's planner is given as the current
	// one where it needs one MySQL does not (compat_viewdb.go).
	planDBs planDatabases
	// renameAcross is the RENAME TABLE between databases the current
	// command runs (renameacross.go); CommandEnd drops it.
	renameAcross *renameAcross
}

// endedTxn is a finished transaction's timestamps (0 for none).
type endedTxn struct{ startTS, commitTS uint64 }

var (
	_ gsql.TransactionSession    = (*Session)(nil)
	_ gsql.LifecycleAwareSession = (*Session)(nil)
)

// newSession wraps base for the provider and applies the MySQL 8 defaults
// GMS lacks (see docs/compatibility.md).
func newSession(base *gsql.BaseSession, p *DatabaseProvider, vars map[string]any) (*Session, error) {
	s := &Session{BaseSession: base, provider: p}
	ctx := gsql.NewContext(context.Background(), gsql.WithSession(s))
	for name, v := range vars {
		if err := s.InitSessionVariable(ctx, name, v); err != nil {
			return nil, fmt.Errorf("init session variable %s: %w", name, err)
		}
	}
	return s, nil
}

// sessionOf returns the percdb session of ctx.
func sessionOf(ctx *gsql.Context) (*Session, error) {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return nil, fmt.Errorf("session is %T, not a percdb session", ctx.Session)
	}
	return s, nil
}

// transactionOf returns the transaction of ctx, starting one when GMS
// calls in outside any (for example while resolving USE db).
func transactionOf(ctx *gsql.Context) (*Transaction, error) {
	switch t := ctx.GetTransaction().(type) {
	case *Transaction:
		if t.finished {
			// A transaction that committed or failed can do nothing more;
			// GMS may still hold it after a failure it did not report.
			nt := &Transaction{provider: t.provider, readOnly: t.readOnly}
			ctx.SetTransaction(nt)
			return nt, nil
		}
		return t, nil
	case nil:
		s, err := sessionOf(ctx)
		if err != nil {
			return nil, err
		}
		// Not kept on the session: GMS would take it for the next
		// statement's transaction.
		return &Transaction{provider: s.provider, readOnly: true}, nil
	default:
		return nil, fmt.Errorf("transaction is %T, not a percdb transaction", t)
	}
}

// releaseDropped rolls back the transaction this session started last
// if GMS no longer holds it and nothing ended it.
func (s *Session) releaseDropped(ctx context.Context) {
	t := s.started
	if t == nil {
		return
	}
	if cur, _ := s.GetTransaction().(*Transaction); cur == t {
		return
	}
	s.started = nil
	if !t.finished {
		_ = t.rollback(ctx)
	}
	if t.kv != nil {
		s.ended = endedTxn{t.kv.KnownStartTS(), t.kv.CommitTS()}
		s.endedSeq++
	}
}

// CommitTransaction implements sql.TransactionSession.
func (s *Session) CommitTransaction(ctx *gsql.Context, tx gsql.Transaction) error {
	t, ok := tx.(*Transaction)
	if !ok {
		return fmt.Errorf("commit: transaction is %T, not a percdb transaction", tx)
	}
	// Every commit ends the explicit transaction, if any: COMMIT and
	// BEGIN's commit of the previous one say so themselves (BEGIN then
	// opens another), but GMS's implicit commit after a DDL statement
	// does not, which left the session in an explicit transaction that
	// nothing would commit.
	s.SetIgnoreAutoCommit(false)
	return toSQLError(t.commit(ctx))
}

// Rollback implements sql.TransactionSession.
func (s *Session) Rollback(ctx *gsql.Context, tx gsql.Transaction) error {
	t, ok := tx.(*Transaction)
	if !ok {
		return fmt.Errorf("rollback: transaction is %T, not a percdb transaction", tx)
	}
	return toSQLError(t.rollback(ctx))
}

// CreateSavepoint implements sql.TransactionSession: a savepoint is a
// stage of the transaction's buffered writes (see txn.Txn.Staging).
func (s *Session) CreateSavepoint(ctx *gsql.Context, tx gsql.Transaction, name string) error {
	t, ok := tx.(*Transaction)
	if !ok {
		return fmt.Errorf("savepoint: transaction is %T, not a percdb transaction", tx)
	}
	return toSQLError(t.createSavepoint(ctx, name))
}

// RollbackToSavepoint implements sql.TransactionSession.
func (s *Session) RollbackToSavepoint(ctx *gsql.Context, tx gsql.Transaction, name string) error {
	t, ok := tx.(*Transaction)
	if !ok {
		return fmt.Errorf("rollback to savepoint: transaction is %T, not a percdb transaction", tx)
	}
	return t.rollbackToSavepoint(name)
}

// ReleaseSavepoint implements sql.TransactionSession.
func (s *Session) ReleaseSavepoint(ctx *gsql.Context, tx gsql.Transaction, name string) error {
	t, ok := tx.(*Transaction)
	if !ok {
		return fmt.Errorf("release savepoint: transaction is %T, not a percdb transaction", tx)
	}
	return t.releaseSavepoint(name)
}

// CommandBegin implements sql.LifecycleAwareSession.
func (s *Session) CommandBegin() error { return nil }

// CommandEnd implements sql.LifecycleAwareSession. A planning database
// left by a statement that failed while one was set goes, and so do the
// warnings of a statement that failed before its INSERT was built.
func (s *Session) CommandEnd() { s.planDBs.reset(); s.ignoredGenerated, s.renameAcross = nil, nil }

// SessionEnd implements sql.LifecycleAwareSession: the connection is gone,
// so its open transaction is rolled back and its temporary tables dropped.
func (s *Session) SessionEnd() {
	if t, ok := s.GetTransaction().(*Transaction); ok {
		_ = t.rollback(context.Background())
		s.SetTransaction(nil)
	}
	s.provider.dropTempTables(s)
	s.provider.tableLocks.Release(s.ID())
	// Grant tables a reload left staged take effect (grantreload.go).
	if err := s.applyReload(context.Background()); err != nil {
		logrus.WithError(err).Warn("apply the grant tables the session reloaded")
	}
	if s.onEnd != nil {
		s.onEnd()
		s.onEnd = nil
	}
}

// statementFailed undoes what the statement that just failed wrote. GMS
// does not always tell the table editors (an error met while an OK-result
// iterator runs skips DiscardChanges), so the handler calls this after
// every failed command. Outside an explicit transaction the whole
// autocommit transaction is abandoned.
func (s *Session) statementFailed(ctx context.Context) {
	s.releaseDropped(ctx)
	s.provider.dropNewTempTables(ctx, s)
	t, ok := s.GetTransaction().(*Transaction)
	if !ok {
		return
	}
	t.statementEnd(false)
	if t.finished {
		// A failed COMMIT (a write conflict, say) ends the transaction,
		// explicit or not, as in MySQL after a deadlock.
		s.SetIgnoreAutoCommit(false)
		s.SetTransaction(nil)
		return
	}
	if s.inExplicitTransaction() {
		return
	}
	_ = t.rollback(ctx)
	s.SetTransaction(nil)
}

// statementSucceeded keeps what the statement wrote, in case GMS did not
// call StatementComplete.
func (s *Session) statementSucceeded() {
	s.releaseDropped(context.Background())
	s.temps.keepNew()
	if t, ok := s.GetTransaction().(*Transaction); ok {
		t.statementEnd(true)
	}
}

// hasWrites reports whether the session's transaction has buffered writes
// that a statement's failure or retry must not lose.
func (s *Session) hasWrites() bool {
	t, ok := s.GetTransaction().(*Transaction)
	return ok && t.kv != nil && !t.kv.IsReadOnly()
}

// inExplicitTransaction reports whether a transaction outlives the current
// statement: after BEGIN, or with autocommit off.
func (s *Session) inExplicitTransaction() bool {
	return s.GetIgnoreAutoCommit() || !s.autocommit()
}

// setGlobalProvider returns the node (DatabaseProvider) of the session
// whose SET GLOBAL changed a node-global percdb variable, for that
// variable's NotifyChanged; nil when the change is not a SET GLOBAL of a
// percdb session (GMS also calls NotifyChanged while it loads values at
// start, AssignValues, with no session).
func setGlobalProvider(ctx *gsql.Context, scope gsql.SystemVariableScope) *DatabaseProvider {
	if ctx == nil || scope == nil || !scope.IsGlobalOnly() {
		return nil
	}
	sess, ok := ctx.Session.(*Session)
	if !ok {
		return nil
	}
	return sess.provider
}

var _ compat.AnalysisVariables = (*Session)(nil)

// SetAnalysisVariable implements compat.AnalysisVariables: the value is
// set and, by the analyzer rule that set it, restored within one
// analysis, so the fast path's cached variables and the plan cache's
// plans (valid under the session's epoch of variables) stay valid.
func (s *Session) SetAnalysisVariable(ctx *gsql.Context, name string, value any) error {
	return s.BaseSession.SetSessionVariable(ctx, name, value)
}
