package sql

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

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
// them) run on every SQL node: its actionRunner keeps a Runner of package
// observe with one observer per name whose watches carry an action, from
// the latest catalog (looked at every actionPoll, and at once after this
// node's ADMIN WATCH). A run is one transaction of the SQL layer (a
// Transaction, so that it keeps the node's schema rules and its writes
// are the executor's, notifying further observers): the Runner reads the
// row and acknowledges the notification, then each statement of the
// action runs through GMS in it, in a session of the watch's owner (GMS
// checks the owner's privileges), with NEW.column bound to the row's
// values; the Runner commits. Failures are retried with the Runner's
// backoff and counted per observer for ADMIN SHOW OBSERVERS.

// actionPoll is how often a node looks for watches with actions that
// were added or removed by another node.
const actionPoll = time.Second

// actionRunnerIdle is its Runner's scanners' rest after a lap with little
// to do: the bound on how late a notification is found when the store has
// few.
const actionRunnerIdle = 20 * time.Millisecond

// actionRunner runs the built-in actions of one SQL node.
type actionRunner struct {
	s      *Server
	txns   *actionTxns
	runner *observe.Runner
	kickCh chan struct{}

	mu sync.Mutex
	// names are the observers registered with runner.
	names map[string]bool
	// parsed caches actions by their text.
	parsed map[string]*observeraction.Action
	// version is the schema version names were last synced at (synced:
	// once they were).
	version uint64
	synced  bool

	stop func()
	done chan struct{}
}

// newActionRunner returns the action runner of s; start starts it.
func newActionRunner(s *Server) *actionRunner {
	a := &actionRunner{
		s:      s,
		txns:   &actionTxns{p: s.provider},
		kickCh: make(chan struct{}, 1),
		names:  make(map[string]bool),
		parsed: make(map[string]*observeraction.Action),
	}
	a.runner = observe.New(s.store, observe.Options{Txns: a.txns, Idle: actionRunnerIdle,
		OnError: func(observer string, key []byte, err error) {
			if observer != "" {
				slog.Debug("observer action failed", "observer", observer, "row", fmt.Sprintf("%q", key), "err", err)
			}
		}})
	return a
}

// start runs the action runner until close.
func (a *actionRunner) start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		a.loop(ctx)
	}()
}

// close stops the runner and waits for the runs in progress.
func (a *actionRunner) close() {
	if a.stop != nil {
		a.stop()
		<-a.done
	}
}

// kick makes the runner look at the catalog now.
func (a *actionRunner) kick() {
	select {
	case a.kickCh <- struct{}{}:
	default:
	}
}

// loop registers the observers with actions as the catalog has them and
// runs the Runner while there is one.
func (a *actionRunner) loop(ctx context.Context) {
	var running *runningRunner
	defer func() { running.stop() }()
	tick := time.NewTicker(actionPoll)
	defer tick.Stop()
	for {
		n, err := a.sync(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				slog.Warn("observer actions: read the catalog", "err", err)
			}
		case n > 0 && running == nil:
			running = a.runRunner(ctx)
		case n == 0 && running != nil:
			running.stop()
			running = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.kickCh:
		}
	}
}

// runningRunner is a Run of the action runner's Runner in progress.
type runningRunner struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// runRunner runs the Runner until ctx ends or the returned Run is
// stopped.
func (a *actionRunner) runRunner(ctx context.Context) *runningRunner {
	rctx, cancel := context.WithCancel(ctx)
	r := &runningRunner{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		_ = a.runner.Run(rctx)
	}()
	return r
}

// stop ends the Run and waits for its runs; nil does nothing.
func (r *runningRunner) stop() {
	if r != nil {
		r.cancel()
		<-r.done
	}
}

// sync registers with the Runner every observer with an action in the
// latest catalog and unregisters the others; it returns how many there
// are. It reads the schema version first, with a point read that takes
// no timestamp, and the catalog only when the version moved: an idle
// node's look costs no oracle call.
func (a *actionRunner) sync(ctx context.Context) (int, error) {
	raw, found, err := a.s.store.PointGet(ctx, catalog.KeyVersion)
	if err != nil {
		return 0, err
	}
	var version uint64
	if found {
		if version, err = catalog.DecodeUint64("schema version", raw); err != nil {
			return 0, err
		}
	}
	a.mu.Lock()
	same := a.synced && version == a.version
	n := len(a.names)
	a.mu.Unlock()
	if same {
		return n, nil
	}
	c, err := a.s.provider.latestCatalog(ctx)
	if err != nil {
		return 0, err
	}
	want := map[string]bool{}
	for _, db := range c.Databases {
		for _, def := range c.Tables[db.ID] {
			for _, o := range def.Observers {
				if o.Action != "" {
					want[o.Name] = true
				}
			}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for name := range a.names {
		if !want[name] {
			a.runner.Unregister(name)
			delete(a.names, name)
		}
	}
	for name := range want {
		if a.names[name] {
			continue
		}
		if err := a.runner.Register(ctx, observe.Observer{Name: name, Run: a.observerFunc(name)}); err != nil {
			return 0, err
		}
		a.names[name] = true
	}
	// The catalog read is at least as new as the version read before it.
	a.synced, a.version = true, version
	return len(a.names), nil
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

// stats returns the Runner's counters of each observer it ran.
func (a *actionRunner) stats() map[string]observe.ObserverStats { return a.runner.ObserverStats() }

// observerFunc returns the observe.Func of the observer name.
func (a *actionRunner) observerFunc(name string) observe.Func {
	return func(ctx context.Context, k *txn.Txn, rowKey []byte) error {
		return a.run(ctx, name, k, rowKey)
	}
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
