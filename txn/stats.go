package txn

import (
	"errors"
	"sync/atomic"
)

// Stats are the counts of a Store's transaction outcomes since it was
// made, for an operator's metrics (the status port's /metrics). They are
// counted where the outcome is decided, so that every caller of the
// package is counted once.
type Stats struct {
	// Committed counts the commits that succeeded, read-only ones (which
	// send nothing) included; OnePC of those wrote in one phase, TwoPC in
	// two.
	Committed, OnePC, TwoPC uint64
	// RolledBack counts Rollback of a transaction not yet finished.
	RolledBack uint64
	// Conflicted counts the commits that failed with ErrWriteConflict;
	// Failed those that failed for any other reason.
	Conflicted, Failed uint64
	// LocksResolved counts the locks of other transactions met by this
	// Store's requests and settled by its LockResolver, by outcome:
	// LocksGone were committed or rolled back, LocksReadPast read past,
	// LocksAlive left to wait for.
	LocksGone, LocksReadPast, LocksAlive uint64
	// SnapshotsMoved counts the pessimistic statements that moved their
	// transaction's snapshot past a conflicting commit (RefreshSnapshot);
	// SnapshotMovesRefused those refused because an earlier read changed
	// (or the transaction read too much to tell).
	SnapshotsMoved, SnapshotMovesRefused uint64
	// SnapshotMovesPastChanges counts the moves, of SnapshotsMoved, made
	// although something the transaction read had changed, because the
	// change left what it read of it equal (a column it did not read).
	SnapshotMovesPastChanges uint64
	// LockWaitTimeouts counts the pessimistic lock requests (LockKeys)
	// that gave up after the lock wait timeout (ErrLockWaitTimeout, MySQL
	// 1205); Deadlocks those refused as a deadlock's victim (ErrDeadlock,
	// 1213).
	LockWaitTimeouts, Deadlocks uint64
	// LatestFallbacks counts the reads of latest transactions
	// (BeginLatest) that one request at the latest state could not serve
	// (the range went on past it, or it met a lock or a stale route),
	// which then took a start_ts from the oracle.
	LatestFallbacks uint64
}

// txnStats is the Store's live counters behind Stats.
type txnStats struct {
	committed, onePC, twoPC, rolledBack, conflicted, failed atomic.Uint64
	// locks counts lock outcomes, indexed by LockOutcome.
	locks [LockAlive + 1]atomic.Uint64
	// snapshotsMoved and snapshotMovesRefused count RefreshSnapshot's
	// outcomes.
	snapshotsMoved, snapshotMovesRefused, snapshotMovesPastChanges atomic.Uint64
	// lockWaitTimeouts and deadlocks count LockKeys' failures.
	lockWaitTimeouts, deadlocks atomic.Uint64
	// latestFallbacks counts leaveLatest.
	latestFallbacks atomic.Uint64
}

// Stats returns the Store's counts so far.
func (s *Store) Stats() Stats {
	st := &s.stats
	return Stats{
		Committed:     st.committed.Load(),
		OnePC:         st.onePC.Load(),
		TwoPC:         st.twoPC.Load(),
		RolledBack:    st.rolledBack.Load(),
		Conflicted:    st.conflicted.Load(),
		Failed:        st.failed.Load(),
		LocksGone:     st.locks[LockGone].Load(),
		LocksReadPast: st.locks[LockReadPast].Load(),
		LocksAlive:    st.locks[LockAlive].Load(),

		SnapshotsMoved:       st.snapshotsMoved.Load(),
		SnapshotMovesRefused: st.snapshotMovesRefused.Load(),

		SnapshotMovesPastChanges: st.snapshotMovesPastChanges.Load(),
		LockWaitTimeouts:         st.lockWaitTimeouts.Load(),
		Deadlocks:                st.deadlocks.Load(),
		LatestFallbacks:          st.latestFallbacks.Load(),
	}
}

// noteCommit counts the outcome err of a commit; wrote says whether it
// sent writes, onePC whether they were committed in one phase.
func (st *txnStats) noteCommit(err error, wrote, onePC bool) {
	switch {
	case err == nil:
		st.committed.Add(1)
		if wrote && onePC {
			st.onePC.Add(1)
		} else if wrote {
			st.twoPC.Add(1)
		}
	case errors.Is(err, ErrWriteConflict):
		st.conflicted.Add(1)
	default:
		st.failed.Add(1)
	}
}

// noteLatestFallback counts a latest read that took a timestamp.
func (st *txnStats) noteLatestFallback() { st.latestFallbacks.Add(1) }

// noteValidation counts a RefreshSnapshot that moved the snapshot (ok),
// past pastChanges changed keys that read the same, or was refused.
func (st *txnStats) noteValidation(ok bool, pastChanges int) {
	if ok {
		st.snapshotsMoved.Add(1)
		if pastChanges > 0 {
			st.snapshotMovesPastChanges.Add(1)
		}
	} else {
		st.snapshotMovesRefused.Add(1)
	}
}

// noteLocks counts the outcomes of the locks one ResolveLocks settled.
func (st *txnStats) noteLocks(out []LockOutcome) {
	for _, o := range out {
		if int(o) < len(st.locks) {
			st.locks[o].Add(1)
		}
	}
}

// KnownStartTS returns the transaction's start timestamp if it has one
// already, else 0; unlike StartTS it never asks the oracle, so that an
// observer (the slow query log) does not change what it observes.
func (t *Txn) KnownStartTS() uint64 { return t.startTS }
