package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/tso"
)

// LockOutcome is what the LockResolver found out about a lock.
type LockOutcome uint8

const (
	// LockGone: the lock was committed or rolled back (by this call or
	// before it); retry the request.
	LockGone LockOutcome = iota + 1
	// LockReadPast: the lock's transaction is alive but cannot commit at
	// or below the reader's timestamp (its min_commit_ts was pushed above
	// it, or the reader reads at kv.MaxTS and the primary is not
	// committed): the reader may return the newest version committed
	// below the lock, by reading the key at the lock's start_ts-1 (no
	// version of a locked key can commit at or after its lock's start_ts).
	LockReadPast
	// LockAlive: the lock's transaction is alive; wait and retry.
	LockAlive
)

// String names the outcome.
func (o LockOutcome) String() string {
	switch o {
	case LockGone:
		return "gone"
	case LockReadPast:
		return "read-past"
	case LockAlive:
		return "alive"
	}
	return fmt.Sprintf("LockOutcome(%d)", uint8(o))
}

// finalState is a transaction's fate once decided: committed at commitTS,
// or rolled back when commitTS is 0. It never changes after that.
type finalState struct{ commitTS uint64 }

// LockResolver settles the locks that readers and writers meet, TiKV
// client-go style: the fate of a transaction is decided by its primary
// lock alone, so a lock on any key is resolved by asking the primary's
// region (CheckTxnStatus) and then committing or rolling back the lock met.
// Decided fates are cached: they never change, and the locks of one dead
// transaction are usually met by many requests. It is safe for concurrent
// use; a Store owns one.
type LockResolver struct {
	s *Store

	mu sync.Mutex
	// states holds at most cap entries; order is the FIFO of their keys,
	// used as a ring so that the oldest decision is forgotten first.
	states map[uint64]finalState
	order  []uint64
	next   int
	cap    int
}

func newLockResolver(s *Store, capacity int) *LockResolver {
	return &LockResolver{s: s, states: make(map[uint64]finalState), cap: capacity}
}

// cached returns the decided fate of transaction startTS, if known.
func (r *LockResolver) cached(startTS uint64) (finalState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.states[startTS]
	return st, ok
}

// remember records the fate of transaction startTS.
func (r *LockResolver) remember(startTS uint64, st finalState) {
	if r.cap == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.states[startTS]; ok {
		return
	}
	if len(r.order) < r.cap {
		r.order = append(r.order, startTS)
	} else {
		delete(r.states, r.order[r.next])
		r.order[r.next] = startTS
		r.next = (r.next + 1) % r.cap
	}
	r.states[startTS] = st
}

// expired reports whether lock l's TTL has run out by currentTS. TTLs are
// counted from the physical part of the lock's start_ts.
func expired(l kv.LockInfo, currentTS uint64) bool {
	return uint64(tso.Physical(currentTS)) >= uint64(tso.Physical(l.StartTS))+l.TTL
}

// Resolve settles lock l, met by a request of a transaction that started at
// callerStartTS: a reader passes its read timestamp (kv.MaxTS for a read
// without one), a writer passes 0, so that a live lock is not pushed.
//
//   - The primary committed: the lock is committed (rolled forward).
//   - The primary was rolled back, or its TTL ran out: the lock is rolled
//     back (CheckTxnStatus rolls back the primary itself).
//   - The primary is alive: a reader whose CheckTxnStatus pushed the
//     primary's min_commit_ts above its timestamp, or one that reads at
//     kv.MaxTS, may read the version before the lock (LockReadPast);
//     anyone else waits (LockAlive).
//
// A reader at kv.MaxTS makes no oracle call: it measures TTLs by the local
// clock, which can only make a lock look expired early or late. Neither is
// unsafe: the primary's commit and its rollback exclude each other at the
// store, so a rollback never undoes an acknowledged commit.
func (r *LockResolver) Resolve(ctx context.Context, l kv.LockInfo, callerStartTS uint64) (LockOutcome, error) {
	if st, ok := r.cached(l.StartTS); ok {
		return LockGone, r.resolveKey(ctx, l, st)
	}
	var currentTS uint64
	if callerStartTS == kv.MaxTS {
		currentTS = tso.FromTime(time.Now())
	} else {
		ts, err := r.s.timestamp(ctx)
		if err != nil {
			return 0, fmt.Errorf("resolve lock on %q: %w", l.Key, err)
		}
		currentTS = ts
	}
	req := &kv.CheckTxnStatusRequest{
		PrimaryKey:    l.Primary,
		LockTS:        l.StartTS,
		CallerStartTS: callerStartTS,
		CurrentTS:     currentTS,
		// While the lock met is young, a missing primary lock may be a
		// prewrite still in flight (batches are prewritten in parallel):
		// do not abort the transaction for that (see below). Once the lock
		// met has expired, the transaction is dead either way.
		RollbackIfNotExist: expired(l, currentTS),
	}
	var resp *kv.CheckTxnStatusResponse
	err := r.s.onRegion(ctx, l.Primary, func(ctx context.Context, reg kv.RegionInfo) error {
		req.Region = reg.Ctx()
		var err error
		resp, err = r.s.client.CheckTxnStatus(ctx, req)
		return err
	})
	if err != nil {
		if isTxnNotFound(err) {
			// No primary lock and no record, and we asked for no rollback:
			// the primary's prewrite is still on its way (batches are
			// prewritten in parallel) or failed and the rollback is on its
			// way. Either way the transaction fetches its commit_ts, if
			// ever, after its primary is prewritten, which is after this
			// check and so above any reader's timestamp: a reader may read
			// past the lock. A writer waits (or dies, see doc.go).
			if callerStartTS != 0 {
				return LockReadPast, nil
			}
			return LockAlive, nil
		}
		return 0, fmt.Errorf("check status of txn %d (primary %q): %w", l.StartTS, l.Primary, err)
	}
	switch resp.Action {
	case kv.TxnActionCommitted:
		st := finalState{commitTS: resp.CommitTS}
		r.remember(l.StartTS, st)
		return LockGone, r.resolveKey(ctx, l, st)
	case kv.TxnActionTTLExpireRollback, kv.TxnActionLockNotExistRollback, kv.TxnActionRolledBack:
		st := finalState{}
		r.remember(l.StartTS, st)
		return LockGone, r.resolveKey(ctx, l, st)
	}
	// The primary is alive. A reader may read past it when it cannot
	// commit at or below the reader's timestamp: this call pushed its
	// min_commit_ts above it, or an earlier reader pushed it higher still.
	// A reader at kv.MaxTS reads it as not yet committed.
	pushed := resp.Action == kv.TxnActionMinCommitTSPushed ||
		(resp.Lock != nil && resp.Lock.MinCommitTS > callerStartTS)
	if callerStartTS == kv.MaxTS || (callerStartTS != 0 && pushed) {
		return LockReadPast, nil
	}
	return LockAlive, nil
}

// resolveKey commits or rolls back lock l as st says. The primary needs
// nothing: CheckTxnStatus found it committed, or rolled it back.
func (r *LockResolver) resolveKey(ctx context.Context, l kv.LockInfo, st finalState) error {
	if bytes.Equal(l.Key, l.Primary) {
		return nil
	}
	req := &kv.ResolveLockRequest{StartTS: l.StartTS, CommitTS: st.commitTS, Keys: [][]byte{l.Key}}
	err := r.s.onRegion(ctx, l.Key, func(ctx context.Context, reg kv.RegionInfo) error {
		req.Region = reg.Ctx()
		return r.s.client.ResolveLock(ctx, req)
	})
	if err != nil {
		return fmt.Errorf("resolve lock of txn %d on %q (commit_ts %d): %w", l.StartTS, l.Key, st.commitTS, err)
	}
	return nil
}

// versionBelow is the read timestamp that returns what a reader should
// see when it may read past lock l: the newest committed version below
// the lock's start_ts. While the lock exists no version of its key can
// have committed at or after its start_ts (that prewrite would have met a
// write conflict, and later writers wait for the lock), so this is the
// newest committed version at any timestamp the lock does not cover.
func versionBelow(l kv.LockInfo) uint64 { return l.StartTS - 1 }

// isTxnNotFound reports whether CheckTxnStatus found neither a lock nor a
// record of the transaction (and was not asked to roll it back).
func isTxnNotFound(err error) bool {
	var nf *kv.TxnLockNotFoundError
	return errors.As(err, &nf)
}
