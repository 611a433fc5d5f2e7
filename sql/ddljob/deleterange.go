package ddljob

import (
	"context"
	"errors"
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
//	m:dr:<start key>   Record (JSON)
//
// After the DDL committed, the node's Deleter stamps each new record
// with a timestamp above the DDL's commit (the start_ts of the
// transaction that reads it). The garbage collector (package sql's gc.go,
// package gcworker, reading GCRanges) destroys a stamped range physically,
// with range deletions and a compaction, once its safe point is above the
// stamp, and then deletes the record: by then no transaction that started before the
// DDL runs (the safe point never passes one), so none can write into the
// range, readers older than the safe point are refused, and readers above
// it see the DDL. Readers with a snapshot older than the DDL see the data
// until then. A process that stops first finds the records at its next
// start.

// RangesPrefix is the prefix of the records' keys.
var RangesPrefix = []byte("m:dr:")

// Record is a range of keys waiting to be deleted.
type Record struct {
	Start []byte `json:"start"`
	End   []byte `json:"end"`
	// What says which DDL left it, for the log.
	What string `json:"what"`
	// NotBefore is a timestamp above the DDL's commit_ts, 0 until the
	// Deleter stamped the record; the range is destroyed once the
	// GC safe point is above it.
	NotBefore uint64 `json:"not_before,omitempty"`
}

// ScheduleRange records in k that [start, end) is to be deleted once k
// commits; what says which DDL left it.
func ScheduleRange(k *txn.Txn, start, end []byte, what string) error {
	key := append(append([]byte(nil), RangesPrefix...), start...)
	return catalog.PutJSON(k, key, &Record{Start: start, End: end, What: what})
}

// ScheduleTable records in k that every key of table t is to go.
func ScheduleTable(k *txn.Txn, t *catalog.TableDef, what string) error {
	start, end := tablecodec.TableRange(t.ID)
	return ScheduleRange(k, start, end, what+" "+t.Name)
}

// Deleter stamps the recorded ranges (see NotBefore), in a goroutine of
// its own (Run): a DDL wakes it after its commit (Kick), and the node at
// its start.
type Deleter struct {
	store *txn.Store
	wake  chan struct{}
	// idle is closed, and replaced, each time a round finds nothing left
	// to stamp (tests wait on it).
	mu   sync.Mutex
	idle chan struct{}
}

// NewDeleter returns the Deleter of the records in store.
func NewDeleter(store *txn.Store) *Deleter {
	return &Deleter{store: store, wake: make(chan struct{}, 1), idle: make(chan struct{})}
}

// Kick asks for a round soon.
func (d *Deleter) Kick() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// How long the Deleter waits before it tries a failed round again:
// from minDeleteRangeRetry, doubling up to maxDeleteRangeRetry.
const (
	minDeleteRangeRetry = time.Second
	maxDeleteRangeRetry = time.Minute
)

// kickAfter asks for a round after wait, unless ctx ends first.
func (d *Deleter) kickAfter(ctx context.Context, wait time.Duration) {
	t := time.NewTimer(wait)
	go func() {
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			d.Kick()
		}
	}()
}

// Run stamps ranges until ctx ends.
func (d *Deleter) Run(ctx context.Context) {
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

// IdleSignal returns a channel closed when a round next ends with every
// recorded range stamped.
func (d *Deleter) IdleSignal() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.idle
}

// Quiesce waits until the Deleter has no round running or pending. It
// assumes no DDL commits meanwhile: tests counting timestamps call it, so
// as not to count the rounds a start or a DDL woke.
func (d *Deleter) Quiesce(ctx context.Context) error {
	for {
		sig := d.IdleSignal()
		d.Kick()
		select {
		case <-sig:
		case <-ctx.Done():
			return ctx.Err()
		}
		if len(d.wake) == 0 {
			return nil
		}
	}
}

// round stamps every recorded range that has no stamp yet, in
// transactions whose start_ts is above the commit_ts of every DDL whose
// record they read, until a read finds none left (a DDL may commit
// meanwhile, or rewrite a record: a conflict is tried again).
func (d *Deleter) round(ctx context.Context) error {
	for {
		stamped, err := d.stamp(ctx)
		if err != nil && !RetryableConflict(err) {
			return err
		}
		if err == nil && stamped == 0 {
			return nil
		}
	}
}

// stamp stamps the unstamped records in one transaction and says how many
// it stamped.
func (d *Deleter) stamp(ctx context.Context) (int, error) {
	k, err := d.store.Begin(ctx)
	if err != nil {
		return 0, err
	}
	// A stamp is what lets the garbage collector give a dropped table's
	// space back, so it must work on a full disk.
	k.AllowWhenDiskFull()
	recs, err := ReadRanges(ctx, k)
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
		if r.Rec.NotBefore != 0 {
			continue
		}
		r.Rec.NotBefore = ts
		if err := catalog.PutJSON(k, r.Key, &r.Rec); err != nil {
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

// Stored is a record as read, with its key.
type Stored struct {
	Key []byte
	Rec Record
}

// ReadRanges reads every recorded range in k.
func ReadRanges(ctx context.Context, k *txn.Txn) ([]Stored, error) {
	var out []Stored
	err := catalog.ScanJSON(ctx, k, RangesPrefix, func(key []byte, rec Record) {
		out = append(out, Stored{Key: key, Rec: rec})
	})
	return out, err
}

// GCRanges is the records of a store as the garbage collector's
// gcworker.DeleteRangeSource.
type GCRanges struct{ Store *txn.Store }

// Due returns the stamped ranges whose stamp is below safePoint.
func (g GCRanges) Due(ctx context.Context, safePoint uint64) ([]gcworker.DeleteRange, error) {
	k, err := g.Store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = k.Rollback(ctx) }()
	recs, err := ReadRanges(ctx, k)
	if err != nil {
		return nil, err
	}
	var due []gcworker.DeleteRange
	for _, r := range recs {
		if r.Rec.NotBefore != 0 && r.Rec.NotBefore < safePoint {
			due = append(due, gcworker.DeleteRange{ID: r.Key, Start: r.Rec.Start, End: r.Rec.End, NotBefore: r.Rec.NotBefore, What: r.Rec.What})
		}
	}
	return due, nil
}

// Done deletes the record of a destroyed range.
func (g GCRanges) Done(ctx context.Context, r gcworker.DeleteRange) error {
	k, err := g.Store.Begin(ctx)
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

// RetryableConflict reports whether err is a write conflict worth trying
// again: between writers of the same meta keys (a schema step, a stamp,
// a GC record), one wins and the other reads again.
func RetryableConflict(err error) bool {
	return err != nil && (errors.Is(err, txn.ErrWriteConflict) || errors.Is(err, txn.ErrTxnAborted) || errors.Is(err, txn.ErrAlreadyExists))
}
