package kv

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
)

// TestWritesRefusedWhileStalledOnFullDisk: while Pebble holds writes in
// its write stall and the disk is full, every write fails at once with a
// *DiskFullError saying so, those a full disk otherwise accepts
// included, and reads go on; once the stall ends the accepted kinds are
// accepted again.
func TestWritesRefusedWhileStalledOnFullDisk(t *testing.T) {
	ctx := context.Background()
	s, rc := openReserved(t, false)
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

// openReserved opens a store with a 1 MiB reserve, closed at the test's
// end, and returns it with its region; ownWrites makes every command own
// its write (inflight.go) as on a disk close to full.
func openReserved(t *testing.T, ownWrites bool) (*Store, RegionCtx) {
	t.Helper()
	s, err := Open(t.TempDir(), Options{SyncWrites: SyncNone, ReserveSpace: 1 << 20, Logger: discard(), testingOwnWrites: ownWrites})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, regionOf(t, s)
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

// TestStallOnFullDiskEndsWaitsOnHeldWrites: a write Pebble holds in its
// stall on a full disk (here the storage holds it, as Pebble's stall
// does: no context ends it) holds neither its caller nor the commands
// that wait for its keys' latches. Once the store refuses writes for the
// stall, the caller, under a context that cannot end, gets a
// *WriteInDoubtError wrapping the *DiskFullError, and a rollback of the
// key, which waits for its latch, fails with the *DiskFullError, both
// within the watcher's poll; nothing waits for space to come back. Once
// the stall ends and the storage lets the write go, it is applied (its
// lock is there), and the rollback goes through.
func TestStallOnFullDiskEndsWaitsOnHeldWrites(t *testing.T) {
	s, rc := openReserved(t, true)
	bg := context.Background()
	held, let := holdWrites(s)
	defer let()
	prewrite := make(chan error, 1)
	go func() {
		_, err := s.Prewrite(bg, &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte("k"), Value: []byte("v")}}, Primary: []byte("k"), StartTS: 10, LockTTL: 3000, TxnSize: 1})
		prewrite <- err
	}()
	hangGuard(t, "the prewrite reaching the storage", held.entered)
	// The disk fills and Pebble stalls (its flush cannot finish).
	s.space.storageFull()
	s.stall.begin()

	err := hangGuard(t, "the prewrite held in the stall", prewrite)
	var doubt *WriteInDoubtError
	var full *DiskFullError
	if !errors.As(err, &doubt) || !errors.As(err, &full) || !full.Stalled {
		t.Fatalf("a prewrite held in a stall on a full disk: %v; want *WriteInDoubtError wrapping a stalled *DiskFullError", err)
	}
	rollback := make(chan error, 1)
	go func() { rollback <- s.BatchRollback(bg, rc, [][]byte{[]byte("k")}, 10) }()
	if err := hangGuard(t, "a rollback waiting for the held write's latch", rollback); !errors.As(err, &full) {
		t.Fatalf("a rollback of the held write's key while stalled on a full disk: %v; want *DiskFullError", err)
	}
	if st := s.DiskProtectionStats(); st.WritesInDoubt != 1 {
		t.Fatalf("stats %+v; want 1 write in doubt", st)
	}

	// The stall ends and the storage lets the write go: it is applied.
	s.applier = held.inner
	s.stall.end()
	let()
	deadline := time.Now().Add(time.Minute)
	for s.DiskProtectionStats().WritesInDoubtPending != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the released write is still pending")
		}
		time.Sleep(time.Millisecond)
	}
	resp, err := s.Prewrite(bg, &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte("k"), Value: []byte("w")}}, Primary: []byte("k"), StartTS: 20, LockTTL: 3000, TxnSize: 1, AllowWhenDiskFull: true})
	if err == nil && len(resp.Errors) > 0 {
		err = resp.Errors[0]
	}
	var locked *KeyIsLockedError
	if !errors.As(err, &locked) || locked.Lock.StartTS != 10 {
		t.Fatalf("a prewrite of the key once the held write was applied: %v; want its lock (start_ts 10)", err)
	}
	if err := s.BatchRollback(bg, rc, [][]byte{[]byte("k")}, 10); err != nil {
		t.Fatalf("a rollback once the stall ended: %v", err)
	}
}

// TestWritesRefusedWhileFlushFailsOnFullDisk: a memtable flush that
// failed for want of space on a full disk makes the store refuse every
// write at once, before any meets Pebble's stall (the memtable that
// cannot be written stays, and the next to fill stalls); the next flush
// that succeeds lets them in again. A flush failing for another cause
// does not.
func TestWritesRefusedWhileFlushFailsOnFullDisk(t *testing.T) {
	ctx := context.Background()
	s, rc := openReserved(t, false)
	if _, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: []Mutation{{Op: OpPut, Key: []byte("a"), Value: []byte("v")}}, Primary: []byte("a"), StartTS: 10, LockTTL: 3000, TxnSize: 1}); err != nil {
		t.Fatal(err)
	}
	commit := func() error {
		return s.Commit(ctx, &CommitRequest{Region: rc, Keys: [][]byte{[]byte("a")}, StartTS: 10, CommitTS: 11})
	}
	s.space.storageFull()
	s.events.flushEnd(pebble.FlushInfo{Err: fmt.Errorf("write 000009.sst: %w", syscall.EIO)})
	if s.stallRefusal() != nil {
		t.Fatal("a flush that failed for an I/O error refuses writes as one that ran out of space")
	}
	s.events.flushEnd(pebble.FlushInfo{Err: fmt.Errorf("write 000010.sst: %w", syscall.ENOSPC)})
	var full *DiskFullError
	if err := commit(); !errors.As(err, &full) || !full.Stalled {
		t.Fatalf("a commit while a flush fails for space on a full disk: %v; want a stalled *DiskFullError", err)
	}
	if _, err := s.Get(ctx, rc, []byte("a"), 5); err != nil {
		t.Fatalf("a read while a flush fails: %v", err)
	}
	s.events.flushEnd(pebble.FlushInfo{})
	if err := commit(); err != nil {
		t.Fatalf("a commit once a flush succeeded: %v", err)
	}
}
