package kv

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/percdb/percdb/tso"
)

// openTestStore opens an in-memory store closed at the end of the test.
func openTestStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open("", Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// TestLocalClientTransaction runs a whole transaction through the Client
// contract: prewrite, a reader blocked by the lock, commit, reads on both
// sides of the commit timestamp.
func TestLocalClientTransaction(t *testing.T) {
	ctx := context.Background()
	c := NewLocalClient(openTestStore(t))
	reg, err := c.LocateKey(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	now := tso.FromTime(time.Now())
	start, commit := now+10, now+20
	resp, err := c.Prewrite(ctx, &PrewriteRequest{
		Region:    reg.Ctx(),
		Mutations: []Mutation{{Op: OpPut, Key: []byte("a"), Value: []byte("1")}, {Op: OpPut, Key: []byte("b"), Value: make([]byte, 300)}},
		Primary:   []byte("a"), StartTS: start, LockTTL: 3000,
	})
	if err != nil || len(resp.Errors) != 0 {
		t.Fatalf("prewrite: %v %v", resp, err)
	}
	var locked *KeyIsLockedError
	if _, err := c.Get(ctx, reg.Ctx(), []byte("a"), start+1); !errors.As(err, &locked) {
		t.Fatalf("get under a lock: got %v, want KeyIsLockedError", err)
	}
	if err := c.Commit(ctx, &CommitRequest{Region: reg.Ctx(), Keys: [][]byte{[]byte("a"), []byte("b")}, StartTS: start, CommitTS: commit}); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, reg.Ctx(), []byte("a"), commit); err != nil || string(v) != "1" {
		t.Fatalf("get at commit_ts: %q %v", v, err)
	}
	if v, err := c.Get(ctx, reg.Ctx(), []byte("a"), commit-1); err != nil || v != nil {
		t.Fatalf("get below commit_ts: %q %v", v, err)
	}
	pairs, err := c.Scan(ctx, &ScanRequest{Region: reg.Ctx(), Start: []byte(""), Version: MaxTS})
	if err != nil || len(pairs) != 2 || len(pairs[1].Value) != 300 {
		t.Fatalf("scan: %v %v", pairs, err)
	}
}
