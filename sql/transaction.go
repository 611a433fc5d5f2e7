package sql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/schemalease"
	"github.com/percdb/percdb/txn"
)

// Transaction is one MySQL transaction: a single Percolator transaction,
// begun lazily on the first read or write so that statements that touch no
// table (SET, SELECT 1, SHOW VARIABLES) never fetch a timestamp.
//
// GMS calls StartTransaction before every statement in autocommit mode and
// once per BEGIN otherwise; the Session commits or rolls it back. A
// Transaction is used by one session at a time; GMS may call it from the
// goroutine that spools result rows, but never concurrently.
type Transaction struct {
	provider *DatabaseProvider
	readOnly bool

	// kv is the Percolator transaction, nil until first use.
	kv *txn.Txn
	// cat is the catalog this transaction sees: the snapshot at its
	// start_ts, then (catDirty) a private copy changed by its own DDL.
	cat      *catalog.Catalog
	catDirty bool
	// catBase is the catalog as it was before this transaction's own DDL
	// changed it (set with catDirty): what its commit compares to find
	// the tables it changed.
	catBase *catalog.Catalog
	// use registers the transaction's schema version with the node's
	// tracker (schemalease): taken before the start timestamp, ended when
	// the transaction ends. nil until the Percolator transaction begins.
	use *schemalease.Use
	// wrote are the tables written, each told to use once.
	wrote []int64
	// stepOf, for a step of a schema change (ddl.go), is the transaction
	// of the statement running it, which the step's commit does not wait
	// for.
	stepOf *schemalease.Use
	// fenced are tables whose fence this transaction's DDL raised (ddl.go):
	// lifted again if it does not commit.
	fenced []fencedTable

	// stmt is the statement-level undo point: a staging handle taken when
	// the first table editor of a statement begins, released when the
	// statement completes and cleaned up (its writes undone) when it fails.
	stmt     txn.StagingHandle
	stmtOpen bool
	// scans keeps the rows of a read-only statement's range reads (see
	// scanCache).
	scans scanCache
	// savepoints are the open savepoints, oldest first: each is a stage
	// of the buffered writes, below the statement stages opened later.
	savepoints []savepoint
	// finished is set once the transaction committed or rolled back
	// (successfully or not): it can do nothing more.
	finished bool
	// keyless tracks the rows a writing statement reads from tables
	// without a primary key (see keylessTracker); nil outside one.
	keyless *keylessTracker
	// pessimistic: the Percolator transaction locks what its statements
	// write when they write it (pessimistic.go), waiting up to lockWait.
	pessimistic bool
	lockWait    time.Duration
	// readCommitted: the pessimistic transaction is READ COMMITTED
	// (readcommitted.go), decided when its Percolator transaction begins.
	readCommitted bool
	// connID is the connection of the session that started the
	// transaction, for ADMIN SHOW LOCK WAITS; shownTS the start_ts under
	// which it is shown there, once it takes locks.
	connID  uint32
	shownTS uint64
	// retryStatement is set when the failed statement may run again at a
	// fresh snapshot (lockError).
	retryStatement bool
	// keptInStatement is set when a part of the current client statement
	// completed and kept its writes (a statement of a CALL, a row of
	// INSERT IGNORE): running the statement again would write them twice,
	// so it may not be retried (retryAfterConflict).
	keptInStatement bool
}

var _ gsql.Transaction = (*Transaction)(nil)

// String names the transaction for GMS's logs.
func (t *Transaction) String() string {
	return "percdb transaction"
}

// IsReadOnly reports whether the transaction was started READ ONLY.
func (t *Transaction) IsReadOnly() bool { return t.readOnly }

// txn returns the Percolator transaction, beginning it if needed.
func (t *Transaction) txn(ctx context.Context) (*txn.Txn, error) {
	if t.kv != nil {
		return t.kv, nil
	}
	if t.use == nil && !t.readOnly {
		// Before the start timestamp: see schemalease.Tracker.Begin. A
		// read-only transaction cannot write under an old schema, so it
		// is not registered (GMS also leaves some of those unfinished:
		// the ones transactionOf makes outside any statement).
		t.use = t.provider.schemas.Begin()
	}
	k, err := t.provider.store.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	if err := t.beginPessimistic(k); err != nil {
		return nil, fmt.Errorf("begin transaction: %w", err)
	}
	k.SetSizeLimit(int(t.provider.txnSizeLimit.Load()))
	t.kv = k
	return k, nil
}

// writable returns the Percolator transaction for a write, refusing in a
// READ ONLY transaction.
func (t *Transaction) writable(ctx context.Context) (*txn.Txn, error) {
	if t.readOnly {
		return nil, gsql.ErrReadOnlyTransaction.New()
	}
	return t.txn(ctx)
}

// writableOf returns the transaction of ctx and its Percolator
// transaction for a write.
func writableOf(ctx *gsql.Context) (*Transaction, *txn.Txn, error) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, nil, err
	}
	k, err := tx.writable(ctx)
	if err != nil {
		return nil, nil, toSQLError(err)
	}
	return tx, k, nil
}

// catalog returns the catalog as this transaction sees it.
func (t *Transaction) catalog(ctx context.Context) (*catalog.Catalog, error) {
	if t.cat != nil {
		return t.cat, nil
	}
	k, err := t.txn(ctx)
	if err != nil {
		return nil, err
	}
	c, err := t.provider.catalogs.Load(ctx, k)
	if err != nil {
		return nil, err
	}
	if t.use != nil {
		t.use.Observe(c.Version)
	}
	t.cat = c
	return c, nil
}

// changeCatalog lets a DDL change the catalog inside this transaction: fn
// gets a private copy to change and the transaction to write through, and
// the version key is bumped so that concurrent DDLs conflict and other
// nodes reload their cache after the commit.
func (t *Transaction) changeCatalog(ctx context.Context, fn func(c *catalog.Catalog, k *txn.Txn) error) error {
	cur, err := t.catalog(ctx)
	if err != nil {
		return err
	}
	k, err := t.writable(ctx)
	if err != nil {
		return err
	}
	next := cur.Clone()
	if err := fn(next, k); err != nil {
		return err
	}
	if !t.catDirty {
		if t.use != nil {
			t.use.Exempt()
		}
		t.catBase = cur
		next.Version = cur.Version + 1
		if err := k.Set(catalog.KeyVersion, catalog.EncodeUint64(next.Version)); err != nil {
			return fmt.Errorf("bump schema version: %w", err)
		}
	}
	t.cat = next
	t.catDirty = true
	return nil
}

// statementBegin opens the statement's undo point unless one is open.
func (t *Transaction) statementBegin(ctx context.Context) error {
	if t.stmtOpen {
		return nil
	}
	k, err := t.txn(ctx)
	if err != nil {
		return err
	}
	t.stmt = k.Staging()
	t.stmtOpen = true
	t.keyless = &keylessTracker{rows: make(map[string][]tablecodec.Handle)}
	return nil
}

// statementEnd closes the statement's undo point: its writes are kept when
// ok, undone otherwise. A statement without an undo point is a no-op.
func (t *Transaction) statementEnd(ok bool) {
	if !t.stmtOpen {
		return
	}
	t.stmtOpen = false
	t.keyless = nil
	if ok {
		t.keptInStatement = true
		t.kv.Release(t.stmt)
	} else {
		t.kv.Cleanup(t.stmt)
	}
}

// savepoint is a named stage of a transaction's writes.
type savepoint struct {
	name  string
	stage txn.StagingHandle
}

// findSavepoint returns the index of the savepoint named name.
func (t *Transaction) findSavepoint(name string) (int, error) {
	for i := len(t.savepoints) - 1; i >= 0; i-- {
		if strings.EqualFold(t.savepoints[i].name, name) {
			return i, nil
		}
	}
	return -1, gsql.ErrSavepointDoesNotExist.New(name)
}

// createSavepoint opens a stage named name; an existing savepoint of the
// same name is replaced, as in MySQL.
func (t *Transaction) createSavepoint(ctx context.Context, name string) error {
	k, err := t.txn(ctx)
	if err != nil {
		return err
	}
	if i, err := t.findSavepoint(name); err == nil {
		t.savepoints = append(t.savepoints[:i], t.savepoints[i+1:]...)
	}
	t.savepoints = append(t.savepoints, savepoint{name: name, stage: k.Staging()})
	return nil
}

// rollbackToSavepoint undoes the writes made since savepoint name; it and
// older savepoints stay, newer ones are gone.
func (t *Transaction) rollbackToSavepoint(name string) error {
	i, err := t.findSavepoint(name)
	if err != nil {
		return err
	}
	t.kv.Cleanup(t.savepoints[i].stage)
	t.savepoints[i].stage = t.kv.Staging()
	t.savepoints = t.savepoints[:i+1]
	return nil
}

// releaseSavepoint forgets savepoint name and newer ones, keeping their
// writes.
func (t *Transaction) releaseSavepoint(name string) error {
	i, err := t.findSavepoint(name)
	if err != nil {
		return err
	}
	t.kv.Release(t.savepoints[i].stage)
	t.savepoints = t.savepoints[:i]
	return nil
}

// commit commits the Percolator transaction, if one was begun. A
// transaction that changed the schema then waits, before it returns, until
// this node's transactions that use an older schema of the tables it
// changed are gone (ddl.go, schemalease), so that the next change finds at
// most two versions in use.
func (t *Transaction) commit(ctx context.Context) error {
	defer t.forgetLocks()
	t.statementEnd(true)
	t.finished = true
	if t.kv == nil {
		t.endUse()
		return nil
	}
	committed := false
	defer func() {
		t.endUse()
		if !committed {
			t.liftFences(ctx)
		}
	}()
	// A DDL's own transaction needs no check: it writes the schema
	// version key, so it fails with a write conflict if another schema
	// change committed after its snapshot, and its writes fit the schema
	// it read.
	if !t.kv.IsReadOnly() && t.use != nil && !t.catDirty {
		if err := t.use.BeginCommit(); err != nil {
			_ = t.kv.Rollback(ctx)
			return schemaChangedError(err)
		}
	}
	if t.catDirty {
		// Every SQL node of a cluster has loaded the version this change
		// builds on (ddllease.go).
		if err := t.provider.syncBeforeSchemaChange(ctx, t.catBase.Version); err != nil {
			_ = t.kv.Rollback(ctx)
			return toSQLError(err)
		}
		// The fast path reads with the cached catalog between DDL
		// commits (fastpath.SchemaGuard).
		defer t.provider.fast.schemaChanging()()
	}
	if err := t.kv.Commit(ctx); err != nil {
		if dup, ok := executor.DuplicateFromCommit(err, t.executorTable); ok {
			// A concurrent transaction inserted the same key after this
			// one checked it; MySQL would have waited, then failed so.
			return mysql.NewSQLError(codeDupEntry, stateIntegrity, "%s", dup.Error())
		}
		switch {
		case errors.Is(err, schemalease.ErrLeaseExpired):
			// The node's schema lease (cluster): refused before anything
			// committed.
			return schemaExpiredError(err)
		case errors.Is(err, schemalease.ErrSchemaChanged):
			return schemaChangedError(err)
		}
		return fmt.Errorf("commit: %w", err)
	}
	committed = true
	// Counts of modified rows, for auto-analyze (autoanalyze.go).
	t.provider.modified.Committed(t.kv)
	if t.catDirty {
		// Our own DDL is committed: later transactions may use this
		// catalog without reloading it.
		t.provider.catalogs.Offer(t.cat)
		t.endUse()
		err := t.provider.awaitSchemaChange(ctx, t.catBase, t.cat, t.stepOf)
		// Any data the DDL left behind can go now that the older
		// schema's writers are gone.
		t.provider.ranges.Kick()
		return err
	}
	return nil
}

// endUse unregisters the transaction from the schema tracker.
func (t *Transaction) endUse() {
	if t.use != nil {
		t.use.End()
	}
}

// executorTable returns the table with the given ID in this transaction's
// catalog, or nil.
func (t *Transaction) executorTable(id int64) *executor.Table {
	if t.cat == nil {
		return nil
	}
	for _, db := range t.cat.Databases {
		for _, def := range t.cat.Tables[db.ID] {
			if def.ID != id {
				continue
			}
			m, err := t.provider.metas.Get(gsql.NewEmptyContext(), db.Name, def)
			if err != nil {
				return nil
			}
			return m.Exec
		}
	}
	return nil
}

// rollback abandons the Percolator transaction, if one was begun.
func (t *Transaction) rollback(ctx context.Context) error {
	t.forgetLocks()
	t.stmtOpen, t.keyless = false, nil
	t.finished = true
	defer t.liftFences(ctx)
	t.endUse()
	if t.kv == nil {
		return nil
	}
	if err := t.kv.Rollback(ctx); err != nil && !errors.Is(err, txn.ErrTxnFinished) {
		return fmt.Errorf("rollback: %w", err)
	}
	return nil
}
