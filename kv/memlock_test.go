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
