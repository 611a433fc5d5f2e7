package txn

import (
	"context"
	"fmt"
)

// READ COMMITTED, for pessimistic transactions (doc.go, "Read committed").
//
// A pessimistic transaction at READ COMMITTED reads, in each statement,
// the latest committed data: the first read of a statement takes a fresh
// timestamp from the oracle and the whole statement reads at it (one
// consistent snapshot per statement, as MySQL's consistent reads at READ
// COMMITTED and TiDB's). Its writes lock their keys at that timestamp, as
// at REPEATABLE READ; a key with a commit newer than it (LockKeys'
// ErrForUpdateConflict) makes the statement run again at a newer one,
// without validating the earlier statements' reads: under READ COMMITTED
// they were never promised to stay unchanged. So the transaction gets no
// write conflict error for a concurrent commit; its locks keep every row
// it wrote from being written by others until it ends, so no update of
// it is lost. Nothing is remembered of its reads.

// rcState is what a READ COMMITTED transaction keeps.
type rcState struct {
	// stale: a statement began since the snapshot was taken; the
	// statement's first read takes a fresh one (statementSnapshot).
	stale bool
}

// SetReadCommitted makes a pessimistic transaction READ COMMITTED (see
// above). It must be called after SetPessimistic and before the first
// read: an optimistic transaction has no locks to keep its writes from
// being overwritten between two snapshots, so it stays snapshot
// isolation, as TiDB's does.
func (t *Txn) SetReadCommitted() error {
	if t.pess == nil {
		return fmt.Errorf("set read committed: the transaction is not pessimistic")
	}
	if t.startTS != 0 {
		return fmt.Errorf("set read committed: the transaction has read already")
	}
	t.rc = &rcState{}
	return nil
}

// IsReadCommitted reports whether SetReadCommitted was called.
func (t *Txn) IsReadCommitted() bool { return t.rc != nil }

// beginStatementRC marks the snapshot of a READ COMMITTED transaction
// stale at the start of a statement. The first statement reads at
// start_ts, fetched by its first read.
func (t *Txn) beginStatementRC() {
	if t.rc != nil && t.startTS != 0 {
		t.rc.stale = true
	}
}

// statementSnapshot takes the snapshot of a READ COMMITTED statement: a
// fresh timestamp from the oracle, so that the statement sees every
// transaction whose commit returned before it began.
func (t *Txn) statementSnapshot(ctx context.Context) (uint64, error) {
	ts, err := t.s.timestamp(ctx)
	if err != nil {
		return 0, fmt.Errorf("statement snapshot: %w", err)
	}
	t.readTS, t.rc.stale = ts, false
	return ts, nil
}

// refreshReadCommitted moves the snapshot of a READ COMMITTED statement
// that met a commit newer than it on a key it locks (or that runs again
// for another cause) to a fresh timestamp, as TiDB's statement retry
// takes a fresh for_update_ts: its locked keys have no commit after the
// one met, and every other read of the statement sees the latest data.
// Nothing is validated.
func (t *Txn) refreshReadCommitted(ctx context.Context) error {
	if t.finished {
		return fmt.Errorf("refresh snapshot: %w", ErrTxnFinished)
	}
	t.pess.conflictTS = 0
	if _, err := t.statementSnapshot(ctx); err != nil {
		return fmt.Errorf("refresh snapshot: %w", err)
	}
	// Counted with the moves at REPEATABLE READ: nothing was refused.
	t.s.stats.noteValidation(true, 0)
	return nil
}
