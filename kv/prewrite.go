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
//   - this transaction's pessimistic lock: replaced by the prewrite lock,
//     with no other check (the lock has excluded writers since its
//     for_update_ts, and AcquirePessimisticLock checked the key then);
//   - a Mutation.Pessimistic without that lock: *TxnAbortedError if the
//     transaction was rolled back on the key, else
//     *PessimisticLockNotFoundError;
//   - another transaction's lock: *KeyIsLockedError;
//   - this transaction's prewrite lock: already prewritten, nothing to do;
//   - a Rollback record at start_ts (or a commit record at start_ts flagged
//     with an overlapped rollback): *TxnAbortedError;
//   - any other write record with commit_ts >= start_ts: *WriteConflictError
//     (at == the record is visible to start_ts, so this is conservative);
//   - OpInsert or OpCheckNotExists on a key whose newest Put/Delete is a
//     Put: *AlreadyExistsError.
//
// Every key is checked and every failure reported in the response; if any
// key fails, nothing is written. With req.ForUpdateTS (a pessimistic
// transaction) the locks get min_commit_ts ForUpdateTS+1.
func (s *Store) Prewrite(ctx context.Context, req *PrewriteRequest) (*PrewriteResponse, error) {
	what := fmt.Sprintf("prewrite txn %d", req.StartTS)
	if err := validatePrewrite(req); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var admitted uint64
	if n := addedBytes(req.Mutations); n > 0 && !req.AllowWhenDiskFull {
		if err := s.space.admit(n); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		admitted = n
	}
	keys := make([][]byte, len(req.Mutations))
	for i, m := range req.Mutations {
		keys[i] = m.Key
	}
	resp := &PrewriteResponse{}
	// A one-phase commit's keys stay published until its batch is
	// applied or has failed, which may be after this returns (a
	// *WriteInDoubtError): readers above its commit_ts wait for it. So
	// long, too, the admitted bytes count as in flight.
	var onePC *memLockGuard
	withdraw := func() {
		if onePC != nil {
			onePC.withdraw()
		}
		s.space.settle(admitted)
	}
	err := s.mutateThen(ctx, req.Region, what, keys, func(r *mvccReader, wb *writeBatch) error {
		wb.ackDurable = true
		allNew := true // no key holds this transaction's prewrite lock yet
		// Under the latches: a GC batch that deleted this transaction's
		// Rollback record raised the safe point before (gc.go).
		if err := s.checkStartTS(req.StartTS); err != nil {
			return err
		}
		own := make([]bool, len(req.Mutations))
		held := make([]*txntypes.Lock, len(req.Mutations))
		for i, m := range req.Mutations {
			var err error
			own[i], held[i], err = prewriteCheck(r, req.StartTS, max(req.StartTS, req.SnapshotTS), req.ForUpdateTS != 0 || req.SnapshotTS > req.StartTS, m)
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
			// Versions may have committed up to the for_update_ts of our
			// pessimistic locks (after start_ts): commit above them.
			floor := req.ForUpdateTS
			for _, l := range held {
				if l != nil {
					floor = max(floor, l.ForUpdateTS)
				}
			}
			var err error
			onePC, resp.OnePCCommitTS, err = s.onePCCommitTS(req, keys, floor)
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
				if m.Op != OpCheckNotExists {
					wb.putNotify(m.Key, m.Notify, resp.OnePCCommitTS)
				}
				if held[i] != nil {
					wb.delLock(m.Key)
				}
			case !own[i]: // else already prewritten by an earlier attempt
				putPrewriteLock(wb, req, m, held[i])
			}
		}
		return nil
	}, withdraw)
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
// that the key already holds this transaction's prewrite lock; held is
// the transaction's pessimistic lock on the key, which the prewrite
// replaces. A version committed at or after snapshotTS (the start_ts
// unless the transaction moved its snapshot) is a write conflict.
func prewriteCheck(r *mvccReader, startTS, snapshotTS uint64, pessimistic bool, m Mutation) (own bool, held *txntypes.Lock, err error) {
	l, err := r.lock(m.Key)
	if err != nil {
		return false, nil, err
	}
	if l != nil && l.StartTS == startTS {
		if l.Type == txntypes.LockPessimistic {
			// Held since its for_update_ts: nothing committed to the key
			// since, so no conflict check. An insert still checks that
			// the key has no value: the lock may have been taken without
			// that check (FOR UPDATE, then INSERT).
			if m.Op == OpInsert || m.Op == OpCheckNotExists {
				if err := checkNotExists(r, m.Key); err != nil {
					return false, nil, err
				}
			}
			return false, l, nil
		}
		return true, nil, nil
	}
	if m.Pessimistic {
		return false, nil, pessimisticLockMissing(r, m.Key, startTS)
	}
	if l != nil {
		return false, nil, &KeyIsLockedError{Lock: lockInfo(m.Key, l)}
	}
	commitTS, w, err := r.newestWrite(m.Key)
	if err != nil {
		return false, nil, err
	}
	if w != nil && commitTS == startTS && (w.Type == txntypes.WriteRollback || w.OverlappedRollback) {
		return false, nil, &TxnAbortedError{Key: cloneKey(m.Key), StartTS: startTS}
	}
	// A version the snapshot the transaction reads at does not see is a
	// conflict. An optimistic transaction's: committed at or after its
	// start_ts. A pessimistic one's (a key it did not lock, as a
	// non-unique index entry covered by its row's lock,
	// txn.Txn.SetCovered), as TiKV checks such a key against the
	// for_update_ts: committed after its snapshot_ts, which sees a
	// version committed at it. A calculated (1PC) commit_ts may equal a
	// later transaction's start_ts, and a moved snapshot is the very
	// commit the transaction's locks met, whose other keys it may write
	// without locking them.
	if w != nil && (commitTS > snapshotTS || !pessimistic && commitTS == snapshotTS) {
		return false, nil, &WriteConflictError{Key: cloneKey(m.Key), StartTS: startTS, ConflictStartTS: w.StartTS, ConflictCommitTS: commitTS}
	}
	if m.Op == OpInsert || m.Op == OpCheckNotExists {
		if err := checkNotExists(r, m.Key); err != nil {
			return false, nil, err
		}
	}
	return false, nil, nil
}

// pessimisticLockMissing is the error of a pessimistic mutation whose lock
// is not there: *TxnAbortedError when the transaction was rolled back on
// the key (a resolver found it dead), else *PessimisticLockNotFoundError.
func pessimisticLockMissing(r *mvccReader, key []byte, startTS uint64) error {
	status, _, err := r.txnRecord(key, startTS)
	if err != nil {
		return err
	}
	if status == txnRolledBack {
		return &TxnAbortedError{Key: cloneKey(key), StartTS: startTS}
	}
	return &PessimisticLockNotFoundError{Key: cloneKey(key), StartTS: startTS}
}

// checkNotExists fails with *AlreadyExistsError when key's newest version
// is a value.
func checkNotExists(r *mvccReader, key []byte) error {
	vw, err := r.valueWrite(key, MaxTS)
	if err != nil {
		return err
	}
	if vw != nil && vw.Type == txntypes.WritePut {
		return &AlreadyExistsError{Key: cloneKey(key)}
	}
	return nil
}

// putPrewriteLock writes the lock of one checked mutation, and its value
// in the data space when it is too long to ride in the lock. held is the
// transaction's pessimistic lock on the key, if any: the new lock replaces
// it and keeps any min_commit_ts a reader pushed on it.
func putPrewriteLock(wb *writeBatch, req *PrewriteRequest, m Mutation, held *txntypes.Lock) {
	l := &txntypes.Lock{Primary: req.Primary, StartTS: req.StartTS, TTL: req.LockTTL, TxnSize: req.TxnSize, Notify: m.Notify}
	if req.ForUpdateTS != 0 {
		l.ForUpdateTS, l.MinCommitTS = req.ForUpdateTS, req.ForUpdateTS+1
	}
	if held != nil {
		l.ForUpdateTS = max(l.ForUpdateTS, held.ForUpdateTS)
		l.MinCommitTS = max(l.MinCommitTS, held.MinCommitTS, l.ForUpdateTS+1)
		l.TTL = max(l.TTL, held.TTL)
	}
	switch m.Op {
	case OpCheckNotExists:
		// An assertion only: nothing to lock. A pessimistic lock on the
		// key (inserted, then deleted) is given back.
		if held != nil {
			wb.delLock(m.Key)
		}
		return
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
// memory lock table (see memLockTable), then reads max_read_ts; the
// timestamp is above floor too. It returns
// a zero timestamp and no guard when the timestamp would exceed
// req.MaxCommitTS: the caller then prewrites as usual.
func (s *Store) onePCCommitTS(req *PrewriteRequest, keys [][]byte, floor uint64) (*memLockGuard, uint64, error) {
	g := s.memLocks.publish(keys)
	// Check the region again now that the keys are published: a split since
	// the first check moved max_read_ts to new region objects.
	reg, err := s.regions.check(req.Region, 0, keys...)
	if err != nil {
		g.withdraw()
		return nil, 0, err
	}
	commitTS := max(req.StartTS, floor, reg.maxReadTS.Load()) + 1
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
