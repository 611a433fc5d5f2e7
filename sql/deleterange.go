package sql

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/gcworker"
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
// After the DDL committed, the node's rangeDeleter stamps each new record
// with a timestamp above the DDL's commit (the start_ts of the
// transaction that reads it). The garbage collector (gc.go, package
// gcworker) destroys a stamped range physically, with range deletions
// and a compaction, once its safe point is above the stamp, and then
// deletes the record: by then no transaction that started before the
// DDL runs (the safe point never passes one), so none can write into the
// range, readers older than the safe point are refused, and readers above
// it see the DDL. Readers with a snapshot older than the DDL see the data
// until then. A process that stops first finds the records at its next
// start.
var prefixDeleteRanges = []byte("m:dr:")

// deleteRangeRecord is a range of keys waiting to be deleted.
type deleteRangeRecord struct {
	Start []byte `json:"start"`
	End   []byte `json:"end"`
	// What says which DDL left it, for the log.
	What string `json:"what"`
	// NotBefore is a timestamp above the DDL's commit_ts, 0 until the
	// rangeDeleter stamped the record; the range is destroyed once the
	// GC safe point is above it.
	NotBefore uint64 `json:"not_before,omitempty"`
}

// scheduleDeleteRange records in k that [start, end) is to be deleted once
// k commits.
func scheduleDeleteRange(k *txn.Txn, start, end []byte, what string) error {
	key := append(append([]byte(nil), prefixDeleteRanges...), start...)
	return catalog.PutJSON(k, key, &deleteRangeRecord{Start: start, End: end, What: what})
}

// scheduleTableDeletion records that every key of table t is to go.
func scheduleTableDeletion(k *txn.Txn, t *catalog.TableDef, what string) error {
	start, end := tablecodec.TableRange(t.ID)
	return scheduleDeleteRange(k, start, end, what+" "+t.Name)
}

// rangeDeleter stamps the recorded ranges (see NotBefore), in a goroutine
// of its own: a DDL wakes it after its commit, and the node at its start.
type rangeDeleter struct {
	p    *DatabaseProvider
	wake chan struct{}
	// idle is closed, and replaced, each time a round finds nothing left
	// to stamp (tests wait on it).
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

// How long the rangeDeleter waits before it tries a failed round again:
// from minDeleteRangeRetry, doubling up to maxDeleteRangeRetry.
const (
	minDeleteRangeRetry = time.Second
	maxDeleteRangeRetry = time.Minute
)

// kickAfter asks for a round after wait, unless ctx ends first.
func (d *rangeDeleter) kickAfter(ctx context.Context, wait time.Duration) {
	t := time.NewTimer(wait)
	go func() {
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			d.kick()
		}
	}()
}

// run stamps ranges until ctx ends.
func (d *rangeDeleter) run(ctx context.Context) {
	retry := minDeleteRangeRetry
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
			// Try again after a while, and sooner if a schema change
			// wakes us: a range left unstamped is space never given
			// back.
			slog.Error("delete ranges: a round failed; it runs again", "err", err, "after", retry)
			d.kickAfter(ctx, retry)
			retry = min(2*retry, maxDeleteRangeRetry)
			continue
		}
		retry = minDeleteRangeRetry
		d.mu.Lock()
		close(d.idle)
		d.idle = make(chan struct{})
		d.mu.Unlock()
	}
}

// idleSignal returns a channel closed when a round next ends with every
// recorded range stamped.
func (d *rangeDeleter) idleSignal() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.idle
}

// round stamps every recorded range that has no stamp yet, in
// transactions whose start_ts is above the commit_ts of every DDL whose
// record they read, until a read finds none left (a DDL may commit
// meanwhile, or rewrite a record: a conflict is tried again).
func (d *rangeDeleter) round(ctx context.Context) error {
	for {
		stamped, err := d.stamp(ctx)
		if err != nil && !retryableConflict(err) {
			return err
		}
		if err == nil && stamped == 0 {
			return nil
		}
	}
}

// stamp stamps the unstamped records in one transaction and says how many
// it stamped.
func (d *rangeDeleter) stamp(ctx context.Context) (int, error) {
	k, err := d.p.store.Begin(ctx)
	if err != nil {
		return 0, err
	}
	// A stamp is what lets the garbage collector give a dropped table's
	// space back, so it must work on a full disk.
	k.AllowWhenDiskFull()
	recs, err := readDeleteRanges(ctx, k)
	if err != nil {
		_ = k.Rollback(ctx)
		return 0, err
	}
	ts, err := k.StartTS(ctx)
	if err != nil {
		_ = k.Rollback(ctx)
		return 0, err
	}
	stamped := 0
	for _, r := range recs {
		if r.rec.NotBefore != 0 {
			continue
		}
		r.rec.NotBefore = ts
		if err := catalog.PutJSON(k, r.key, &r.rec); err != nil {
			_ = k.Rollback(ctx)
			return 0, err
		}
		stamped++
	}
	if stamped == 0 {
		return 0, k.Rollback(ctx)
	}
	if err := k.Commit(ctx); err != nil {
		return 0, fmt.Errorf("stamp %d delete ranges: %w", stamped, err)
	}
	slog.Debug("delete ranges: stamped", "ranges", stamped, "not_before", ts)
	return stamped, nil
}

// storedDeleteRange is a record as read, with its key.
type storedDeleteRange struct {
	key []byte
	rec deleteRangeRecord
}

// readDeleteRanges reads every recorded range in k.
func readDeleteRanges(ctx context.Context, k *txn.Txn) ([]storedDeleteRange, error) {
	var out []storedDeleteRange
	err := scanJSON(ctx, k, prefixDeleteRanges, func(key []byte, rec deleteRangeRecord) {
		out = append(out, storedDeleteRange{key: key, rec: rec})
	})
	return out, err
}

// gcDeleteRanges is the provider's records as the garbage collector's
// gcworker.DeleteRangeSource.
type gcDeleteRanges struct{ p *DatabaseProvider }

// Due returns the stamped ranges whose stamp is below safePoint.
func (g gcDeleteRanges) Due(ctx context.Context, safePoint uint64) ([]gcworker.DeleteRange, error) {
	k, err := g.p.store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = k.Rollback(ctx) }()
	recs, err := readDeleteRanges(ctx, k)
	if err != nil {
		return nil, err
	}
	var due []gcworker.DeleteRange
	for _, r := range recs {
		if r.rec.NotBefore != 0 && r.rec.NotBefore < safePoint {
			due = append(due, gcworker.DeleteRange{ID: r.key, Start: r.rec.Start, End: r.rec.End, NotBefore: r.rec.NotBefore, What: r.rec.What})
		}
	}
	return due, nil
}

// Done deletes the record of a destroyed range.
func (g gcDeleteRanges) Done(ctx context.Context, r gcworker.DeleteRange) error {
	k, err := g.p.store.Begin(ctx)
	if err != nil {
		return err
	}
	if err := k.Delete(r.ID); err != nil {
		_ = k.Rollback(ctx)
		return err
	}
	if err := k.Commit(ctx); err != nil {
		return fmt.Errorf("drop the delete range record of %s: %w", r.What, err)
	}
	return nil
}
