package sql

import (
	"context"
	"errors"
	"fmt"
	"io"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// tableEditor writes rows of one table for INSERT, UPDATE, DELETE and
// REPLACE through the executor's write operators, which keep every index
// in step and find duplicate keys before writing. A duplicate is handed to
// GMS as sql.UniqueKeyError with the existing row, which is what INSERT
// ... ON DUPLICATE KEY UPDATE and REPLACE act on.
type tableEditor struct {
	t *Table
	// full decodes whole rows (existing rows of duplicate keys).
	full *executor.RowDecoder
	// rows counts the rows inserted or updated, for MySQL's "at row n".
	rows int
	// batch defers the pessimistic locks of the rows written to one
	// request at the statement's end (editor_batch.go).
	batch lockBatch
}

var _ gsql.TableEditor = (*tableEditor)(nil)

func (t *Table) editor() *tableEditor { return &tableEditor{t: t} }

// Inserter implements sql.InsertableTable.
func (t *Table) Inserter(*gsql.Context) gsql.RowInserter { return t.editor() }

// Updater implements sql.UpdatableTable.
func (t *Table) Updater(*gsql.Context) gsql.RowUpdater { return t.editor() }

// Deleter implements sql.DeletableTable.
func (t *Table) Deleter(*gsql.Context) gsql.RowDeleter { return t.editor() }

// Replacer implements sql.ReplaceableTable.
func (t *Table) Replacer(*gsql.Context) gsql.RowReplacer { return t.editor() }

// StatementBegin implements sql.EditOpenerCloser: it opens the statement's
// undo point.
func (e *tableEditor) StatementBegin(ctx *gsql.Context) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return
	}
	// An error here surfaces again at the first write.
	_ = tx.statementBegin(ctx)
}

// DiscardChanges implements sql.EditOpenerCloser: the statement's writes
// are undone.
func (e *tableEditor) DiscardChanges(ctx *gsql.Context, _ error) error {
	if tx, err := transactionOf(ctx); err == nil {
		tx.statementEnd(false)
	}
	return nil
}

// StatementComplete implements sql.EditOpenerCloser.
func (e *tableEditor) StatementComplete(ctx *gsql.Context) error {
	if tx, err := transactionOf(ctx); err == nil {
		tx.statementEnd(true)
	}
	return nil
}

// Close implements sql.Closer.
func (e *tableEditor) Close(*gsql.Context) error { return nil }

// begin returns the transaction to write through.
func (e *tableEditor) begin(ctx *gsql.Context) (*Transaction, *txn.Txn, error) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, nil, err
	}
	k, err := tx.writable(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := tx.beginTableWrite(ctx, e.t.meta); err != nil {
		return nil, nil, err
	}
	if err := tx.statementBegin(ctx); err != nil {
		return nil, nil, err
	}
	return tx, k, nil
}

// Insert implements sql.RowInserter.
func (e *tableEditor) Insert(ctx *gsql.Context, row gsql.Row) error {
	e.rows++
	if err := roundScaled(ctx, e.t.meta, row, e.rows); err != nil {
		return err
	}
	tx, k, err := e.begin(ctx)
	if err != nil {
		return toSQLError(err)
	}
	mark := k.WriteMark()
	et := e.t.meta.Exec
	var h tablecodec.Handle
	if et.HandleKind == executor.HandleRowID {
		id, err := e.t.db.provider.ids.Get(et.ID, catalog.KindRowID, 1).Alloc(ctx)
		if err != nil {
			return toSQLError(err)
		}
		h = tablecodec.IntHandle(int64(id))
	} else if h, err = et.HandleOf(row); err != nil {
		return err
	}
	if lockBeforeRead(tx, k) && !e.batch.on {
		// The row's keys are locked with their values before the
		// duplicate check reads them (executor.AddRecordLocking).
		var lockErr error
		err = executor.AddRecordLocking(ctx, k, et, h, row, func(_ context.Context, keys [][]byte) error {
			lockErr = lockKeysReading(ctx, tx, k, keys)
			return lockErr
		})
		if lockErr != nil {
			return lockErr
		}
	} else {
		err = executor.AddRecord(ctx, k, et, h, row)
	}
	if err := e.writeError(ctx, k, err); err != nil {
		return err
	}
	return e.lockWritten(ctx, tx, k, mark)
}

// Delete implements sql.RowDeleter.
func (e *tableEditor) Delete(ctx *gsql.Context, row gsql.Row) error {
	return e.delete(ctx, row, nil)
}

// delete deletes row, the row of handle *at, or when at is nil the row
// handleOfExisting finds.
func (e *tableEditor) delete(ctx *gsql.Context, row gsql.Row, at *tablecodec.Handle) error {
	tx, k, err := e.begin(ctx)
	if err != nil {
		return toSQLError(err)
	}
	mark := k.WriteMark()
	var h tablecodec.Handle
	if at != nil {
		h = *at
	} else if h, err = e.handleOfExisting(ctx, tx, k, row); err != nil {
		return toSQLError(err)
	}
	if err := executor.RemoveRecord(ctx, k, e.t.meta.Exec, h, row); err != nil {
		return toSQLError(err)
	}
	return e.lockWritten(ctx, tx, k, mark)
}

// Update implements sql.RowUpdater.
func (e *tableEditor) Update(ctx *gsql.Context, old, new gsql.Row) error {
	return e.update(ctx, old, new, nil)
}

// update changes old, the row of handle *at, or when at is nil the row
// handleOfExisting finds, to new.
func (e *tableEditor) update(ctx *gsql.Context, old, new gsql.Row, at *tablecodec.Handle) error {
	if err := notNullViolation(e.t.Schema(), new); err != nil {
		return err
	}
	e.rows++
	if err := roundScaled(ctx, e.t.meta, new, e.rows); err != nil {
		return err
	}
	tx, k, err := e.begin(ctx)
	if err != nil {
		return toSQLError(err)
	}
	mark := k.WriteMark()
	et := e.t.meta.Exec
	var oldH tablecodec.Handle
	if at != nil {
		oldH = *at
	} else if oldH, err = e.handleOfExisting(ctx, tx, k, old); err != nil {
		return toSQLError(err)
	}
	newH := oldH
	if et.HandleKind != executor.HandleRowID {
		if newH, err = et.HandleOf(new); err != nil {
			return err
		}
	}
	if err := e.writeError(ctx, k, executor.UpdateRecord(ctx, k, et, oldH, newH, old, new)); err != nil {
		return err
	}
	return e.lockWritten(ctx, tx, k, mark)
}

// notNullViolation returns MySQL's error 1048 when row has a NULL in a
// NOT NULL column of sch. GMS checks an INSERT's and an UPDATE's values,
// but not those of INSERT ... ON DUPLICATE KEY UPDATE c = NULL, which
// wrote the NULL (MySQL fails the statement in strict mode, and writes
// the column's implicit default with a warning otherwise: with IGNORE or
// outside strict mode the value is that default before it gets here,
// sql/compat/notnull.go).
func notNullViolation(sch gsql.Schema, row gsql.Row) error {
	for i, c := range sch {
		if i < len(row) && row[i] == nil && !c.Nullable && !c.AutoIncrement {
			return mysql.NewSQLError(mysql.ERBadNullError, "23000", "Column '%s' cannot be null", c.Name)
		}
	}
	return nil
}

// writeError returns err for GMS: a duplicate key becomes GMS's unique key
// error carrying the row that holds the key.
func (e *tableEditor) writeError(ctx context.Context, k *txn.Txn, err error) error {
	var dup *executor.DuplicateKeyError
	if !errors.As(err, &dup) {
		return toSQLError(err)
	}
	var existing gsql.Row
	if dup.HandleKnown {
		if e.full == nil {
			if e.full, err = e.t.meta.Exec.NewRowDecoder(nil); err != nil {
				return err
			}
		}
		row, found, err := executor.GetRow(ctx, k, e.t.meta.Exec, e.full, dup.Handle)
		if err != nil {
			return toSQLError(err)
		}
		if found {
			existing = row
		}
	}
	return gsql.NewUniqueKeyErr(dup.Error(), dup.Index == "PRIMARY", existing)
}

// handleOfExisting returns the handle of a row read from the table: from
// its primary key, or for a table without one from the rows this statement
// read (see keylessTracker), or failing that by a scan for an equal row.
func (e *tableEditor) handleOfExisting(ctx *gsql.Context, tx *Transaction, k *txn.Txn, row gsql.Row) (tablecodec.Handle, error) {
	et := e.t.meta.Exec
	if et.HandleKind != executor.HandleRowID {
		return et.HandleOf(row)
	}
	if h, ok, err := tx.keyless.take(e.t.meta, row); err != nil || ok {
		return h, err
	}
	dec, err := et.NewRowDecoder(nil)
	if err != nil {
		return tablecodec.Handle{}, err
	}
	it, err := executor.ScanTable(ctx, k, et, dec, et.RowRange(), executor.ScanOptions{})
	if err != nil {
		return tablecodec.Handle{}, err
	}
	defer it.Close()
	for {
		cand, err := it.Next(ctx)
		if err == io.EOF {
			return tablecodec.Handle{}, gsql.ErrDeleteRowNotFound.New()
		}
		if err != nil {
			return tablecodec.Handle{}, err
		}
		if eq, err := gsql.Row(cand.Values).Equals(ctx, row, e.t.meta.Schema.Schema); err != nil {
			return tablecodec.Handle{}, err
		} else if eq {
			return cand.Handle, nil
		}
	}
}

// Truncate implements sql.TruncateableTable: every row and index entry
// goes and AUTO_INCREMENT starts over, as in MySQL. The table gets a new
// ID, in the statement's transaction, and the old ID's range is left to
// the garbage collector's range deletion (package ddljob), so that
// TRUNCATE costs the same whatever the table's size; like MySQL's it
// reports 0 rows affected. A temporary table, or one this transaction
// created or is rewriting, has its rows deleted in the transaction.
func (t *Table) Truncate(ctx *gsql.Context) (int, error) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return 0, err
	}
	if !t.meta.Def.Temporary && !tx.createdHere(t.meta.Def.ID) && !tx.ownsFence(t.meta.Def.ID) {
		if tx.provider.lease != nil {
			// On a SQL node of a cluster the table is fenced first, as
			// for any rewrite into a new table ID (ddl.go): every node
			// then checks the schema version with its reads of it
			// (cacheCurrentFor), so that none reads the old ID's rows
			// once the new one is committed. The single node reads with
			// its own DDLs in view (fastpath.SchemaGuard) and needs no fence.
			if err := tx.fenceForRewrite(ctx, t.meta.Def, "TRUNCATE TABLE"); err != nil {
				return 0, toSQLError(err)
			}
		}
		return 0, t.truncateByNewID(ctx, tx)
	}
	k, err := tx.writable(ctx)
	if err != nil {
		return 0, toSQLError(err)
	}
	// TRUNCATE frees space, so it must work on a full disk.
	k.AllowWhenDiskFull()
	rr := t.meta.Exec.RowRange()
	n, err := countRange(ctx, k, rr.Start, rr.End)
	if err != nil {
		return 0, toSQLError(err)
	}
	if err := dropTableData(ctx, k, t.meta.Def); err != nil {
		return 0, toSQLError(err)
	}
	if t.meta.AutoIncOrd >= 0 {
		if err := t.autoIncrement().Reset(ctx, max(t.meta.Def.AutoIncrementStart, 1)); err != nil {
			return 0, toSQLError(err)
		}
	}
	return n, nil
}

// truncateByNewID gives the table a new, empty ID and schedules the old
// one's range for deletion.
func (t *Table) truncateByNewID(ctx *gsql.Context, tx *Transaction) error {
	old := t.meta.Def
	var nd *catalog.TableDef
	err := t.db.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		cur, ok := c.Table(old.DBID, old.Name)
		if !ok || cur.ID != old.ID {
			return gsql.ErrTableNotFound.New(old.Name)
		}
		if busy := cur.SchemaChangeInProgress(); busy != "" && !tx.ownsFence(cur.ID) {
			return errSchemaChangeInProgress(old.Name, busy)
		}
		// TRUNCATE frees space, so it must work on a full disk.
		k.AllowWhenDiskFull()
		nd = cur.Clone()
		nd.Fence = "" // the new table replaces the fenced one, if fenced
		var err error
		if nd.ID, err = catalog.NextID(ctx, k); err != nil {
			return err
		}
		if err := ddljob.ScheduleTable(k, cur, "TRUNCATE TABLE"); err != nil {
			return err
		}
		return putTableDef(c, k, nd)
	})
	if err != nil {
		return err
	}
	if t.meta.AutoIncOrd < 0 {
		return nil
	}
	nt, err := newTable(ctx, t.db, nd)
	if err != nil {
		return err
	}
	return toSQLError(nt.autoIncrement().Reset(ctx, max(nd.AutoIncrementStart, 1)))
}

// countRange counts the keys in [start, end).
func countRange(ctx context.Context, k *txn.Txn, start, end []byte) (int, error) {
	it, err := k.Iter(ctx, start, end)
	if err != nil {
		return 0, err
	}
	defer it.Close()
	n := 0
	for it.Valid() {
		n++
		if err := it.Next(ctx); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// PeekNextAutoIncrementValue implements sql.AutoIncrementGetter.
func (t *Table) PeekNextAutoIncrementValue(ctx *gsql.Context) (uint64, error) {
	v, err := t.autoIncrement().Peek(ctx)
	return v, toSQLError(err)
}

// GetNextAutoIncrementValue implements sql.AutoIncrementTable: a fresh ID
// when insertVal is nil, else insertVal, moving the counter past it.
func (t *Table) GetNextAutoIncrementValue(ctx *gsql.Context, insertVal any) (uint64, error) {
	al := t.autoIncrement()
	if insertVal == nil {
		v, err := al.Alloc(ctx)
		return v, toSQLError(err)
	}
	v, _, err := types.Uint64.Convert(ctx, insertVal)
	if err != nil {
		return 0, err
	}
	given := v.(uint64)
	return given, toSQLError(al.Observe(ctx, given))
}

// AutoIncrementSetter implements sql.AutoIncrementTable.
func (t *Table) AutoIncrementSetter(*gsql.Context) gsql.AutoIncrementSetter {
	return &autoIncrementSetter{t: t}
}

func (t *Table) autoIncrement() *catalog.Allocator {
	return t.db.provider.ids.Get(t.meta.Def.ID, catalog.KindAutoIncrement, t.meta.Def.AutoIncrementStart)
}

// autoIncrementSetter serves ALTER TABLE ... AUTO_INCREMENT = n and the
// AUTO_INCREMENT table option of CREATE TABLE.
type autoIncrementSetter struct{ t *Table }

// SetAutoIncrementValue implements sql.AutoIncrementSetter: the counter
// only rises (Allocator.Raise): a value at or below IDs already handed
// out, to this node or another, is ignored, as MySQL ignores one at or
// below the column's maximum.
func (s *autoIncrementSetter) SetAutoIncrementValue(ctx *gsql.Context, v uint64) error {
	return toSQLError(s.t.autoIncrement().Raise(ctx, v))
}

// AcquireAutoIncrementLock implements sql.AutoIncrementSetter: IDs come
// from an allocator with its own lock, so there is nothing to hold.
func (s *autoIncrementSetter) AcquireAutoIncrementLock(*gsql.Context) (func(), error) {
	return func() {}, nil
}

// Close implements sql.Closer.
func (s *autoIncrementSetter) Close(*gsql.Context) error { return nil }

// keylessTracker remembers, during a writing statement, the handles of the
// rows read from tables without a primary key, so that UPDATE and DELETE
// find the row GMS hands back without a scan. Equal rows are
// interchangeable: any one of them is the right one to change.
type keylessTracker struct {
	rows map[string][]tablecodec.Handle // table prefix and row value -> handles
}

// fingerprint identifies a row's values within its table.
func (kt *keylessTracker) fingerprint(m *tablemeta.Table, row []any) (string, error) {
	b := tablecodec.TablePrefix(nil, m.Def.ID)
	ids := make([]int64, len(m.Exec.Columns))
	for i, c := range m.Exec.Columns {
		ids[i] = c.ID
	}
	b, err := tablecodec.AppendRow(b, ids, row)
	if err != nil {
		return "", fmt.Errorf("table %s: %w", m.Def.Name, err)
	}
	return string(b), nil
}

func (kt *keylessTracker) remember(m *tablemeta.Table, row executor.Row) error {
	fp, err := kt.fingerprint(m, row.Values)
	if err != nil {
		return err
	}
	kt.rows[fp] = append(kt.rows[fp], row.Handle)
	return nil
}

func (kt *keylessTracker) take(m *tablemeta.Table, row []any) (tablecodec.Handle, bool, error) {
	if kt == nil {
		return tablecodec.Handle{}, false, nil
	}
	fp, err := kt.fingerprint(m, row)
	if err != nil {
		return tablecodec.Handle{}, false, err
	}
	hs := kt.rows[fp]
	if len(hs) == 0 {
		return tablecodec.Handle{}, false, nil
	}
	kt.rows[fp] = hs[1:]
	return hs[0], true, nil
}
