package txn

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestCoveredKeys: keys written by SetCovered and DeleteCovered are left
// out of LockableSince (not of WrittenSince) unless written again
// otherwise, commit without a pessimistic lock of their own, and their
// prewrite fails on a commit newer than the transaction's snapshot (its
// start, or where RefreshSnapshot moved it), as a key an optimistic
// transaction writes.
func TestCoveredKeys(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	mustCommit(t, e.s, "i0", "old", "n0", "old")

	tx := beginPessimistic(t, e.s)
	tx.BeginStatement()
	stage := tx.Staging()
	mark := tx.WriteMark()
	for _, err := range []error{
		tx.Set([]byte("a"), []byte("row")),
		tx.SetCovered([]byte("i1"), []byte("entry")),
		tx.DeleteCovered([]byte("i0")),
		tx.SetCovered([]byte("n1"), []byte("entry")),
		tx.DeleteCovered([]byte("n0")),
		tx.Set([]byte("n1"), []byte("row")), // written again, not covered
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	str := func(keys [][]byte) []string {
		var out []string
		for _, k := range keys {
			out = append(out, string(k))
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	if got := str(tx.LockableSince(mark)); !slices.Equal(got, []string{"a", "n1"}) {
		t.Errorf("LockableSince = %q, want a, n1", got)
	}
	if got := str(tx.WrittenSince(mark)); !slices.Equal(got, []string{"a", "i0", "i1", "n0", "n1"}) {
		t.Errorf("WrittenSince = %q, want every key", got)
	}
	if err := lockNow(ctx, tx, "a", "n1"); err != nil {
		t.Fatal(err)
	}
	tx.Release(stage)
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit with covered keys: %v", err)
	}
	for k, want := range map[string]string{"a": "row", "i1": "entry", "i0": "", "n1": "row", "n0": ""} {
		if v := pointGet(t, e.s, k); v != want {
			t.Errorf("%s = %q after the commit, want %q", k, v, want)
		}
	}

	// A covered key committed by another transaction after the snapshot:
	// the prewrite finds the conflict.
	tx = beginPessimistic(t, e.s)
	if _, err := tx.StartTS(ctx); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, e.s, "i2", "other")
	if err := lockNow(ctx, tx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("b"), []byte("row")); err != nil {
		t.Fatal(err)
	}
	if err := tx.SetCovered([]byte("i2"), []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrWriteConflict) {
		t.Errorf("commit over a newer commit of a covered key: %v, want ErrWriteConflict", err)
	}
	if v := pointGet(t, e.s, "i2"); v != "other" {
		t.Errorf("i2 = %q, want the other transaction's", v)
	}

	// The row and its covered entry committed together after the
	// snapshot: the row's lock meets the commit, the snapshot moves to it,
	// and the entry's prewrite finds no conflict in what the snapshot
	// sees.
	tx = beginPessimistic(t, e.s)
	tx.BeginStatement()
	if _, err := tx.SnapshotTS(ctx); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, e.s, "c", "other", "i3", "other")
	if err := lockNow(ctx, tx, "c"); !errors.Is(err, ErrForUpdateConflict) {
		t.Fatalf("lock of c after a newer commit: %v, want ErrForUpdateConflict", err)
	}
	if err := tx.RefreshSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	tx.BeginStatement()
	if err := lockNow(ctx, tx, "c"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("c"), []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := tx.SetCovered([]byte("i3"), []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Errorf("commit of a covered key committed at the moved snapshot: %v", err)
	}
	for _, k := range []string{"c", "i3"} {
		if v := pointGet(t, e.s, k); v != "mine" {
			t.Errorf("%s = %q, want mine", k, v)
		}
	}
}
