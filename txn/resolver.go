package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
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
	// flights are the region-wide resolutions under way or done, so that
	// the readers that meet one dead transaction at once scan each region
	// for its locks once (resolveRegions).
	flights map[regionFlightKey]*regionFlight
}

func newLockResolver(s *Store, capacity int) *LockResolver {
	return &LockResolver{s: s, states: make(map[uint64]finalState), cap: capacity,
		flights: make(map[regionFlightKey]*regionFlight)}
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

// bigTxnKeys is the transaction size (TxnSize, in keys) from which the
// resolver settles a dead transaction's locks region by region, with one
// ResolveLock that scans the region's lock space for all of them, rather
// than key by key (client-go's bigTxnThreshold): a reader that meets the
// first lock of a large transaction then pays for its locks once, not once
// per request that meets one.
const bigTxnKeys = 16

// Resolve settles lock l, met by a request of a transaction that started at
// callerStartTS; it is ResolveLocks of one lock.
func (r *LockResolver) Resolve(ctx context.Context, l kv.LockInfo, callerStartTS uint64) (LockOutcome, error) {
	out, err := r.ResolveLocks(ctx, []kv.LockInfo{l}, callerStartTS)
	if err != nil {
		return 0, err
	}
	return out[0], nil
}

// ResolveLocks settles the locks one request met, for a request of a
// transaction that started at callerStartTS: a reader passes its read
// timestamp (kv.MaxTS for a read without one), a writer passes 0, so that
// a live lock is not pushed. It returns the outcome of each lock.
//
// The fate of each transaction is decided once, from its primary
// (CheckTxnStatus), and cached when final:
//
//   - The primary committed: the locks are committed (rolled forward).
//   - The primary was rolled back, or its TTL ran out: the locks are rolled
//     back (CheckTxnStatus rolls back the primary itself).
//   - The primary is alive: a reader whose CheckTxnStatus pushed the
//     primary's min_commit_ts above its timestamp, or one that reads at
//     kv.MaxTS, may read the version before the lock (LockReadPast);
//     anyone else waits (LockAlive).
//
// A decided transaction of at least bigTxnKeys keys is resolved with one
// ResolveLock per region its met locks lie in, which resolves all its
// locks there; a smaller one with one ResolveLock per region naming the
// keys met. Either way the cost is linear in the locks resolved.
//
// A reader at kv.MaxTS makes no oracle call: it measures TTLs by the local
// clock, which can only make a lock look expired early or late. Neither is
// unsafe: the primary's commit and its rollback exclude each other at the
// store, so a rollback never undoes an acknowledged commit.
func (r *LockResolver) ResolveLocks(ctx context.Context, locks []kv.LockInfo, callerStartTS uint64) ([]LockOutcome, error) {
	out := make([]LockOutcome, len(locks))
	fates := make(map[uint64]txnFate)
	var currentTS uint64
	for i, l := range locks {
		f, ok := fates[l.StartTS]
		if !ok {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("resolve lock on %q: %w", l.Key, context.Cause(ctx))
			}
			var err error
			if f, err = r.fate(ctx, l, callerStartTS, &currentTS); err != nil {
				return nil, err
			}
			fates[l.StartTS] = f
		}
		out[i] = f.outcome
	}
	for startTS, f := range fates {
		if f.final == nil {
			continue
		}
		var mine []kv.LockInfo
		for _, l := range locks {
			if l.StartTS == startTS {
				mine = append(mine, l)
			}
		}
		if err := r.resolveTxn(ctx, mine, *f.final); err != nil {
			return nil, err
		}
	}
	r.s.stats.noteLocks(out)
	return out, nil
}

// txnFate is what a ResolveLocks call learned of one transaction: the
// outcome of its locks, and its final state when decided.
type txnFate struct {
	outcome LockOutcome
	final   *finalState
}

// fate decides the fate of lock l's transaction from the cache or from
// its primary. *currentTS is the oracle's time, fetched on first need and
// shared by the call's checks.
func (r *LockResolver) fate(ctx context.Context, l kv.LockInfo, callerStartTS uint64, currentTS *uint64) (txnFate, error) {
	if st, ok := r.cached(l.StartTS); ok {
		return txnFate{outcome: LockGone, final: &st}, nil
	}
	if *currentTS == 0 {
		if callerStartTS == kv.MaxTS {
			*currentTS = tso.FromTime(time.Now())
		} else {
			ts, err := r.s.timestamp(ctx)
			if err != nil {
				return txnFate{}, fmt.Errorf("resolve lock on %q: %w", l.Key, err)
			}
			*currentTS = ts
		}
	}
	req := &kv.CheckTxnStatusRequest{
		PrimaryKey:    l.Primary,
		LockTS:        l.StartTS,
		CallerStartTS: callerStartTS,
		CurrentTS:     *currentTS,
		// While the lock met is young, a missing primary lock may be a
		// prewrite still in flight (batches are prewritten in parallel):
		// do not abort the transaction for that (see below). Once the lock
		// met has expired, the transaction is dead either way.
		RollbackIfNotExist: expired(l, *currentTS),
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
				return txnFate{outcome: LockReadPast}, nil
			}
			return txnFate{outcome: LockAlive}, nil
		}
		return txnFate{}, fmt.Errorf("check status of txn %d (primary %q): %w", l.StartTS, l.Primary, err)
	}
	switch resp.Action {
	case kv.TxnActionCommitted:
		st := finalState{commitTS: resp.CommitTS}
		r.remember(l.StartTS, st)
		return txnFate{outcome: LockGone, final: &st}, nil
	case kv.TxnActionTTLExpireRollback, kv.TxnActionLockNotExistRollback, kv.TxnActionRolledBack:
		st := finalState{}
		r.remember(l.StartTS, st)
		return txnFate{outcome: LockGone, final: &st}, nil
	}
	// The primary is alive. A reader may read past it when it cannot
	// commit at or below the reader's timestamp: this call pushed its
	// min_commit_ts above it, or an earlier reader pushed it higher still.
	// A reader at kv.MaxTS reads it as not yet committed.
	pushed := resp.Action == kv.TxnActionMinCommitTSPushed ||
		(resp.Lock != nil && resp.Lock.MinCommitTS > callerStartTS)
	if callerStartTS == kv.MaxTS || (callerStartTS != 0 && pushed) {
		return txnFate{outcome: LockReadPast}, nil
	}
	return txnFate{outcome: LockAlive}, nil
}

// resolveTxn commits or rolls back, as st says, the locks of one decided
// transaction that a request met. The primary needs nothing:
// CheckTxnStatus found it committed, or rolled it back.
func (r *LockResolver) resolveTxn(ctx context.Context, locks []kv.LockInfo, st finalState) error {
	startTS := locks[0].StartTS
	big := false
	var keys [][]byte
	for _, l := range locks {
		big = big || l.TxnSize >= bigTxnKeys
		if !bytes.Equal(l.Key, l.Primary) {
			keys = append(keys, l.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	first := keys[0]
	what := func(err error) error {
		return fmt.Errorf("resolve locks of txn %d (commit_ts %d), first on %q: %w", startTS, st.commitTS, first, err)
	}
	if big {
		var err error
		if keys, err = r.resolveRegions(ctx, startTS, st, keys); err != nil {
			return what(err)
		}
		if len(keys) == 0 {
			return nil
		}
	}
	sorted, err := sortedKeys(keys)
	if err != nil {
		return what(err)
	}
	spans, err := groupByRegion(ctx, r.s.client, sorted, 0, len(sorted))
	if err != nil {
		return what(err)
	}
	err = r.s.runSpans(ctx, sorted, spans, func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		return r.s.client.ResolveLock(ctx, &kv.ResolveLockRequest{
			Region: reg.Ctx(), StartTS: startTS, CommitTS: st.commitTS, Keys: sorted[lo:hi],
		})
	})
	if err != nil {
		return what(err)
	}
	return nil
}

// regionFlightKey names the resolution of one transaction's locks in one
// region as the region is at one epoch.
type regionFlightKey struct{ startTS, region, version uint64 }

// regionFlight is one region-wide resolution, shared by the calls that
// need it. err is set before done is closed.
type regionFlight struct {
	done chan struct{}
	err  error
}

// maxFlights is how many region-wide resolutions the resolver remembers
// before it forgets the finished ones.
const maxFlights = 1024

// resolveRegions resolves, with one ResolveLock per region, every lock of
// transaction startTS in the regions of keys, and returns the keys left
// to name one by one: those of regions whose whole resolution another
// call made (or was making: this call waits for it). Naming them is cheap
// and always makes progress, also for a lock that came after that
// region's scan (a late prewrite of a dead transaction).
func (r *LockResolver) resolveRegions(ctx context.Context, startTS uint64, st finalState, keys [][]byte) (rest [][]byte, err error) {
	var done []kv.RegionInfo // the regions this call resolved whole
	for _, k := range keys {
		if slices.ContainsFunc(done, func(reg kv.RegionInfo) bool { return reg.Contains(k) }) {
			continue
		}
		whole := false
		err := r.s.onRegion(ctx, k, func(ctx context.Context, reg kv.RegionInfo) error {
			fk := regionFlightKey{startTS: startTS, region: reg.ID, version: reg.Epoch.Version}
			f, lead := r.joinFlight(fk)
			if !lead {
				select {
				case <-f.done:
				case <-ctx.Done():
					return context.Cause(ctx)
				}
				if f.err == nil {
					return nil // resolved by another call
				}
				// That call failed (its statement was cancelled, say):
				// resolve the region here.
			}
			err := r.s.client.ResolveLock(ctx, &kv.ResolveLockRequest{Region: reg.Ctx(), StartTS: startTS, CommitTS: st.commitTS})
			if lead {
				r.endFlight(fk, f, err)
			}
			if err == nil {
				whole = true
				done = append(done, reg)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if !whole {
			rest = append(rest, k)
		}
	}
	return rest, nil
}

// joinFlight returns the flight of k, and whether the caller leads it (a
// new one: the caller runs it and ends it with endFlight).
func (r *LockResolver) joinFlight(k regionFlightKey) (*regionFlight, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f, ok := r.flights[k]; ok {
		return f, false
	}
	if len(r.flights) >= maxFlights {
		for fk, f := range r.flights {
			select {
			case <-f.done:
				delete(r.flights, fk)
			default:
			}
		}
	}
	f := &regionFlight{done: make(chan struct{})}
	r.flights[k] = f
	return f, true
}

// endFlight ends flight f of k with err. A failed flight is forgotten, so
// that the next call that needs it leads it again.
func (r *LockResolver) endFlight(k regionFlightKey, f *regionFlight, err error) {
	r.mu.Lock()
	f.err = err
	if err != nil {
		delete(r.flights, k)
	}
	r.mu.Unlock()
	close(f.done)
}

// versionBelow is the read timestamp that returns what a reader should
// see when it may read past lock l: the newest committed version below
// the lock's start_ts. While the lock exists no version of its key can
// have committed at or after its start_ts (that prewrite would have met a
// write conflict, and later writers wait for the lock), so this is the
// newest committed version at any timestamp the lock does not cover. A
// pessimistic transaction's lock is the exception: versions may have
// committed up to its for_update_ts (it locked the key then, and checked
// nothing newer existed), none after.
func versionBelow(l kv.LockInfo) uint64 { return max(l.StartTS-1, l.ForUpdateTS) }

// isTxnNotFound reports whether CheckTxnStatus found neither a lock nor a
// record of the transaction (and was not asked to roll it back).
func isTxnNotFound(err error) bool {
	var nf *kv.TxnLockNotFoundError
	return errors.As(err, &nf)
}
