package txn

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
)

// TestSnapshotMoveChecksLocksAfterPassingChanges: the store answers a
// validation's changes first, without its locks; when every change
// leaves the reads equal, the move must still meet the locks in the
// window. Here b, read whole, is a secondary of a transaction whose
// primary committed inside the window, its lock not yet rolled forward:
// the validation's change on a passes (only a's first byte was read),
// and the move is refused for b only once the locks are looked at.
func TestSnapshotMoveChecksLocksAfterPassingChanges(t *testing.T) {
	ctx := context.Background()
	e := newPessimisticEnv(t, Options{}, time.Second)
	mustCommit(t, e.s, "a", "1x", "b", "1", "k", "1")
	tx := beginPessimistic(t, e.s)
	tx.BeginStatement()
	if err := both(getWith(firstByte{}, "a"), get("b"))(tx); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, e.s, "a", "1y")
	// Transaction X writes p (its primary) and b; only p commits.
	startX, err := e.oracle.GetTimestamp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rc := e.kv.Regions()[0].Ctx()
	muts := []kv.Mutation{{Op: kv.OpPut, Key: []byte("p"), Value: []byte("x")}, {Op: kv.OpPut, Key: []byte("b"), Value: []byte("2")}}
	if resp, err := e.kv.Prewrite(ctx, &kv.PrewriteRequest{Region: rc, Mutations: muts, Primary: []byte("p"), StartTS: startX, LockTTL: 60_000}); err != nil || len(resp.Errors) > 0 {
		t.Fatalf("prewrite X: %v %v", resp, err)
	}
	commitX, err := e.oracle.GetTimestamp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.kv.Commit(ctx, &kv.CommitRequest{Region: rc, Keys: [][]byte{[]byte("p")}, StartTS: startX, CommitTS: commitX}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, e.s, "k", "5") // the statement's conflict, after X's commit
	if err := increment(ctx, tx, "k"); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("increment after b changed in the window: %v, want ErrWriteConflict", err)
	}
	if st := e.s.Stats(); st.SnapshotMovesRefused != 1 {
		t.Fatalf("snapshot moves refused: %d, want 1", st.SnapshotMovesRefused)
	}
}
