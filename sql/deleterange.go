package sql

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// Delete ranges: the data a DDL makes unreachable (a dropped table's rows
// and entries, a dropped index's entries, the rows a table rewrite
// replaced) is not deleted inside the DDL's transaction, which would hold
// every key of it in memory and conflict with every writer of the table.
// The DDL records the range instead, in the same transaction as the
// definition change:
//
//	m:dr:<start key>   deleteRangeRecord (JSON)
//
// After the DDL committed and waited for the older schema's writers (so
// that none can write into the range any more), the node's rangeDeleter
// deletes the range in transactions of a bounded size and then the record.
// A process that stops first finds the record at its next start. Readers
// with a snapshot older than the DDL still see the data: the deletions are
// newer versions, as any delete (MVCC garbage collection will reclaim
// them, past its safe point).
var prefixDeleteRanges = []byte("m:dr:")

// deleteRangeRecord is a range of keys waiting to be deleted.
type deleteRangeRecord struct {
	Start []byte `json:"start"`
	End   []byte `json:"end"`
	// What says which DDL left it, for the log.
	What string `json:"what"`
}

// scheduleDeleteRange records in k that [start, end) is to be deleted once
// k commits.
func scheduleDeleteRange(k *txn.Txn, start, end []byte, what string) error {
	key := append(append([]byte(nil), prefixDeleteRanges...), start...)
	return putJSON(k, key, &deleteRangeRecord{Start: start, End: end, What: what})
}

// scheduleTableDeletion records that every key of table t is to go.
func scheduleTableDeletion(k *txn.Txn, t *TableDef, what string) error {
	start, end := tablecodec.TableRange(t.ID)
	return scheduleDeleteRange(k, start, end, what+" "+t.Name)
}

// rangeDeleter deletes the recorded ranges, one at a time, in a goroutine
// of its own: a DDL wakes it after its commit, and the node at its start.
type rangeDeleter struct {
	p    *DatabaseProvider
	wake chan struct{}
	// idle is closed, and replaced, each time a round finds nothing left
	// (tests wait on it).
	mu   sync.Mutex
	idle chan struct{}
}

func newRangeDeleter(p *DatabaseProvider) *rangeDeleter {
	return &rangeDeleter{p: p, wake: make(chan struct{}, 1), idle: make(chan struct{})}
}

// kick asks for a round soon.
func (d *rangeDeleter) kick() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// run deletes ranges until ctx ends.
func (d *rangeDeleter) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		}
		if err := d.round(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			slog.Error("delete ranges: a round failed; it runs again at the next schema change or start", "err", err)
			continue
		}
		d.mu.Lock()
		close(d.idle)
		d.idle = make(chan struct{})
		d.mu.Unlock()
	}
}

// idleSignal returns a channel closed when a round next ends with nothing
// left to delete.
func (d *rangeDeleter) idleSignal() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.idle
}

// round deletes every recorded range and its record.
func (d *rangeDeleter) round(ctx context.Context) error {
	for {
		rec, key, err := d.next(ctx)
		if err != nil || rec == nil {
			return err
		}
		if err := d.p.deleteRangeInBatches(ctx, rec.Start, rec.End); err != nil {
			return fmt.Errorf("delete range of %s: %w", rec.What, err)
		}
		k, err := d.p.store.Begin(ctx)
		if err != nil {
			return err
		}
		if err := k.Delete(key); err != nil {
			_ = k.Rollback(ctx)
			return err
		}
		if err := k.Commit(ctx); err != nil {
			return fmt.Errorf("delete range of %s: drop its record: %w", rec.What, err)
		}
		slog.Debug("delete ranges: done", "what", rec.What)
	}
}

// next reads the first recorded range, or nil.
func (d *rangeDeleter) next(ctx context.Context) (*deleteRangeRecord, []byte, error) {
	k, err := d.p.store.Begin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = k.Rollback(ctx) }()
	it, err := k.Iter(ctx, prefixDeleteRanges, tablecodec.PrefixNext(prefixDeleteRanges))
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	if !it.Valid() {
		return nil, nil, nil
	}
	var rec deleteRangeRecord
	if err := json.Unmarshal(it.Value(), &rec); err != nil {
		return nil, nil, fmt.Errorf("decode delete range %q: %w", it.Key(), err)
	}
	return &rec, append([]byte(nil), it.Key()...), nil
}
