package txn

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// beginReadCommitted starts a pessimistic READ COMMITTED transaction.
func beginReadCommitted(t testing.TB, s *Store) *Txn {
	t.Helper()
	tx := beginPessimistic(t, s)
	if err := tx.SetReadCommitted(); err != nil {
		t.Fatal(err)
	}
	return tx
}

// readValue reads key in tx, "" when absent.
func readValue(t testing.TB, tx *Txn, key string) string {
	t.Helper()
	v, _, err := tx.Get(context.Background(), []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// TestReadCommittedStatementSnapshot: each statement of a READ COMMITTED
// transaction reads what committed before it began, one snapshot for the
// whole statement; a REPEATABLE READ transaction keeps its first.
func TestReadCommittedStatementSnapshot(t *testing.T) {
	for _, rc := range []bool{false, true} {
		t.Run(fmt.Sprintf("read committed %v", rc), func(t *testing.T) {
			e := newPessimisticEnv(t, Options{}, time.Second)
			mustCommit(t, e.s, "x", "1", "y", "1")
			tx := beginPessimistic(t, e.s)
			if rc {
				if err := tx.SetReadCommitted(); err != nil {
					t.Fatal(err)
				}
			}
			tx.BeginStatement()
			if got := readValue(t, tx, "x"); got != "1" {
				t.Fatalf("first statement: x = %s, want 1", got)
			}
			mustCommit(t, e.s, "x", "2", "y", "2")
			// Still the same statement: its snapshot.
			if got := readValue(t, tx, "y"); got != "1" {
				t.Fatalf("first statement, after the commit: y = %s, want 1", got)
			}
			tx.BeginStatement()
			want := "1"
			if rc {
				want = "2"
			}
			if x, y := readValue(t, tx, "x"), readValue(t, tx, "y"); x != want || y != want {
				t.Fatalf("second statement: x, y = %s, %s; want %s", x, y, want)
			}
			if err := tx.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReadCommittedMovesWithoutValidation: a statement of a READ
// COMMITTED transaction that meets a newer commit on a key it locks runs
// again over it although an earlier statement read a key that changed
// meanwhile (which refuses the move at REPEATABLE READ, as
// TestPessimisticSnapshotMoveValidatesReads shows), and however much the
// transaction read: nothing to validate.
func TestReadCommittedMovesWithoutValidation(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		opts   Options
		read   func(tx *Txn) error
		change []string
	}{
		{name: "read of a changed key", read: get("x"), change: []string{"x", "9", "k", "5"}},
		{name: "scan over an insert", read: scan("a", "c", false, -1), change: []string{"b5", "9", "k", "5"}},
		{name: "more reads than remembered", opts: Options{MaxReadSetEntries: 2}, read: get("x", "y", "q"), change: []string{"y", "9", "k", "5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newPessimisticEnv(t, c.opts, time.Second, "m")
			mustCommit(t, e.s, "a", "1", "b", "1", "k", "1", "x", "1", "y", "1")
			tx := beginReadCommitted(t, e.s)
			tx.BeginStatement()
			if err := c.read(tx); err != nil {
				t.Fatal(err)
			}
			// The change commits after the statement below took its
			// snapshot, so that its lock meets a newer commit.
			tx.BeginStatement()
			if _, err := tx.SnapshotTS(ctx); err != nil {
				t.Fatal(err)
			}
			mustCommit(t, e.s, c.change...)
			if err := incrementInStatement(ctx, tx, "k"); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if k := pointGet(t, e.s, "k"); k != "6" {
				t.Fatalf("k = %s, want 6", k)
			}
			if st := e.s.Stats(); st.SnapshotsMoved != 1 || st.SnapshotMovesRefused != 0 {
				t.Fatalf("snapshots moved %d, refused %d; want 1, 0", st.SnapshotsMoved, st.SnapshotMovesRefused)
			}
		})
	}
}

// incrementInStatement is increment for a statement already begun.
func incrementInStatement(ctx context.Context, tx *Txn, keys ...string) error {
	for {
		stage := tx.Staging()
		err := incrementOnce(ctx, tx, keys)
		if err == nil {
			tx.Release(stage)
			return nil
		}
		tx.Cleanup(stage)
		if !tx.CanRefreshSnapshot() {
			return err
		}
		if err := tx.RefreshSnapshot(ctx); err != nil {
			return err
		}
	}
}

// TestReadCommittedCounter: 16 clients run "read a key others write;
// increment the counter" in READ COMMITTED transactions. The first read
// changes under every transaction (each increments it too), which at
// REPEATABLE READ refuses most of them with ErrWriteConflict; at READ
// COMMITTED none fails and no increment is lost: the locks serialize the
// increments, each over the newest commit.
func TestReadCommittedCounter(t *testing.T) {
	e := newPessimisticEnv(t, Options{}, time.Second, "m")
	runCounter(t, e, beginReadCommitted, func(ctx context.Context, tx *Txn) error {
		tx.BeginStatement()
		if _, _, err := tx.Get(ctx, []byte("z")); err != nil {
			return err
		}
		if err := increment(ctx, tx, "a"); err != nil {
			return err
		}
		return increment(ctx, tx, "z")
	})
}

// TestReadCommittedNeedsPessimistic: an optimistic transaction cannot be
// READ COMMITTED (its writes would be checked against its first snapshot
// only at commit), nor can one that has read already.
func TestReadCommittedNeedsPessimistic(t *testing.T) {
	e := newPessimisticEnv(t, Options{}, time.Second)
	tx, err := e.s.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.SetReadCommitted(); err == nil {
		t.Fatal("an optimistic transaction was made READ COMMITTED")
	}
	tx = beginPessimistic(t, e.s)
	readValue(t, tx, "x")
	if err := tx.SetReadCommitted(); err == nil {
		t.Fatal("a transaction that read was made READ COMMITTED")
	}
}
