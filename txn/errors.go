package txn

import (
	"errors"
	"fmt"

	"github.com/percdb/percdb/kv"
)

// Sentinel errors. Errors returned by this package wrap one of them and,
// where the store reported the detail, the kv error too, so that both
// errors.Is(err, ErrWriteConflict) and errors.As(err, &wc) with
// wc *kv.WriteConflictError work.
var (
	// ErrWriteConflict: another transaction wrote a key this one writes,
	// either committing it after this transaction started (first committer
	// wins) or holding a lock on it that this younger transaction may not
	// wait for (see doc.go on deadlocks). MySQL reports it as error 1213;
	// the client may retry the whole transaction. The transaction is rolled
	// back.
	ErrWriteConflict = errors.New("txn: write conflict")
	// ErrForUpdateConflict: a key a pessimistic statement locks was
	// written by a transaction that committed after the statement's
	// for_update_ts, so the statement read a stale version. The statement,
	// not the transaction, runs again at a newer for_update_ts. It comes
	// with ErrWriteConflict and the *kv.WriteConflictError (whose
	// ConflictCommitTS names the commit), so that a caller that cannot
	// run the statement again reports MySQL 1213.
	ErrForUpdateConflict = errors.New("txn: write conflict after the statement's for_update_ts")
	// ErrDeadlock: a pessimistic lock wait would have closed a cycle of
	// transactions waiting for each other (MySQL 1213). The transaction
	// is rolled back.
	ErrDeadlock = errors.New("txn: deadlock")
	// ErrAlreadyExists: an Insert met a key that exists (MySQL 1062). The
	// transaction is rolled back.
	ErrAlreadyExists = errors.New("txn: key already exists")
	// ErrLockWaitTimeout: a live lock of another transaction was waited for
	// longer than Options.LockWaitTimeout (MySQL 1205).
	ErrLockWaitTimeout = errors.New("txn: lock wait timeout")
	// ErrLockNotWaited: a live lock of another transaction was met by
	// LockKeys under SetLockNoWait, which does not wait for it (MySQL's
	// NOWAIT, 3572; SKIP LOCKED skips the row instead).
	ErrLockNotWaited = errors.New("txn: lock held by another transaction, not waited for")
	// ErrTxnAborted: the transaction was rolled back by someone else (its
	// lock expired and a resolver rolled it back) before it could commit.
	ErrTxnAborted = errors.New("txn: transaction aborted")
	// ErrTxnFinished: the transaction was already committed or rolled back.
	ErrTxnFinished = errors.New("txn: transaction already finished")
	// ErrStoreClosed: the Store was closed.
	ErrStoreClosed = errors.New("txn: store closed")
	// ErrUndetermined: the primary's commit request failed in a way that
	// does not say whether it took effect (the context ended or the
	// transport failed); the transaction may or may not be committed.
	ErrUndetermined = errors.New("txn: commit result undetermined")
)

// classify wraps a per-key error of a prewrite or commit with the sentinel
// that names its kind. Errors of no known kind are returned unchanged.
func classify(err error) error {
	var (
		wc *kv.WriteConflictError
		ae *kv.AlreadyExistsError
		ta *kv.TxnAbortedError
		nf *kv.TxnLockNotFoundError
		pn *kv.PessimisticLockNotFoundError
	)
	switch {
	case errors.As(err, &wc):
		return fmt.Errorf("%w: %w", ErrWriteConflict, err)
	case errors.As(err, &ae):
		return fmt.Errorf("%w: %w", ErrAlreadyExists, err)
	case errors.As(err, &ta), errors.As(err, &nf), errors.As(err, &pn):
		return fmt.Errorf("%w: %w", ErrTxnAborted, err)
	}
	return err
}
