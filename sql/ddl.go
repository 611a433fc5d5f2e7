package sql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/internal/ctxtime"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/sql/schemalease"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// Online schema change, F1's way (see sql/schemalease for the rule it
// rests on: at most two schema versions in use).
//
// Every DDL commit publishes a new schema version and then waits, before
// the statement returns, until this node's transactions that wrote a
// changed table under an older version are gone (Transaction.commit,
// awaitSchemaChange); those that outlive DDLWaitTimeout are marked stale
// and fail their commit with 8028. Two kinds of DDL need more than that,
// because they move rows while writers run:
//
//   - CREATE INDEX / ADD INDEX on an existing table is a job of several
//     committed steps: the index is added delete-only, then made
//     write-only (every writer keeps it in step from then on), then the
//     existing rows' entries are backfilled in batches of their own
//     transactions, and last the index is made public. A writer that
//     changes or deletes a row after a batch's snapshot deletes the very
//     entry the batch writes for the row's old value (the index is
//     write-only by then), so the two conflict on that key and one of them
//     is retried: no stale entry is left, without locking the rows. A duplicate for a unique index,
//     a failure or KILL drops the index again and deletes its entries.
//     Memory is one batch, whatever the table's size.
//   - A table rewrite (ALTER TABLE that changes columns or the primary
//     key: GMS copies the rows into a new table ID) first raises a fence
//     on the table in a step of its own, waits for the writers of the old
//     schema, and only then takes the snapshot it copies: no write can
//     land in the old table behind the copy. A writer that meets the
//     fence waits for the rewrite to end and then fails with 8028, to be
//     retried against the new table. On a SQL node of a cluster TRUNCATE,
//     which gives the table a new ID, is fenced too: the fast path's
//     autocommit reads of a fenced table check the schema version with
//     their rows (cacheCurrentFor, ddllease.go), so that no node reads
//     the old ID once the new one is committed.
//
// A process that dies in the middle of a job leaves the table with a
// fence or a non-public index; recoverSchemaChanges rolls those back
// when the node opens, before it serves anyone.

// codeCancelledDDLJob is TiDB's ErrCancelledDDLJob: ADMIN CANCEL DDL JOBS
// stopped the statement's job.
const codeCancelledDDLJob = 8214

// codeSchemaChanged is TiDB's ErrInfoSchemaChanged: the transaction's
// writes were made under a schema that changed before it committed.
const codeSchemaChanged = 8028

// schemaChangedError is the MySQL error for a transaction that cannot
// commit under the schema now in force. Its SQLSTATE 40001 marks it
// retryable for drivers and frameworks that look at the class.
func schemaChangedError(err error) error {
	return mysql.NewSQLError(codeSchemaChanged, stateSerialization,
		"Information schema is changed during the execution of the statement (for example, table definition may be updated by other DDL ran in parallel): %v; try again", err)
}

// errSchemaChangeInProgress refuses a DDL on a table that another
// schema change is working on.
func errSchemaChangeInProgress(table, what string) error {
	return mysql.NewSQLError(codeLockWaitTimeout, stateGeneral,
		"Lock wait timeout exceeded; try restarting transaction: table '%s' has a schema change in progress (%s)", table, what)
}

// ddlGrace is how long a schema change step waits for a transaction of
// the older schema that has not written the changed table yet (see
// schemalease.Tracker.WaitOlder): long enough for an autocommit statement
// under way to finish rather than fail with 8028.
const ddlGrace = time.Second

// backfillBatchRows is how many rows one backfill transaction indexes,
// TiDB's tidb_ddl_reorg_batch_size default.
const backfillBatchRows = 256

// awaitSchemaChange runs after a DDL committed next over base: it
// publishes the version and waits for the transactions that wrote the
// changed tables under an older one (see the file comment). The DDL has
// committed whatever happens here, so a cancelled wait is not its error.
func (p *DatabaseProvider) awaitSchemaChange(ctx context.Context, base, next *catalog.Catalog, except ...*schemalease.Use) error {
	p.schemas.Published(next.Version)
	if tables := changedTables(base, next); len(tables) > 0 {
		n, err := p.schemas.WaitOlder(ctx, next.Version, p.ddlWait, ddlGrace, tables, except...)
		if n > 0 {
			slog.Info("schema change: transactions of an older schema outlived the wait and will fail to commit writes",
				"version", next.Version, "transactions", n, "wait", p.ddlWait)
		}
		if err != nil {
			if ctx.Err() == nil {
				return err
			}
			return nil
		}
	}
	// The other SQL nodes of a cluster (ddllease.go).
	if err := p.syncAfterSchemaChange(ctx, next.Version); err != nil && ctx.Err() == nil {
		return toSQLError(err)
	}
	return nil
}

// changedTables returns the IDs of the tables whose definitions differ
// between two catalogs (changed, added or gone). Definitions are never
// changed in place, so a different pointer is a changed table.
func changedTables(base, next *catalog.Catalog) []int64 {
	if base == nil {
		return nil
	}
	before := tablesByID(base)
	var ids []int64
	for id, def := range tablesByID(next) {
		if before[id] != def {
			ids = append(ids, id)
		}
		delete(before, id)
	}
	for id := range before {
		ids = append(ids, id)
	}
	return ids
}

// tablesByID indexes the tables of a catalog by ID.
func tablesByID(c *catalog.Catalog) map[int64]*catalog.TableDef {
	out := make(map[int64]*catalog.TableDef)
	for _, byName := range c.Tables {
		for _, def := range byName {
			out[def.ID] = def
		}
	}
	return out
}

// beginTableWrite is called before every row write to table m: it refuses
// a table fenced by another transaction's rewrite (waiting for the rewrite
// to end, then failing with 8028), and tells the schema tracker, once per
// table, which tables this transaction writes.
func (t *Transaction) beginTableWrite(ctx context.Context, m *tablemeta.Table) error {
	id := m.Def.ID
	for _, w := range t.wrote {
		if w == id {
			return nil
		}
	}
	if m.Def.Fence != "" && !t.ownsFence(id) {
		return t.awaitFence(ctx, m.Def)
	}
	t.wrote = append(t.wrote, id)
	if t.use != nil {
		t.use.Wrote(id)
	}
	return nil
}

// fencedTable is a table whose fence a transaction raised.
type fencedTable struct {
	dbID int64
	name string
	id   int64
}

func (t *Transaction) ownsFence(id int64) bool {
	for _, f := range t.fenced {
		if f.id == id {
			return true
		}
	}
	return false
}

// awaitFence waits until the schema moves past the version in which def
// is fenced (the rewrite committed or was abandoned), then fails the
// statement with 8028 so that it runs again on the new schema; as a lock
// wait, it gives up with 1205 after lockWaitTimeout.
func (t *Transaction) awaitFence(ctx context.Context, def *catalog.TableDef) error {
	const lockWaitTimeout = 50 * time.Second // innodb_lock_wait_timeout's default
	seen := t.cat.Version
	deadline := time.Now().Add(lockWaitTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for t.provider.schemas.Latest() <= seen {
		if time.Now().After(deadline) {
			return mysql.NewSQLError(codeLockWaitTimeout, stateGeneral, "%s", msgLockWaitTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return schemaChangedError(fmt.Errorf("table %s was rewritten by %s", def.Name, def.Fence))
}

// createdHere reports whether table id was created by this transaction's
// own DDL (no other transaction can see it yet).
func (t *Transaction) createdHere(id int64) bool {
	if !t.catDirty || t.catBase == nil {
		return false
	}
	_, existed := tablesByID(t.catBase)[id]
	return !existed
}

// changedHere reports whether this transaction's own DDL changed the
// definition of table id (in the catalog it will commit). A later clause
// of the same ALTER TABLE must then change the table in this transaction
// too: an online step commits a catalog version of its own, so this
// transaction's commit would conflict with it (and the statement, tried
// again, would repeat the step).
func (t *Transaction) changedHere(id int64) bool {
	if !t.catDirty || t.catBase == nil || t.cat == nil {
		return false
	}
	base, ok := tablesByID(t.catBase)[id]
	return !ok || tablesByID(t.cat)[id] != base
}

// fenceForRewrite raises a fence on def before this transaction rewrites
// it (see the file comment): a step of its own commits the fence and waits
// for the writers of the older schema, then this transaction starts over
// with a snapshot taken after them. It must not have written anything
// yet. A table this transaction created, or has fenced already, needs no
// fence.
func (t *Transaction) fenceForRewrite(ctx context.Context, def *catalog.TableDef, what string) error {
	if t.createdHere(def.ID) || t.ownsFence(def.ID) {
		return nil
	}
	if t.catDirty || (t.kv != nil && !t.kv.IsReadOnly()) {
		return gsql.ErrUnsupportedFeature.New("rewriting a table after other changes in the same transaction")
	}
	err := t.provider.fenceStep(ctx, t.use, def, true, func(nd *catalog.TableDef) (bool, error) {
		nd.Fence, nd.ChangedBy = what, t.provider.leaseNode()
		return true, nil
	})
	if err != nil {
		return err
	}
	t.fenced = append(t.fenced, fencedTable{dbID: def.DBID, name: def.Name, id: def.ID})
	// Start over after the fence: the rows are read at a snapshot no
	// writer of the old schema can commit behind.
	t.startOver(ctx)
	return nil
}

// startOver abandons the transaction's Percolator transaction, which has
// written nothing, so that its next read begins a new one with a fresh
// snapshot and catalog: after schema steps committed by transactions of
// their own.
func (t *Transaction) startOver(ctx context.Context) {
	t.endUse()
	if t.kv != nil {
		_ = t.kv.Rollback(ctx)
	}
	t.kv, t.cat, t.use, t.wrote = nil, nil, nil, nil
	t.stmtOpen, t.keyless = false, nil
	t.scans = scanCache{}
}

// liftFences takes down the fences this transaction raised, when it did
// not commit the rewrite that would have replaced them.
func (t *Transaction) liftFences(ctx context.Context) {
	fenced := t.fenced
	t.fenced = nil
	for _, f := range fenced {
		gone := &catalog.TableDef{ID: f.id, DBID: f.dbID, Name: f.name}
		err := t.provider.fenceStep(context.WithoutCancel(ctx), nil, gone, false, func(nd *catalog.TableDef) (bool, error) {
			changed := nd.Fence != ""
			nd.Fence = ""
			return changed, nil
		})
		if errors.Is(err, errTableGone) {
			err = nil
		}
		if err != nil {
			slog.Error("schema change: cannot lift a table's fence; it is lifted at the next start", "table", f.name, "err", err)
		}
	}
}

// errTableGone: the table a schema change step works on was dropped or
// replaced by another DDL.
var errTableGone = errors.New("the table was dropped or replaced while its schema changed")

// changeTableStep commits a change of table def (found by its database,
// name and ID) as a step of its own: fn changes a copy and reports whether
// it changed anything. With idle, a table that another schema change works
// on is refused.
func (p *DatabaseProvider) changeTableStep(ctx context.Context, owner *schemalease.Use, def *catalog.TableDef, idle bool, fn func(nd *catalog.TableDef) (bool, error)) error {
	return p.changeTableStepOn(ctx, owner, def, idle, false, fn)
}

// fenceStep is changeTableStep for raising or lifting a fence: a tiny
// catalog write that a store whose disk is nearly full accepts, so that
// TRUNCATE (which frees space) is fenced there too, and a rewrite that
// failed for want of space does not leave its table fenced.
func (p *DatabaseProvider) fenceStep(ctx context.Context, owner *schemalease.Use, def *catalog.TableDef, idle bool, fn func(nd *catalog.TableDef) (bool, error)) error {
	return p.changeTableStepOn(ctx, owner, def, idle, true, fn)
}

// changeTableStepOn is changeTableStep; with diskFull, the step commits
// on a store whose disk is nearly full.
func (p *DatabaseProvider) changeTableStepOn(ctx context.Context, owner *schemalease.Use, def *catalog.TableDef, idle, diskFull bool, fn func(nd *catalog.TableDef) (bool, error)) error {
	return p.runSchemaStep(ctx, owner, func(c *catalog.Catalog, k *txn.Txn) error {
		if diskFull {
			k.AllowWhenDiskFull()
		}
		cur, ok := c.Table(def.DBID, def.Name)
		if !ok || cur.ID != def.ID {
			if idle {
				return gsql.ErrTableNotFound.New(def.Name)
			}
			return errTableGone
		}
		if busy := cur.SchemaChangeInProgress(); idle && busy != "" {
			return errSchemaChangeInProgress(def.Name, busy)
		}
		nd := cur.Clone()
		changed, err := fn(nd)
		if err != nil || !changed {
			return err
		}
		return putTableDef(c, k, nd)
	})
}

// runSchemaStep commits one step of a schema change in a transaction of
// its own, retrying a write conflict with another DDL a few times, and
// waits for the older schema's writers as every DDL commit does, except
// owner: the transaction of the statement that runs the steps, which
// writes nothing under the older schema.
func (p *DatabaseProvider) runSchemaStep(ctx context.Context, owner *schemalease.Use, fn func(c *catalog.Catalog, k *txn.Txn) error) error {
	// A conflict may be another DDL's, or the lock of a transaction whose
	// process died (it goes when its time-to-live, a few seconds, has
	// passed): try again with a growing pause for as long as that.
	deadline := time.Now().Add(schemaStepRetryFor)
	pause := 10 * time.Millisecond
	for {
		s := &Transaction{provider: p, stepOf: owner}
		err := s.changeCatalog(ctx, fn)
		if err != nil {
			_ = s.rollback(ctx)
		} else {
			err = s.commit(ctx)
		}
		if !ddljob.RetryableConflict(err) || time.Now().After(deadline) {
			return err
		}
		if werr := ctxtime.Sleep(ctx, pause); werr != nil {
			return werr
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// schemaStepRetryFor is how long a schema change step is tried again after
// conflicts: past the time-to-live of a dead transaction's locks.
const schemaStepRetryFor = 15 * time.Second

// buildIndexOnline adds index want to the existing table def of database
// db while writers run (see the file comment).
func (p *DatabaseProvider) buildIndexOnline(ctx context.Context, owner *schemalease.Use, dbName string, def *catalog.TableDef, want catalog.IndexDef) (err error) {
	stmtCtx := ctx // the statement's own: it names the session (reportProgress)
	job, ctx := p.jobs.Start(ctx, dbName, def.Name, "add index "+want.Name)
	defer func() {
		stopped := ctx.Err() != nil
		job.Finish(err, stopped)
		switch {
		case err == nil || !stopped:
		case job.Cancelled():
			err = mysql.NewSQLError(codeCancelledDDLJob, stateGeneral, "Cancelled DDL job")
		default:
			err = mysql.NewSQLError(mysql.ERQueryInterrupted, mysql.SSQueryInterrupted, "Query execution was interrupted")
		}
	}()
	var indexID int64
	setState := func(state string) error {
		return p.changeTableStep(ctx, owner, def, false, func(nd *catalog.TableDef) (bool, error) {
			for i := range nd.Indexes {
				if nd.Indexes[i].ID == indexID {
					nd.Indexes[i].State = state
					return true, nil
				}
			}
			return false, fmt.Errorf("index %s of %s vanished while it was built", want.Name, def.Name)
		})
	}
	err = p.changeTableStep(ctx, owner, def, true, func(nd *catalog.TableDef) (bool, error) {
		if _, _, dup := nd.Index(want.Name); dup {
			return false, mysql.NewSQLError(mysql.ERDupKeyName, "42000", "Duplicate key name '%s'", want.Name)
		}
		ix := want
		ix.ID, ix.State = nd.NextIndexID, catalog.StateDeleteOnly
		nd.NextIndexID++
		nd.ChangedBy = p.leaseNode()
		nd.Indexes = append(nd.Indexes, ix)
		indexID = ix.ID
		return true, nil
	})
	if err != nil {
		return err
	}
	fail := func(err error) error {
		p.dropIndexOnline(context.WithoutCancel(ctx), owner, def, indexID)
		return err
	}
	job.SetState("delete only")
	if err := setState(catalog.StateWriteOnly); err != nil {
		return fail(err)
	}
	job.SetState("write reorganization")
	stop := reportProgress(stmtCtx, func() string {
		return fmt.Sprintf("%s: write reorganization: %d rows backfilled", job.Type(), job.Rows.Load())
	})
	err = p.backfillIndex(ctx, dbName, def, indexID, &job.Rows)
	stop()
	if err != nil {
		return fail(err)
	}
	if err := setState(""); err != nil {
		return fail(err)
	}
	return nil
}

// dropIndexOnline removes index id of def from the catalog and schedules
// the deletion of its entries (package ddljob), which runs once the step
// has waited for the older schema's writers, the last that could write
// an entry.
func (p *DatabaseProvider) dropIndexOnline(ctx context.Context, owner *schemalease.Use, def *catalog.TableDef, indexID int64) {
	err := p.runSchemaStep(ctx, owner, func(c *catalog.Catalog, k *txn.Txn) error {
		// It frees space: a backfill that filled the disk must be able
		// to take its index back.
		k.AllowWhenDiskFull()
		cur, ok := c.Table(def.DBID, def.Name)
		if !ok || cur.ID != def.ID {
			return nil // dropped with its data
		}
		nd := cur.Clone()
		for i := range nd.Indexes {
			if nd.Indexes[i].ID == indexID {
				nd.Indexes = append(nd.Indexes[:i], nd.Indexes[i+1:]...)
				start, end := tablecodec.IndexRange(def.ID, indexID)
				if err := ddljob.ScheduleRange(k, start, end, "unfinished CREATE INDEX on "+def.Name); err != nil {
					return err
				}
				return putTableDef(c, k, nd)
			}
		}
		return nil
	})
	if err != nil {
		slog.Error("schema change: cannot remove an unfinished index; it is removed at the next start", "table", def.Name, "err", err)
	}
}

// backfillIndex writes the entries of the write-only index indexID for
// every row of def, batch by batch.
func (p *DatabaseProvider) backfillIndex(ctx context.Context, dbName string, def *catalog.TableDef, indexID int64, done *atomic.Int64) error {
	c, err := p.latestCatalog(ctx)
	if err != nil {
		return err
	}
	cur, ok := c.Table(def.DBID, def.Name)
	if !ok || cur.ID != def.ID {
		return gsql.ErrTableNotFound.New(def.Name)
	}
	m, err := p.metas.Get(gsql.NewEmptyContext(), dbName, cur)
	if err != nil {
		return err
	}
	et := m.Exec
	ix := et.Index(indexID)
	if ix == nil || ix.State != executor.IndexWriteOnly {
		return fmt.Errorf("index %d of %s is not write-only", indexID, def.Name)
	}
	r := et.RowRange()
	start := r.Start
	rows := 0
	for {
		next, n, err := p.backfillBatch(ctx, et, ix, start, r.End)
		if err != nil {
			return err
		}
		rows += n
		done.Add(int64(n))
		if h := p.jobs.TestingAfterBatch; h != nil {
			h()
		}
		if next == nil {
			slog.Debug("schema change: index backfilled", "table", def.Name, "index", ix.Name, "rows", rows)
			return nil
		}
		start = next
	}
}

// backfillBatch indexes up to backfillBatchRows rows from start in one
// transaction, trying again on a conflict with a writer. It returns where
// the next batch starts (nil: done) and how many rows it indexed.
func (p *DatabaseProvider) backfillBatch(ctx context.Context, et *executor.Table, ix *executor.Index, start, end []byte) ([]byte, int, error) {
	for attempt := 0; ; attempt++ {
		next, n, err := p.tryBackfillBatch(ctx, et, ix, start, end)
		if err == nil || !ddljob.RetryableConflict(err) || attempt >= 100 {
			return next, n, err
		}
		if err := ctxtime.Sleep(ctx, time.Duration(min(attempt+1, 20))*time.Millisecond); err != nil {
			return nil, 0, err
		}
	}
}

func (p *DatabaseProvider) tryBackfillBatch(ctx context.Context, et *executor.Table, ix *executor.Index, start, end []byte) ([]byte, int, error) {
	k, err := p.store.Begin(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = k.Rollback(ctx) }()
	dec, err := et.NewRowDecoder(nil)
	if err != nil {
		return nil, 0, err
	}
	it, err := executor.ScanTable(ctx, k, et, dec, executor.KeyRange{Start: start, End: end}, executor.ScanOptions{Limit: backfillBatchRows})
	if err != nil {
		return nil, 0, err
	}
	defer it.Close()
	n := 0
	var last []byte
	for {
		row, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		n++
		rowKey := tablecodec.RowKey(nil, et.ID, row.Handle)
		last = rowKey
		key, value, unique, err := executor.IndexEntry(et, ix, row.Handle, row.Values)
		if err != nil {
			return nil, 0, err
		}
		if !unique {
			if err := k.Set(key, value); err != nil {
				return nil, 0, err
			}
			continue
		}
		existing, found, err := k.Get(ctx, key)
		if err != nil {
			return nil, 0, err
		}
		if found {
			other, err := tablecodec.DecodeIndexHandle(key, existing, len(ix.Columns), et.HandleKind == executor.HandleCommon)
			if err == nil && other.Equal(row.Handle) {
				continue // a writer indexed this row already
			}
			vals := make([]any, len(ix.Columns))
			for i, c := range ix.Columns {
				vals[i] = row.Values[c.Offset]
			}
			dup := &executor.DuplicateKeyError{Table: et.Name, Index: ix.Name, Values: vals}
			return nil, 0, mysql.NewSQLError(codeDupEntry, stateIntegrity, "%s", dup.Error())
		}
		if err := k.Insert(key, value); err != nil {
			return nil, 0, err
		}
	}
	if err := k.Commit(ctx); err != nil {
		return nil, 0, err
	}
	if n < backfillBatchRows {
		return nil, n, nil
	}
	return append(last, 0), n, nil
}

// recoverSchemaChanges rolls back the schema changes a previous process
// left unfinished: fences are lifted and indexes that never became public
// are removed with their entries. It runs when the node opens, before any
// transaction of this node exists, so no step needs to wait for one. In a
// cluster, the changes of another SQL node whose schema lease is alive are
// that node's, still running: they are left alone.
func (p *DatabaseProvider) recoverSchemaChanges(ctx context.Context) error {
	c, err := p.latestCatalog(ctx)
	if err != nil {
		return fmt.Errorf("recover unfinished schema changes: %w", err)
	}
	live, err := p.liveNodes(ctx)
	if err != nil {
		return fmt.Errorf("recover unfinished schema changes: %w", err)
	}
	abandoned := func(def *catalog.TableDef) bool {
		_, running := live[def.ChangedBy]
		return def.SchemaChangeInProgress() != "" && (def.ChangedBy == "" || !running)
	}
	unfinished := false
	for _, def := range tablesByID(c) {
		unfinished = unfinished || abandoned(def)
	}
	if !unfinished {
		return nil
	}
	err = p.runSchemaStep(ctx, nil, func(c *catalog.Catalog, k *txn.Txn) error {
		for _, byName := range c.Tables {
			for _, cur := range byName {
				if !abandoned(cur) {
					continue
				}
				nd := cur.Clone()
				nd.Fence = ""
				nd.Indexes = nd.Indexes[:0]
				for _, ix := range cur.Indexes {
					if ix.Public() {
						nd.Indexes = append(nd.Indexes, ix)
						continue
					}
					start, end := tablecodec.IndexRange(cur.ID, ix.ID)
					if err := ddljob.ScheduleRange(k, start, end, "unfinished CREATE INDEX on "+cur.Name); err != nil {
						return err
					}
				}
				if err := putTableDef(c, k, nd); err != nil {
					return err
				}
				slog.Info("schema change: rolled back an unfinished schema change", "table", cur.Name, "change", cur.SchemaChangeInProgress())
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recover unfinished schema changes: %w", err)
	}
	return nil
}
