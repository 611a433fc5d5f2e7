package executor

import (
	"bytes"
	"context"
	"fmt"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// The write operators buffer their writes in a transaction; nothing reaches
// the store before Commit. Unique keys (the row key of a table with a
// primary-key handle, and the entries of unique indexes without NULLs) are
// checked twice: here, by a read through the transaction, which finds a
// duplicate visible in its snapshot or written earlier in it, and at
// prewrite, by writing them with txn.Insert, which makes the store refuse
// the key if a concurrent transaction committed it meanwhile. The first
// check returns a *DuplicateKeyError at once, before anything is written;
// the second makes Commit fail (see DuplicateFromCommit).

// AddRecord writes a new row h of t and its index entries. For a table
// with a primary-key handle, h must be t.HandleOf(row); for a HandleRowID
// table it is a new row ID. A duplicate primary or unique key is a
// *DuplicateKeyError, and then nothing is written.
func AddRecord(ctx context.Context, tx *txn.Txn, t *Table, h tablecodec.Handle, row []any) error {
	rec, err := t.prepareAdd(h, row)
	if err != nil {
		return err
	}
	if err := t.checkDuplicates(ctx, tx, h, row, rec.key, rec.uniqueKey, rec.entries); err != nil {
		return err
	}
	return t.writeAdd(tx, h, rec)
}

// AddRecordLocking is AddRecord for a pessimistic transaction that locks
// the new row's keys before its duplicate check reads them: lock gets
// the keys AddRecord then writes that a pessimistic statement locks (the
// row key and the unique index entries; the others are covered by the
// row's lock, see writeEntries) and is meant to lock them with
// their values (txn.Txn.LockKeysReading), so that the check reads the
// values the locks returned instead of asking the store, and the lock
// the write needs afterwards is taken already: one request where a read
// and a lock were two. lock is called only when the check reads
// something (a primary key or a unique entry); its error is returned as
// it is. A row whose check finds a duplicate keeps its locks, as
// InnoDB's duplicate check keeps its lock on the existing record.
func AddRecordLocking(ctx context.Context, tx *txn.Txn, t *Table, h tablecodec.Handle, row []any, lock func(ctx context.Context, keys [][]byte) error) error {
	rec, err := t.prepareAdd(h, row)
	if err != nil {
		return err
	}
	if rec.checks() {
		keys := make([][]byte, 0, 1+len(rec.entries))
		keys = append(keys, rec.key)
		for _, e := range rec.entries {
			if e.unique && !e.deleteOnly {
				keys = append(keys, e.key)
			}
		}
		if err := lock(ctx, keys); err != nil {
			return err
		}
	}
	if err := t.checkDuplicates(ctx, tx, h, row, rec.key, rec.uniqueKey, rec.entries); err != nil {
		return err
	}
	return t.writeAdd(tx, h, rec)
}

// newRecord is what adding a row writes.
type newRecord struct {
	key, value []byte
	// uniqueKey: the row key must not exist (a primary-key handle).
	uniqueKey bool
	entries   []indexEntry
}

// checks reports whether checkDuplicates reads any key of rec.
func (rec *newRecord) checks() bool {
	if rec.uniqueKey {
		return true
	}
	for _, e := range rec.entries {
		if e.unique && !e.deleteOnly {
			return true
		}
	}
	return false
}

func (t *Table) prepareAdd(h tablecodec.Handle, row []any) (newRecord, error) {
	if err := t.checkRow(row); err != nil {
		return newRecord{}, err
	}
	value, err := t.encodeRow(row)
	if err != nil {
		return newRecord{}, err
	}
	entries, err := t.indexEntries(h, row)
	if err != nil {
		return newRecord{}, err
	}
	return newRecord{
		key:       tablecodec.RowKey(nil, t.ID, h),
		value:     value,
		uniqueKey: t.HandleKind != HandleRowID,
		entries:   entries,
	}, nil
}

// writeAdd buffers the writes of a checked new row.
func (t *Table) writeAdd(tx *txn.Txn, h tablecodec.Handle, rec newRecord) error {
	if err := put(tx, rec.key, rec.value, rec.uniqueKey); err != nil {
		return fmt.Errorf("table %s: add row %v: %w", t.Name, h, err)
	}
	if err := t.notifyAll(tx, rec.key); err != nil {
		return err
	}
	return t.writeEntries(tx, rec.entries)
}

// RemoveRecord deletes row h of t, whose current values are row, and its
// index entries.
func RemoveRecord(ctx context.Context, tx *txn.Txn, t *Table, h tablecodec.Handle, row []any) error {
	if err := t.checkRow(row); err != nil {
		return err
	}
	entries, err := t.indexEntries(h, row)
	if err != nil {
		return err
	}
	key := tablecodec.RowKey(nil, t.ID, h)
	if err := tx.Delete(key); err != nil {
		return fmt.Errorf("table %s: remove row %v: %w", t.Name, h, err)
	}
	if err := t.notifyAll(tx, key); err != nil {
		return err
	}
	return t.deleteEntries(tx, entries)
}

// UpdateRecord replaces row oldH of t, whose current values are oldRow,
// by newRow with handle newH (oldH unless the primary key changed), and
// moves the index entries whose values changed. A duplicate primary or
// unique key is a *DuplicateKeyError, and then nothing is written.
func UpdateRecord(ctx context.Context, tx *txn.Txn, t *Table, oldH, newH tablecodec.Handle, oldRow, newRow []any) error {
	if err := t.checkRow(oldRow); err != nil {
		return err
	}
	if err := t.checkRow(newRow); err != nil {
		return err
	}
	if !oldH.Equal(newH) {
		return t.moveRecord(ctx, tx, oldH, newH, oldRow, newRow)
	}
	value, err := t.encodeRow(newRow)
	if err != nil {
		return err
	}
	oldEntries, err := t.indexEntries(oldH, oldRow)
	if err != nil {
		return err
	}
	newEntries, err := t.indexEntries(newH, newRow)
	if err != nil {
		return err
	}
	// Keep only the entries that change.
	var gone, added []indexEntry
	for i := range oldEntries {
		o, n := oldEntries[i], newEntries[i]
		if bytes.Equal(o.key, n.key) && bytes.Equal(o.value, n.value) {
			continue
		}
		gone = append(gone, o)
		added = append(added, n)
	}
	if err := t.checkDuplicates(ctx, tx, newH, newRow, nil, false, added); err != nil {
		return err
	}
	key := tablecodec.RowKey(nil, t.ID, newH)
	if err := tx.Set(key, value); err != nil {
		return fmt.Errorf("table %s: update row %v: %w", t.Name, newH, err)
	}
	if err := t.notifyChanged(tx, key, oldRow, newRow); err != nil {
		return err
	}
	if err := t.deleteEntries(tx, gone); err != nil {
		return err
	}
	return t.writeEntries(tx, added)
}

// moveRecord is UpdateRecord when the handle changes: the row moves to a
// new key, which must be checked like an insert.
func (t *Table) moveRecord(ctx context.Context, tx *txn.Txn, oldH, newH tablecodec.Handle, oldRow, newRow []any) error {
	rec, err := t.prepareAdd(newH, newRow)
	if err != nil {
		return err
	}
	oldEntries, err := t.indexEntries(oldH, oldRow)
	if err != nil {
		return err
	}
	// Check before writing anything, so that a duplicate leaves no trace:
	// the new row key, and the unique entries the move adds. An entry with
	// the key the old row holds is no duplicate: it is about to be deleted.
	var added []indexEntry
	for i, n := range rec.entries {
		if !bytes.Equal(oldEntries[i].key, n.key) {
			added = append(added, n)
		}
	}
	if err := t.checkDuplicates(ctx, tx, newH, newRow, rec.key, rec.uniqueKey, added); err != nil {
		return err
	}
	oldKey := tablecodec.RowKey(nil, t.ID, oldH)
	if err := tx.Delete(oldKey); err != nil {
		return fmt.Errorf("table %s: move row %v: %w", t.Name, oldH, err)
	}
	if err := t.notifyAll(tx, oldKey); err != nil {
		return err
	}
	if err := t.deleteEntries(tx, oldEntries); err != nil {
		return err
	}
	return t.writeAdd(tx, newH, rec)
}

// indexEntries computes the entries of row h in every index of t.
func (t *Table) indexEntries(h tablecodec.Handle, row []any) ([]indexEntry, error) {
	if len(t.Indexes) == 0 {
		return nil, nil
	}
	entries := make([]indexEntry, len(t.Indexes))
	for i := range t.Indexes {
		var err error
		if entries[i], err = t.Indexes[i].entry(t, h, row); err != nil {
			return nil, err
		}
	}
	return entries, nil
}

// checkDuplicates reads, through tx, the row key (when checkRowKey) and
// the unique keys among entries, and returns a *DuplicateKeyError for the
// first that exists: the primary key first, then the unique indexes in
// MySQL's order of keys (Index.checkRank: NOT NULL ones first, otherwise
// in order), which is the order InnoDB checks them in and so decides the
// key MySQL reports and the row ON DUPLICATE KEY UPDATE changes.
func (t *Table) checkDuplicates(ctx context.Context, tx *txn.Txn, h tablecodec.Handle, row []any, rowKey []byte, checkRowKey bool, entries []indexEntry) error {
	var keys [][]byte
	if checkRowKey {
		keys = append(keys, rowKey)
	}
	for _, e := range entries {
		if e.unique && !e.deleteOnly {
			keys = append(keys, e.key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	found, err := readKeys(ctx, tx, keys)
	if err != nil {
		return fmt.Errorf("table %s: duplicate check for row %v: %w", t.Name, h, err)
	}
	if len(found) == 0 {
		return nil
	}
	if _, ok := found[string(rowKey)]; checkRowKey && ok {
		return &DuplicateKeyError{Table: t.Name, Index: primaryKeyName, Values: keyValues(t.PrimaryKey, row), Handle: h, HandleKnown: true}
	}
	var first *indexEntry
	var firstValue []byte
	for i := range entries {
		e := &entries[i]
		v, ok := found[string(e.key)]
		if !e.unique || e.deleteOnly || !ok {
			continue
		}
		if first == nil || e.ix.checkRank() < first.ix.checkRank() {
			first, firstValue = e, v
		}
	}
	if first != nil {
		e, v := first, firstValue
		ix := e.ix
		dup := &DuplicateKeyError{Table: t.Name, Index: ix.Name, Values: keyValues(ix.Columns, row)}
		if other, err := tablecodec.DecodeIndexHandle(e.key, v, len(ix.Columns), t.HandleKind == HandleCommon); err == nil {
			dup.Handle, dup.HandleKnown = other, true
		}
		return dup
	}
	return nil
}

// readKeys reads keys through tx and returns those that exist; one key is
// read with Get, which spares BatchGet's map on the common single-key
// insert.
func readKeys(ctx context.Context, tx *txn.Txn, keys [][]byte) (map[string][]byte, error) {
	if len(keys) > 1 {
		return tx.BatchGet(ctx, keys)
	}
	v, ok, err := tx.Get(ctx, keys[0])
	if err != nil || !ok {
		return nil, err
	}
	return map[string][]byte{string(keys[0]): v}, nil
}

// writeEntries buffers index entries: unique keys with must-not-exist
// semantics, the others as writes covered by their row's
// (txn.Txn.SetCovered: their keys hold the row's handle, so only a
// writer of the row writes them). Entries of delete-only indexes are not
// written.
func (t *Table) writeEntries(tx *txn.Txn, entries []indexEntry) error {
	for _, e := range entries {
		if e.deleteOnly {
			continue
		}
		var err error
		if e.unique {
			err = tx.Insert(e.key, e.value)
		} else {
			err = tx.SetCovered(e.key, e.value)
		}
		if err != nil {
			return fmt.Errorf("table %s: write index entry: %w", t.Name, err)
		}
	}
	return nil
}

// deleteEntries buffers the deletion of index entries, those of
// non-unique keys covered by their row's (txn.Txn.DeleteCovered).
func (t *Table) deleteEntries(tx *txn.Txn, entries []indexEntry) error {
	for _, e := range entries {
		var err error
		if e.unique {
			err = tx.Delete(e.key)
		} else {
			err = tx.DeleteCovered(e.key)
		}
		if err != nil {
			return fmt.Errorf("table %s: delete index entry: %w", t.Name, err)
		}
	}
	return nil
}

// put buffers a write of key: with txn.Insert's must-not-exist check at
// prewrite when unique, else a plain txn.Set.
func put(tx *txn.Txn, key, value []byte, unique bool) error {
	if unique {
		return tx.Insert(key, value)
	}
	return tx.Set(key, value)
}
