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
	ts := loadUncompacted(ctx, t, dir, opts, 120)
	other := testdisk.FillLeaving(t, mnt, 8<<20)

	// Reopen with compactions on: Pebble picks the level-0 compaction.
	s, err := Open(dir, opts)
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

// TestFullDiskCompactionThatNeverFits: a store whose level 0 holds
// 40 MiB in 12 sublevels (written with compactions off) opens on an
// 82 MiB file system, so that the level-0 compaction Pebble picks at once
// (36 MiB of inputs) needs its inputs and the flush room, 44 MiB, of a
// disk that could never give the store more than 82 MiB less its live
// files, at most 42 MiB, even with every other file deleted. The store must still take writes while the disk
// has room for them: before the gate gave up on such compactions, the
// compaction held the store full for good (writes refused with 1021
// until 60 MiB were free). Then the disk fills: writes are refused, not
// hung, reads go on, and every committed key is there after a restart.
// It mounts a tmpfs, so it needs root; elsewhere it skips.
func TestFullDiskCompactionThatNeverFits(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	mnt := testdisk.Mount(t, "82m")
	dir := filepath.Join(mnt, "kv")
	ctx := context.Background()

	// Load 40 MiB into level 0, left uncompacted, without protection (the
	// load is not what is tested).
	ts := loadUncompacted(ctx, t, dir, Options{SyncWrites: SyncNone, ReserveSpace: -1, Logger: discard()}, 200)

	// Reopen with protection and compactions on: Pebble picks the
	// level-0 compaction, and the gate must find that it never fits.
	opts := Options{SyncWrites: SyncNone, ReserveSpace: 6 << 20, Logger: discard()}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	m := s.db.Metrics()
	t.Logf("level 0: %d files, %s, %d sublevels", m.Levels[0].NumFiles, formatBytes(uint64(m.Levels[0].Size)), m.Levels[0].Sublevels)
	var committed [][]byte
	testdisk.WithinDeadline(t, mnt, "writes beside a compaction that never fits", func() {
		// Wait for the gate to have looked at the compaction.
		for st := s.DiskProtectionStats(); st.CompactionsWaited+st.CompactionsNeverFit == 0; st = s.DiskProtectionStats() {
			time.Sleep(10 * time.Millisecond)
		}
		// 1 MiB of writes, each retried for 5 s if refused: the disk has
		// room for them (about 29 MiB free beside the ballast, less the
		// log's and the memtable's 8 MiB, less the 12.4 MiB reserve, each
		// write counted twice).
		for batch := 0; batch < 5; batch++ {
			var keys [][]byte
			var err error
			for try := 0; try < 50; try++ {
				if keys, err = writeRandom(ctx, s, ts, fmt.Sprintf("after%04d-", batch), 100); err == nil {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				u, _ := statfsUsage(dir)
				t.Errorf("write %d beside a compaction that can never fit, %s free: %v", batch, formatBytes(u.avail), err)
				return
			}
			if err := s.Commit(ctx, &CommitRequest{Region: regionOf(t, s), Keys: keys, StartTS: ts, CommitTS: ts + 1}); err != nil {
				t.Errorf("commit %d: %v", batch, err)
				return
			}
			committed = append(committed, keys...)
			ts += 2
		}
		if err := s.Flush(); err != nil {
			t.Errorf("flush: %v", err)
			return
		}
		// Now fill the disk: the writes must be refused, not hang.
		refused := false
		for batch := 0; batch < 300 && !refused; batch++ {
			_, err := writeRandom(ctx, s, ts, fmt.Sprintf("fill%04d-", batch), 100)
			var full *DiskFullError
			switch {
			case errors.As(err, &full):
				refused = true
			case err != nil:
				t.Errorf("write %d filling the disk: %v", batch, err)
				return
			}
		}
		if !refused {
			t.Errorf("60 MiB of writes were accepted on an 82 MiB disk holding 41 MiB")
		}
		if v, err := s.Get(ctx, regionOf(t, s), committed[0], ts); err != nil || len(v) != 2<<10 {
			t.Errorf("read on the full disk: %d bytes, %v", len(v), err)
		}
	})
	if t.Failed() {
		return
	}
	st := s.DiskProtectionStats()
	m = s.db.Metrics()
	t.Logf("compactions: %d never fit, %d waited, %d gave up; %d writes refused; level 0 %s in %d sublevels", st.CompactionsNeverFit, st.CompactionsWaited, st.CompactionsGaveUp, st.WritesRefusedFull, formatBytes(uint64(m.Levels[0].Size)), m.Levels[0].Sublevels)
	if st.CompactionsNeverFit == 0 {
		t.Errorf("no compaction was found never to fit")
	}
	if n := s.events.flushesFailed.Load(); n != 0 {
		t.Errorf("%d memtable flushes failed: flushes must keep their room", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A restart keeps every committed key.
	if s, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	for _, k := range committed {
		if v, err := s.Get(ctx, regionOf(t, s), k, ts); err != nil || len(v) != 2<<10 {
			t.Fatalf("after a restart, committed key %q: %d bytes, %v", k, len(v), err)
		}
	}
}

// loadUncompacted writes batches transactions of 100 keys of 2 KiB
// (200 KiB each) into the store in dir with opts and compactions off,
// flushes them into level 0 and reopens the store once, which deletes the
// load's log files; it returns the next free timestamp.
func loadUncompacted(ctx context.Context, t *testing.T, dir string, opts Options, batches int) uint64 {
	t.Helper()
	opts.testingNoAutoCompactions = true
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := uint64(100)
	for batch := 0; batch < batches; batch++ {
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
	if s, err = Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return ts
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
