package txn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/percdb/percdb/kv"
)

// Store is the transactional view of one kv cluster, shared by all
// sessions of a process: it begins transactions, serves autocommit point
// reads, and owns the goroutines that outlive a single call (the
// heartbeat of commits in progress and the commits of secondaries after
// the caller was answered) and the LockResolver. It is safe for concurrent
// use.
type Store struct {
	client   kv.Client
	oracle   Oracle
	opts     Options
	resolver *LockResolver
	// err is set when NewStore got invalid arguments; every operation
	// returns it.
	err error

	oracleCalls atomic.Uint64
	// stats counts transaction outcomes (stats.go).
	stats txnStats
	// maxTS is the largest timestamp this Store has received from the
	// oracle. Every timestamp the oracle issues from now on is larger, which
	// is what makes maxTS+1 a safe bound for a calculated 1PC commit_ts.
	maxTS atomic.Uint64
	// maxOnePCTS is the largest commit_ts of a 1PC commit by this Store;
	// see startTimestamp.
	maxOnePCTS atomic.Uint64

	heartbeat *heartbeat
	// active holds the running transactions' start_ts (active.go).
	active activeTxns

	// bgCtx is the context of the heartbeat loop; it ends when Close has
	// waited for the background commits.
	bgCtx    context.Context
	bgCancel context.CancelFunc
	// bgSlots bounds the goroutines committing secondaries.
	bgSlots chan struct{}
	// mu orders closing against bgWG.Add: a background commit is only
	// started while the Store is open, so that Close's Wait sees it.
	// closed is atomic besides, so that requests check it without the lock.
	mu       sync.Mutex
	closed   atomic.Bool
	bgWG     sync.WaitGroup
	loopDone chan struct{}
}

// NewStore returns a Store over client that takes timestamps from oracle.
// Options left zero take their defaults. NewStore cannot fail: invalid
// arguments (see Options.Validate) give a Store whose every operation
// returns the error naming them.
func NewStore(client kv.Client, oracle Oracle, opts Options) *Store {
	s := &Store{client: client, oracle: oracle, loopDone: make(chan struct{})}
	s.bgCtx, s.bgCancel = context.WithCancel(context.Background())
	opts, err := opts.withDefaults()
	if err == nil && (client == nil || oracle == nil) {
		err = errors.New("txn: NewStore needs a kv.Client and an Oracle")
	}
	s.opts = opts
	if err != nil {
		s.err = err
		close(s.loopDone)
		return s
	}
	s.heartbeat = newHeartbeat()
	s.bgSlots = make(chan struct{}, opts.MaxBackgroundCommits)
	s.resolver = newLockResolver(s, opts.ResolvedCacheSize)
	go func() {
		defer close(s.loopDone)
		s.runHeartbeat(s.bgCtx)
	}()
	return s
}

// Close waits for the secondaries still being committed in the background
// and stops the Store's goroutines. Transactions must not be used after
// Close; their commits fail with ErrStoreClosed. Close is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return nil
	}
	s.closed.Store(true)
	s.mu.Unlock()
	s.bgWG.Wait()
	s.bgCancel()
	<-s.loopDone
	return nil
}

// usable returns why the Store cannot serve requests, or nil.
func (s *Store) usable() error {
	if s.err != nil {
		return s.err
	}
	if s.closed.Load() {
		return ErrStoreClosed
	}
	return nil
}

// background runs fn in a Store goroutine when a slot is free, else in the
// caller before returning: the work is bounded either way, and it always
// runs to completion (Close waits for it).
func (s *Store) background(fn func(ctx context.Context)) {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		fn(context.Background())
		return
	}
	select {
	case s.bgSlots <- struct{}{}:
	default:
		s.mu.Unlock()
		fn(context.Background())
		return
	}
	s.bgWG.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.bgWG.Done()
		defer func() { <-s.bgSlots }()
		// Not bgCtx: the work is bounded and Close waits for it, and a
		// context that many concurrent requests derive from would
		// serialize them on its lock.
		fn(context.Background())
	}()
}

// OracleCalls returns how many timestamps this Store has asked the oracle
// for, for tests and SHOW STATUS.
func (s *Store) OracleCalls() uint64 { return s.oracleCalls.Load() }

// Client returns the kv.Client the store runs on (for what is not a
// transaction: routing, and splitting regions through kv.Splitter).
func (s *Store) Client() kv.Client { return s.client }

// LockResolver returns the Store's lock resolver.
func (s *Store) LockResolver() *LockResolver { return s.resolver }

// timestamp fetches a timestamp from the oracle and raises maxTS to it.
func (s *Store) timestamp(ctx context.Context) (uint64, error) {
	s.oracleCalls.Add(1)
	ts, err := s.oracle.GetTimestamp(ctx)
	return s.issued(ts, err)
}

// timestampAbove is timestamp through an AboveOracle: one call for a
// timestamp above floor (see AboveOracle for what floor may be).
func (s *Store) timestampAbove(ctx context.Context, o AboveOracle, floor uint64) (uint64, error) {
	s.oracleCalls.Add(1)
	ts, err := o.GetTimestampAbove(ctx, floor)
	return s.issued(ts, err)
}

// issued checks a timestamp the oracle answered and raises maxTS to it.
func (s *Store) issued(ts uint64, err error) (uint64, error) {
	if err != nil {
		return 0, fmt.Errorf("get timestamp: %w", err)
	}
	if ts == 0 || ts == kv.MaxTS {
		return 0, fmt.Errorf("get timestamp: oracle returned the reserved timestamp %d", ts)
	}
	for {
		cur := s.maxTS.Load()
		if ts <= cur || s.maxTS.CompareAndSwap(cur, ts) {
			return ts, nil
		}
	}
}

// startTimestamp fetches a start_ts that is not the commit_ts of a 1PC
// commit by this Store. A calculated commit_ts may be maxTS+1, which is
// exactly the oracle's next timestamp when nothing else asked for one
// meanwhile; kv's prewrite counts a write record at commit_ts == start_ts
// as a conflict (conservatively: the record is in the snapshot), so a
// transaction starting at that timestamp would fail on any key the 1PC
// commit wrote. When the newest such commit_ts is above every timestamp
// seen (the next may be it: one client alone, every statement a 1PC
// commit), an AboveOracle is asked for one above it, in one call; else
// the timestamp is fetched, and fetched again if it is one (a 1PC commit
// noted meanwhile), which costs one oracle call more in that case only.
// maxOnePCTS is never more than one above a timestamp the oracle issued
// (the calculation's bound, tryOnePC), as AboveOracle requires.
func (s *Store) startTimestamp(ctx context.Context) (uint64, error) {
	var ts uint64
	var err error
	if o, ok := s.oracle.(AboveOracle); ok && s.maxOnePCTS.Load() > s.maxTS.Load() {
		ts, err = s.timestampAbove(ctx, o, s.maxOnePCTS.Load())
	} else {
		ts, err = s.timestamp(ctx)
	}
	if err == nil && ts <= s.maxOnePCTS.Load() {
		ts, err = s.timestamp(ctx)
	}
	return ts, err
}

// noteOnePC records the commit_ts of a 1PC commit.
func (s *Store) noteOnePC(commitTS uint64) {
	for {
		cur := s.maxOnePCTS.Load()
		if commitTS <= cur || s.maxOnePCTS.CompareAndSwap(cur, commitTS) {
			return
		}
	}
}

// Begin starts a transaction. Its start_ts is fetched lazily, by the first
// read or by the commit, so that a transaction that only writes blindly
// costs one oracle call and one that does nothing costs none.
func (s *Store) Begin(ctx context.Context) (*Txn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	if err := s.usable(); err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	t := &Txn{s: s, buf: newMemBuffer()}
	if g := s.opts.CommitGuard; g != nil {
		t.guardToken = g.Token()
	}
	return t, nil
}

// PointGet reads the latest committed value of key without a timestamp
// (at kv.MaxTS), so it costs no oracle call: an autocommit point read.
// It is linearizable: it sees every commit acknowledged before it began,
// and a transaction whose primary is locked but not committed when the
// read meets its lock is read as not yet committed.
func (s *Store) PointGet(ctx context.Context, key []byte) ([]byte, bool, error) {
	if err := checkKey(key); err != nil {
		return nil, false, fmt.Errorf("point get: %w", err)
	}
	if err := s.usable(); err != nil {
		return nil, false, fmt.Errorf("point get %q: %w", key, err)
	}
	v, err := s.get(ctx, key, kv.MaxTS)
	if err != nil {
		return nil, false, fmt.Errorf("point get %q: %w", key, err)
	}
	return v, v != nil, nil
}

// BatchPointGet reads the latest committed values of keys, an autocommit
// read of several keys, and returns the keys found (as strings) with their
// values. The result is a snapshot and linearizable. When every key lies
// in one region it is read with one request at kv.MaxTS, which needs no
// timestamp; if that request meets a lock, or the keys span regions (one
// request per region could see a transaction committing in between in
// some keys and not in others), it fetches one timestamp and reads a
// snapshot at it, the regions in parallel.
func (s *Store) BatchPointGet(ctx context.Context, keys [][]byte) (map[string][]byte, error) {
	if err := s.usable(); err != nil {
		return nil, fmt.Errorf("batch point get: %w", err)
	}
	out, err := s.batchPointGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("batch point get: %w", err)
	}
	return out, nil
}

func (s *Store) batchPointGet(ctx context.Context, keys [][]byte) (map[string][]byte, error) {
	sorted, err := sortedKeys(keys)
	if err != nil || len(sorted) == 0 {
		return map[string][]byte{}, err
	}
	spans, err := groupByRegion(ctx, s.client, sorted, 0, len(sorted))
	if err != nil {
		return nil, err
	}
	if len(spans) == 1 {
		pairs, err := s.client.BatchGet(ctx, spans[0].region.Ctx(), sorted, kv.MaxTS)
		var (
			locked *kv.KeyIsLockedError
			re     *kv.RegionError
		)
		switch {
		case err == nil:
			out := make(map[string][]byte, len(pairs))
			for _, p := range pairs {
				out[string(p.Key)] = p.Value
			}
			return out, nil
		case errors.As(err, &re):
			s.client.InvalidateRegion(spans[0].region.ID)
		case !errors.As(err, &locked):
			return nil, err
		}
	}
	ts, err := s.timestamp(ctx)
	if err != nil {
		return nil, err
	}
	return s.batchGet(ctx, sorted, ts)
}
