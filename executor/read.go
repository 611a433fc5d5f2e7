package executor

import (
	"context"
	"fmt"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// Reader is what the point-read operators need: a *txn.Txn (reads at its
// snapshot, with its own writes), or a LatestReader (autocommit point
// reads of the latest committed data, without a timestamp).
type Reader interface {
	Get(ctx context.Context, key []byte) ([]byte, bool, error)
	BatchGet(ctx context.Context, keys [][]byte) (map[string][]byte, error)
}

// Scanner is what the scan operators need: a Reader that can also iterate
// a key range at one snapshot. *txn.Txn is one.
type Scanner interface {
	Reader
	Iter(ctx context.Context, start, end []byte) (txn.Iterator, error)
	IterReverse(ctx context.Context, start, end []byte) (txn.Iterator, error)
	IterWith(ctx context.Context, start, end []byte, o txn.IterOptions) (txn.Iterator, error)
}

var _ Scanner = (*txn.Txn)(nil)

// LatestReader reads the latest committed data of Store with no
// timestamp (txn.Store.PointGet), the cheapest read of an autocommit point
// select. Each key is read linearizably, but several keys are not read at
// one instant: a unique lookup (index entry, then row) through it may see
// a row updated after its index entry was read, so the SQL layer uses it
// only where that cannot matter (by-handle reads) or re-checks.
type LatestReader struct {
	Store *txn.Store
}

// Get implements Reader.
func (r LatestReader) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	return r.Store.PointGet(ctx, key)
}

// BatchGet implements Reader.
func (r LatestReader) BatchGet(ctx context.Context, keys [][]byte) (map[string][]byte, error) {
	return r.Store.BatchPointGet(ctx, keys)
}

// readerFor returns r for reads whose rows d decodes: a pessimistic
// transaction reads through a view that tells it which columns those
// are (RowDecoder.ReadComparator), so that it may move its snapshot past
// a change to the others; other readers are returned as they are.
func readerFor(r Reader, d *RowDecoder) Reader {
	if k, ok := r.(*txn.Txn); ok && k.IsPessimistic() {
		return k.ReadingWith(d.ReadComparator())
	}
	return r
}

// scannerFor is readerFor for a Scanner.
func scannerFor(s Scanner, d *RowDecoder) Scanner {
	if k, ok := s.(*txn.Txn); ok && k.IsPessimistic() {
		return k.ReadingWith(d.ReadComparator())
	}
	return s
}

// Row is a table row with the handle that identifies it.
type Row struct {
	Handle tablecodec.Handle
	Values []any
}

// GetRow reads row h of t, decoded by d. found is false when there is no
// such row.
func GetRow(ctx context.Context, r Reader, t *Table, d *RowDecoder, h tablecodec.Handle) (row []any, found bool, err error) {
	key := tablecodec.RowKey(make([]byte, 0, 24), t.ID, h)
	v, ok, err := readerFor(r, d).Get(ctx, key)
	if err != nil || !ok {
		return nil, false, wrapf(err, "table %s: get row %v", t.Name, h)
	}
	if row, err = d.Decode(v); err != nil {
		return nil, false, fmt.Errorf("get row %v: %w", h, err)
	}
	return row, true, nil
}

// wrapf wraps err with a message, or returns nil for a nil err.
func wrapf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// BatchGetRows reads the rows of handles of t in one batch and returns
// those found, in the order of handles (a handle given twice gives its
// row twice).
func BatchGetRows(ctx context.Context, r Reader, t *Table, d *RowDecoder, handles []tablecodec.Handle) ([]Row, error) {
	if len(handles) == 0 {
		return nil, nil
	}
	keys := make([][]byte, len(handles))
	for i, h := range handles {
		keys[i] = tablecodec.RowKey(nil, t.ID, h)
	}
	vals, err := readerFor(r, d).BatchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("table %s: batch get %d rows: %w", t.Name, len(keys), err)
	}
	rows := make([]Row, 0, len(vals))
	for i, k := range keys {
		v, ok := vals[string(k)]
		if !ok {
			continue
		}
		row, err := d.Decode(v)
		if err != nil {
			return nil, fmt.Errorf("batch get row %v: %w", handles[i], err)
		}
		rows = append(rows, Row{Handle: handles[i], Values: row})
	}
	return rows, nil
}

// UniqueLookup finds the row whose values in unique index ix equal vals
// (one per index column, in index order) and reads it: the index entry
// gives the handle, the handle the row. A NULL among vals matches nothing,
// as NULL = NULL is not true. An index entry whose row is missing is an
// error wrapping ErrIndexInconsistent.
func UniqueLookup(ctx context.Context, r Reader, t *Table, ix *Index, d *RowDecoder, vals []any) (Row, bool, error) {
	if !ix.Unique {
		return Row{}, false, fmt.Errorf("table %s: unique lookup on non-unique index %s", t.Name, ix.Name)
	}
	if len(vals) != len(ix.Columns) {
		return Row{}, false, fmt.Errorf("table %s: unique lookup on index %s with %d values for %d columns", t.Name, ix.Name, len(vals), len(ix.Columns))
	}
	enc, hasNull, err := encodeIndexValues(nil, ix.Columns, vals, false)
	if err != nil {
		return Row{}, false, fmt.Errorf("table %s: unique lookup on index %s: %w", t.Name, ix.Name, err)
	}
	if hasNull {
		return Row{}, false, nil
	}
	key := tablecodec.IndexKey(nil, t.ID, ix.ID, enc, true, false, tablecodec.Handle{})
	r = readerFor(r, d)
	hv, ok, err := r.Get(ctx, key)
	if err != nil || !ok {
		return Row{}, false, wrapf(err, "table %s: unique lookup on index %s", t.Name, ix.Name)
	}
	h, err := tablecodec.DecodeIndexHandle(key, hv, len(ix.Columns), t.HandleKind == HandleCommon)
	if err != nil {
		return Row{}, false, fmt.Errorf("table %s: unique lookup on index %s: %w", t.Name, ix.Name, err)
	}
	row, found, err := GetRow(ctx, r, t, d, h)
	if err != nil {
		return Row{}, false, err
	}
	if !found {
		return Row{}, false, fmt.Errorf("table %s: index %s entry %x points to row %v: %w", t.Name, ix.Name, key, h, ErrIndexInconsistent)
	}
	return Row{Handle: h, Values: row}, true, nil
}

// LockRows locks the rows of handles for SELECT ... FOR UPDATE at
// forUpdateTS (see txn.Txn.LockKeys): in an optimistic transaction a
// transaction that commits a write to one of them after tx started makes
// tx's commit fail with a write conflict; in a pessimistic one the rows
// are locked in the store at once.
func LockRows(ctx context.Context, tx *txn.Txn, forUpdateTS uint64, t *Table, handles ...tablecodec.Handle) error {
	keys := rowKeys(t, handles)
	return wrapf(tx.LockKeys(ctx, forUpdateTS, keys...), "table %s: lock %d rows", t.Name, len(keys))
}

// LockRowsReading is LockRows for rows the caller reads next through tx
// at forUpdateTS, by their handles (txn.Txn.LockKeysReading): in a
// pessimistic transaction the rows come with their locks, and the reads
// that follow (GetRow, BatchGetRows) do not ask the store again. A handle
// without a row is locked too.
func LockRowsReading(ctx context.Context, tx *txn.Txn, forUpdateTS uint64, t *Table, handles ...tablecodec.Handle) error {
	keys := rowKeys(t, handles)
	return wrapf(tx.LockKeysReading(ctx, forUpdateTS, keys...), "table %s: lock and read %d rows", t.Name, len(keys))
}

// LockRowsReadingIfExist is LockRowsReading for rows of which some may
// be absent (txn.Txn.LockKeysReadingIfExist): the rows there are come
// with their locks, and a handle without a row is not locked; the reads
// that follow at forUpdateTS ask the store for nothing. ok is false,
// with nothing locked, when the transaction cannot lock so (the caller
// reads, then locks what it found).
func LockRowsReadingIfExist(ctx context.Context, tx *txn.Txn, forUpdateTS uint64, t *Table, handles ...tablecodec.Handle) (ok bool, err error) {
	keys := rowKeys(t, handles)
	ok, err = tx.LockKeysReadingIfExist(ctx, forUpdateTS, keys...)
	return ok, wrapf(err, "table %s: lock and read %d rows where they exist", t.Name, len(keys))
}

// rowKeys returns the row keys of handles in table t.
func rowKeys(t *Table, handles []tablecodec.Handle) [][]byte {
	keys := make([][]byte, len(handles))
	for i, h := range handles {
		keys[i] = tablecodec.RowKey(nil, t.ID, h)
	}
	return keys
}
