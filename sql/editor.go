package sql

import (
	"bytes"
	"context"
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// tableEditor writes rows of one table for INSERT, UPDATE, DELETE and
// REPLACE, keeping every index in step with the rows. Duplicate keys are
// found by reading before writing, so that the statement fails at once
// with the existing row (which ON DUPLICATE KEY UPDATE and REPLACE need);
// primary and unique keys are also written as inserts, so that a
// concurrent transaction inserting the same key loses at commit.
type tableEditor struct {
	t *Table
}

var _ gsql.TableEditor = (*tableEditor)(nil)

// Inserter implements sql.InsertableTable.
func (t *Table) Inserter(*gsql.Context) gsql.RowInserter { return &tableEditor{t: t} }

// Updater implements sql.UpdatableTable.
func (t *Table) Updater(*gsql.Context) gsql.RowUpdater { return &tableEditor{t: t} }

// Deleter implements sql.DeletableTable.
func (t *Table) Deleter(*gsql.Context) gsql.RowDeleter { return &tableEditor{t: t} }

// Replacer implements sql.ReplaceableTable.
func (t *Table) Replacer(*gsql.Context) gsql.RowReplacer { return &tableEditor{t: t} }

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
	if err := tx.statementBegin(ctx); err != nil {
		return nil, nil, err
	}
	return tx, k, nil
}

// Insert implements sql.RowInserter.
func (e *tableEditor) Insert(ctx *gsql.Context, row gsql.Row) error {
	tx, k, err := e.begin(ctx)
	if err != nil {
		return toSQLError(err)
	}
	return toSQLError(e.insert(ctx, tx, k, row))
}

func (e *tableEditor) insert(ctx *gsql.Context, tx *Transaction, k *txn.Txn, row gsql.Row) error {
	m := e.t.meta
	var h tablecodec.Handle
	if m.handle == handleHidden {
		id, err := e.t.db.provider.ids.get(m.def.ID, allocRowID, 1).alloc(ctx)
		if err != nil {
			return err
		}
		h = tablecodec.IntHandle(int64(id))
	} else {
		var err error
		if h, err = m.handleOf(row); err != nil {
			return err
		}
		if existing, found, err := e.rowByHandle(ctx, k, h); err != nil {
			return err
		} else if found {
			return duplicateKeyError(m.def.Name, "PRIMARY", m.primary.formatKeyValues(row), true, existing)
		}
	}
	if err := e.checkUnique(ctx, k, row, h, h, nil); err != nil {
		return err
	}
	value, err := m.encodeRow(row)
	if err != nil {
		return err
	}
	key := m.rowKey(h)
	if m.handle == handleHidden {
		err = k.Set(key, value)
	} else {
		err = k.Insert(key, value)
	}
	if err != nil {
		return err
	}
	return e.putIndexEntries(k, row, h, nil)
}

// checkUnique fails with a duplicate-key error if a unique index entry of
// row is taken by a row other than h (or self, the row's handle before an
// update moved it). skip, if set, says which indexes need no check (their
// entry does not change in an update).
func (e *tableEditor) checkUnique(ctx context.Context, k *txn.Txn, row gsql.Row, h, self tablecodec.Handle, skip []bool) error {
	m := e.t.meta
	for i, im := range m.indexes {
		if !im.unique || (skip != nil && skip[i]) {
			continue
		}
		key, _, hasNull, err := m.indexEntry(im, row, h)
		if err != nil {
			return err
		}
		if hasNull {
			continue
		}
		v, found, err := k.Get(ctx, key)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		other, err := tablecodec.DecodeIndexHandle(key, v, len(im.ords), m.handle == handleCommon)
		if err != nil {
			return err
		}
		if other.Equal(h) || other.Equal(self) {
			continue
		}
		existing, _, err := e.rowByHandle(ctx, k, other)
		if err != nil {
			return err
		}
		return duplicateKeyError(m.def.Name, im.def.Name, im.formatKeyValues(row), false, existing)
	}
	return nil
}

// putIndexEntries writes row's entries in every index; only, if set, says
// which indexes to write.
func (e *tableEditor) putIndexEntries(k *txn.Txn, row gsql.Row, h tablecodec.Handle, only []bool) error {
	m := e.t.meta
	for i, im := range m.indexes {
		if only != nil && !only[i] {
			continue
		}
		key, value, hasNull, err := m.indexEntry(im, row, h)
		if err != nil {
			return err
		}
		if im.unique && !hasNull {
			err = k.Insert(key, value)
		} else {
			err = k.Set(key, value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// deleteIndexEntries deletes row's entries; only as in putIndexEntries.
func (e *tableEditor) deleteIndexEntries(k *txn.Txn, row gsql.Row, h tablecodec.Handle, only []bool) error {
	m := e.t.meta
	for i, im := range m.indexes {
		if only != nil && !only[i] {
			continue
		}
		key, _, _, err := m.indexEntry(im, row, h)
		if err != nil {
			return err
		}
		if err := k.Delete(key); err != nil {
			return err
		}
	}
	return nil
}

// rowByHandle reads the whole row with handle h.
func (e *tableEditor) rowByHandle(ctx context.Context, k *txn.Txn, h tablecodec.Handle) (gsql.Row, bool, error) {
	v, found, err := k.Get(ctx, e.t.meta.rowKey(h))
	if err != nil || !found {
		return nil, false, err
	}
	row, err := e.t.decodeFull(ctx, v)
	return row, err == nil, err
}

// decodeFull decodes a stored row into a whole-schema row.
func (t *Table) decodeFull(ctx context.Context, value []byte) (gsql.Row, error) {
	ids := t.meta.colIDs
	vals := make([]any, len(ids))
	present := make([]bool, len(ids))
	if err := tablecodec.DecodeRow(value, ids, vals, present); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name(), err)
	}
	for i := range vals {
		if !present[i] {
			d, err := t.missingValue(ctx, i)
			if err != nil {
				return nil, err
			}
			vals[i] = d
		}
	}
	return gsql.Row(vals), nil
}

// handleOfExisting returns the handle of a row read from the table: from
// its primary key, or for a table without one from the rows this statement
// read (see keylessTracker).
func (e *tableEditor) handleOfExisting(ctx context.Context, tx *Transaction, k *txn.Txn, row gsql.Row) (tablecodec.Handle, error) {
	m := e.t.meta
	if m.handle != handleHidden {
		return m.handleOf(row)
	}
	value, err := m.encodeRow(row)
	if err != nil {
		return tablecodec.Handle{}, err
	}
	if key, ok := tx.keyless.take(m, value); ok {
		_, h, err := tablecodec.DecodeRowKey(key, false)
		return h, err
	}
	return e.findKeyless(ctx, k, row)
}

// findKeyless scans a table without a primary key for a row equal to row.
func (e *tableEditor) findKeyless(ctx context.Context, k *txn.Txn, row gsql.Row) (tablecodec.Handle, error) {
	m := e.t.meta
	start, end := tablecodec.RecordRange(m.def.ID)
	it, err := k.Iter(ctx, start, end)
	if err != nil {
		return tablecodec.Handle{}, err
	}
	defer it.Close()
	gctx := schemaContext(ctx)
	for it.Valid() {
		cand, err := e.t.decodeFull(ctx, it.Value())
		if err != nil {
			return tablecodec.Handle{}, err
		}
		if eq, err := cand.Equals(gctx, row, m.schema.Schema); err != nil {
			return tablecodec.Handle{}, err
		} else if eq {
			_, h, err := tablecodec.DecodeRowKey(it.Key(), false)
			return h, err
		}
		if err := it.Next(ctx); err != nil {
			return tablecodec.Handle{}, err
		}
	}
	return tablecodec.Handle{}, gsql.ErrDeleteRowNotFound.New()
}

// Delete implements sql.RowDeleter.
func (e *tableEditor) Delete(ctx *gsql.Context, row gsql.Row) error {
	tx, k, err := e.begin(ctx)
	if err != nil {
		return toSQLError(err)
	}
	return toSQLError(e.delete(ctx, tx, k, row))
}

func (e *tableEditor) delete(ctx *gsql.Context, tx *Transaction, k *txn.Txn, row gsql.Row) error {
	h, err := e.handleOfExisting(ctx, tx, k, row)
	if err != nil {
		return err
	}
	if err := k.Delete(e.t.meta.rowKey(h)); err != nil {
		return err
	}
	return e.deleteIndexEntries(k, row, h, nil)
}

// Update implements sql.RowUpdater.
func (e *tableEditor) Update(ctx *gsql.Context, old, new gsql.Row) error {
	tx, k, err := e.begin(ctx)
	if err != nil {
		return toSQLError(err)
	}
	return toSQLError(e.update(ctx, tx, k, old, new))
}

func (e *tableEditor) update(ctx *gsql.Context, tx *Transaction, k *txn.Txn, old, new gsql.Row) error {
	m := e.t.meta
	oldH, err := e.handleOfExisting(ctx, tx, k, old)
	if err != nil {
		return err
	}
	newH := oldH
	if m.handle != handleHidden {
		if newH, err = m.handleOf(new); err != nil {
			return err
		}
	}
	moved := !newH.Equal(oldH)
	if moved {
		if existing, found, err := e.rowByHandle(ctx, k, newH); err != nil {
			return err
		} else if found {
			return duplicateKeyError(m.def.Name, "PRIMARY", m.primary.formatKeyValues(new), true, existing)
		}
	}
	// An index entry changes when its key or value changes: its values or
	// the handle moved.
	changed := make([]bool, len(m.indexes))
	unchanged := make([]bool, len(m.indexes))
	for i, im := range m.indexes {
		ok, ov, _, err := m.indexEntry(im, old, oldH)
		if err != nil {
			return err
		}
		nk, nv, _, err := m.indexEntry(im, new, newH)
		if err != nil {
			return err
		}
		changed[i] = !bytes.Equal(ok, nk) || !bytes.Equal(ov, nv)
		unchanged[i] = !changed[i]
	}
	if err := e.checkUnique(ctx, k, new, newH, oldH, unchanged); err != nil {
		return err
	}
	if err := e.deleteIndexEntries(k, old, oldH, changed); err != nil {
		return err
	}
	value, err := m.encodeRow(new)
	if err != nil {
		return err
	}
	if moved {
		if err := k.Delete(m.rowKey(oldH)); err != nil {
			return err
		}
		if err := k.Insert(m.rowKey(newH), value); err != nil {
			return err
		}
	} else if err := k.Set(m.rowKey(newH), value); err != nil {
		return err
	}
	return e.putIndexEntries(k, new, newH, changed)
}

// Truncate implements sql.TruncateableTable: every row and index entry is
// deleted and AUTO_INCREMENT starts over, as in MySQL.
func (t *Table) Truncate(ctx *gsql.Context) (int, error) {
	tx, err := transactionOf(ctx)
	if err != nil {
		return 0, err
	}
	k, err := tx.writable(ctx)
	if err != nil {
		return 0, toSQLError(err)
	}
	start, end := tablecodec.RecordRange(t.meta.def.ID)
	n, err := countRange(ctx, k, start, end)
	if err != nil {
		return 0, toSQLError(err)
	}
	if err := dropTableData(ctx, k, t.meta.def); err != nil {
		return 0, toSQLError(err)
	}
	if t.meta.autoIncOrd >= 0 {
		al := t.db.provider.ids.get(t.meta.def.ID, allocAutoIncrement, t.meta.def.AutoIncrementStart)
		if err := al.reset(ctx, max(t.meta.def.AutoIncrementStart, 1)); err != nil {
			return 0, toSQLError(err)
		}
	}
	return n, nil
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
	v, err := t.autoIncrement().peek(ctx)
	return v, toSQLError(err)
}

// GetNextAutoIncrementValue implements sql.AutoIncrementTable: a fresh ID
// when insertVal is nil, else insertVal, moving the counter past it.
func (t *Table) GetNextAutoIncrementValue(ctx *gsql.Context, insertVal any) (uint64, error) {
	al := t.autoIncrement()
	if insertVal == nil {
		v, err := al.alloc(ctx)
		return v, toSQLError(err)
	}
	v, _, err := types.Uint64.Convert(ctx, insertVal)
	if err != nil {
		return 0, err
	}
	given := v.(uint64)
	return given, toSQLError(al.observe(ctx, given))
}

// AutoIncrementSetter implements sql.AutoIncrementTable.
func (t *Table) AutoIncrementSetter(*gsql.Context) gsql.AutoIncrementSetter {
	return &autoIncrementSetter{t: t}
}

func (t *Table) autoIncrement() *idAllocator {
	return t.db.provider.ids.get(t.meta.def.ID, allocAutoIncrement, t.meta.def.AutoIncrementStart)
}

// autoIncrementSetter serves ALTER TABLE ... AUTO_INCREMENT = n and the
// AUTO_INCREMENT table option of CREATE TABLE.
type autoIncrementSetter struct{ t *Table }

// SetAutoIncrementValue implements sql.AutoIncrementSetter.
func (s *autoIncrementSetter) SetAutoIncrementValue(ctx *gsql.Context, v uint64) error {
	return toSQLError(s.t.autoIncrement().reset(ctx, v))
}

// AcquireAutoIncrementLock implements sql.AutoIncrementSetter: IDs come
// from an allocator with its own lock, so there is nothing to hold.
func (s *autoIncrementSetter) AcquireAutoIncrementLock(*gsql.Context) (func(), error) {
	return func() {}, nil
}

// Close implements sql.Closer.
func (s *autoIncrementSetter) Close(*gsql.Context) error { return nil }

// keylessTracker remembers, during a writing statement, which stored row
// each row read from a table without a primary key came from, so that
// UPDATE and DELETE find the row GMS hands back without scanning. Equal
// rows are interchangeable: any one of them is the right one to change.
type keylessTracker struct {
	rows map[string][][]byte // table ID and row value -> row keys
}

func keylessKey(m *tableMeta, value []byte) string {
	return string(tablecodec.TablePrefix(nil, m.def.ID)) + string(value)
}

func (kt *keylessTracker) remember(m *tableMeta, value, key []byte) {
	fp := keylessKey(m, value)
	kt.rows[fp] = append(kt.rows[fp], append([]byte(nil), key...))
}

func (kt *keylessTracker) take(m *tableMeta, value []byte) ([]byte, bool) {
	if kt == nil {
		return nil, false
	}
	fp := keylessKey(m, value)
	keys := kt.rows[fp]
	if len(keys) == 0 {
		return nil, false
	}
	kt.rows[fp] = keys[1:]
	return keys[0], true
}
