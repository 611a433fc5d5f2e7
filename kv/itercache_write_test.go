package kv

import (
	"context"
	"errors"
	"testing"
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
