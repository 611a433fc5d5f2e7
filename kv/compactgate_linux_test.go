package kv

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/percdb/percdb/internal/testdisk"
)

// TestFullDiskCompactionLargerThanBallast reproduces issue 22's hang: a
// store whose level 0 holds 24 MiB (written with compactions off, as a
// loaded table waiting for its compaction) opens on a disk with 8 MiB
// free beside its ballast (6 MiB asked, raised by Open to
// minReserveSpace, 12.4 MiB), so that the compaction Pebble picks at once
// needs more than the disk has. A transaction then writes far more
// than the space left. Its prewrites must be refused with *DiskFullError
// and its rollback, a read and a commit must answer, all within the
// test's deadline: before compactions waited for room (compactgate.go),
// the compaction failed for space again and again, every memtable flush
// beside it failed too, and the writes waited in Pebble's write stall
// for good. Once space is freed, the compaction runs and writes are
// accepted again. It mounts a tmpfs, so it needs root; elsewhere it skips.
func TestFullDiskCompactionLargerThanBallast(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	mnt := testdisk.Mount(t, "96m")
	dir := filepath.Join(mnt, "kv")
	opts := Options{SyncWrites: SyncNone, ReserveSpace: 6 << 20, Logger: discard()}
	ctx := context.Background()

	// Load 24 MiB into level 0, left uncompacted.
	loadOpts := opts
	loadOpts.testingNoAutoCompactions = true
	s, err := Open(dir, loadOpts)
	if err != nil {
		t.Fatal(err)
	}
	ts := uint64(100)
	for batch := 0; batch < 120; batch++ { // 120 x 100 x 2 KiB
		keys, err := writeRandom(ctx, s, ts, fmt.Sprintf("load%04d-", batch), 100)
		if err != nil {
			t.Fatalf("load batch %d: %v", batch, err)
		}
		if err := s.Commit(ctx, &CommitRequest{Region: regionOf(t, s), Keys: keys, StartTS: ts, CommitTS: ts + 1}); err != nil {
			t.Fatalf("commit load batch %d: %v", batch, err)
		}
		ts += 2
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Open and close once more, which deletes the load's log files: the
	// space left below is what the store has.
	if s, err = Open(dir, loadOpts); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	other := testdisk.FillLeaving(t, mnt, 8<<20)

	// Reopen with compactions on: Pebble picks the level-0 compaction.
	s, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var keys [][]byte
	refused := 0
	testdisk.WithinDeadline(t, mnt, "a transaction on a disk smaller than the pending compaction", func() {
		// A client that retries what is refused, as a workload does: 300
		// prewrites of 200 KiB, 60 MiB in all.
		for batch := 0; batch < 300; batch++ {
			ks, err := writeRandom(ctx, s, ts, fmt.Sprintf("big%04d-", batch), 100)
			var full *DiskFullError
			switch {
			case errors.As(err, &full):
				refused++
				time.Sleep(10 * time.Millisecond)
			case err != nil:
				t.Errorf("prewrite batch %d: %v", batch, err)
				return
			}
			keys = append(keys, ks...)
		}
		t.Logf("%d prewrites refused, %d keys written", refused, len(keys))
		if refused == 0 {
			t.Errorf("60 MiB of prewrites were accepted on a disk with 8 MiB free beside the released ballast")
			return
		}
		if err := s.BatchRollback(ctx, regionOf(t, s), keys, ts); err != nil {
			t.Errorf("rollback on the full disk: %v", err)
		}
		// What a full disk still accepts (the writes of DROP and
		// TRUNCATE, commits, rollbacks), 1 MiB of it, flushed: the
		// flush must get the space the pending compaction cannot have.
		ts += 2
		var allowed [][]byte
		for batch := 0; batch < 5; batch++ {
			ks, err := writeRandomAllowed(ctx, s, ts, fmt.Sprintf("allowed%04d-", batch), 100)
			if err != nil {
				t.Errorf("a prewrite allowed on a full disk: %v", err)
				return
			}
			allowed = append(allowed, ks...)
		}
		if err := s.Flush(); err != nil {
			t.Errorf("flush on the full disk: %v", err)
		}
		if err := s.BatchRollback(ctx, regionOf(t, s), allowed, ts); err != nil {
			t.Errorf("rollback on the full disk: %v", err)
		}
		if _, err := s.Get(ctx, regionOf(t, s), []byte("load0000-0000"), ts); err != nil {
			t.Errorf("read on the full disk: %v", err)
		}
	})
	if t.Failed() {
		return
	}
	if n := s.events.flushesFailed.Load(); n != 0 {
		t.Errorf("%d memtable flushes failed on the full disk: flushes must get the space", n)
	}
	if n := s.events.outOfSpace.Load(); n != 0 {
		t.Errorf("%d flushes or compactions ran out of space on the full disk: a compaction must wait for room, not take the space flushes need", n)
	}

	// Space freed: the compaction runs and writes are accepted again.
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	ts += 2
	testdisk.WithinDeadline(t, mnt, "writes after space was freed", func() {
		var err error
		for try := 0; try < 300; try++ {
			if _, err = writeRandom(ctx, s, ts, "after-", 10); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("writes after space was freed: %v", err)
	})
}

// writeRandom prewrites n keys prefix+NNNN with 2 KiB random values for
// transaction ts (primary: its first key) and returns the keys it wrote;
// a refused prewrite returns its error and no keys.
func writeRandom(ctx context.Context, s *Store, ts uint64, prefix string, n int) ([][]byte, error) {
	return prewriteRandom(ctx, s, ts, prefix, n, false)
}

// writeRandomAllowed is writeRandom with the prewrite marked as one a
// full disk accepts (PrewriteRequest.AllowWhenDiskFull).
func writeRandomAllowed(ctx context.Context, s *Store, ts uint64, prefix string, n int) ([][]byte, error) {
	return prewriteRandom(ctx, s, ts, prefix, n, true)
}

func prewriteRandom(ctx context.Context, s *Store, ts uint64, prefix string, n int, allowFull bool) ([][]byte, error) {
	reg, err := s.LocateKey(nil)
	if err != nil {
		return nil, err
	}
	muts := make([]Mutation, n)
	keys := make([][]byte, n)
	for i := range muts {
		v := make([]byte, 2<<10)
		_, _ = rand.Read(v)
		keys[i] = []byte(fmt.Sprintf("%s%04d", prefix, i))
		muts[i] = Mutation{Op: OpPut, Key: keys[i], Value: v}
	}
	resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: reg.Ctx(), Mutations: muts, Primary: keys[0], StartTS: ts, LockTTL: 3000, TxnSize: uint64(n), AllowWhenDiskFull: allowFull})
	if err != nil {
		return nil, err
	}
	if len(resp.Errors) > 0 {
		return nil, fmt.Errorf("prewrite: %v", resp.Errors[0])
	}
	return keys, nil
}
