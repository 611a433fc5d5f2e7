package observe

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// sweepBatch is how many acknowledgements one transaction of SweepAcks
// examines.
const sweepBatch = 256

// SweepAcks deletes the acknowledgements (tablecodec.AckKey) of rows that
// are gone, which nothing else would ever delete: acks are ordinary
// versioned keys, and a row deleted long ago would keep one per observer
// for good. Over the ack range of each table of tableIDs, an ack goes
// when, in a fresh snapshot,
//
//   - its row does not exist,
//   - the run it records started at or below safePoint (the GC safe
//     point: no reader needs the history, and the run is long over), and
//   - its observer has no notification of the row waiting (a run to
//     come would need the ack to tell whether it is done).
//
// Such a row was deleted and its deletion observed, or it was deleted
// after its observer stopped watching. If the row comes back, its insert
// notifies the observer at a commit_ts above the deleted ack's, which a
// run without an ack treats as not processed: the right answer. Each
// batch is one transaction; one that conflicts with a run writing an ack
// is left for the next sweep. It returns how many acks it deleted.
func SweepAcks(ctx context.Context, store *txn.Store, tableIDs []int64, safePoint uint64) (int, error) {
	removed := 0
	for _, id := range tableIDs {
		start, end := tablecodec.PrefixRange(tablecodec.AckPrefix(nil, id))
		for start != nil {
			n, next, err := sweepBatchOf(ctx, store, start, end, safePoint)
			switch {
			case errors.Is(err, txn.ErrWriteConflict) || errors.Is(err, txn.ErrTxnAborted):
				// A run wrote one of the acks meanwhile: the next sweep
				// looks again.
			case err != nil:
				return removed, fmt.Errorf("sweep acks of table %d: %w", id, err)
			}
			removed += n
			start = next
		}
	}
	return removed, nil
}

// sweepBatchOf examines up to sweepBatch acks from start in one
// transaction, deletes those SweepAcks may, and returns how many it
// deleted and where the next batch starts (nil: the range is done).
func sweepBatchOf(ctx context.Context, store *txn.Store, start, end []byte, safePoint uint64) (removed int, next []byte, err error) {
	tx, err := store.Begin(ctx)
	if err != nil {
		return 0, nil, err
	}
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	type ack struct {
		key, row []byte
		observer string
	}
	var acks []ack
	it, err := tx.Iter(ctx, start, end)
	if err != nil {
		return 0, nil, err
	}
	examined := 0
	for it.Valid() && examined < sweepBatch {
		examined++
		next = append(bytes.Clone(it.Key()), 0)
		// An ack holds the start_ts of the observer's last committed run
		// (txn.Txn.Acknowledge), 8 bytes.
		if v := it.Value(); len(v) == 8 && binary.BigEndian.Uint64(v) <= safePoint {
			if row, observer, derr := tablecodec.DecodeAckKey(it.Key()); derr == nil {
				acks = append(acks, ack{key: bytes.Clone(it.Key()), row: row, observer: observer})
			}
		}
		if err = it.Next(ctx); err != nil {
			break
		}
	}
	more := it.Valid()
	it.Close()
	if err != nil {
		return 0, nil, err
	}
	if !more {
		next = nil
	}
	if len(acks) == 0 {
		return 0, next, nil
	}
	rows := make([][]byte, len(acks))
	for i, a := range acks {
		rows[i] = a.row
	}
	found, err := tx.BatchGet(ctx, rows)
	if err != nil {
		return 0, nil, err
	}
	for _, a := range acks {
		if _, ok := found[string(a.row)]; ok {
			continue
		}
		entries, _, err := store.ScanNotify(ctx, a.row, append(bytes.Clone(a.row), 0), 0)
		if err != nil {
			return 0, nil, err
		}
		waiting := false
		for _, e := range entries {
			waiting = waiting || (bytes.Equal(e.Key, a.row) && string(e.Column) == a.observer)
		}
		if waiting {
			continue
		}
		if err := tx.Delete(a.key); err != nil {
			return 0, nil, err
		}
		removed++
	}
	committed = true
	if err := tx.Commit(ctx); err != nil {
		return 0, next, err
	}
	return removed, next, nil
}
