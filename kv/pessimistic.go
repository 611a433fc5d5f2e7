package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/percdb/percdb/kv/internal/txntypes"
)

// AcquirePessimisticLock locks req.Keys for the pessimistic transaction
// req.StartTS at req.ForUpdateTS (rules and waiting: see
// AcquirePessimisticLockRequest). Each attempt is one latched command; a
// request that meets another transaction's lock joins that key's wait
// queue while it still holds the latch, so a release applied after the
// attempt cannot be missed, then waits outside the latches.
func (s *Store) AcquirePessimisticLock(ctx context.Context, req *AcquirePessimisticLockRequest) (*AcquirePessimisticLockResponse, error) {
	if req.Range != nil {
		return s.acquireRange(ctx, req)
	}
	what := fmt.Sprintf("acquire pessimistic locks of txn %d at %d", req.StartTS, req.ForUpdateTS)
	if err := validateAcquire(req); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	keys := make([][]byte, len(req.Keys))
	for i, k := range req.Keys {
		keys[i] = k.Key
	}
	if req.LockOnlyIfExists {
		// The keys without a value are read at for_update_ts and not
		// locked: as for any read, a one-phase commit must land above
		// it (max_read_ts), or a row the request found absent could
		// appear below it afterwards.
		if _, err := s.regions.check(req.Region, req.ForUpdateTS, keys...); err != nil {
			return nil, err
		}
	}
	var deadline time.Time
	if req.WaitTimeout > 0 {
		deadline = time.Now().Add(min(req.WaitTimeout, s.lockWaitSlice))
	}
	var turn *lockWaiter // our place in a key's queue, kept across attempts
	for {
		resp := &AcquirePessimisticLockResponse{}
		var w *lockWaiter
		err := s.mutate(ctx, req.Region, what, keys, func(r *mvccReader, wb *writeBatch) error {
			wb.volatile = true
			if err := s.checkStartTS(req.StartTS); err != nil {
				return err
			}
			one := req
			if len(req.Primary) == 0 {
				// LockOnlyIfExists: the first key locked is the
				// primary (validateAcquire).
				c := *req
				one = &c
			}
			for _, k := range req.Keys {
				if len(one.Primary) == 0 {
					one.Primary = k.Key
				}
				v, conflictTS, locked, err := acquireKey(r, wb, one, k)
				if err == nil && !locked && len(req.Primary) == 0 && bytes.Equal(one.Primary, k.Key) {
					// Not locked: the next key may be the primary.
					one.Primary = nil
				}
				if err != nil {
					var locked *KeyIsLockedError
					if errors.As(err, &locked) && !deadline.IsZero() {
						// Queue now, under the latch: the holder's release
						// needs the latch, so it will find us.
						w = s.waiters.enqueue(k.Key, req.StartTS, locked.Lock.StartTS, turn)
					}
					return err
				}
				resp.ConflictTS = max(resp.ConflictTS, conflictTS)
				if req.ReturnValues {
					resp.Values = append(resp.Values, v)
				}
			}
			return nil
		})
		if turn != nil && w == nil && err != nil {
			// Woken, but we failed otherwise than on a lock (an existence
			// check, a rollback) and leave the key free: pass the turn on,
			// so that the next waiter tries. Had we taken the key, the
			// others would wait for our release.
			s.waiters.wakeNext(turn.key)
		}
		turn = nil
		if err == nil {
			return resp, nil
		}
		if w == nil {
			return nil, err
		}
		turn, err = s.waitForLock(ctx, w, deadline, err)
		if err != nil {
			return nil, err
		}
	}
}

// waitForLock waits in w's queue after an attempt failed with lockedErr,
// unless the wait would close a deadlock. It returns the waiter when it
// was woken (its turn: the next attempt keeps its place at the head of
// the queue), or the error to answer: lockedErr when the wait slice or
// the request's wait timeout has passed, a *DeadlockError, or ctx's
// error.
func (s *Store) waitForLock(ctx context.Context, w *lockWaiter, deadline time.Time, lockedErr error) (*lockWaiter, error) {
	if err := s.waiters.detect(ctx, w); err != nil {
		s.waiters.deadlocks.Add(1)
		return nil, err
	}
	start := time.Now()
	defer func() { s.waiters.waitNanos.Add(uint64(time.Since(start))) }()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-w.woken:
		s.waiters.done(w, true)
		if w.err != nil {
			s.waiters.deadlocks.Add(1)
			return nil, w.err
		}
		return w, nil
	case <-timer.C:
		s.waiters.done(w, false)
		return nil, lockedErr
	case <-ctx.Done():
		s.waiters.done(w, false)
		return nil, fmt.Errorf("wait for the lock of txn %d on %q: %w", w.lockTS, w.key, context.Cause(ctx))
	}
}

// validateAcquire rejects malformed requests.
func validateAcquire(req *AcquirePessimisticLockRequest) error {
	switch {
	case req.StartTS == 0:
		return errors.New("start_ts is 0")
	case req.ForUpdateTS < req.StartTS:
		return fmt.Errorf("for_update_ts %d is below start_ts %d", req.ForUpdateTS, req.StartTS)
	case len(req.Primary) == 0 && !req.LockOnlyIfExists:
		return errors.New("empty primary key")
	case req.LockOnlyIfExists && !req.ReturnValues:
		return errors.New("lock_only_if_exists without return_values")
	case len(req.Keys) == 0:
		return errors.New("no keys")
	case req.WaitTimeout < 0:
		return fmt.Errorf("negative wait timeout %v", req.WaitTimeout)
	}
	if req.LockOnlyIfExists {
		for _, k := range req.Keys {
			if k.CheckNotExists {
				return fmt.Errorf("lock_only_if_exists with an existence check of %q", k.Key)
			}
		}
	}
	return nil
}

// acquireKey applies the rules of AcquirePessimisticLock to one key and
// writes its lock; it returns the key's value when asked, under
// LockWithConflict the commit_ts of a write newer than for_update_ts, and
// whether the key is locked (not under LockOnlyIfExists without a value).
func acquireKey(r *mvccReader, wb *writeBatch, req *AcquirePessimisticLockRequest, k PessimisticKey) (value []byte, conflictTS uint64, locked bool, err error) {
	l, err := r.lock(k.Key)
	if err != nil {
		return nil, 0, false, err
	}
	if l != nil && l.StartTS != req.StartTS {
		return nil, 0, false, &KeyIsLockedError{Lock: lockInfo(k.Key, l)}
	}
	if l != nil {
		if l.Type != txntypes.LockPessimistic {
			return nil, 0, false, fmt.Errorf("key %q is already prewritten by txn %d", k.Key, req.StartTS)
		}
		// Ours already: nothing can have committed to the key since we
		// locked it, but something may have before, after req's
		// for_update_ts: this request is then most likely one sent again
		// after its answer was lost (the leader's node died, the
		// connection broke) whose first attempt took the lock with a
		// conflict. The answer must be that one again: answered "locked"
		// alone, the statement would write from a snapshot that misses
		// the newer commit (a lost update).
		commitTS, w, err := newestConflict(r, k.Key, req.ForUpdateTS)
		if err != nil {
			return nil, 0, false, err
		}
		if w != nil && !req.LockWithConflict {
			return nil, 0, false, &WriteConflictError{Key: cloneKey(k.Key), StartTS: req.StartTS, ConflictStartTS: w.StartTS, ConflictCommitTS: commitTS}
		}
		if w != nil {
			conflictTS = commitTS
		}
		// Move it to the newer for_update_ts.
		if l.ForUpdateTS < req.ForUpdateTS || l.TTL < req.LockTTL {
			l.ForUpdateTS, l.TTL = max(l.ForUpdateTS, req.ForUpdateTS), max(l.TTL, req.LockTTL)
			wb.putLock(k.Key, l)
		}
		value, err = returnValue(r, req, k.Key)
		return value, conflictTS, true, err
	}
	c, err := newLockChecks(r, k.Key, req.StartTS, req.ForUpdateTS, k.CheckNotExists || req.ReturnValues)
	if err != nil {
		return nil, 0, false, err
	}
	if c.rolledBack {
		return nil, 0, false, &TxnAbortedError{Key: cloneKey(k.Key), StartTS: req.StartTS}
	}
	forUpdateTS := req.ForUpdateTS
	if w := c.conflict; w != nil {
		if !req.LockWithConflict {
			return nil, 0, false, &WriteConflictError{Key: cloneKey(k.Key), StartTS: req.StartTS, ConflictStartTS: w.StartTS, ConflictCommitTS: c.conflictTS}
		}
		// Locked as of that write: nothing newer exists.
		forUpdateTS, conflictTS = c.conflictTS, c.conflictTS
	}
	// The newest Put or Delete decides the key's value, as checkNotExists
	// and returnValue read it.
	exists := c.value != nil && c.value.Type == txntypes.WritePut
	if k.CheckNotExists && exists {
		return nil, 0, false, &AlreadyExistsError{Key: cloneKey(k.Key)}
	}
	if req.LockOnlyIfExists && !exists {
		// No row, no lock (and no value).
		return nil, conflictTS, false, nil
	}
	wb.putLock(k.Key, &txntypes.Lock{
		Type:        txntypes.LockPessimistic,
		Primary:     req.Primary,
		StartTS:     req.StartTS,
		TTL:         req.LockTTL,
		ForUpdateTS: forUpdateTS,
	})
	if req.ReturnValues && exists {
		value, err = r.writeValue(k.Key, c.value)
		if value == nil && err == nil {
			// Present, if empty: nil is absent (and, under
			// LockOnlyIfExists, not locked).
			value = []byte{}
		}
	}
	return value, conflictTS, true, err
}

// newestConflict returns key's newest Put, Delete or Lock record
// committed after ts, or a nil record. A Lock record changed no data, but
// it is the commit of a transaction that held the key locked (SELECT ...
// FOR UPDATE, a foreign key's reference check) and may have written
// other rows on the strength of it: a statement that read at ts and
// waited for that lock must run again at a newer snapshot, which sees
// them (TiKV counts every newer write too). Without that, a parent row
// deleted by a statement that waited for the reference lock of a child's
// insert would be deleted from a snapshot without the child. Rollback
// records are no conflict.
func newestConflict(r *mvccReader, key []byte, ts uint64) (uint64, *txntypes.Write, error) {
	var commitTS uint64
	var found *txntypes.Write
	err := r.writes(key, MaxTS, func(cts uint64, w *txntypes.Write) bool {
		if cts <= ts {
			return false
		}
		if w.Type != txntypes.WriteRollback {
			commitTS, found = cts, w
			return false
		}
		return true
	})
	return commitTS, found, err
}

// lockChecks is what a new pessimistic lock depends on (newLockChecks).
type lockChecks struct {
	// rolledBack: the transaction was rolled back on the key (a Rollback
	// record at its start_ts, or a commit record there flagged with one).
	rolledBack bool
	// conflict is newestConflict's record above for_update_ts, committed
	// at conflictTS; nil when there is none.
	conflict   *txntypes.Write
	conflictTS uint64
	// value is the key's newest Put or Delete (nil: none), read only when
	// asked for.
	value *txntypes.Write
}

// newLockChecks reads what a new pessimistic lock of transaction startTS
// at forUpdateTS (>= startTS) on key depends on, in one walk of the key's
// write records, newest first: down to startTS for the rollback and the
// conflict, and on to the newest Put or Delete when withValue is set (an
// INSERT's existence check, a locking read's value). The walk meets the
// records committed since the transaction started, and those it steps
// over to the value, where a lookup of the startTS record, a walk for the
// conflict and one for the value were up to three searches of the LSM for
// each key locked.
func newLockChecks(r *mvccReader, key []byte, startTS, forUpdateTS uint64, withValue bool) (lockChecks, error) {
	var c lockChecks
	pastStart := false
	err := r.writes(key, MaxTS, func(cts uint64, w *txntypes.Write) bool {
		switch {
		case cts < startTS:
			pastStart = true
		case cts == startTS:
			c.rolledBack, pastStart = w.Type == txntypes.WriteRollback || w.OverlappedRollback, true
		case c.conflict == nil && cts > forUpdateTS && w.Type != txntypes.WriteRollback:
			c.conflictTS, c.conflict = cts, w
		}
		if withValue && c.value == nil && (w.Type == txntypes.WritePut || w.Type == txntypes.WriteDelete) {
			c.value = w
		}
		return !pastStart || withValue && c.value == nil
	})
	return c, err
}

// returnValue reads key's value when the request asks for values. The
// caller checked that no version newer than the key's lock exists, so this
// is the newest value.
func returnValue(r *mvccReader, req *AcquirePessimisticLockRequest, key []byte) ([]byte, error) {
	if !req.ReturnValues {
		return nil, nil
	}
	return r.value(key, MaxTS)
}

// PessimisticRollback removes the pessimistic locks of startTS on keys
// whose for_update_ts is at most forUpdateTS (see the Client contract).
func (s *Store) PessimisticRollback(ctx context.Context, rc RegionCtx, keys [][]byte, startTS, forUpdateTS uint64) error {
	what := fmt.Sprintf("pessimistic rollback of txn %d at %d", startTS, forUpdateTS)
	if startTS == 0 {
		return fmt.Errorf("%s: start_ts is 0", what)
	}
	return s.mutate(ctx, rc, what, keys, func(r *mvccReader, wb *writeBatch) error {
		wb.volatile = true
		for _, k := range keys {
			l, err := r.lock(k)
			if err != nil {
				return err
			}
			if l != nil && l.StartTS == startTS && l.Type == txntypes.LockPessimistic && l.ForUpdateTS <= forUpdateTS {
				wb.delLock(k)
			}
		}
		return nil
	})
}
