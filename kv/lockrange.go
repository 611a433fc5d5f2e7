package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// errRangeMoved ends an attempt of a locking range read whose read met
// locks that were gone by the time the command latched their keys: the
// read is made again, at once.
var errRangeMoved = errors.New("the locks the range read met are gone")

// acquireRange serves an AcquirePessimisticLockRequest with a Range (see
// LockRange): each attempt reads the range at for_update_ts as Scan does,
// then locks the keys found in one latched command. Nothing in between
// can change what the read found at for_update_ts: a commit at or below
// it had its lock in place before for_update_ts was handed out, and the
// read meets that lock, so the keys read are the keys to lock, as when
// the client read them and then asked for their locks, in one request
// instead of two. A lock the read meets is waited for as one met by
// acquireKey is (under the latch of its key, in its queue), and the read
// is made again when it goes.
func (s *Store) acquireRange(ctx context.Context, req *AcquirePessimisticLockRequest) (*AcquirePessimisticLockResponse, error) {
	lr := req.Range
	what := fmt.Sprintf("lock range [%q, %q) for txn %d at %d", lr.Start, lr.End, req.StartTS, req.ForUpdateTS)
	if err := validateAcquireRange(req); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var deadline time.Time
	if req.WaitTimeout > 0 {
		deadline = time.Now().Add(min(req.WaitTimeout, s.lockWaitSlice))
	}
	var turn *lockWaiter // our place in a key's queue, kept across attempts
	for {
		pairs, err := s.Scan(ctx, &ScanRequest{
			Region: req.Region, Start: lr.Start, End: lr.End, Limit: lr.Limit,
			Version: req.ForUpdateTS, Reverse: lr.Reverse, BypassLocks: lr.BypassLocks,
		})
		var (
			resp   *AcquirePessimisticLockResponse
			w      *lockWaiter
			locked *KeyIsLockedError
		)
		switch {
		case errors.As(err, &locked):
			// Wait for the first lock met, under its key's latch, as
			// for a key being locked; the others are waited for by the
			// attempts after it, each read made again.
			w, err = s.waitTurnForReadLock(ctx, req, locked, turn, !deadline.IsZero(), what)
		case err != nil:
			return nil, err
		case len(pairs) == 0:
			return &AcquirePessimisticLockResponse{}, nil
		default:
			resp, w, err = s.lockFound(ctx, req, pairs, turn, !deadline.IsZero(), what)
		}
		if turn != nil && w == nil && err != nil {
			// Woken, but the attempt failed otherwise than on a lock:
			// pass the turn on (see AcquirePessimisticLock).
			s.waiters.wakeNext(turn.key)
		}
		turn = nil
		switch {
		case err == nil:
			return resp, nil
		case errors.Is(err, errRangeMoved):
			continue
		case w == nil:
			return nil, err
		}
		if turn, err = s.waitForLock(ctx, w, deadline, err); err != nil {
			return nil, err
		}
	}
}

// validateAcquireRange rejects malformed locking range reads.
func validateAcquireRange(req *AcquirePessimisticLockRequest) error {
	switch {
	case len(req.Keys) > 0:
		return errors.New("both keys and a range given")
	case req.Range.Limit < 0:
		return fmt.Errorf("negative limit %d", req.Range.Limit)
	case len(req.Range.End) > 0 && string(req.Range.End) <= string(req.Range.Start):
		return fmt.Errorf("empty range [%q, %q)", req.Range.Start, req.Range.End)
	}
	probe := *req
	probe.Keys = []PessimisticKey{{Key: req.Range.Start}}
	if len(probe.Primary) == 0 {
		probe.Primary = []byte{0} // chosen by the store: checked when known
	}
	return validateAcquire(&probe)
}

// waitTurnForReadLock latches the first key of locked, whose lock blocked
// the range read, and joins its queue when the lock is still there (and
// the request waits): the attempt's error is then the lock, with the
// waiter. A lock gone meanwhile is errRangeMoved: the read is made again.
func (s *Store) waitTurnForReadLock(ctx context.Context, req *AcquirePessimisticLockRequest, locked *KeyIsLockedError, turn *lockWaiter, wait bool, what string) (*lockWaiter, error) {
	key := locked.Lock.Key
	var w *lockWaiter
	err := s.mutate(ctx, req.Region, what, [][]byte{key}, func(r *mvccReader, wb *writeBatch) error {
		l, err := r.lock(key)
		if err != nil {
			return err
		}
		if l != nil && l.StartTS == req.StartTS {
			// The read blocked on the transaction's own prewrite: no
			// wait ends it (and reading again would meet it again).
			return fmt.Errorf("key %q is already prewritten by txn %d", key, req.StartTS)
		}
		if l == nil || !blocksRead(l, req.ForUpdateTS) || slices.Contains(req.Range.BypassLocks, l.StartTS) {
			return errRangeMoved
		}
		if wait {
			w = s.waiters.enqueue(key, req.StartTS, l.StartTS, turn)
		}
		return &KeyIsLockedError{Lock: lockInfo(key, l)}
	})
	return w, err
}

// lockFound locks the keys of pairs, read from the range at for_update_ts,
// with their values, in one latched command (acquireKey's rules for each).
func (s *Store) lockFound(ctx context.Context, req *AcquirePessimisticLockRequest, pairs []KvPair, turn *lockWaiter, wait bool, what string) (*AcquirePessimisticLockResponse, *lockWaiter, error) {
	keys := make([][]byte, len(pairs))
	for i, p := range pairs {
		keys[i] = p.Key
	}
	one := *req
	one.Range, one.ReturnValues = nil, true
	if len(one.Primary) == 0 {
		one.Primary = keys[0]
	}
	resp := &AcquirePessimisticLockResponse{Pairs: make([]KvPair, 0, len(keys))}
	var w *lockWaiter
	err := s.mutate(ctx, req.Region, what, keys, func(r *mvccReader, wb *writeBatch) error {
		wb.volatile = true
		if err := s.checkStartTS(req.StartTS); err != nil {
			return err
		}
		for _, k := range keys {
			v, conflictTS, _, err := acquireKey(r, wb, &one, PessimisticKey{Key: k})
			if err != nil {
				var locked *KeyIsLockedError
				if errors.As(err, &locked) && wait {
					w = s.waiters.enqueue(k, req.StartTS, locked.Lock.StartTS, turn)
				}
				return err
			}
			resp.ConflictTS = max(resp.ConflictTS, conflictTS)
			resp.Pairs = append(resp.Pairs, KvPair{Key: k, Value: v})
		}
		return nil
	})
	if err != nil {
		return nil, w, err
	}
	return resp, nil, nil
}
