package kv

import (
	"context"
	"fmt"

	"github.com/percdb/percdb/kv/internal/txntypes"
)

// Commit commits the locks of req.StartTS on req.Keys at req.CommitTS.
// Per key: this transaction's lock becomes a write record at commit_ts (the
// short value moves along), the notify entries it names are set to
// commit_ts (notify.go), and it is deleted, in one batch; a missing lock is
// success if the transaction's commit record is there (a retry),
// *TxnAbortedError if its Rollback record is, else *TxnLockNotFoundError.
// A commit_ts below the lock's min_commit_ts is *CommitTSExpiredError. The
// first failing key fails the whole request and nothing is written.
func (s *Store) Commit(ctx context.Context, req *CommitRequest) error {
	what := fmt.Sprintf("commit txn %d at %d", req.StartTS, req.CommitTS)
	if err := validateCommitTS(req.StartTS, req.CommitTS); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return s.mutate(ctx, req.Region, what, req.Keys, func(r *mvccReader, wb *writeBatch) error {
		wb.ackDurable = true
		for _, k := range req.Keys {
			if err := commitKey(r, wb, k, req.StartTS, req.CommitTS, false); err != nil {
				return err
			}
		}
		return nil
	})
}

// validateCommitTS rejects zero timestamps and commit_ts <= start_ts.
func validateCommitTS(startTS, commitTS uint64) error {
	if startTS == 0 {
		return fmt.Errorf("start_ts is 0")
	}
	if commitTS <= startTS {
		return fmt.Errorf("commit_ts %d must exceed start_ts %d", commitTS, startTS)
	}
	return nil
}

// commitKey commits one key (see Commit). A pessimistic lock was never
// prewritten, so it is not part of the commit: Commit refuses it, and
// ResolveLock (resolving set), which commits whatever locks of the
// transaction it finds once the primary has committed, removes it.
func commitKey(r *mvccReader, wb *writeBatch, key []byte, startTS, commitTS uint64, resolving bool) error {
	l, err := r.lock(key)
	if err != nil {
		return err
	}
	if l != nil && l.StartTS == startTS && l.Type == txntypes.LockPessimistic {
		if !resolving {
			return fmt.Errorf("key %q holds a pessimistic lock of txn %d that was never prewritten", key, startTS)
		}
		wb.delLock(key)
		return nil
	}
	if l != nil && l.StartTS == startTS {
		if commitTS < l.MinCommitTS {
			return &CommitTSExpiredError{Key: cloneKey(key), StartTS: startTS, CommitTS: commitTS, MinCommitTS: l.MinCommitTS}
		}
		w := &txntypes.Write{Type: txntypes.WriteTypeOf(l.Type), StartTS: startTS, ShortValue: l.ShortValue}
		if err := putCommitRecord(r, wb, key, commitTS, w); err != nil {
			return err
		}
		wb.putNotify(key, l.Notify, commitTS)
		wb.delLock(key)
		return nil
	}
	status, _, err := r.txnRecord(key, startTS)
	switch {
	case err != nil:
		return err
	case status == txnCommitted:
		return nil
	case status == txnRolledBack:
		return &TxnAbortedError{Key: cloneKey(key), StartTS: startTS}
	}
	return &TxnLockNotFoundError{Key: cloneKey(key), StartTS: startTS}
}

// putCommitRecord writes w at key's commitTS. If a Rollback record is
// already there (the transaction whose start_ts equals this calculated
// commit_ts was rolled back on the key), the commit record takes it over
// as a flag instead of erasing it (tikv#8349). A Lock record gets the
// pointer to the key's last change below it. w nil writes nothing.
func putCommitRecord(r *mvccReader, wb *writeBatch, key []byte, commitTS uint64, w *txntypes.Write) error {
	if w == nil {
		return nil
	}
	old, err := r.writeAt(key, commitTS)
	if err != nil {
		return err
	}
	if old != nil {
		if old.Type != txntypes.WriteRollback {
			return fmt.Errorf("key %q: commit at %d would overwrite the commit record of txn %d", key, commitTS, old.StartTS)
		}
		w.OverlappedRollback = true
	}
	if w.Type == txntypes.WriteLock {
		// Under the key's latch, the transaction's lock on the key (or,
		// committing in one phase, its checks just made): no other
		// transaction holds a lock that could commit below commitTS, and
		// one that prewrites or locks from now on meets this record as
		// a conflict, so the pointer stays true (Write.LastChangeTS).
		if w.LastChangeTS, w.VersionsToLastChange, err = r.lastChangeBelow(key, commitTS); err != nil {
			return err
		}
	}
	wb.putWrite(key, commitTS, w)
	return nil
}
