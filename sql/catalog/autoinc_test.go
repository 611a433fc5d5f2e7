package catalog

import (
	"context"
	"testing"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// TestRaiseKeepsOtherNodesBatches: two nodes' allocators of one table over
// one store. A holds a batch; B's ALTER TABLE ... AUTO_INCREMENT = 1 must
// not hand out IDs from A's batch again (a Reset to 1 did: duplicates);
// a value above every batch moves both nodes' next batches past it.
func TestRaiseKeepsOtherNodesBatches(t *testing.T) {
	ctx := context.Background()
	st := newTestStore(t)
	a := NewAllocators(st).Get(7, KindAutoIncrement, 1)
	b := NewAllocators(st).Get(7, KindAutoIncrement, 1)
	seen := map[uint64]string{}
	take := func(name string, al *Allocator, n int) {
		for range n {
			v, err := al.Alloc(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if prev, ok := seen[v]; ok {
				t.Fatalf("ID %d handed out by %s and by %s", v, prev, name)
			}
			seen[v] = name
		}
	}
	take("A", a, 3)
	take("B", b, 3)
	if err := b.Raise(ctx, 1); err != nil {
		t.Fatal(err)
	}
	take("B", b, 5)
	take("A", a, 5)
	if err := b.Raise(ctx, 5000); err != nil {
		t.Fatal(err)
	}
	v, err := b.Alloc(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v != 5000 {
		t.Fatalf("B after AUTO_INCREMENT = 5000: %d, want 5000", v)
	}
	take("A", a, idBatch) // A uses up its batch; its next one starts past B's
	w, err := a.Alloc(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if w <= v {
		t.Fatalf("A's next batch starts at %d, at or below B's %d", w, v)
	}
}

// newTestStore is a transaction store over an in-memory KV store.
func newTestStore(t *testing.T) *txn.Store {
	t.Helper()
	ks, err := kv.Open("", kv.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	return txn.NewStore(kv.NewLocalClient(ks), txntest.NewClockOracle(0), txn.Options{})
}
