package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/percdb/percdb/kv/internal/txntypes"
)

// TestLockSetProbe checks what a latch-free reader learns from a probe: a
// key without a lock is free, a locked key is not, and any change of the
// key's shard after the probe (even of another key) voids it.
func TestLockSetProbe(t *testing.T) {
	s := newLockSet()
	a, b := []byte("a"), []byte("b")
	p, free := s.probe(a)
	if !free || !p.unchanged() {
		t.Fatalf("probe of a key in an empty set: free %v, unchanged %v", free, p.unchanged())
	}
	s.add([][]byte{a})
	if !s.has(a) {
		t.Fatal("has(a) after add: false")
	}
	if _, free := s.probe(a); free {
		t.Fatal("probe of a locked key: free")
	}
	if p.unchanged() {
		t.Fatal("a probe taken before the key was locked still holds")
	}
	// A key of the same shard as b: changing it voids b's probe.
	var other []byte
	for i := 0; other == nil; i++ {
		if k := []byte("k" + strconv.Itoa(i)); s.shard(k) == s.shard(b) {
			other = k
		}
	}
	p, free = s.probe(b)
	if !free {
		t.Fatal("probe of an unlocked key: not free")
	}
	s.add([][]byte{other})
	if p.unchanged() {
		t.Fatal("a probe survived a change of its shard")
	}
	s.remove([][]byte{a, other})
	if s.has(a) || s.has(other) {
		t.Fatal("keys still there after remove")
	}
}

// TestLockSetBlocking checks what a range reader learns from
// probeBlocking: pessimistic and lock-type locks do not count, a lock
// whose kind is unknown does, a quiet lock replaced by one that blocks
// counts from then on, and removing it ends that.
func TestLockSetBlocking(t *testing.T) {
	s := newLockSet()
	a, b, c := []byte("a"), []byte("b"), []byte("c")
	adds, none := s.probeBlocking()
	if !none {
		t.Fatal("empty set: a blocking lock")
	}
	pess := &writeBatch{}
	pess.putLock(a, &txntypes.Lock{Type: txntypes.LockPessimistic, Primary: a, StartTS: 5})
	pess.putLock(b, &txntypes.Lock{Type: txntypes.LockLock, Primary: a, StartTS: 5})
	s.beforeApply(pess)
	if !s.has(a) || !s.has(b) {
		t.Fatal("quiet locks missing from the set")
	}
	if _, none := s.probeBlocking(); !none || !s.noBlockingAddsSince(adds) {
		t.Fatal("pessimistic and lock-type locks count as blocking a read")
	}
	p, free := s.probe(a)
	if !free {
		t.Fatal("probe of a key with a pessimistic lock: not free")
	}
	// The pessimistic lock prewritten.
	pw := &writeBatch{}
	pw.putLock(a, &txntypes.Lock{Type: txntypes.LockPut, Primary: a, StartTS: 5})
	s.beforeApply(pw)
	if _, none := s.probeBlocking(); none || s.noBlockingAddsSince(adds) {
		t.Fatal("a pessimistic lock prewritten does not count as blocking")
	}
	if p.unchanged() {
		t.Fatal("a point probe survived its key's lock turning into one that blocks")
	}
	if _, free := s.probe(a); free {
		t.Fatal("probe of a key with a prewrite lock: free")
	}
	// A batch without kinds (replicated): its lock counts.
	adds, _ = s.probeBlocking()
	s.beforeApply(&writeBatch{lockPuts: [][]byte{c}})
	if s.noBlockingAddsSince(adds) {
		t.Fatal("a lock of unknown kind does not count as blocking")
	}
	s.remove([][]byte{a, c})
	if _, none := s.probeBlocking(); !none {
		t.Fatal("blocking locks counted after their removal")
	}
	s.remove([][]byte{b})
	if s.all.Load() != 0 || s.blocking.Load() != 0 {
		t.Fatalf("all %d, blocking %d after removing every key", s.all.Load(), s.blocking.Load())
	}
}

// TestLockSetBatchRewritesLock checks that a batch that deletes and writes
// again a key's lock leaves the key in the set.
func TestLockSetBatchRewritesLock(t *testing.T) {
	s := newLockSet()
	a, b := []byte("a"), []byte("b")
	s.add([][]byte{a, b})
	wb := &writeBatch{lockDels: [][]byte{a, b}, lockPuts: [][]byte{a}}
	s.beforeApply(wb)
	s.afterApply(wb)
	if !s.has(a) || s.has(b) {
		t.Fatalf("after deleting a and b and writing a: has(a) %v, has(b) %v", s.has(a), s.has(b))
	}
}

// TestLockSetRebuiltAtOpen checks that a reopened store knows the locks
// left in its lock space: reads of the locked keys still meet them.
func TestLockSetRebuiltAtOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{SyncWrites: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	rc := s.Regions()[0].Ctx()
	resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: []byte("a"), StartTS: 10, LockTTL: 1000,
		Mutations: []Mutation{{Op: OpPut, Key: []byte("a"), Value: []byte("1")}, {Op: OpDelete, Key: []byte("b")}}})
	if err != nil || len(resp.Errors) > 0 {
		t.Fatal(resp, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, Options{SyncWrites: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []string{"a", "b"} {
		if !s.locks.has([]byte(k)) {
			t.Errorf("reopened store's lock set lacks %q", k)
		}
		var locked *KeyIsLockedError
		if _, err := s.Get(ctx, rc, []byte(k), 20); !errors.As(err, &locked) {
			t.Errorf("get %q over its lock after reopen: %v, want KeyIsLockedError", k, err)
		}
	}
	if s.locks.has([]byte("c")) {
		t.Error("reopened store's lock set holds a key never locked")
	}
}

// TestBatchGetLockedAfterProbe commits the primary of a pair of keys
// between a latch-free BatchGet's probe of the lock set and its reads: the
// read must not return the pair half-committed (the changed shard sends it
// to the lock space, where the secondary's lock blocks it).
func TestBatchGetLockedAfterProbe(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	rc := s.Regions()[0].Ctx()
	a, b := []byte("a"), []byte("b")
	s.testingAfterProbe = halfCommitOnce(t, s, a, b)
	kvs, err := s.BatchGet(ctx, rc, [][]byte{a, b}, MaxTS)
	var locked *KeyIsLockedError
	if !errors.As(err, &locked) || !bytes.Equal(locked.Lock.Key, b) {
		t.Fatalf("BatchGet across a commit of the primary: %v %v, want b's lock", kvs, err)
	}
}

// TestScanLockedAfterProbe is TestBatchGetLockedAfterProbe for a scan,
// which probes the whole lock set: a lock written and half committed
// between the probe and the walk must fail the scan.
func TestScanLockedAfterProbe(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	rc := s.Regions()[0].Ctx()
	a, b := []byte("a"), []byte("b")
	s.testingAfterProbe = halfCommitOnce(t, s, a, b)
	kvs, err := s.Scan(ctx, &ScanRequest{Region: rc, Version: MaxTS})
	var locked *KeyIsLockedError
	if !errors.As(err, &locked) || !bytes.Equal(locked.Lock.Key, b) {
		t.Fatalf("Scan across a commit of the primary: %v %v, want b's lock", kvs, err)
	}
}

// halfCommitOnce returns a testingAfterProbe hook that, the first time it
// runs, prewrites primary and secondary and commits the primary only.
func halfCommitOnce(t *testing.T, s *Store, primary, secondary []byte) func() {
	ctx := context.Background()
	rc := s.Regions()[0].Ctx()
	once := false
	return func() {
		if once {
			return
		}
		once = true
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: primary, StartTS: 10, LockTTL: 1000,
			Mutations: []Mutation{{Op: OpPut, Key: primary, Value: []byte("1")}, {Op: OpPut, Key: secondary, Value: []byte("1")}}})
		if err != nil || len(resp.Errors) > 0 {
			t.Fatal(resp, err)
		}
		if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{primary}, StartTS: 10, CommitTS: 20}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadsNeverMissALock runs two-phase commits of pairs of keys, some
// rolled back and some committed in one phase, against latch-free readers,
// and checks every read against the history:
//
//   - a Get at an oracle timestamp ts returns the value of the newest
//     commit at or below ts (or a *KeyIsLockedError): a reader that missed
//     a lock whose commit timestamp is below ts while the commit is not
//     applied would return the value before it;
//   - a BatchGet or a Scan of a pair at MaxTS returns equal values (or a
//     *KeyIsLockedError): the primary is committed before the secondary,
//     so a reader that missed the secondary's lock would see the pair
//     half-committed.
func TestReadsNeverMissALock(t *testing.T) {
	const pairs, readers = 4, 2
	txns := 150
	if testing.Short() {
		txns = 50
	}
	ctx := context.Background()
	s := openTestStore(t)
	rc := s.Regions()[0].Ctx()
	o := newTestOracle()
	key := func(pair int, half string) []byte { return []byte(fmt.Sprintf("p%d%s", pair, half)) }

	// committed[pair][commitTS] is the value committed then.
	var mu sync.Mutex
	committed := make([]map[uint64]string, pairs)
	for i := range committed {
		committed[i] = map[uint64]string{}
	}
	// writer runs txns transactions on one pair.
	writer := func(pair int) error {
		a, b := key(pair, "a"), key(pair, "b")
		for n := 1; n <= txns; n++ {
			v := []byte(strconv.Itoa(n))
			start := o.next()
			req := &PrewriteRequest{Region: rc, Primary: a, StartTS: start, LockTTL: 10000,
				Mutations: []Mutation{{Op: OpPut, Key: a, Value: v}, {Op: OpPut, Key: b, Value: v}}}
			if n%5 == 0 {
				req.TryOnePC, req.MaxCommitTS = true, start+1<<30
			}
			resp, err := s.Prewrite(ctx, req)
			if err != nil || len(resp.Errors) > 0 {
				return fmt.Errorf("prewrite %d: %v %v", n, resp, err)
			}
			commitTS := resp.OnePCCommitTS
			switch {
			case commitTS != 0:
				o.pass(commitTS)
			case n%7 == 0:
				if err := s.BatchRollback(ctx, rc, [][]byte{a, b}, start); err != nil {
					return err
				}
				continue
			default:
				// Primary first, then the secondary, as txn does.
				commitTS = o.next()
				for _, k := range [][]byte{a, b} {
					if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{k}, StartTS: start, CommitTS: commitTS}); err != nil {
						return err
					}
				}
			}
			mu.Lock()
			committed[pair][commitTS] = string(v)
			mu.Unlock()
		}
		return nil
	}
	type read struct {
		pair int
		ts   uint64
		val  []byte
	}
	var stop atomic.Bool
	var reads sync.Map // reader index -> []read
	reader := func(id int) error {
		rng := rand.New(rand.NewSource(int64(id)))
		var got []read
		defer func() { reads.Store(id, got) }()
		for !stop.Load() {
			pair := rng.Intn(pairs)
			var locked *KeyIsLockedError
			if rng.Intn(2) == 0 {
				ts := o.next()
				v, err := s.Get(ctx, rc, key(pair, "a"), ts)
				if errors.As(err, &locked) {
					continue
				}
				if err != nil {
					return err
				}
				got = append(got, read{pair, ts, v})
				continue
			}
			var kvs []KvPair
			var err error
			if rng.Intn(2) == 0 {
				kvs, err = s.BatchGet(ctx, rc, [][]byte{key(pair, "a"), key(pair, "b")}, MaxTS)
			} else {
				kvs, err = s.Scan(ctx, &ScanRequest{Region: rc, Start: key(pair, "a"), End: key(pair, "c"), Version: MaxTS})
			}
			if errors.As(err, &locked) {
				continue
			}
			if err != nil {
				return err
			}
			if len(kvs) == 1 || (len(kvs) == 2 && !bytes.Equal(kvs[0].Value, kvs[1].Value)) {
				return fmt.Errorf("pair %d read half-committed at MaxTS: %v", pair, kvs)
			}
		}
		return nil
	}

	var wg sync.WaitGroup
	errs := make(chan error, pairs+readers)
	var writers sync.WaitGroup
	for p := 0; p < pairs; p++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			errs <- writer(p)
		}()
	}
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- reader(r)
		}()
	}
	writers.Wait()
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checked := 0
	reads.Range(func(_, v any) bool {
		for _, r := range v.([]read) {
			var want string
			var newest uint64
			for ts, v := range committed[r.pair] {
				if ts <= r.ts && ts > newest {
					newest, want = ts, v
				}
			}
			if string(r.val) != want {
				t.Errorf("pair %d at %d: read %q, want %q (committed at %d)", r.pair, r.ts, r.val, want, newest)
			}
			checked++
		}
		return true
	})
	if checked == 0 {
		t.Fatal("no read was checked")
	}
}

// TestReadAfterCommitSeesIt checks that a read after a commit, two-phase
// or one-phase, sees it although the read before it left a cached
// iterator opened before the commit (iterCache).
func TestReadAfterCommitSeesIt(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	rc := s.Regions()[0].Ctx()
	k := []byte("k")
	for i := 1; i <= 4; i++ {
		v := []byte(strconv.Itoa(i))
		start := uint64(10 * i)
		req := &PrewriteRequest{Region: rc, Primary: k, StartTS: start, LockTTL: 1000,
			Mutations: []Mutation{{Op: OpPut, Key: k, Value: v}}}
		if i%2 == 0 {
			req.TryOnePC, req.MaxCommitTS = true, start+5
		}
		resp, err := s.Prewrite(ctx, req)
		if err != nil || len(resp.Errors) > 0 {
			t.Fatal(resp, err)
		}
		if resp.OnePCCommitTS == 0 {
			if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{k}, StartTS: start, CommitTS: start + 1}); err != nil {
				t.Fatal(err)
			}
		}
		for _, ts := range []uint64{start + 2, MaxTS} {
			got, err := s.Get(ctx, rc, k, ts)
			if err != nil || !bytes.Equal(got, v) {
				t.Fatalf("get at %d after commit %d: %q %v, want %q", ts, i, got, err, v)
			}
			kvs, err := s.BatchGet(ctx, rc, [][]byte{[]byte("j"), k}, ts)
			if err != nil || len(kvs) != 1 || !bytes.Equal(kvs[0].Value, v) {
				t.Fatalf("batch get at %d after commit %d: %v %v, want %q", ts, i, kvs, err, v)
			}
		}
	}
}
