package kv

import (
	"context"
	"errors"
	"fmt"

	"github.com/percdb/percdb/kv/internal/txntypes"
)

// Prewrite locks req.Mutations for transaction req.StartTS, or, with
// req.TryOnePC, commits them at once at a calculated timestamp. Per key:
//
//   - another transaction's lock: *KeyIsLockedError;
//   - this transaction's lock: already prewritten, nothing to do;
//   - a Rollback record at start_ts (or a commit record at start_ts flagged
//     with an overlapped rollback): *TxnAbortedError;
//   - any other write record with commit_ts >= start_ts: *WriteConflictError
//     (at == the record is visible to start_ts, so this is conservative);
//   - OpInsert or OpCheckNotExists on a key whose newest Put/Delete is a
//     Put: *AlreadyExistsError.
//
// Every key is checked and every failure reported in the response; if any
// key fails, nothing is written.
func (s *Store) Prewrite(ctx context.Context, req *PrewriteRequest) (*PrewriteResponse, error) {
	what := fmt.Sprintf("prewrite txn %d", req.StartTS)
	if err := validatePrewrite(req); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if n := addedBytes(req.Mutations); n > 0 && !req.AllowWhenDiskFull {
		if err := s.space.admit(n); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	keys := make([][]byte, len(req.Mutations))
	for i, m := range req.Mutations {
		keys[i] = m.Key
	}
	resp := &PrewriteResponse{}
	var onePC *memLockGuard
	defer func() {
		if onePC != nil {
			onePC.withdraw()
		}
	}()
	err := s.mutate(ctx, req.Region, what, keys, func(r *mvccReader, wb *writeBatch) error {
		allNew := true // no key holds this transaction's lock yet
		own := make([]bool, len(req.Mutations))
		for i, m := range req.Mutations {
			var err error
			own[i], err = prewriteCheck(r, req.StartTS, m)
			if err != nil && !isContractError(err) {
				return err
			}
			if err != nil {
				resp.Errors = append(resp.Errors, err)
			}
			allNew = allNew && !own[i]
		}
		if len(resp.Errors) > 0 {
			return nil
		}
		if req.TryOnePC && allNew {
			var err error
			onePC, resp.OnePCCommitTS, err = s.onePCCommitTS(req, keys)
			if err != nil {
				return err
			}
		}
		for i, m := range req.Mutations {
			switch {
			case resp.OnePCCommitTS != 0:
				if err := putCommitRecord(r, wb, m.Key, resp.OnePCCommitTS, onePCWrite(wb, req.StartTS, m)); err != nil {
					return err
				}
			case !own[i]: // else already prewritten by an earlier attempt
				putPrewriteLock(wb, req, m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// validatePrewrite rejects malformed requests.
func validatePrewrite(req *PrewriteRequest) error {
	if req.StartTS == 0 {
		return errors.New("start_ts is 0")
	}
	if len(req.Primary) == 0 {
		return errors.New("empty primary key")
	}
	if req.TryOnePC && req.MaxCommitTS == 0 {
		return errors.New("TryOnePC needs MaxCommitTS")
	}
	for _, m := range req.Mutations {
		if m.Op < OpPut || m.Op > OpCheckNotExists {
			return fmt.Errorf("key %q: unknown op %v", m.Key, m.Op)
		}
	}
	return nil
}

// prewriteCheck applies the prewrite rules to one mutation. own reports
// that the key already holds this transaction's lock.
func prewriteCheck(r *mvccReader, startTS uint64, m Mutation) (own bool, err error) {
	l, err := r.lock(m.Key)
	if err != nil {
		return false, err
	}
	if l != nil {
		if l.StartTS != startTS {
			return false, &KeyIsLockedError{Lock: lockInfo(m.Key, l)}
		}
		return true, nil
	}
	commitTS, w, err := r.newestWrite(m.Key)
	if err != nil {
		return false, err
	}
	if w != nil && commitTS == startTS && (w.Type == txntypes.WriteRollback || w.OverlappedRollback) {
		return false, &TxnAbortedError{Key: cloneKey(m.Key), StartTS: startTS}
	}
	if w != nil && commitTS >= startTS {
		return false, &WriteConflictError{Key: cloneKey(m.Key), StartTS: startTS, ConflictStartTS: w.StartTS, ConflictCommitTS: commitTS}
	}
	if m.Op == OpInsert || m.Op == OpCheckNotExists {
		vw, err := r.valueWrite(m.Key, MaxTS)
		if err != nil {
			return false, err
		}
		if vw != nil && vw.Type == txntypes.WritePut {
			return false, &AlreadyExistsError{Key: cloneKey(m.Key)}
		}
	}
	return false, nil
}

// putPrewriteLock writes the lock of one checked mutation, and its value
// in the data space when it is too long to ride in the lock.
func putPrewriteLock(wb *writeBatch, req *PrewriteRequest, m Mutation) {
	l := &txntypes.Lock{Primary: req.Primary, StartTS: req.StartTS, TTL: req.LockTTL, TxnSize: req.TxnSize}
	switch m.Op {
	case OpCheckNotExists:
		return // an assertion only: nothing to lock
	case OpDelete:
		l.Type = txntypes.LockDelete
	case OpLock:
		l.Type = txntypes.LockLock
	default: // OpPut, OpInsert
		l.Type = txntypes.LockPut
		if len(m.Value) <= txntypes.ShortValueMaxLen {
			l.ShortValue = cloneValue(m.Value)
		} else {
			wb.putData(m.Key, req.StartTS, m.Value)
		}
	}
	wb.putLock(m.Key, l)
}

// onePCCommitTS calculates a one-phase commit timestamp for keys, which
// the caller has latched and checked. It first publishes keys in the
// memory lock table (see memLockTable), then reads max_read_ts. It returns
// a zero timestamp and no guard when the timestamp would exceed
// req.MaxCommitTS: the caller then prewrites as usual.
func (s *Store) onePCCommitTS(req *PrewriteRequest, keys [][]byte) (*memLockGuard, uint64, error) {
	g := s.memLocks.publish(keys)
	// Check the region again now that the keys are published: a split since
	// the first check moved max_read_ts to new region objects.
	reg, err := s.regions.check(req.Region, 0, keys...)
	if err != nil {
		g.withdraw()
		return nil, 0, err
	}
	commitTS := max(req.StartTS, reg.maxReadTS.Load()) + 1
	if commitTS > req.MaxCommitTS || commitTS == 0 {
		g.withdraw()
		return nil, 0, nil
	}
	return g, commitTS, nil
}

// onePCWrite returns the write record of one mutation committed in one
// phase, putting a long value in the data space.
func onePCWrite(wb *writeBatch, startTS uint64, m Mutation) *txntypes.Write {
	w := &txntypes.Write{StartTS: startTS}
	switch m.Op {
	case OpCheckNotExists:
		return nil
	case OpDelete:
		w.Type = txntypes.WriteDelete
	case OpLock:
		w.Type = txntypes.WriteLock
	default:
		w.Type = txntypes.WritePut
		if len(m.Value) <= txntypes.ShortValueMaxLen {
			w.ShortValue = cloneValue(m.Value)
		} else {
			wb.putData(m.Key, startTS, m.Value)
		}
	}
	return w
}

// cloneKey copies a key for an error or a result.
func cloneKey(k []byte) []byte { return append([]byte{}, k...) }

// cloneValue copies a value, keeping an empty value non-nil (a nil short
// value means "no short value").
func cloneValue(v []byte) []byte { return append([]byte{}, v...) }
