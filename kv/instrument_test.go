package kv

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// recorder keeps what it observed.
type recorder struct {
	mu  sync.Mutex
	got []RequestStats
}

func (r *recorder) ObserveRequest(s RequestStats) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := s
	c.Key = append([]byte(nil), s.Key...)
	r.got = append(r.got, c)
}

// TestInstrumentObservesRequests: an instrumented client answers as the
// client it wraps and reports each request with its command, key, size
// and error.
func TestInstrumentObservesRequests(t *testing.T) {
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := &recorder{}
	c := Instrument(NewLocalClient(s), rec)
	r, err := c.LocateKey(ctx, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prewrite(ctx, &PrewriteRequest{Region: r.Ctx(), Primary: []byte("k"), StartTS: 10, LockTTL: 3000,
		Mutations: []Mutation{{Op: OpPut, Key: []byte("k"), Value: []byte("value")}}}); err != nil {
		t.Fatal(err)
	}
	// A read at 20 meets the lock.
	_, getErr := c.Get(ctx, r.Ctx(), []byte("k"), 20)
	var locked *KeyIsLockedError
	if !errors.As(getErr, &locked) {
		t.Fatalf("read under the lock: %v", getErr)
	}
	if err := c.Commit(ctx, &CommitRequest{Region: r.Ctx(), Keys: [][]byte{[]byte("k")}, StartTS: 10, CommitTS: 11}); err != nil {
		t.Fatal(err)
	}
	pairs, err := c.Scan(ctx, &ScanRequest{Region: r.Ctx(), Start: []byte("a"), Version: 20, Limit: 10})
	if err != nil || len(pairs) != 1 || string(pairs[0].Value) != "value" {
		t.Fatalf("scan through the instrumented client: %v, %v", pairs, err)
	}
	want := []struct {
		cmd   Command
		key   string
		keys  int
		bytes int
		write bool
		err   bool
	}{
		{CmdPrewrite, "k", 1, 6, true, false},
		{CmdGet, "k", 1, 1, false, true},
		{CmdCommit, "k", 1, 1, true, false},
		{CmdScan, "a", 1, 6, false, false},
	}
	if len(rec.got) != len(want) {
		t.Fatalf("observed %d requests, want %d: %+v", len(rec.got), len(want), rec.got)
	}
	for i, w := range want {
		g := rec.got[i]
		if g.Command != w.cmd || string(g.Key) != w.key || g.Keys != w.keys || g.Bytes != w.bytes || g.Write != w.write || (g.Err != nil) != w.err || g.Duration <= 0 {
			t.Errorf("request %d: %s key %q keys %d bytes %d write %v err %v took %v; want %s %q %d %d %v err=%v",
				i, g.Command, g.Key, g.Keys, g.Bytes, g.Write, g.Err, g.Duration, w.cmd, w.key, w.keys, w.bytes, w.write, w.err)
		}
	}
	for c := Command(0); c < CommandCount; c++ {
		if c.String() == "" || c.String() == "unknown" {
			t.Errorf("command %d has no name", c)
		}
	}
}
