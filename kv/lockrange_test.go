package kv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// lockRange runs a locking range read of [from, to) for txn at
// forUpdateTS, waiting up to wait, and returns its pairs as "k=v" words.
func (lt lockTest) lockRange(ctx context.Context, txn, forUpdateTS uint64, wait time.Duration, from, to string) (string, error) {
	reg, err := lt.s.LocateKey([]byte(from))
	if err != nil {
		return "", err
	}
	resp, err := lt.s.AcquirePessimisticLock(ctx, &AcquirePessimisticLockRequest{
		Region: reg.Ctx(), StartTS: txn, ForUpdateTS: forUpdateTS, LockTTL: 60_000, WaitTimeout: wait,
		Range: &LockRange{Start: []byte(from), End: []byte(to)},
	})
	if err != nil {
		return "", err
	}
	var words []string
	for _, p := range resp.Pairs {
		words = append(words, fmt.Sprintf("%s=%s", p.Key, p.Value))
	}
	return strings.Join(words, " "), nil
}

// write commits puts of key=value words for txn start at commit.
func (lt lockTest) write(start, commit uint64, words ...string) {
	lt.t.Helper()
	lt.prewrite(start, words...)
	lt.commit(start, commit, words...)
}

// prewrite prewrites puts of key=value words for txn start (primary: the
// first key).
func (lt lockTest) prewrite(start uint64, words ...string) {
	lt.t.Helper()
	ctx := context.Background()
	var ms []Mutation
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		ms = append(ms, Mutation{Op: OpPut, Key: []byte(k), Value: []byte(v)})
	}
	reg, _ := lt.s.LocateKey(ms[0].Key)
	resp, err := lt.s.Prewrite(ctx, &PrewriteRequest{Region: reg.Ctx(), Primary: ms[0].Key, StartTS: start, LockTTL: 60_000, Mutations: ms})
	if err != nil || len(resp.Errors) > 0 {
		lt.t.Fatal(err, resp)
	}
}

// commit commits the keys of key=value words for txn start at commit.
func (lt lockTest) commit(start, commit uint64, words ...string) {
	lt.t.Helper()
	var keys [][]byte
	for _, w := range words {
		k, _, _ := strings.Cut(w, "=")
		keys = append(keys, []byte(k))
	}
	reg, _ := lt.s.LocateKey(keys[0])
	if err := lt.s.Commit(context.Background(), &CommitRequest{Region: reg.Ctx(), Keys: keys, StartTS: start, CommitTS: commit}); err != nil {
		lt.t.Fatal(err)
	}
}

// TestLockRangeWaitsForLockedRow: a locking range read whose rows include
// one another transaction holds locked waits for it, takes none of the
// others meanwhile (they stay free), and locks them all once it goes.
func TestLockRangeWaitsForLockedRow(t *testing.T) {
	lt := newLockTest(t)
	ctx := context.Background()
	lt.write(5, 6, "a=1", "b=2", "c=3")
	if err := lt.acquire(ctx, 10, 10, 0, "b"); err != nil {
		t.Fatal(err)
	}
	type result struct {
		pairs string
		err   error
	}
	done := make(chan result, 1)
	go func() {
		p, err := lt.lockRange(ctx, 20, 20, time.Hour, "a", "z")
		done <- result{p, err}
	}()
	lt.waitQueued(1)
	// Nothing of the range is locked while it waits.
	if err := lt.acquire(ctx, 15, 15, 0, "a"); err != nil {
		t.Fatalf("a was locked by the waiting range read: %v", err)
	}
	lt.release(15, "a")
	lt.release(10, "b")
	if r := <-done; r.err != nil || r.pairs != "a=1 b=2 c=3" {
		t.Fatalf("got %q, %v; want a=1 b=2 c=3", r.pairs, r.err)
	}
	var locked *KeyIsLockedError
	if err := lt.acquire(ctx, 30, 30, 0, "c"); !errors.As(err, &locked) || locked.Lock.StartTS != 20 {
		t.Fatalf("c after the range read: got %v, want its lock", err)
	}
}

// TestLockRangeWaitsForInsert: a row being inserted into the range by a
// transaction that may commit below for_update_ts blocks the read; the
// read waits for it and, once it commits there, locks and returns it (a
// read that skipped it would leave a row of its snapshot unlocked).
func TestLockRangeWaitsForInsert(t *testing.T) {
	lt := newLockTest(t)
	ctx := context.Background()
	lt.write(5, 6, "a=1", "c=3")
	lt.prewrite(30, "b=2")
	done := make(chan string, 1)
	go func() {
		p, err := lt.lockRange(ctx, 40, 40, time.Hour, "a", "z")
		if err != nil {
			p = err.Error()
		}
		done <- p
	}()
	lt.waitQueued(1)
	lt.commit(30, 38, "b=2")
	if got := <-done; got != "a=1 b=2 c=3" {
		t.Fatalf("got %q, want a=1 b=2 c=3", got)
	}
}

// TestLockRangeDeadlock: a locking range read that waits is part of the
// wait-for graph: the request that closes a cycle through it fails.
func TestLockRangeDeadlock(t *testing.T) {
	lt := newLockTest(t)
	ctx := context.Background()
	lt.write(5, 6, "a=1", "x=2")
	if err := lt.acquire(ctx, 50, 50, 0, "x"); err != nil {
		t.Fatal(err)
	}
	if err := lt.acquire(ctx, 60, 60, 0, "a"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := lt.lockRange(ctx, 50, 50, time.Hour, "a", "b")
		done <- err
	}()
	lt.waitQueued(1)
	var dl *DeadlockError
	if err := lt.acquire(ctx, 60, 60, time.Hour, "x"); !errors.As(err, &dl) {
		t.Fatalf("got %v, want a deadlock", err)
	}
	lt.release(60, "a")
	if err := <-done; err != nil {
		t.Fatalf("the range read after the victim's release: %v", err)
	}
}
