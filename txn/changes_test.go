package txn

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// TestScanChanges: the changes of a range between two timestamps, across
// regions, with a dead writer's locks settled first.
func TestScanChanges(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	t0 := mustCommit(t, e.s, "a", "1", "z", "1")
	t1 := mustCommit(t, e.s, "a", "2")
	tx, _ := e.s.Begin(ctx)
	if err := tx.Delete([]byte("z")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	t2 := tx.CommitTS()
	// A writer that prewrote and died: the scan settles its locks
	// (pushed above the scan while their TTL lasts, rolled back after).
	dying := e.dyingStore(t, 0)
	dtx, _ := dying.Begin(ctx)
	_ = dtx.Set([]byte("b"), []byte("dead"))
	_ = dtx.Set([]byte("y"), []byte("dead"))
	if err := dtx.Commit(ctx); err == nil {
		t.Fatal("the dying store committed")
	}
	to, err := e.oracle.GetTimestamp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := e.s.ScanChanges(ctx, nil, nil, t0-1, to)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, fmt.Sprintf("%s@%d=%s/%s", c.Key, c.CommitTS, c.Value, c.Prev))
	}
	want := []string{
		fmt.Sprintf("a@%d=1/", t0), fmt.Sprintf("a@%d=2/", t1),
		fmt.Sprintf("z@%d=1/", t0), fmt.Sprintf("z@%d=/1", t2),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	if changes, err := e.s.ScanChanges(ctx, []byte("b"), []byte("y"), t0-1, to); err != nil || len(changes) != 0 {
		t.Fatalf("changes of [b, y): %v, %v", changes, err)
	}
}
