package txn

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestSizeLimit: a write that would take the buffer past the limit fails
// with *TxnTooLargeError and is not buffered; overwriting a key counts the
// difference only; the transaction commits what it kept.
func TestSizeLimit(t *testing.T) {
	ctx := context.Background()
	s := newEnv(t, Options{}).s
	k, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k.SetSizeLimit(100)
	if err := k.Set([]byte("a"), []byte(strings.Repeat("x", 49))); err != nil { // 50 bytes
		t.Fatal(err)
	}
	if err := k.Set([]byte("a"), []byte(strings.Repeat("y", 59))); err != nil { // 60: the old 50 go
		t.Fatal(err)
	}
	err = k.Set([]byte("b"), []byte(strings.Repeat("z", 40))) // 60 + 41 > 100
	var tl *TxnTooLargeError
	if !errors.As(err, &tl) || tl.Size != 101 || tl.Limit != 100 {
		t.Fatalf("a write past the limit: %v, want TxnTooLargeError of 101 bytes", err)
	}
	if k.Size() != 60 || k.Len() != 1 {
		t.Fatalf("the refused write was buffered: size %d, %d keys", k.Size(), k.Len())
	}
	if err := k.Set([]byte("b"), []byte(strings.Repeat("z", 39))); err != nil { // exactly 100
		t.Fatal(err)
	}
	if err := k.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v := pointGet(t, s, "b"); len(v) != 39 {
		t.Fatalf("b after commit: %q", v)
	}
}
