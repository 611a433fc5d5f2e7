package kv

import (
	"context"
	"fmt"

	"github.com/percdb/percdb/kv/internal/txntypes"
	"github.com/percdb/percdb/tso"
)

// BatchRollback rolls back the locks of startTS on keys. Per key: this
// transaction's lock is deleted (with its long value) and a Rollback
// record is written at start_ts, so that a late prewrite of the
// transaction fails; a key without the lock gets the Rollback record too,
// unless the transaction committed it (*CommittedError, nothing written).
func (s *Store) BatchRollback(ctx context.Context, rc RegionCtx, keys [][]byte, startTS uint64) error {
	what := fmt.Sprintf("rollback txn %d", startTS)
	if startTS == 0 {
		return fmt.Errorf("%s: start_ts is 0", what)
	}
	return s.mutate(ctx, rc, what, keys, func(r *mvccReader, wb *writeBatch) error {
		for _, k := range keys {
			if err := rollbackKey(r, wb, k, startTS); err != nil {
				return err
			}
		}
		return nil
	})
}

// Cleanup rolls back the lock of startTS on key like BatchRollback, but
// refuses with *KeyIsLockedError while the lock's TTL has not passed by
// currentTS (0: do not check the TTL).
func (s *Store) Cleanup(ctx context.Context, rc RegionCtx, key []byte, startTS, currentTS uint64) error {
	what := fmt.Sprintf("cleanup txn %d on %q", startTS, key)
	if startTS == 0 {
		return fmt.Errorf("%s: start_ts is 0", what)
	}
	return s.mutate(ctx, rc, what, [][]byte{key}, func(r *mvccReader, wb *writeBatch) error {
		l, err := r.lock(key)
		if err != nil {
			return err
		}
		if l != nil && l.StartTS == startTS && currentTS != 0 && !lockExpired(l, currentTS) {
			return &KeyIsLockedError{Lock: lockInfo(key, l)}
		}
		return rollbackKey(r, wb, key, startTS)
	})
}

// rollbackKey rolls back one key (see BatchRollback).
func rollbackKey(r *mvccReader, wb *writeBatch, key []byte, startTS uint64) error {
	l, err := r.lock(key)
	if err != nil {
		return err
	}
	if l != nil && l.StartTS == startTS {
		wb.delLock(key)
		if l.Type == txntypes.LockPut && l.ShortValue == nil {
			wb.delData(key, startTS)
		}
		return putRollbackRecord(r, wb, key, startTS)
	}
	status, commitTS, err := r.txnRecord(key, startTS)
	switch {
	case err != nil:
		return err
	case status == txnCommitted:
		return &CommittedError{Key: cloneKey(key), StartTS: startTS, CommitTS: commitTS}
	case status == txnRolledBack:
		return nil
	}
	return putRollbackRecord(r, wb, key, startTS)
}

// putRollbackRecord writes the Rollback record of startTS on key. If
// another transaction's commit record sits at the same timestamp (its
// commit_ts was calculated, so it may equal our start_ts), the record is
// kept and flagged instead of overwritten (tikv#8349).
func putRollbackRecord(r *mvccReader, wb *writeBatch, key []byte, startTS uint64) error {
	old, err := r.writeAt(key, startTS)
	if err != nil {
		return err
	}
	if old != nil && old.Type != txntypes.WriteRollback {
		flagged := *old
		flagged.OverlappedRollback = true
		wb.putWrite(key, startTS, &flagged)
		return nil
	}
	wb.putWrite(key, startTS, &txntypes.Write{Type: txntypes.WriteRollback, StartTS: startTS})
	return nil
}

// lockExpired reports whether l's TTL, counted from the physical time of
// its start_ts, has passed by the physical time of currentTS.
func lockExpired(l *txntypes.Lock, currentTS uint64) bool {
	start, now := uint64(tso.Physical(l.StartTS)), uint64(tso.Physical(currentTS))
	if now < start {
		return false
	}
	return now-start > l.TTL
}
