package sql

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/observe"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/observeraction"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// Built-in observer actions (ADMIN WATCH ... DO; package observeraction parses
// them) run on every SQL node: its actionRunner is package observeraction's
// Runner, which keeps a Runner of package observe with one observer per
// name whose watches carry an action, from the latest catalog (looked at
// every second, and at once after this node's ADMIN WATCH). A run is one transaction of the SQL layer (a
// Transaction, so that it keeps the node's schema rules and its writes
// are the executor's, notifying further observers): the Runner reads the
// row and acknowledges the notification, then each statement of the
// action runs through GMS in it, in a session of the watch's owner (GMS
// checks the owner's privileges), with NEW.column bound to the row's
// values; the Runner commits. Failures are retried with the Runner's
// backoff and counted per observer for ADMIN SHOW OBSERVERS.

// actionRunner runs the built-in actions of one SQL node: an
// observeraction.Runner, whose Host it is, and the cache of parsed
// actions its runs use.
type actionRunner struct {
	s      *Server
	txns   *actionTxns
	runner *observeraction.Runner

	mu sync.Mutex
	// parsed caches actions by their text.
	parsed map[string]*observeraction.Action
}

// newActionRunner returns the action runner of s; start starts it.
func newActionRunner(s *Server) *actionRunner {
	a := &actionRunner{
		s:      s,
		txns:   &actionTxns{p: s.provider},
		parsed: make(map[string]*observeraction.Action),
	}
	a.runner = observeraction.NewRunner(s.store, a.txns, a)
	return a
}

// start runs the action runner until close.
func (a *actionRunner) start() { a.runner.Start() }

// close stops the runner and waits for the runs in progress.
func (a *actionRunner) close() { a.runner.Close() }

// kick makes the runner look at the catalog now.
func (a *actionRunner) kick() { a.runner.Kick() }

// stats returns the Runner's counters of each observer it ran.
func (a *actionRunner) stats() map[string]observe.ObserverStats { return a.runner.Stats() }

// LatestCatalog implements observeraction.Host.
func (a *actionRunner) LatestCatalog(ctx context.Context) (*catalog.Catalog, error) {
	return a.s.provider.latestCatalog(ctx)
}

// RunAction implements observeraction.Host.
func (a *actionRunner) RunAction(ctx context.Context, observer string, k *txn.Txn, rowKey []byte) error {
	return a.run(ctx, observer, k, rowKey)
}

// ObserverActionStats returns what this node's action runner did for
// each observer with a built-in action since the node started (ADMIN SHOW
// OBSERVERS shows the same).
func (s *Server) ObserverActionStats() map[string]observe.ObserverStats {
	if s.actions == nil {
		return nil
	}
	return s.actions.stats()
}

// action returns the parsed action of text.
func (a *actionRunner) action(text string) (*observeraction.Action, error) {
	a.mu.Lock()
	act, ok := a.parsed[text]
	a.mu.Unlock()
	if ok {
		return act, nil
	}
	act, err := observeraction.Parse(text)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.parsed) > 1024 {
		clear(a.parsed)
	}
	a.parsed[text] = act
	return act, nil
}

// run is one run of observer name's action for the row rowKey, in k, as
// the watch in k's catalog has it. A row of a table dropped since, or
// whose watch was removed or lost its action, needs nothing.
func (a *actionRunner) run(ctx context.Context, name string, k *txn.Txn, rowKey []byte) error {
	t := a.txns.runs.get(k)
	if t == nil {
		return errors.New("observer action: not a transaction of the node's action runner")
	}
	c, err := t.catalog(ctx)
	if err != nil {
		return err
	}
	tableID, err := tablecodec.DecodeTableID(rowKey)
	if err != nil {
		return err
	}
	db, def, ok := tableByID(c, tableID)
	if !ok {
		return nil
	}
	var watch *catalog.ObserverDef
	for i := range def.Observers {
		if def.Observers[i].Name == name && def.Observers[i].Action != "" {
			watch = &def.Observers[i]
		}
	}
	if watch == nil {
		return nil
	}
	if def.Fence != "" {
		return fmt.Errorf("%w: table %s.%s is being rewritten (%s)", txn.ErrWriteConflict, db.Name, def.Name, def.Fence)
	}
	act, err := a.action(watch.Action)
	if err != nil {
		return err
	}
	sess, err := newSession(gsql.NewBaseSessionWithClientServer("", gsql.Client{User: watch.OwnerUser, Address: watch.OwnerHost}, 0),
		a.s.provider, a.s.sessionVars())
	if err != nil {
		return err
	}
	// The Runner commits: no statement may.
	sess.SetIgnoreAutoCommit(true)
	gctx := gsql.NewContext(ctx, gsql.WithSession(sess))
	gctx.SetCurrentDatabase(db.Name)
	gctx.SetTransaction(t)
	m, err := a.s.provider.metas.Get(gctx, db.Name, def)
	if err != nil {
		return err
	}
	row, err := a.notifiedRow(ctx, k, m, rowKey)
	if err != nil {
		return err
	}
	for _, st := range act.Stmts {
		binds, err := bindNew(gctx, m, st, row)
		if err != nil {
			return err
		}
		k.BeginStatement()
		err = a.exec(gctx, st.Text, binds)
		t.statementEnd(err == nil)
		if err != nil {
			return finishSQLError(err)
		}
	}
	return nil
}

// exec runs one statement through GMS.
func (a *actionRunner) exec(gctx *gsql.Context, text string, binds map[string]sqlparser.Expr) error {
	_, iter, _, err := a.s.engine.QueryWithBindings(gctx, text, nil, binds, nil)
	if err != nil {
		return err
	}
	_, err = gsql.RowIterToRows(gctx, iter)
	return err
}

// notifiedRow returns the values NEW stands for: the row as k reads it;
// for a row deleted, its primary key's values (from the handle of an
// integer key, else from the row's last version before the delete) and
// NULL for the other columns.
func (a *actionRunner) notifiedRow(ctx context.Context, k *txn.Txn, m *tablemeta.Table, rowKey []byte) ([]any, error) {
	_, h, err := tablecodec.DecodeRowKey(rowKey, m.Exec.HandleKind == executor.HandleCommon)
	if err != nil {
		return nil, err
	}
	dec, err := m.Exec.NewRowDecoder(nil)
	if err != nil {
		return nil, err
	}
	row, found, err := executor.GetRow(ctx, k, m.Exec, dec, h)
	if err != nil || found {
		return row, err
	}
	row = make([]any, len(m.Def.Columns))
	var before []any
	switch m.Exec.HandleKind {
	case executor.HandleInt:
		before = make([]any, len(row))
		_, ord, _ := m.Def.Column(m.Def.PrimaryKey[0])
		before[ord] = h.Int
	case executor.HandleCommon:
		if before, err = a.lastVersion(ctx, k, rowKey, dec); err != nil {
			return nil, err
		}
	}
	if before != nil {
		for _, id := range m.Def.PrimaryKey {
			_, ord, _ := m.Def.Column(id)
			row[ord] = before[ord]
		}
	}
	return row, nil
}

// lastVersion returns the values a deleted row had before its delete,
// from the changes to it since the notification (observe.EntryOf), nil
// when there is none to read.
func (a *actionRunner) lastVersion(ctx context.Context, k *txn.Txn, rowKey []byte, dec *executor.RowDecoder) ([]any, error) {
	e, ok := observe.EntryOf(ctx)
	if !ok || e.TS == 0 {
		return nil, nil
	}
	snap, err := k.SnapshotTS(ctx)
	if err != nil {
		return nil, err
	}
	changes, err := a.s.store.ScanChanges(ctx, rowKey, append(bytes.Clone(rowKey), 0), e.TS-1, snap)
	var old *kv.GCTooOldError
	if errors.As(err, &old) {
		// The notification waited longer than the GC life time: the
		// versions are collected, and NEW's key is NULL.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("observer action: the deleted row %q: %w", rowKey, err)
	}
	if len(changes) == 0 {
		return nil, nil
	}
	last := changes[len(changes)-1]
	if last.Value != nil || last.Prev == nil {
		return nil, nil
	}
	return dec.Decode(last.Prev)
}

// bindNew returns the bind variables of st's NEW references: each
// column's value of row, as a literal of its type.
func bindNew(gctx *gsql.Context, m *tablemeta.Table, st observeraction.Stmt, row []any) (map[string]sqlparser.Expr, error) {
	binds := make(map[string]sqlparser.Expr, len(st.Columns))
	for i, name := range st.Columns {
		_, ord, ok := m.Def.ColumnByName(name)
		if !ok {
			return nil, gsql.CastSQLError(gsql.ErrColumnNotFound.New(name))
		}
		v, err := m.Schema.Schema[ord].Type.SQL(gctx, nil, row[ord])
		if err != nil {
			return nil, fmt.Errorf("observer action: NEW.%s: %w", name, err)
		}
		if binds[observeraction.NewBind(i)], err = sqlparser.ExprFromValue(v); err != nil {
			return nil, fmt.Errorf("observer action: NEW.%s: %w", name, err)
		}
	}
	return binds, nil
}

// tableByID finds the table of id in c.
func tableByID(c *catalog.Catalog, id int64) (*catalog.DatabaseDef, *catalog.TableDef, bool) {
	for _, db := range c.Databases {
		for _, def := range c.Tables[db.ID] {
			if def.ID == id {
				return db, def, true
			}
		}
	}
	return nil, nil, false
}

// actionTxns gives action runs transactions of the SQL layer
// (observe.TxnSource): each is a Transaction, registered with the node's
// schema tracker, whose commit keeps the node's schema rules.
type actionTxns struct {
	p    *DatabaseProvider
	runs txnRegistry[*Transaction]
}

// Begin implements observe.TxnSource.
func (a *actionTxns) Begin(ctx context.Context) (*txn.Txn, error) {
	t := &Transaction{provider: a.p}
	k, err := t.txn(ctx)
	if err != nil {
		t.endUse()
		return nil, err
	}
	a.runs.put(k, t)
	return k, nil
}

// txnRegistry maps the transactions a TxnSource of observer runs handed
// out to its state of each (ObserverTxns, actionTxns).
type txnRegistry[T any] struct {
	mu sync.Mutex
	m  map[*txn.Txn]T
}

// put records v for k.
func (r *txnRegistry[T]) put(k *txn.Txn, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[*txn.Txn]T)
	}
	r.m[k] = v
}

// get returns k's state (the zero T when there is none).
func (r *txnRegistry[T]) get(k *txn.Txn) T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[k]
}

// take removes and returns k's state.
func (r *txnRegistry[T]) take(k *txn.Txn) T {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.m[k]
	delete(r.m, k)
	return v
}

// Commit implements observe.TxnSource. A run a schema change made stale
// fails retryably (txn.ErrWriteConflict).
func (a *actionTxns) Commit(ctx context.Context, k *txn.Txn) error {
	t := a.runs.take(k)
	if t == nil {
		return errors.New("commit: not an action transaction of this node")
	}
	err := t.commit(ctx)
	var se *mysql.SQLError
	if errors.As(err, &se) && se.Num == codeSchemaChanged {
		return fmt.Errorf("%w: %w", txn.ErrWriteConflict, err)
	}
	return err
}

// Rollback implements observe.TxnSource.
func (a *actionTxns) Rollback(ctx context.Context, k *txn.Txn) error {
	if t := a.runs.take(k); t != nil {
		return t.rollback(ctx)
	}
	return k.Rollback(ctx)
}
