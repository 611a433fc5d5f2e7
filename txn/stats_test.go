package txn

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestStatsCountOutcomes checks that Stats counts each outcome where it
// is decided: a one-phase commit, a two-phase one (keys in two regions),
// a read-only commit, a rollback, a write conflict, and the locks a
// reader resolved.
func TestStatsCountOutcomes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	s := e.s

	mustCommit(t, s, "a", "1")           // one region: 1PC
	mustCommit(t, s, "a", "2", "z", "1") // two regions: 2PC
	ro, _ := s.Begin(ctx)
	if _, _, err := ro.Get(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := ro.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	rb, _ := s.Begin(ctx)
	_ = rb.Set([]byte("b"), []byte("x"))
	if err := rb.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rb.Rollback(ctx); err != nil { // finished: not counted again
		t.Fatal(err)
	}
	old, _ := s.Begin(ctx)
	if _, err := old.StartTS(ctx); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s, "c", "1")
	_ = old.Set([]byte("c"), []byte("2"))
	if err := old.Commit(ctx); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("commit over a newer write: %v, want a write conflict", err)
	}
	// A dead transaction's locks, resolved by a reader.
	dying := e.dyingStore(t, time.Millisecond)
	d, _ := dying.Begin(ctx)
	_ = d.Set([]byte("d"), []byte("1"))
	if err := d.Commit(ctx); !errors.Is(err, errAbandon) {
		t.Fatalf("dying commit: %v", err)
	}
	time.Sleep(5 * time.Millisecond) // the lock's TTL runs out (if not, the read passes it)
	if v := pointGet(t, s, "d"); v != "" {
		t.Fatalf("read %q of a dead transaction's key", v)
	}

	got := s.Stats()
	// Committed: "a" and "c" in one phase, "a"+"z" in two, the read-only one.
	want := Stats{Committed: 4, OnePC: 2, TwoPC: 1, RolledBack: 1, Conflicted: 1,
		LocksGone: got.LocksGone, LocksReadPast: got.LocksReadPast}
	if got != want {
		t.Fatalf("Stats() = %+v, want %+v", got, want)
	}
	if got.LocksGone+got.LocksReadPast == 0 {
		t.Fatalf("Stats() = %+v: the dead transaction's lock was not counted", got)
	}
}
