package kv

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble"
)

// TestWriteCommandsThroughCachedIterators: write commands read a key's
// write records through the store's cached iterators (borrowIters), and
// batches of the lock space alone leave those iterators current. Then a
// commit applied after an iterator was cached must still be seen by the
// next command on its key: a prewrite and a pessimistic lock whose
// snapshot is older than the commit must report the write conflict, which
// an iterator opened before the commit would hide.
func TestWriteCommandsThroughCachedIterators(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	c := NewLocalClient(s)
	rc := s.Regions()[0].Ctx()
	k, other := []byte("k"), []byte("other")
	onePC := func(startTS uint64) uint64 {
		t.Helper()
		resp, err := c.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: k, StartTS: startTS, MaxCommitTS: startTS + 5, TryOnePC: true,
			Mutations: []Mutation{{Op: OpPut, Key: k, Value: []byte("v")}}})
		if err != nil || resp.OnePCCommitTS == 0 || len(resp.Errors) > 0 {
			t.Fatalf("1PC put at %d: %+v %v", startTS, resp, err)
		}
		return resp.OnePCCommitTS
	}
	onePC(10)
	// A read caches an iterator at the current generation.
	if v, err := c.Get(ctx, rc, k, 100); err != nil || string(v) != "v" {
		t.Fatalf("get: %q %v", v, err)
	}
	gen := s.iters.gen.Load()
	// A pessimistic lock writes the lock space only: cached iterators stay
	// current.
	if _, err := c.AcquirePessimisticLock(ctx, &AcquirePessimisticLockRequest{Region: rc, Keys: []PessimisticKey{{Key: other}},
		Primary: other, StartTS: 200, ForUpdateTS: 200, LockTTL: 3000}); err != nil {
		t.Fatalf("lock other: %v", err)
	}
	if got := s.iters.gen.Load(); got != gen {
		t.Fatalf("a lock-only batch made the cached iterators stale: generation %d -> %d", gen, got)
	}
	// A commit changes the write space: the next command on k must see it
	// whatever iterator it is given.
	commitTS := onePC(300)
	if got := s.iters.gen.Load(); got == gen {
		t.Fatalf("a commit left the cached iterators current (generation %d)", got)
	}
	resp, err := c.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: k, StartTS: 250, LockTTL: 3000,
		Mutations: []Mutation{{Op: OpPut, Key: k, Value: []byte("w")}}})
	if err != nil {
		t.Fatalf("prewrite at 250: %v", err)
	}
	var conflict *WriteConflictError
	if len(resp.Errors) != 1 || !errors.As(resp.Errors[0], &conflict) || conflict.ConflictCommitTS != commitTS {
		t.Fatalf("prewrite at 250 after the commit at %d: want its write conflict, got %v", commitTS, resp.Errors)
	}
	_, err = c.AcquirePessimisticLock(ctx, &AcquirePessimisticLockRequest{Region: rc, Keys: []PessimisticKey{{Key: k}},
		Primary: k, StartTS: 260, ForUpdateTS: 260, LockTTL: 3000})
	if !errors.As(err, &conflict) || conflict.ConflictCommitTS != commitTS {
		t.Fatalf("pessimistic lock at 260 after the commit at %d: want its write conflict, got %v", commitTS, err)
	}
}

// TestPointReadsThroughOlderIterators: a point read reuses a cached
// iterator that commits to other keys made stale for scans (iterCache's
// per-key generations), and never one that predates a commit to its own
// key.
func TestPointReadsThroughOlderIterators(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	c := NewLocalClient(s)
	rc := s.Regions()[0].Ctx()
	k := []byte("k")
	// A key in another slot than k's, so that its commits leave k's alone.
	other := []byte("other0")
	for i := 1; s.iters.slotOf(other) == s.iters.slotOf(k); i++ {
		other = []byte(fmt.Sprintf("other%d", i))
	}
	put := func(key []byte, startTS uint64, value string) {
		t.Helper()
		resp, err := c.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: key, StartTS: startTS, MaxCommitTS: startTS + 5, TryOnePC: true,
			Mutations: []Mutation{{Op: OpPut, Key: key, Value: []byte(value)}}})
		if err != nil || resp.OnePCCommitTS == 0 || len(resp.Errors) > 0 {
			t.Fatalf("1PC put of %q at %d: %+v %v", key, startTS, resp, err)
		}
	}
	get := func(key []byte, ts uint64, want string) {
		t.Helper()
		if v, err := c.Get(ctx, rc, key, ts); err != nil || string(v) != want {
			t.Fatalf("get %q at %d: %q %v, want %q", key, ts, v, err, want)
		}
	}
	cached := func() *pebble.Iterator {
		s.iters.mu.Lock()
		defer s.iters.mu.Unlock()
		if n := len(s.iters.free); n > 0 {
			return s.iters.free[n-1].it
		}
		return nil
	}
	put(k, 10, "v1")
	put(other, 20, "v1")
	get(k, 100, "v1")
	before := cached()
	if before == nil {
		t.Fatal("the read left no iterator in the cache")
	}
	put(other, 200, "v2")
	get(k, 300, "v1")
	if got := cached(); got != before {
		t.Fatalf("a commit to %q made the read of %q open a fresh iterator", other, k)
	}
	get(other, 300, "v2")
	// A commit to k itself: the next read of k must not use an iterator
	// opened before it.
	put(k, 400, "v2")
	get(k, 500, "v2")
	if vs, err := c.BatchGet(ctx, rc, [][]byte{k, other}, 500); err != nil || len(vs) != 2 || string(vs[0].Value) != "v2" || string(vs[1].Value) != "v2" {
		t.Fatalf("batch get at 500: %v %v", vs, err)
	}
}
