package txn

import (
	"context"
	"runtime"
	"testing"
)

// TestActiveTxns: a transaction is running for the garbage collector from
// its start_ts until it commits or rolls back; one that never read is not.
func TestActiveTxns(t *testing.T) {
	ctx := context.Background()
	s := newEnv(t, Options{}).s
	oldest := func() (uint64, int) {
		var min uint64
		all := s.ActiveTxns()
		for _, a := range all {
			if min == 0 || a.StartTS < min {
				min = a.StartTS
			}
		}
		return min, len(all)
	}
	idle, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, n := oldest(); n != 0 {
		t.Fatalf("a transaction without a start_ts is running: %d", n)
	}
	a, _ := s.Begin(ctx)
	b, _ := s.Begin(ctx)
	tsA, err := a.StartTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.StartTS(ctx); err != nil {
		t.Fatal(err)
	}
	if min, n := oldest(); n != 2 || min != tsA {
		t.Fatalf("running: oldest %d of %d, want %d of 2", min, n, tsA)
	}
	if err := a.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	_ = idle.Rollback(ctx)
	if _, err := idle.StartTS(ctx); err != nil {
		t.Fatal(err)
	}
	if _, n := oldest(); n != 0 {
		t.Fatalf("%d transactions still running after commit and rollback", n)
	}
	blind, _ := s.Begin(ctx)
	if err := blind.Set([]byte("k"), []byte("w")); err != nil {
		t.Fatal(err)
	}
	if err := blind.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, n := oldest(); n != 0 {
		t.Fatalf("a blind write's commit is still running")
	}
}

// TestAbandonedTxnLeavesActive: a transaction dropped without Commit or
// Rollback leaves the running set once Go reclaims it, so that it does
// not hold the GC safe point back.
func TestAbandonedTxnLeavesActive(t *testing.T) {
	ctx := context.Background()
	s := newEnv(t, Options{}).s
	func() {
		k, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.StartTS(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	if n := len(s.ActiveTxns()); n != 1 {
		t.Fatalf("%d running before the collection, want 1", n)
	}
	for i := 0; i < 1000 && len(s.ActiveTxns()) != 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if n := len(s.ActiveTxns()); n != 0 {
		t.Fatalf("an abandoned transaction is still running after 1000 collections")
	}
}
