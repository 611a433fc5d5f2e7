package kv

import (
	"context"
	"fmt"
	"sync/atomic"
)

// A write inside the storage outlives a caller that stops waiting
// (issue 22).
//
// Pebble's write takes no context and cannot be bounded: a write that
// entered Pebble just before a write stall began on a full disk waits
// until a flush finishes, that is until space is freed, and refusing
// writes while stalled (writestall.go) helps only those that come after.
// So a command's write runs on a goroutine of its own that owns the
// write and everything the command holds for it: the keys' latches, the
// store's life (Close waits for it, within a bound: Store.Close), a one-phase commit's published keys
// (memlock.go). The command waits for the write or for its context to
// end, whichever comes first. When the context ends first it returns a
// *WriteInDoubtError at once, and the goroutine waits on: the write may
// still be applied, and only once it is applied or has failed does the
// goroutine run the command's follow-up and let go of the latches and
// keys, so that no command on those keys, and no read a one-phase commit
// holds back, runs before the write's outcome is settled. Nothing is
// acknowledged that is not applied (the command returned an error), and
// nothing applied is lost (the write completes as any other, durably).
//
// A caller given a *WriteInDoubtError must treat the command's outcome as
// unknown: a prewrite's locks may still appear (a rollback, which waits
// for the latches, then removes them; or their TTL runs out), and a
// commit, or a one-phase prewrite, may take effect (the transaction
// layer reports such a commit as undetermined). Close ends the wait too
// (the error then wraps ErrClosed), so that a store can close while
// Pebble holds a write: a command under a context that cannot end
// (context.Background) owns its write as well. So does the store's
// refusal of writes for a stall on a full disk (writestall.go), which
// only freed space ends: the error then wraps the *DiskFullError, and
// the statement fails with MySQL's 1021 instead of waiting for space
// that may never come.
//
// The goroutine costs a write about 75k instructions when it wakes the
// other core (oltp_write_only at 1 thread lost 7% with it on every
// write), so a command owns its write only while a stall on a full disk
// is possible: the disk is full or within a few reserves of it
// (spaceGuard.atRisk), or Pebble holds writes now. A write that enters
// Pebble with more free space than that cannot meet the full-disk stall
// before it is applied; a disk that hangs for another reason is not
// covered.

// WriteInDoubtError: the command's context ended, or the store began to
// close or to refuse writes for a stall on a full disk, while its write
// was inside the storage, which may still apply it (see above).
type WriteInDoubtError struct {
	// Err is the context's error, ErrClosed when the store closed, or
	// the *DiskFullError of the stall.
	Err error
}

func (e *WriteInDoubtError) Error() string {
	return fmt.Sprintf("write in doubt: the caller stopped waiting while the storage held the write, which may still be applied: %v", e.Err)
}

// Unwrap returns Err.
func (e *WriteInDoubtError) Unwrap() error { return e.Err }

// inflightWrites counts the writes whose callers stopped waiting.
type inflightWrites struct {
	// abandoned counts them since Open; pending those not yet applied or
	// failed.
	abandoned atomic.Uint64
	pending   atomic.Int64
}

// writeOwned makes wb durable and visible as write does, then runs
// settle with the write's error, once, whoever waits: the caller, or the
// write's own goroutine when ctx ended or the store began to close first
// (the caller then gets a *WriteInDoubtError). settle releases what the
// command holds for the write.
func (s *Store) writeOwned(ctx context.Context, wb *writeBatch, settle func(error)) error {
	if wb.empty() || !s.mayStall() {
		err := s.write(ctx, wb)
		settle(err)
		return err
	}
	if r, _ := ctx.Value(replicatorKey{}).(Replicator); r != nil {
		// A replicator returns only once the batch is applied or never
		// will be, whatever ctx does (its contract).
		err := r.Replicate(ctx, wb.encode())
		settle(err)
		return err
	}
	if err := s.refuseWhileStalled(); err != nil {
		settle(err)
		return err
	}
	// state: writeRunning, then writeSettled (set by the goroutine) or
	// writeAbandoned (set by the caller), whichever comes first.
	var state atomic.Int32
	done := make(chan error, 1)
	go func() {
		err := s.applier.apply(ctx, wb)
		settle(err)
		if !state.CompareAndSwap(writeRunning, writeSettled) {
			s.inflight.pending.Add(-1)
		}
		done <- err
	}()
	var cause error
	for cause == nil {
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			cause = ctx.Err()
		case <-s.closing:
			cause = ErrClosed
		case <-s.stall.refusing():
			// The store refuses writes for a stall that ends only
			// when space is freed, and this write may be one Pebble
			// holds in it (writestall.go). (Still nil when the store
			// took writes again as the wait ended: wait anew.)
			if full := s.stallRefusal(); full != nil {
				cause = full
			}
		}
	}
	// Counted before the goroutine can look, undone if it settled first.
	s.inflight.pending.Add(1)
	if !state.CompareAndSwap(writeRunning, writeAbandoned) {
		s.inflight.pending.Add(-1)
		return <-done
	}
	s.inflight.abandoned.Add(1)
	return &WriteInDoubtError{Err: cause}
}

// mayStall reports whether a write may meet Pebble's stall on a full
// disk: the disk is full or close to it, or writes are held now.
func (s *Store) mayStall() bool {
	return s.ownAll || s.space.atRisk() || s.stall.stalled.Load() > 0 || s.gate.neverFitting()
}

// The states of an owned write.
const (
	writeRunning int32 = iota
	writeSettled
	writeAbandoned
)
