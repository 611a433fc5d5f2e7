package kv

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// lockTest drives pessimistic lock requests on one store.
type lockTest struct {
	t *testing.T
	s *Store
}

// acquire locks keys for txn at forUpdateTS (primary: the first key),
// waiting up to wait.
func (lt lockTest) acquire(ctx context.Context, txn, forUpdateTS uint64, wait time.Duration, keys ...string) error {
	req := &AcquirePessimisticLockRequest{
		Primary: []byte(keys[0]), StartTS: txn, ForUpdateTS: forUpdateTS, LockTTL: 60_000, WaitTimeout: wait,
	}
	for _, k := range keys {
		req.Keys = append(req.Keys, PessimisticKey{Key: []byte(k)})
	}
	reg, err := lt.s.LocateKey(req.Keys[0].Key)
	if err != nil {
		return err
	}
	req.Region = reg.Ctx()
	_, err = lt.s.AcquirePessimisticLock(ctx, req)
	return err
}

// release gives back txn's pessimistic locks on keys.
func (lt lockTest) release(txn uint64, keys ...string) {
	lt.t.Helper()
	bs := make([][]byte, len(keys))
	for i, k := range keys {
		bs[i] = []byte(k)
	}
	reg, err := lt.s.LocateKey(bs[0])
	if err != nil {
		lt.t.Fatal(err)
	}
	if err := lt.s.PessimisticRollback(context.Background(), reg.Ctx(), bs, txn, MaxTS); err != nil {
		lt.t.Fatal(err)
	}
}

// waitQueued waits until n requests wait in the store's queues.
func (lt lockTest) waitQueued(n int64) {
	for lt.s.waiters.waiting.Load() != n {
		runtime.Gosched()
	}
}

// background runs an acquire in a goroutine and returns its outcome's
// channel.
func (lt lockTest) background(ctx context.Context, txn, forUpdateTS uint64, keys ...string) chan error {
	done := make(chan error, 1)
	go func() { done <- lt.acquire(ctx, txn, forUpdateTS, time.Hour, keys...) }()
	return done
}

func newLockTest(t *testing.T) lockTest {
	s, err := Open("", Options{InMemory: true, LockWaitSlice: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return lockTest{t: t, s: s}
}

// TestLockWaitWokenInOrder: requests that meet a lock wait, and are served
// in the order they came as the lock passes from one to the next.
func TestLockWaitWokenInOrder(t *testing.T) {
	lt := newLockTest(t)
	ctx := context.Background()
	if err := lt.acquire(ctx, 10, 10, 0, "k"); err != nil {
		t.Fatal(err)
	}
	got := make(chan uint64, 3)
	for i, txn := range []uint64{20, 30, 40} {
		done := lt.background(ctx, txn, txn, "k")
		go func() {
			if err := <-done; err != nil {
				t.Error(err)
			}
			got <- txn
		}()
		lt.waitQueued(int64(i + 1))
	}
	// Without waiting the request fails at once.
	var locked *KeyIsLockedError
	if err := lt.acquire(ctx, 50, 50, 0, "k"); !errors.As(err, &locked) || locked.Lock.StartTS != 10 {
		t.Fatalf("no-wait request: got %v, want the lock of txn 10", err)
	}
	holder := uint64(10)
	for _, want := range []uint64{20, 30, 40} {
		lt.release(holder, "k")
		if next := <-got; next != want {
			t.Fatalf("lock went to txn %d, want %d", next, want)
		}
		holder = want
	}
	lt.release(holder, "k")
}

// TestLockWaitThenWriteConflict: a waiter whose for_update_ts is older
// than the commit it waited for gets the write conflict that names the
// commit, and the next waiter is woken too.
func TestLockWaitThenWriteConflict(t *testing.T) {
	lt := newLockTest(t)
	ctx := context.Background()
	if err := lt.acquire(ctx, 10, 10, 0, "k"); err != nil {
		t.Fatal(err)
	}
	first := lt.background(ctx, 20, 20, "k")
	lt.waitQueued(1)
	second := lt.background(ctx, 30, 30, "k")
	lt.waitQueued(2)
	reg, _ := lt.s.LocateKey([]byte("k"))
	resp, err := lt.s.Prewrite(ctx, &PrewriteRequest{
		Region: reg.Ctx(), Primary: []byte("k"), StartTS: 10, ForUpdateTS: 10, LockTTL: 60_000,
		Mutations: []Mutation{{Op: OpPut, Key: []byte("k"), Value: []byte("v"), Pessimistic: true}},
	})
	if err != nil || len(resp.Errors) > 0 {
		t.Fatal(err, resp)
	}
	if err := lt.s.Commit(ctx, &CommitRequest{Region: reg.Ctx(), Keys: [][]byte{[]byte("k")}, StartTS: 10, CommitTS: 35}); err != nil {
		t.Fatal(err)
	}
	for _, done := range []chan error{first, second} {
		var wc *WriteConflictError
		if err := <-done; !errors.As(err, &wc) || wc.ConflictCommitTS != 35 {
			t.Fatalf("got %v, want a write conflict with the commit at 35", err)
		}
	}
	// At a newer for_update_ts the statement gets the lock.
	if err := lt.acquire(ctx, 20, 36, 0, "k"); err != nil {
		t.Fatal(err)
	}
}

// TestDeadlock: the request that closes a cycle of two or three
// transactions gets *DeadlockError at once; the others go on waiting and
// get their locks once it gives its own back.
func TestDeadlock(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d txns", n), func(t *testing.T) {
			lt := newLockTest(t)
			ctx := context.Background()
			// Txn i holds key i and then wants key i+1 (mod n).
			txn := func(i int) uint64 { return uint64(10 * (i + 1)) }
			key := func(i int) string { return fmt.Sprintf("k%d", i%n) }
			for i := 0; i < n; i++ {
				if err := lt.acquire(ctx, txn(i), txn(i), 0, key(i)); err != nil {
					t.Fatal(err)
				}
			}
			var waiting []chan error
			for i := 0; i < n-1; i++ {
				waiting = append(waiting, lt.background(ctx, txn(i), txn(i), key(i+1)))
				lt.waitQueued(int64(i + 1))
			}
			last := n - 1
			err := lt.acquire(ctx, txn(last), txn(last), time.Hour, key(last+1))
			var dl *DeadlockError
			if !errors.As(err, &dl) || dl.StartTS != txn(last) || dl.LockTS != txn(0) || len(dl.Chain) != n-1 {
				t.Fatalf("closing request: got %v, want a deadlock of %d txns", err, n)
			}
			if st := lt.s.LockWaitStats(); st.Deadlocks != 1 || st.Waiting != int64(n-1) || st.Waits != uint64(n) {
				t.Fatalf("LockWaitStats with %d waiting and one deadlock refused: %+v", n-1, st)
			}
			// The victim rolls back; the chain unwinds from its end.
			lt.release(txn(last), key(last))
			for i := n - 2; i >= 0; i-- {
				if err := <-waiting[i]; err != nil {
					t.Fatalf("txn %d: %v", txn(i), err)
				}
				lt.release(txn(i), key(i), key(i+1))
			}
			if st := lt.s.LockWaitStats(); st.Waiting != 0 || st.Waits != uint64(n) || st.WaitTime <= 0 {
				t.Fatalf("LockWaitStats after the waits ended: %+v", st)
			}
		})
	}
}

// TestLockWaitEnds: a wait ends with the request's context, and after the
// store's wait slice with *KeyIsLockedError, leaving no waiter behind.
func TestLockWaitEnds(t *testing.T) {
	lt := newLockTest(t)
	if err := lt.acquire(context.Background(), 10, 10, 0, "k"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := lt.background(ctx, 20, 20, "k")
	lt.waitQueued(1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: got %v", err)
	}
	lt.waitQueued(0)

	s, err := Open("", Options{InMemory: true, LockWaitSlice: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	short := lockTest{t: t, s: s}
	if err := short.acquire(context.Background(), 10, 10, 0, "k"); err != nil {
		t.Fatal(err)
	}
	var locked *KeyIsLockedError
	if err := short.acquire(context.Background(), 20, 20, time.Hour, "k"); !errors.As(err, &locked) {
		t.Fatalf("after the wait slice: got %v, want *KeyIsLockedError", err)
	}
	short.waitQueued(0)
}

// slowDetector is a detector whose Detect of txn blocks until release
// is closed, as a remote detector's round trip does; entered is closed
// when that Detect has begun.
type slowDetector struct {
	DeadlockDetector
	txn              uint64
	entered, release chan struct{}
}

func (d *slowDetector) Detect(ctx context.Context, txn, lockTS uint64, key []byte) error {
	if txn == d.txn {
		close(d.entered)
		<-d.release
	}
	return d.DeadlockDetector.Detect(ctx, txn, lockTS, key)
}

// TestLockWaitDetectUnlocked: while the detector is being asked about a
// wait, the store's wait table is free: the wait list answers and the
// holder's release wakes the waiter, which then takes the lock.
func TestLockWaitDetectUnlocked(t *testing.T) {
	d := &slowDetector{DeadlockDetector: NewDeadlockDetector(), txn: 20,
		entered: make(chan struct{}), release: make(chan struct{})}
	s, err := Open("", Options{InMemory: true, LockWaitSlice: time.Hour, DeadlockDetector: d})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	released := false
	defer func() {
		if !released {
			close(d.release)
		}
	}()
	lt := lockTest{t: t, s: s}
	ctx := context.Background()
	if err := lt.acquire(ctx, 10, 10, 0, "k"); err != nil {
		t.Fatal(err)
	}
	done := lt.background(ctx, 20, 20, "k")
	<-d.entered
	if !s.waiters.mu.TryLock() {
		t.Fatal("the wait table is locked while the detector is asked")
	}
	s.waiters.mu.Unlock()
	if ws := s.LockWaits(); len(ws) != 0 {
		t.Errorf("a wait the detector has not recorded is listed: %+v", ws)
	}
	lt.release(10, "k")
	close(d.release)
	released = true
	if err := <-done; err != nil {
		t.Fatalf("the waiter, woken while the detector was asked: %v", err)
	}
	lt.waitQueued(0)
}
