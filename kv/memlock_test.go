package kv

import (
	"context"
	"errors"
	"testing"
)

// TestMemLockTable checks that a reader waits for a published key (shown
// by a cancelled context failing the wait) and not for other keys, and
// goes through once the key is withdrawn.
func TestMemLockTable(t *testing.T) {
	tbl := newMemLockTable()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	g := tbl.publish([][]byte{[]byte("b"), []byte("d")})
	if err := tbl.waitKey(cancelled, []byte("b")); !errors.Is(err, context.Canceled) {
		t.Fatalf("waitKey on a published key: got %v, want it to wait", err)
	}
	if err := tbl.waitRange(cancelled, []byte("c"), []byte("e")); !errors.Is(err, context.Canceled) {
		t.Fatalf("waitRange over a published key: got %v, want it to wait", err)
	}
	if err := tbl.waitKey(cancelled, []byte("c")); err != nil {
		t.Fatalf("waitKey on another key: %v", err)
	}
	if err := tbl.waitRange(cancelled, []byte("e"), nil); err != nil {
		t.Fatalf("waitRange past the keys: %v", err)
	}
	done := make(chan error)
	go func() { done <- tbl.waitKey(context.Background(), []byte("d")) }()
	g.withdraw()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := tbl.waitRange(cancelled, nil, nil); err != nil {
		t.Fatalf("after withdraw: %v", err)
	}
}

// TestMemLockTableWaitsOnlyForEarlierCommits: a reader waits for the
// one-phase commits published when it looked, not for those published
// while it waits (they commit above its ts), so a steady stream of
// commits into its range cannot hold it back forever. Before, the wait
// ended only once the range had no published key at all.
func TestMemLockTableWaitsOnlyForEarlierCommits(t *testing.T) {
	tbl := newMemLockTable()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	first := tbl.publish([][]byte{[]byte("b")})
	inRange := func(k string) bool { return k >= "a" && k < "z" }
	looked := tbl.pending(inRange)
	later := tbl.publish([][]byte{[]byte("c")})
	first.withdraw()
	if err := waitAll(cancelled, looked); err != nil {
		t.Fatalf("the commit published when the reader looked is done, one published since is not: got %v, want no wait", err)
	}
	if err := tbl.waitRange(cancelled, []byte("a"), []byte("z")); !errors.Is(err, context.Canceled) {
		t.Fatalf("a reader looking now waits for the later commit: got %v", err)
	}
	later.withdraw()
}
