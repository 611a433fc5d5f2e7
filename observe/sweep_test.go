package observe

import (
	"context"
	"testing"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// TestSweepAcks: the sweep deletes an ack only when its row is gone, the
// run it records started at or below the safe point and its observer has
// no notification of the row waiting; a row inserted again afterwards is
// run (its ack is gone, so its notification counts as not processed).
func TestSweepAcks(t *testing.T) {
	e := newEnv(t, "")
	ctx := context.Background()
	ack := func(h int64, observer string) []byte {
		k, err := tablecodec.AckKey(nil, rowKey(docsTable, h), observer)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	commit := func(fn func(tx *txn.Txn) error) {
		t.Helper()
		tx, err := e.s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(tx); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	acknowledge := func(keys ...[]byte) {
		t.Helper()
		commit(func(tx *txn.Txn) error {
			for _, k := range keys {
				if _, err := tx.Acknowledge(ctx, k, 0); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for h := int64(1); h <= 5; h++ {
		e.write(t, h, "v")
	}
	// Acks of runs that started below the safe point.
	acknowledge(ack(1, "a"), ack(2, "a"), ack(3, "a"), ack(5, "b"))
	safePoint := e.now(t)
	acknowledge(ack(4, "a")) // a run after the safe point
	commit(func(tx *txn.Txn) error {
		for _, h := range []int64{2, 3, 4, 5} {
			if err := tx.Delete(rowKey(docsTable, h)); err != nil {
				return err
			}
		}
		// Row 3's deletion waits for observer a; row 5's too, but its
		// ack is observer b's.
		if err := tx.Notify(rowKey(docsTable, 3), "a"); err != nil {
			return err
		}
		return tx.Notify(rowKey(docsTable, 5), "a")
	})

	removed, err := SweepAcks(ctx, e.s, []int64{docsTable, countsTable}, safePoint)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 2 {
		t.Errorf("removed %d acks, want 2 (rows 2 and 5)", removed)
	}
	for _, c := range []struct {
		key  []byte
		want bool
	}{
		{ack(1, "a"), true},  // the row exists
		{ack(2, "a"), false}, // gone, observed, quiet
		{ack(3, "a"), true},  // a notification waits
		{ack(4, "a"), true},  // a run after the safe point
		{ack(5, "b"), false}, // another observer's notification does not count
	} {
		if _, found, err := e.s.PointGet(ctx, c.key); err != nil || found != c.want {
			t.Errorf("ack %x: found %v (%v), want %v", c.key, found, err, c.want)
		}
	}
	// Row 2 comes back: its observer runs for it.
	ts := e.write(t, 2, "again", "a")
	commit(func(tx *txn.Txn) error {
		run, err := tx.Acknowledge(ctx, ack(2, "a"), ts)
		if err == nil && !run {
			t.Error("row 2 inserted again after its ack was swept: not run")
		}
		return err
	})
	if again, err := SweepAcks(ctx, e.s, []int64{docsTable}, safePoint); err != nil || again != 0 {
		t.Errorf("a second sweep removed %d (%v), want 0", again, err)
	}
}

// now returns a fresh timestamp of e's oracle.
func (e *env) now(t *testing.T) uint64 {
	t.Helper()
	tx, err := e.s.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	ts, err := tx.StartTS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
