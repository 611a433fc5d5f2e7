package gcworker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// env is an in-memory store split in two regions, a txn Store over it and
// a Worker with a life time of 0 (the safe point is now, or just below
// the oldest running transaction).
type env struct {
	kv     *kv.Store
	client kv.GCClient
	oracle txn.Oracle
	txns   *txn.Store
	w      *Worker
	ranges *memRanges
	// settings is what the worker's Settings returns.
	settings Settings
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	if _, _, err := ks.SplitRegion(context.Background(), []byte("m")); err != nil {
		t.Fatal(err)
	}
	e := &env{kv: ks, client: kv.NewLocalClient(ks).(kv.GCClient), oracle: txntest.NewClockOracle(0), ranges: &memRanges{}}
	e.txns = e.newTxnStore(t, txn.Options{})
	e.w = e.newWorker(t, e.client)
	return e
}

func (e *env) newTxnStore(t *testing.T, opts txn.Options) *txn.Store {
	s := txn.NewStore(e.client, e.oracle, opts)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func (e *env) newWorker(t *testing.T, client kv.GCClient) *Worker {
	w, err := New(Config{
		Client: client, Txns: e.txns, Oracle: e.oracle,
		SafePoints: &LocalSafePoint{Store: e.kv},
		Active:     e.txns, Ranges: e.ranges,
		Settings:      func() Settings { return e.settings },
		KeysPerSecond: -1, BatchKeys: 8,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// commit writes pairs (key, value, ...; value "" deletes) in one
// transaction and returns its commit_ts.
func (e *env) commit(t *testing.T, pairs ...string) uint64 {
	t.Helper()
	ctx := context.Background()
	k, err := e.txns.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			err = k.Delete([]byte(pairs[i]))
		} else {
			err = k.Set([]byte(pairs[i]), []byte(pairs[i+1]))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return k.CommitTS()
}

// readAt reads key at ts directly from the store, settling the locks it
// meets as a reader does.
func (e *env) readAt(t *testing.T, key string, ts uint64) (string, error) {
	t.Helper()
	ctx := context.Background()
	r, err := e.client.LocateKey(ctx, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.client.Get(ctx, r.Ctx(), []byte(key), ts)
	// A secondary whose commit is still on its way in the background.
	for tries := 0; tries < 100; tries++ {
		var locked *kv.KeyIsLockedError
		if !errors.As(err, &locked) {
			break
		}
		if _, err := e.txns.LockResolver().Resolve(ctx, locked.Lock, ts); err != nil {
			t.Fatal(err)
		}
		v, err = e.client.Get(ctx, r.Ctx(), []byte(key), ts)
	}
	if v == nil {
		return "<none>", err
	}
	return string(v), err
}

// locks returns the locks left anywhere, at any start_ts.
func (e *env) locks(t *testing.T) []kv.LockInfo {
	t.Helper()
	var all []kv.LockInfo
	for _, r := range e.kv.Regions() {
		resp, err := e.client.ScanLock(context.Background(), &kv.ScanLockRequest{Region: r.Ctx(), MaxTS: kv.MaxTS, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, resp.Locks...)
	}
	return all
}

// memRanges is a DeleteRangeSource in memory.
type memRanges struct{ list []DeleteRange }

func (m *memRanges) Due(_ context.Context, sp uint64) ([]DeleteRange, error) {
	var due []DeleteRange
	for _, r := range m.list {
		if r.NotBefore < sp {
			due = append(due, r)
		}
	}
	return due, nil
}

func (m *memRanges) Done(_ context.Context, r DeleteRange) error {
	for i := range m.list {
		if string(m.list[i].ID) == string(r.ID) {
			m.list = append(m.list[:i], m.list[i+1:]...)
			return nil
		}
	}
	return nil
}

// TestKeepsWhatTheSafePointNeeds: keys updated many times keep only the
// versions the safe point requires. A running transaction holds the safe
// point just below its start_ts and reads what it read before; a reader
// at any timestamp from the safe point up reads exactly the version it
// read before GC; a reader below it gets *kv.GCTooOldError, never a wrong
// answer.
func TestKeepsWhatTheSafePointNeeds(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	type version struct {
		ts   uint64
		a, z string
	}
	var history []version
	for i := 1; i <= 30; i++ {
		a, z := fmt.Sprintf("a%d", i), fmt.Sprintf("z%d", i)
		if i%7 == 0 {
			z = "" // deleted now and then
		}
		ts := e.commit(t, "a", a, "z", z)
		history = append(history, version{ts: ts, a: a, z: z})
	}
	reader, err := e.txns.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	readerTS, err := reader.StartTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 31; i <= 40; i++ {
		a := fmt.Sprintf("a%d", i)
		history = append(history, version{ts: e.commit(t, "a", a, "z", a), a: a, z: a})
	}
	sp, err := e.w.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sp != readerTS-1 {
		t.Fatalf("safe point %d, want just below the running reader's start_ts %d", sp, readerTS)
	}
	if v, _, err := reader.Get(ctx, []byte("a")); err != nil || string(v) != "a30" {
		t.Fatalf("the running reader reads %q, %v; want a30", v, err)
	}
	// 29 of a's 30 versions below the safe point go, and z's 29 (z30 is a
	// Put, the newest).
	if st := e.w.Stats(); st.VersionsDeleted != 58 {
		t.Fatalf("deleted %d versions, want 58", st.VersionsDeleted)
	}
	for _, v := range history {
		for _, ts := range []uint64{v.ts} {
			gotA, errA := e.readAt(t, "a", ts)
			gotZ, errZ := e.readAt(t, "z", ts)
			if ts < sp {
				var old *kv.GCTooOldError
				if !errors.As(errA, &old) || !errors.As(errZ, &old) {
					t.Fatalf("read at %d below the safe point %d: %q %v, %q %v; want GCTooOldError", ts, sp, gotA, errA, gotZ, errZ)
				}
				continue
			}
			wantZ := v.z
			if wantZ == "" {
				wantZ = "<none>"
			}
			if errA != nil || errZ != nil || gotA != v.a || gotZ != wantZ {
				t.Fatalf("read at %d (safe point %d): a=%q %v z=%q %v; want %q %q", ts, sp, gotA, errA, gotZ, errZ, v.a, wantZ)
			}
		}
	}
	// The reader ends: the next run collects up to now, and a second
	// finds nothing more.
	_ = reader.Rollback(ctx)
	if _, err := e.w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	before := e.w.Stats().VersionsDeleted
	if before != 39+39 {
		t.Fatalf("deleted %d versions in all, want %d (all but the newest of each key)", before, 39+39)
	}
	if _, err := e.w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	st := e.w.Stats()
	if st.VersionsDeleted != before || st.RegionsSkipped == 0 {
		t.Fatalf("a run with nothing new deleted %d versions and skipped %d regions", st.VersionsDeleted-before, st.RegionsSkipped)
	}
	if v, err := e.readAt(t, "a", kv.MaxTS); err != nil || v != "a40" {
		t.Fatalf("latest a: %q, %v", v, err)
	}
}

// TestResolvesDeadTransactionsLocks: the locks of a transaction that died
// after its primary committed are rolled forward, those of one that died
// before are rolled back; none is lost and none is left.
func TestResolvesDeadTransactionsLocks(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	errDie := errors.New("client died")
	onePC := false
	committed := e.newTxnStore(t, txn.Options{LockTTL: time.Hour, EnableOnePC: &onePC,
		Hooks: &txn.CommitHooks{AfterPrimaryCommit: func(uint64, uint64) error { return errDie }}})
	abandoned := e.newTxnStore(t, txn.Options{LockTTL: time.Millisecond, EnableOnePC: &onePC,
		Hooks: &txn.CommitHooks{AfterPrewrite: func(uint64) error { return errDie }}})
	write := func(s *txn.Store, pairs ...string) {
		k, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(pairs); i += 2 {
			if err := k.Set([]byte(pairs[i]), []byte(pairs[i+1])); err != nil {
				t.Fatal(err)
			}
		}
		if err := k.Commit(ctx); !errors.Is(err, errDie) {
			t.Fatalf("commit: %v, want the client to die", err)
		}
	}
	e.commit(t, "b", "old", "n", "old")
	write(committed, "a", "1", "b", "1", "n", "1", "x", "1")
	write(abandoned, "c", "2", "d", "2", "p", "2")
	if n := len(e.locks(t)); n != 6 {
		t.Fatalf("%d locks before GC, want 3 secondaries and 3 of the dead transaction", n)
	}
	time.Sleep(5 * time.Millisecond) // the abandoned transaction's TTL runs out
	if _, err := e.w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if l := e.locks(t); len(l) != 0 {
		t.Fatalf("locks left after GC: %v", l)
	}
	for key, want := range map[string]string{"a": "1", "b": "1", "n": "1", "x": "1", "c": "<none>", "d": "<none>", "p": "<none>"} {
		if got, err := e.readAt(t, key, kv.MaxTS); err != nil || got != want {
			t.Errorf("%s after GC: %q, %v; want %q", key, got, err, want)
		}
	}
	if st := e.w.Stats(); st.LocksResolved != 6 {
		t.Errorf("resolved %d locks, want 6", st.LocksResolved)
	}
}

// TestAliveLockBeyondMaxWaitIsRolledBack: a transaction running longer
// than MaxTxnWait no longer holds the safe point; its live locks below it
// are rolled back and its commit fails, and its reads get the error.
func TestAliveLockBeyondMaxWaitIsRolledBack(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.commit(t, "k", "v0")
	onePC := false
	slow := e.newTxnStore(t, txn.Options{LockTTL: time.Hour, EnableOnePC: &onePC})
	k, err := slow.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.Get(ctx, []byte("k")); err != nil {
		t.Fatal(err)
	}
	e.commit(t, "k", "v1")
	e.w.cfg.Active = slow
	e.settings.MaxTxnWait = time.Nanosecond
	if _, err := e.w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var old *kv.GCTooOldError
	if _, _, err := k.Get(ctx, []byte("other")); !errors.As(err, &old) {
		t.Fatalf("a read of a transaction beyond the wait: %v, want GCTooOldError", err)
	}
	if err := k.Set([]byte("k"), []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := k.Commit(ctx); !errors.As(err, &old) {
		t.Fatalf("its commit: %v, want GCTooOldError", err)
	}
	if v, err := e.readAt(t, "k", kv.MaxTS); err != nil || v != "v1" {
		t.Fatalf("k: %q, %v; want v1", v, err)
	}
}

// cancellingClient cancels the run's context after n GC requests.
type cancellingClient struct {
	kv.GCClient
	n      int
	cancel context.CancelFunc
}

func (c *cancellingClient) GC(ctx context.Context, req *kv.GCRequest) (*kv.GCResponse, error) {
	c.n--
	if c.n < 0 {
		c.cancel()
	}
	return c.GCClient.GC(ctx, req)
}

// TestCancelledRunIsFinishedByTheNext: a run killed mid-way leaves
// everything correct and the next run finishes the job.
func TestCancelledRunIsFinishedByTheNext(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "n", "o", "p", "q", "r", "s"}
	var last []string
	for round := 0; round < 5; round++ {
		last = nil
		for _, k := range keys {
			last = append(last, k, fmt.Sprintf("%s%d", k, round))
		}
		e.commit(t, last...)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := e.newWorker(t, &cancellingClient{GCClient: e.client, n: 1, cancel: cancel})
	if _, err := w.RunOnce(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cut run: %v, want context.Canceled", err)
	}
	partial := w.Stats().VersionsDeleted
	if partial == 0 || partial >= uint64(4*len(keys)) {
		t.Fatalf("the cut run deleted %d versions, want some but not all of %d", partial, 4*len(keys))
	}
	for i := 0; i < len(last); i += 2 {
		if v, err := e.readAt(t, last[i], kv.MaxTS); err != nil || v != last[i+1] {
			t.Fatalf("%s after the cut run: %q, %v", last[i], v, err)
		}
	}
	if _, err := e.w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got := partial + e.w.Stats().VersionsDeleted; got != uint64(4*len(keys)) {
		t.Fatalf("the runs deleted %d versions in all, want %d", got, 4*len(keys))
	}
	for i := 0; i < len(last); i += 2 {
		if v, err := e.readAt(t, last[i], kv.MaxTS); err != nil || v != last[i+1] {
			t.Fatalf("%s after the second run: %q, %v", last[i], v, err)
		}
	}
}

// TestDestroysDueRanges: a delete range is destroyed once the safe point
// is above its DDL, not before, and its record forgotten.
func TestDestroysDueRanges(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.commit(t, "t1", "1", "t2", "2", "u1", "3")
	reader, _ := e.txns.Begin(ctx)
	if _, err := reader.StartTS(ctx); err != nil {
		t.Fatal(err)
	}
	ddl, _ := e.oracle.GetTimestamp(ctx)
	e.ranges.list = []DeleteRange{{ID: []byte("r1"), Start: []byte("t"), End: []byte("u"), NotBefore: ddl, What: "drop t"}}
	if _, err := e.w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := e.readAt(t, "t1", kv.MaxTS); err != nil || v != "1" || len(e.ranges.list) != 1 {
		t.Fatalf("range destroyed while a reader older than its DDL runs: t1=%q %v, %d ranges left", v, err, len(e.ranges.list))
	}
	_ = reader.Rollback(ctx)
	if _, err := e.w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"t1": "<none>", "t2": "<none>", "u1": "3"} {
		if got, err := e.readAt(t, key, kv.MaxTS); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", key, got, err, want)
		}
	}
	if len(e.ranges.list) != 0 || e.w.Stats().RangesDestroyed != 1 {
		t.Fatalf("ranges left %v, destroyed %d", e.ranges.list, e.w.Stats().RangesDestroyed)
	}
}

// memServices is a ServiceSafePointSource in memory.
type memServices struct{ list []ServiceSafePoint }

func (m *memServices) ServiceSafePoints(_ context.Context, now time.Time) ([]ServiceSafePoint, error) {
	var live []ServiceSafePoint
	for _, s := range m.list {
		if now.Before(s.Expires) {
			live = append(live, s)
		}
	}
	return live, nil
}

// TestServiceSafePointHoldsGCBack: a service's safe point keeps the
// version visible at it and every newer one (a change feed at that
// position reads them all); once the entry expires, GC passes it.
func TestServiceSafePointHoldsGCBack(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	svcs := &memServices{}
	e.w.cfg.Services = svcs
	var ts []uint64
	for i := 1; i <= 10; i++ {
		ts = append(ts, e.commit(t, "a", fmt.Sprintf("a%d", i)))
	}
	feedAt := ts[4] // the feed has read up to a5
	svcs.list = []ServiceSafePoint{
		{ID: "feed", TS: feedAt, Expires: time.Now().Add(time.Hour)},
		{ID: "gone", TS: ts[1], Expires: time.Now().Add(-time.Second)},
	}
	sp, err := e.w.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sp != feedAt {
		t.Fatalf("safe point %d, want the live service's %d (the expired one at %d ignored)", sp, feedAt, ts[1])
	}
	for i, at := range ts[4:] {
		if v, err := e.readAt(t, "a", at); err != nil || v != fmt.Sprintf("a%d", i+5) {
			t.Fatalf("read at %d: %q, %v; want a%d", at, v, err, i+5)
		}
	}
	svcs.list[0].Expires = time.Now().Add(-time.Second)
	if sp, err = e.w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if sp <= ts[9] {
		t.Fatalf("safe point %d after the entry expired, want above the last commit %d", sp, ts[9])
	}
}
