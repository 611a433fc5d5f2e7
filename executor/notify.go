package executor

import (
	"bytes"
	"fmt"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// The write operators mark a row notified for each observer watching its
// table (Table.Watches), in the transaction that writes the row, so that
// every path that writes rows (GMS's, the fast path's, triggers') notifies
// alike: an insert or a delete notifies every watch, an update the
// watches of the columns it changes. DDL rewrites of rows write no
// notifications.

// notifyAll marks key notified for every watch of t.
func (t *Table) notifyAll(tx *txn.Txn, key []byte) error {
	for _, w := range t.Watches {
		if err := tx.Notify(key, w.Observer); err != nil {
			return fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	return nil
}

// notifyChanged marks key notified for the watches of t whose columns
// differ between oldRow and newRow.
func (t *Table) notifyChanged(tx *txn.Txn, key []byte, oldRow, newRow []any) error {
	for _, w := range t.Watches {
		changed, err := t.watchedChanged(w, oldRow, newRow)
		if err != nil {
			return err
		}
		if !changed {
			continue
		}
		if err := tx.Notify(key, w.Observer); err != nil {
			return fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	return nil
}

// watchedChanged reports whether a column w watches differs between the
// rows: their values are compared in their stored encoding, so that a
// value changes exactly when what a reader reads back changes.
func (t *Table) watchedChanged(w Watch, oldRow, newRow []any) (bool, error) {
	offsets := w.Columns
	if len(offsets) == 0 {
		offsets = make([]int, len(t.Columns))
		for i := range offsets {
			offsets[i] = i
		}
	}
	ids := make([]int64, len(offsets))
	oldVals, newVals := make([]any, len(offsets)), make([]any, len(offsets))
	for i, off := range offsets {
		ids[i], oldVals[i], newVals[i] = t.Columns[off].ID, oldRow[off], newRow[off]
	}
	o, err := tablecodec.EncodeRow(ids, oldVals)
	if err != nil {
		return false, fmt.Errorf("table %s: %w", t.Name, err)
	}
	n, err := tablecodec.EncodeRow(ids, newVals)
	if err != nil {
		return false, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return !bytes.Equal(o, n), nil
}
