package txn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
)

// lockRangeNow is LockRange at the transaction's snapshot; it fails the
// test when the transaction cannot read the range so.
func lockRangeNow(ctx context.Context, t *testing.T, tx *Txn, start, end string, limit int) (string, error) {
	ts, err := tx.SnapshotTS(ctx)
	if err != nil {
		return "", err
	}
	pairs, ok, err := tx.LockRange(ctx, ts, []byte(start), []byte(end), limit)
	if !ok {
		t.Fatalf("LockRange [%q, %q) refused", start, end)
	}
	return pairWords(pairs), err
}

// pairWords is pairs as "k=v" words.
func pairWords(pairs []kv.KvPair) string {
	words := make([]string, len(pairs))
	for i, p := range pairs {
		words[i] = fmt.Sprintf("%s=%s", p.Key, p.Value)
	}
	return strings.Join(words, " ")
}

// TestLockRangeAcrossRegions: a locking range read walks the regions of
// its range up to its limit, locks what it returns and nothing past it,
// chooses the transaction's primary when it has none, and the
// transaction's later reads of those keys are answered from what it
// locked.
func TestLockRangeAcrossRegions(t *testing.T) {
	e := newPessimisticEnv(t, Options{}, time.Second, "g", "m")
	ctx := context.Background()
	mustCommit(t, e.s, "b", "1", "f", "2", "h", "3", "n", "4", "q", "5")
	client := &countingReads{Client: e.client}
	s := NewStore(client, e.oracle, Options{})
	defer s.Close()
	tx := beginPessimistic(t, s)
	got, err := lockRangeNow(ctx, t, tx, "a", "z", 3)
	if err != nil || got != "b=1 f=2 h=3" {
		t.Fatalf("got %q, %v; want b=1 f=2 h=3", got, err)
	}
	other := beginPessimistic(t, e.s)
	other.SetLockNoWait(true)
	for _, k := range []string{"b", "f", "h"} {
		if err := lockNow(ctx, other, k); !errors.Is(err, ErrLockNotWaited) {
			t.Fatalf("lock %s from another transaction: got %v, want it held", k, err)
		}
	}
	if err := lockNow(ctx, other, "n"); err != nil {
		t.Fatalf("n, past the limit, is locked: %v", err)
	}
	_ = other.Rollback(ctx)
	reads := client.keys.Load()
	if v, _, err := tx.Get(ctx, []byte("h")); err != nil || string(v) != "3" {
		t.Fatalf("get h: %q %v", v, err)
	}
	if n := client.keys.Load() - reads; n != 0 {
		t.Fatalf("the read of a key the range read locked asked the store for %d keys", n)
	}
	if err := tx.Set([]byte("h"), []byte("30")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := pointGet(t, e.s, "h"); got != "30" {
		t.Fatalf("h = %q after the commit", got)
	}
	// With writes of its own in the range the transaction reads it as
	// before.
	tx = beginPessimistic(t, e.s)
	if err := tx.Set([]byte("c"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	ts, err := tx.SnapshotTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := tx.LockRange(ctx, ts, []byte("a"), []byte("z"), 0); ok || err != nil {
		t.Fatalf("LockRange over the transaction's own write: ok %v, %v", ok, err)
	}
	_ = tx.Rollback(ctx)
}

// TestLockRangeWaitsThenConflicts: a locking range read that meets a row
// another transaction holds waits for it; that transaction's commit to
// the row is a conflict (the statement runs again at a newer snapshot,
// the row still locked), and the read made again returns the new value.
func TestLockRangeWaitsThenConflicts(t *testing.T) {
	e := newPessimisticEnv(t, Options{}, time.Second, "m")
	ctx := context.Background()
	mustCommit(t, e.s, "b", "1", "p", "2")
	holder := beginPessimistic(t, e.s)
	if err := lockNow(ctx, holder, "p"); err != nil {
		t.Fatal(err)
	}
	tx := beginPessimistic(t, e.s)
	tx.BeginStatement()
	if _, err := tx.SnapshotTS(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := lockRangeNow(ctx, t, tx, "a", "z", 0)
		done <- err
	}()
	waitForWaiters(e, 1)
	if err := holder.Set([]byte("p"), []byte("20")); err != nil {
		t.Fatal(err)
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrForUpdateConflict) {
		t.Fatalf("got %v, want ErrForUpdateConflict", err)
	}
	if !tx.CanRefreshSnapshot() {
		t.Fatal("the snapshot cannot move after the conflict")
	}
	if err := tx.RefreshSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := lockRangeNow(ctx, t, tx, "a", "z", 0)
	if err != nil || got != "b=1 p=20" {
		t.Fatalf("after the snapshot moved: got %q, %v; want b=1 p=20", got, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLockRangeDeadlock: a locking range read waiting for a row is part
// of the wait-for graph: the lock request that closes the cycle fails
// with ErrDeadlock and its transaction rolls back, and the read goes on.
func TestLockRangeDeadlock(t *testing.T) {
	e := newPessimisticEnv(t, Options{}, time.Second)
	ctx := context.Background()
	mustCommit(t, e.s, "b", "1", "x", "2")
	t1 := beginPessimistic(t, e.s)
	if err := lockNow(ctx, t1, "x"); err != nil {
		t.Fatal(err)
	}
	t2 := beginPessimistic(t, e.s)
	if err := lockNow(ctx, t2, "b"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := lockRangeNow(ctx, t, t1, "a", "c", 0)
		done <- err
	}()
	waitForWaiters(e, 1)
	if err := lockNow(ctx, t2, "x"); !errors.Is(err, ErrDeadlock) {
		t.Fatalf("got %v, want ErrDeadlock", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the range read after the victim rolled back: %v", err)
	}
	if err := t1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestLockRangeQueue: clients take the oldest entry of a queue with a
// locking range read of limit 1 and delete it, as TPC-C's Delivery takes
// the oldest new order of a district: every entry is taken exactly once,
// with the regions of the queue split, and no transaction fails but for
// conflicts run again.
func TestLockRangeQueue(t *testing.T) {
	e := newPessimisticEnv(t, Options{}, 50*time.Millisecond, "q/10", "q/20")
	ctx := context.Background()
	const entries, clients = 30, 6
	var pairs []string
	for i := 0; i < entries; i++ {
		pairs = append(pairs, fmt.Sprintf("q/%02d", i), "x")
	}
	mustCommit(t, e.s, pairs...)
	var (
		mu    sync.Mutex
		taken = map[string]int{}
		wg    sync.WaitGroup
	)
	errs := make(chan error, clients)
	for c := 0; c < clients; c++ {
		wg.Go(func() {
			for {
				key, err := takeOldest(ctx, t, e.s)
				if err != nil {
					errs <- err
					return
				}
				if key == "" {
					return
				}
				mu.Lock()
				taken[key]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(taken) != entries {
		t.Errorf("%d entries taken, want %d", len(taken), entries)
	}
	for k, n := range taken {
		if n != 1 {
			t.Errorf("%s taken %d times", k, n)
		}
	}
}

// takeOldest deletes the oldest entry of the queue in one pessimistic
// transaction and returns its key ("": the queue is empty), running the
// statement again after a conflict as the SQL layer does.
func takeOldest(ctx context.Context, t *testing.T, s *Store) (string, error) {
	tx := beginPessimistic(t, s)
	tx.BeginStatement()
	for {
		ts, err := tx.SnapshotTS(ctx)
		if err != nil {
			return "", err
		}
		pairs, ok, err := tx.LockRange(ctx, ts, []byte("q/"), []byte("q0"), 1)
		if !ok {
			_ = tx.Rollback(ctx)
			return "", errors.New("LockRange refused")
		}
		if errors.Is(err, ErrForUpdateConflict) && tx.CanRefreshSnapshot() {
			if err := tx.RefreshSnapshot(ctx); err != nil {
				return "", err
			}
			continue
		}
		if err != nil {
			_ = tx.Rollback(ctx)
			return "", err
		}
		if len(pairs) == 0 {
			return "", tx.Rollback(ctx)
		}
		if err := tx.Delete(pairs[0].Key); err != nil {
			return "", err
		}
		return string(pairs[0].Key), tx.Commit(ctx)
	}
}

// TestLockRangeCountsAsRead: the range a locking range read covered is
// part of what the transaction read from its snapshot, so the snapshot
// does not move past a row another transaction inserted into it (a
// later statement's conflict then fails the transaction instead), as for
// any range read. Past its limit the range was not read.
func TestLockRangeCountsAsRead(t *testing.T) {
	for _, insert := range []string{"c", "k"} {
		t.Run(insert, func(t *testing.T) {
			e := newPessimisticEnv(t, Options{}, time.Second)
			ctx := context.Background()
			mustCommit(t, e.s, "b", "1", "d", "2", "z", "0")
			tx := beginPessimistic(t, e.s)
			tx.BeginStatement()
			if got, err := lockRangeNow(ctx, t, tx, "a", "m", 2); err != nil || got != "b=1 d=2" {
				t.Fatalf("got %q, %v", got, err)
			}
			mustCommit(t, e.s, insert, "new", "z", "1")
			tx.BeginStatement()
			if err := lockNow(ctx, tx, "z"); !errors.Is(err, ErrForUpdateConflict) {
				t.Fatalf("lock z after its commit: %v", err)
			}
			err := tx.RefreshSnapshot(ctx)
			if insert == "c" && !errors.Is(err, ErrWriteConflict) {
				t.Fatalf("snapshot moved past a row inserted into the range read: %v", err)
			}
			if insert == "k" && err != nil {
				t.Fatalf("a row past the range read kept the snapshot: %v", err)
			}
		})
	}
}
