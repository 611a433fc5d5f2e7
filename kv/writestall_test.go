package kv

import (
	"context"
	"errors"
	"testing"
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

	// The disk fills and Pebble stalls a write (its flush cannot finish).
	s.space.storageFull()
	s.stall.stalled.Add(1)
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

	// The stall ends (a flush finished): the disk is still full, and what
	// it accepts is accepted again.
	s.stall.stalled.Add(-1)
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
