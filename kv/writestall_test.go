package kv

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWritesRefusedWhileStalledOnFullDisk: while Pebble holds writes in
// its write stall and the disk is full, every write fails at once with a
// *DiskFullError saying so, those a full disk otherwise accepts
// included, and reads go on; once the stall ends the accepted kinds are
// accepted again.
func TestWritesRefusedWhileStalledOnFullDisk(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir(), Options{SyncWrites: SyncNone, ReserveSpace: 1 << 20, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc := regionOf(t, s)
	put := func(key string, ts uint64, allowFull bool) error {
		_, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte(key), Value: []byte("v")}}, Primary: []byte(key), StartTS: ts, LockTTL: 3000, TxnSize: 1, AllowWhenDiskFull: allowFull})
		return err
	}
	if err := put("a", 10, false); err != nil {
		t.Fatal(err)
	}

	// The disk fills and Pebble stalls a write (its flush cannot finish),
	// for 3 s of a fake clock.
	clock := time.Unix(1000, 0)
	s.stall.mu.Lock()
	s.stall.now = func() time.Time { return clock }
	s.stall.mu.Unlock()
	s.space.storageFull()
	if _, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte("c"), Value: []byte("v")}}, Primary: []byte("c"), StartTS: 30, LockTTL: 3000, TxnSize: 1}); err == nil {
		t.Fatal("a prewrite that adds data on a full disk was accepted")
	}
	s.stall.begin()
	clock = clock.Add(3 * time.Second)
	var full *DiskFullError
	if err := put("b", 20, true); !errors.As(err, &full) || !full.Stalled {
		t.Fatalf("a prewrite a full disk accepts, while stalled: %v; want a stalled *DiskFullError", err)
	}
	if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{[]byte("a")}, StartTS: 10, CommitTS: 11}); !errors.As(err, &full) {
		t.Fatalf("a commit while stalled: %v; want *DiskFullError", err)
	}
	if _, err := s.Get(ctx, rc, []byte("a"), 5); err != nil {
		t.Fatalf("a read while stalled: %v", err)
	}

	st := s.DiskProtectionStats()
	if !st.Stalled || st.WriteStalls != 1 || st.StallTime != 3*time.Second || st.WritesRefusedFull != 1 || st.WritesRefusedStalled != 2 {
		t.Fatalf("stats while stalled: %+v; want stalled, 1 stall of 3s, 1 write refused for the full disk, 2 for the stall", st)
	}

	// The stall ends (a flush finished) 2 s later: the disk is still
	// full, and what it accepts is accepted again.
	clock = clock.Add(2 * time.Second)
	s.stall.end()
	clock = clock.Add(time.Hour)
	if st := s.DiskProtectionStats(); st.Stalled || st.WriteStalls != 1 || st.StallTime != 5*time.Second {
		t.Fatalf("stats after the stall: %+v; want not stalled, 1 stall of 5s", st)
	}
	if err := put("b", 20, true); err != nil {
		t.Fatalf("a prewrite a full disk accepts, after the stall: %v", err)
	}
	if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{[]byte("a")}, StartTS: 10, CommitTS: 11}); err != nil {
		t.Fatalf("a commit after the stall: %v", err)
	}
}

// regionOf is the context of the store's region holding every key.
func regionOf(t *testing.T, s *Store) RegionCtx {
	t.Helper()
	reg, err := s.LocateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg.Ctx()
}
