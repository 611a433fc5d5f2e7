package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/percdb/percdb/kv"
)

// LockRange is a locking read of a range for a pessimistic transaction
// (SELECT ... FOR UPDATE over a range of keys): the pairs of [start, end)
// (an empty end: unbounded) at forUpdateTS, up to limit of them from start
// (0: no limit), each locked as LockKeysReading locks it, with one request
// per region where a read and a lock were two (kv.LockRange: the store
// locks the keys its read finds). The values are kept as the keys' stable
// values, so reads of them later in the transaction ask the store for
// nothing. A range read that finds no pair locks nothing.
//
// ok is false, with nothing read or locked, when the transaction cannot
// read the range so: it is not pessimistic, or it has writes of its own in
// the range (its reads must see them; the caller reads and locks as
// before). Errors are LockKeys': a commit newer than forUpdateTS to a key
// found is ErrForUpdateConflict (the keys are locked all the same; the
// statement runs again at a newer snapshot), a deadlock ErrDeadlock (the
// transaction rolled back), a wait too long ErrLockWaitTimeout.
func (t *Txn) LockRange(ctx context.Context, forUpdateTS uint64, start, end []byte, limit int) (pairs []kv.KvPair, ok bool, err error) {
	if err := t.usable(); err != nil {
		return nil, false, fmt.Errorf("lock range: %w", err)
	}
	if t.pess == nil || limit < 0 || len(end) > 0 && bytes.Compare(start, end) >= 0 || t.writesIn(start, end) {
		return nil, false, nil
	}
	if err := checkKey(start); err != nil {
		return nil, false, fmt.Errorf("lock range: %w", err)
	}
	if _, err := t.StartTS(ctx); err != nil {
		return nil, false, fmt.Errorf("lock range: %w", err)
	}
	pairs, err = t.lockRange(ctx, max(forUpdateTS, t.startTS), start, end, limit)
	if err != nil {
		if errors.Is(err, ErrLockWaitTimeout) {
			t.s.stats.lockWaitTimeouts.Add(1)
		}
		if errors.Is(err, ErrDeadlock) {
			t.s.stats.deadlocks.Add(1)
			_ = t.Rollback(ctx)
		}
		return nil, true, fmt.Errorf("lock range [%q, %q): %w", start, end, err)
	}
	if t.rc == nil {
		// Read from the snapshot, as a range read is (readset.go): a
		// later move of the snapshot checks that no row came into the
		// part of the range read (the rows found are locked). A read
		// stopped by its limit read up to its last row.
		readEnd := end
		if limit > 0 && len(pairs) >= limit {
			readEnd = successor(pairs[len(pairs)-1].Key)
		}
		t.reads.addRange(bytes.Clone(start), bytes.Clone(readEnd), nil, t.s.opts.MaxReadSetEntries)
	}
	return pairs, true, nil
}

// writesIn reports whether the transaction has writes of its own in
// [start, end); the locks it took there are no writes.
func (t *Txn) writesIn(start, end []byte) bool {
	for _, p := range t.buf.rangeSnapshot(start, end) {
		if p.e.op != bufLock {
			return true
		}
	}
	return false
}

// lockRange walks [start, end) region by region, locking what each
// region's read finds, until limit pairs are locked or the range ends.
func (t *Txn) lockRange(ctx context.Context, forUpdateTS uint64, start, end []byte, limit int) ([]kv.KvPair, error) {
	wait := t.lockWait
	if wait == 0 {
		wait = t.s.opts.LockWaitTimeout
	}
	deadline := time.Now().Add(wait)
	t.pess.conflictTS = 0
	var (
		out    []kv.KvPair
		newest uint64
	)
	rr := newRegionRetrier(t.s.opts)
	lo := start
	for {
		reg, err := t.s.client.LocateKey(ctx, lo)
		if err != nil {
			return nil, fmt.Errorf("locate %q: %w", lo, err)
		}
		hi, atEdge := end, false
		if len(reg.End) > 0 && (len(hi) == 0 || bytes.Compare(reg.End, hi) < 0) {
			hi, atEdge = reg.End, true
		}
		left := 0
		if limit > 0 {
			left = limit - len(out)
		}
		resp, err := t.acquireRange(ctx, reg, &kv.LockRange{Start: lo, End: hi, Limit: left}, forUpdateTS, deadline)
		var re *kv.RegionError
		if errors.As(err, &re) {
			t.s.client.InvalidateRegion(reg.ID)
			if err := rr.retry(ctx, err); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		rr = newRegionRetrier(t.s.opts)
		if len(resp.Pairs) > 0 {
			keys := make([][]byte, len(resp.Pairs))
			values := make([][]byte, len(resp.Pairs))
			for i, p := range resp.Pairs {
				keys[i], values[i] = p.Key, p.Value
			}
			if t.pess.primary == nil {
				// The store made the first key it locked the primary.
				t.pess.primary = bytes.Clone(keys[0])
			}
			t.noteLocked(keys, values, forUpdateTS, resp.ConflictTS)
			for _, k := range keys {
				if _, ok := t.buf.get(k); !ok {
					t.buf.set(k, entry{op: bufLock})
				}
			}
			newest = max(newest, resp.ConflictTS)
			out = append(out, resp.Pairs...)
		}
		if !atEdge || limit > 0 && len(out) >= limit {
			break
		}
		lo = reg.End
	}
	if newest != 0 {
		// As lockPessimistic: the keys are ours, but the statement read
		// below a write to one of them and runs again.
		t.pess.conflictTS = newest
		return nil, fmt.Errorf("%w: %w: %w", ErrForUpdateConflict, ErrWriteConflict,
			&kv.WriteConflictError{StartTS: t.startTS, ConflictCommitTS: newest})
	}
	return out, nil
}

// acquireRange sends one region's locking range read, waiting for other
// transactions' locks until deadline as acquire does.
func (t *Txn) acquireRange(ctx context.Context, reg kv.RegionInfo, lr *kv.LockRange, forUpdateTS uint64, deadline time.Time) (*kv.AcquirePessimisticLockResponse, error) {
	req := &kv.AcquirePessimisticLockRequest{
		Region:           reg.Ctx(),
		Primary:          t.pess.primary,
		StartTS:          t.startTS,
		ForUpdateTS:      forUpdateTS,
		LockWithConflict: true,
		Range:            lr,
	}
	for {
		req.LockTTL = t.s.lockTTL(t.born)
		req.WaitTimeout = time.Until(deadline)
		if t.lockNoWait {
			req.WaitTimeout = 0
		} else if req.WaitTimeout <= 0 {
			return nil, fmt.Errorf("lock range from %q: %w", lr.Start, ErrLockWaitTimeout)
		}
		resp, err := t.s.client.AcquirePessimisticLock(ctx, req)
		if err == nil {
			return resp, nil
		}
		var locked *kv.KeyIsLockedError
		if !errors.As(err, &locked) {
			var re *kv.RegionError
			if errors.As(err, &re) {
				return nil, err
			}
			return nil, classifyLockError(err)
		}
		outcomes, err := t.s.resolver.ResolveLocks(ctx, locked.Locks(), 0)
		if err != nil {
			return nil, fmt.Errorf("lock range from %q: %w", lr.Start, err)
		}
		if t.lockNoWait && slices.ContainsFunc(outcomes, func(o LockOutcome) bool { return o != LockGone }) {
			return nil, fmt.Errorf("lock range from %q: %w", lr.Start, ErrLockNotWaited)
		}
		if t.lockNoWait && time.Now().After(deadline) {
			return nil, fmt.Errorf("lock range from %q: %w", lr.Start, ErrLockWaitTimeout)
		}
	}
}
