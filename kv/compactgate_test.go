package kv

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
)

// TestCompactionGate: a flush's tables and compactions that fit pass at
// once; a compaction whose inputs and the flush room do not fit holds the
// store full (writes refused, Needed naming the compaction's room) until
// space comes back, and gives up with an ENOSPC after its wait, or at
// once when the store closes.
func TestCompactionGate(t *testing.T) {
	const mib = 1 << 20
	dir := t.TempDir()
	disk := &fakeDisk{dir: dir, total: 1000 * mib, avail: 100 * mib}
	space, err := newSpaceGuard(dir, 10*mib, disk.usage, discard())
	if err != nil {
		t.Fatal(err)
	}
	g := newCompactionGate(dir, disk.usage, space, 8*mib, discard())
	g.poll, g.maxWait = time.Millisecond, 50*time.Millisecond
	begin := func(job int, inputs ...uint64) {
		var tables []pebble.TableInfo
		for _, n := range inputs {
			tables = append(tables, pebble.TableInfo{Size: n})
		}
		g.compactionBegin(pebble.CompactionInfo{JobID: job, Input: []pebble.LevelInfo{{Level: 0, Tables: tables}}})
	}

	// A flush's table is never held, whatever the space.
	disk.set(10 * mib)
	g.tableCreated(pebble.TableCreateInfo{JobID: 1, Reason: "flushing", Path: "flush.sst"})
	if err := g.wait("flush.sst"); err != nil {
		t.Fatalf("a flush's table: %v", err)
	}

	// A compaction that fits (30 + 8 MiB of 100) passes.
	disk.set(100 * mib)
	begin(2, 20*mib, 10*mib)
	g.tableCreated(pebble.TableCreateInfo{JobID: 2, Reason: "compacting", Path: "c2.sst"})
	if err := g.wait("c2.sst"); err != nil {
		t.Fatalf("a compaction with room: %v", err)
	}
	g.compactionEnd(pebble.CompactionInfo{JobID: 2})

	// One that does not (60 + 8 MiB of 40 + the released 10) waits,
	// holds the store full, and gives up with an ENOSPC.
	disk.set(40 * mib)
	begin(3, 60*mib)
	g.tableCreated(pebble.TableCreateInfo{JobID: 3, Reason: "compacting", Path: "c3.sst"})
	err = g.wait("c3.sst")
	if !isCompactionRoomError(err) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a compaction without room: %v, want a compactionRoomError wrapping ENOSPC", err)
	}
	var full *DiskFullError
	if err := space.admit(1); !errors.As(err, &full) {
		t.Fatalf("a write while a compaction waits for room: %v, want *DiskFullError", err)
	}
	if want := uint64(68*mib + 10*mib); full.Needed != want {
		t.Fatalf("Needed while a compaction waits: %d, want %d (its room and the reserve)", full.Needed, want)
	}
	if waited, failed, _ := g.counts(); waited != 1 || failed != 1 {
		t.Fatalf("counts: %d waited, %d failed; want 1 and 1", waited, failed)
	}

	// Space comes back while it waits again: it passes, and the store
	// takes writes once the room is there for it and the reserve.
	g.maxWait = time.Minute
	done := make(chan error, 1)
	go func() { done <- g.wait("c3.sst") }()
	disk.set(200 * mib)
	if err := <-done; err != nil {
		t.Fatalf("a compaction after space came back: %v", err)
	}
	if err := admitFresh(space); err != nil {
		t.Fatalf("a write after space came back: %v", err)
	}
	g.compactionEnd(pebble.CompactionInfo{JobID: 3})

	// Close releases a waiting compaction at once.
	disk.set(10 * mib)
	begin(4, 60*mib)
	g.tableCreated(pebble.TableCreateInfo{JobID: 4, Reason: "compacting", Path: "c4.sst"})
	go func() { done <- g.wait("c4.sst") }()
	g.close()
	if err := <-done; !isCompactionRoomError(err) {
		t.Fatalf("a waiting compaction at close: %v, want a compactionRoomError", err)
	}
}

// TestCompactionThatNeverFits: a compaction whose inputs and flush room
// exceed the most the disk could give the store (its size less the
// store's live files) does not hold the store full: writes are accepted
// while the disk has room, the compaction still waits and gives up, and
// a write stall meanwhile is refused as one that cannot end by itself.
func TestCompactionThatNeverFits(t *testing.T) {
	const mib = 1 << 20
	dir := t.TempDir()
	disk := &fakeDisk{dir: dir, total: 100 * mib, avail: 60 * mib}
	space, err := newSpaceGuard(dir, 10*mib, disk.usage, discard())
	if err != nil {
		t.Fatal(err)
	}
	g := newCompactionGate(dir, disk.usage, space, 8*mib, discard())
	g.poll, g.maxWait = time.Millisecond, 50*time.Millisecond
	liveBytes := uint64(40 * mib) // ceiling: 60 MiB
	g.live = func() (uint64, int, bool) { return liveBytes, 13, true }
	if g.neverFitting() {
		t.Fatal("a gate that saw no compaction says one never fits")
	}

	// 55 + 8 MiB of a disk that can give the store 60 at most.
	g.compactionBegin(pebble.CompactionInfo{JobID: 1, Input: []pebble.LevelInfo{{Level: 0, Tables: []pebble.TableInfo{{Size: 55 * mib}}}}})
	g.tableCreated(pebble.TableCreateInfo{JobID: 1, Reason: "compacting", Path: "c1.sst"})
	if err := g.wait("c1.sst"); !isCompactionRoomError(err) {
		t.Fatalf("a compaction that never fits: %v, want a compactionRoomError after its wait", err)
	}
	if waited, failed, neverFit := g.counts(); waited != 0 || failed != 1 || neverFit != 1 {
		t.Fatalf("counts: %d waited, %d failed, %d never fit; want 0, 1, 1", waited, failed, neverFit)
	}
	if !g.neverFitting() {
		t.Fatal("neverFitting is false right after a compaction that never fits")
	}
	if err := space.admit(1); err != nil {
		t.Fatalf("a write beside a compaction that never fits, 50 MiB free: %v", err)
	}
	if err := space.stalledError(false); err != nil {
		t.Fatalf("a write stall on a disk with room and every compaction fitting: %v, want no refusal", err)
	}
	var full *DiskFullError
	if err := space.stalledError(g.neverFitting()); !errors.As(err, &full) || !full.CannotCompact {
		t.Fatalf("a write stall beside a compaction that never fits: %v, want a *DiskFullError with CannotCompact", err)
	}

	// The same compaction on a disk that could hold it (the store's live
	// files shrank) holds the store full while it waits, as any other.
	liveBytes = 20 * mib // ceiling: 80 MiB
	if err := g.wait("c1.sst"); !isCompactionRoomError(err) {
		t.Fatalf("a compaction that fits the disk but not its free space: %v, want a compactionRoomError", err)
	}
	if err := space.admit(1); !errors.As(err, &full) {
		t.Fatalf("a write while a compaction that can fit waits: %v, want *DiskFullError", err)
	}

	// The store's files grew again: the compaction never fits, and what
	// it stated before no longer holds the store full.
	liveBytes = 40 * mib
	if err := g.wait("c1.sst"); !isCompactionRoomError(err) {
		t.Fatalf("a compaction that no longer fits the disk: %v, want a compactionRoomError", err)
	}
	if err := admitFresh(space); err != nil {
		t.Fatalf("a write once the waiting compaction was found never to fit, 60 MiB free: %v", err)
	}
}

// admitFresh admits a write of one byte with the free space read anew,
// not the figure the guard last read.
func admitFresh(g *spaceGuard) error {
	g.mu.Lock()
	g.checked = time.Time{}
	g.mu.Unlock()
	return g.admit(1)
}
