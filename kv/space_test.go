package kv

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeDisk is a file system whose free space a test sets; the ballast's
// allocation is counted against it, as on a real disk.
type fakeDisk struct {
	dir   string
	total uint64
	// mu guards avail: a store's or gate's goroutines read it while the
	// test changes it with set.
	mu    sync.Mutex
	avail uint64
}

// set changes the free space the disk reports.
func (d *fakeDisk) set(avail uint64) {
	d.mu.Lock()
	d.avail = avail
	d.mu.Unlock()
}

func (d *fakeDisk) usage(string) (diskUsage, error) {
	used := uint64(0)
	if fi, err := os.Stat(filepath.Join(d.dir, BallastFile)); err == nil {
		used = uint64(fi.Size())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return diskUsage{avail: d.avail - used, total: d.total}, nil
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fakeGuard returns a space guard with a 10 MiB reserve on a fake disk of
// 1000 MiB with avail bytes free, and tick, which moves its clock on by a
// free-space check interval.
func fakeGuard(t *testing.T, avail uint64) (g *spaceGuard, disk *fakeDisk, dir string, tick func()) {
	t.Helper()
	const mib = 1 << 20
	dir = t.TempDir()
	disk = &fakeDisk{dir: dir, total: 1000 * mib, avail: avail}
	g, err := newSpaceGuard(dir, 10*mib, disk.usage, discard())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	g.checked = now
	return g, disk, dir, func() { now = now.Add(spaceCheckInterval) }
}

func TestSpaceGuardStates(t *testing.T) {
	const mib = 1 << 20
	g, disk, dir, tick := fakeGuard(t, 500*mib)
	ballast := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, BallastFile))
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	if ballast() != 10*mib {
		t.Fatalf("ballast at open: %d bytes, want %d", ballast(), 10*mib)
	}
	if err := g.admit(1); err != nil {
		t.Fatalf("admit with 490 MiB free: %v", err)
	}
	g.settle(1) // applied

	// The disk fills: 9 MiB free beside the ballast is below the reserve.
	disk.set(19 * mib)
	if err := g.admit(1); err != nil {
		t.Fatalf("admit within the check interval must use the last figure: %v", err)
	}
	g.settle(1)
	tick()
	err := g.admit(1)
	var full *DiskFullError
	if !errors.As(err, &full) {
		t.Fatalf("admit with 9 MiB free: %v, want *DiskFullError", err)
	}
	if ballast() != 0 {
		t.Fatal("the ballast must be released when the disk is full")
	}
	if full.Available != 19*mib || full.Needed != 20*mib {
		t.Fatalf("error reports %d free, %d needed; want %d and %d", full.Available, full.Needed, 19*mib, 20*mib)
	}

	// Freed space below twice the reserve keeps it full (no flapping).
	disk.set(19*mib + 512<<10)
	tick()
	if err := g.admit(1); !errors.As(err, &full) {
		t.Fatalf("admit with 19.5 MiB free: %v, want still full", err)
	}
	// Twice the reserve: the ballast comes back and writes are accepted.
	disk.set(25 * mib)
	tick()
	if err := g.admit(1); err != nil {
		t.Fatalf("admit with 25 MiB free: %v", err)
	}
	if ballast() != 10*mib {
		t.Fatalf("ballast after recovery: %d bytes", ballast())
	}
	// A nil guard (no protection) admits everything.
	var none *spaceGuard
	if err := none.admit(1); err != nil {
		t.Fatal(err)
	}
}

func TestSpaceGuardAtOpen(t *testing.T) {
	const mib = 1 << 20
	dir := t.TempDir()
	// A ballast larger than the file system is refused.
	disk := &fakeDisk{dir: dir, total: 64 * mib, avail: 60 * mib}
	if _, err := newSpaceGuard(dir, 64*mib, disk.usage, discard()); err == nil {
		t.Fatal("a reserve as large as the file system must fail")
	}
	// Too little free space for the ballast: the store starts full.
	disk.set(15 * mib)
	g, err := newSpaceGuard(dir, 10*mib, disk.usage, discard())
	if err != nil {
		t.Fatal(err)
	}
	var full *DiskFullError
	if err := g.admit(1); !errors.As(err, &full) {
		t.Fatalf("admit on a nearly full disk at open: %v", err)
	}
	// The default reserve: 2% of the file system within its bounds.
	for _, tc := range []struct{ total, want uint64 }{
		{100 << 30, 2 << 30}, {10 << 30, 10 << 30 / 50}, {1 << 30, MinDefaultReserveSpace}, {64 * mib, 16 * mib},
	} {
		if got := defaultReserve(tc.total); got != tc.want {
			t.Errorf("default reserve of a %d-byte file system: %d, want %d", tc.total, got, tc.want)
		}
	}
	// Negative: no protection.
	if g, err := newSpaceGuard(dir, -1, disk.usage, discard()); g != nil || err != nil {
		t.Fatalf("negative reserve: %v, %v", g, err)
	}
}

// TestPebbleEventsRateLimitAndBackoff: a storm of background errors logs
// one line per kind per interval and makes each retry wait longer, up to
// the bound.
func TestPebbleEventsRateLimitAndBackoff(t *testing.T) {
	var lines int
	h := slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { lines++; return len(p), nil }), nil)
	p := newPebbleEvents(slog.New(h))
	now := time.Unix(1000, 0)
	var slept []time.Duration
	p.now = func() time.Time { return now }
	p.sleep = func(d time.Duration) { slept = append(slept, d); now = now.Add(d) }
	enospc := &os.PathError{Op: "write", Path: "000012.sst", Err: errNoSpace}
	for i := 0; i < 1000; i++ {
		p.backgroundError(enospc)
	}
	if lines < 1 || lines > 1+int(now.Sub(time.Unix(1000, 0))/logInterval)+1 {
		t.Fatalf("%d lines logged over %v for 1,000 errors", lines, now.Sub(time.Unix(1000, 0)))
	}
	if slept[0] != 50*time.Millisecond || slept[len(slept)-1] != maxErrorBackoff {
		t.Fatalf("backoff went %v ... %v, want 50ms ... %v", slept[0], slept[len(slept)-1], maxErrorBackoff)
	}
	// After a quiet spell the backoff starts over.
	now = now.Add(errorRunReset + time.Second)
	p.backgroundError(enospc)
	if got := slept[len(slept)-1]; got != 50*time.Millisecond {
		t.Fatalf("backoff after a quiet spell: %v", got)
	}
	if k := errorKind(enospc); k != "disk full" {
		t.Fatalf("kind of ENOSPC: %q", k)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestSpaceGuardCountsWritesInFlight: writes admitted but not yet applied
// (queued in Pebble's commit pipeline) show neither in the free space nor
// in the memtables; every read of the free space counts them as used
// until they settle, so that a burst of them cannot be admitted past the
// reserve however often the free space is read. Without that, each read
// forgot them: a 48 MiB INSERT ... SELECT was admitted whole on a disk
// with 27 MiB above the reserve, and the flushes of what it wrote failed
// for space (TestDiskFullDuringLargeTransaction, issue 22).
func TestSpaceGuardCountsWritesInFlight(t *testing.T) {
	const mib = 1 << 20
	g, disk, _, tick := fakeGuard(t, 40*mib)
	// 30 MiB free beside the ballast, read anew before every write: each
	// write of 5 MiB counts twice (its log, then its table).
	for i := 0; i < 2; i++ {
		tick()
		if err := g.admit(5 * mib); err != nil {
			t.Fatalf("write %d of 5 MiB with %d MiB in flight: %v", i, 10*i, err)
		}
	}
	tick()
	var full *DiskFullError
	if err := g.admit(5 * mib); !errors.As(err, &full) {
		t.Fatalf("a third write of 5 MiB with 20 of the 30 MiB free in flight: %v; want *DiskFullError", err)
	}
	// Applied, the writes are on the disk (in its free space, which
	// the released ballast adds to): the figure is the disk's alone, and
	// the store stays full below twice the reserve.
	g.settle(5 * mib)
	g.settle(5 * mib)
	disk.set(19 * mib)
	tick()
	if err := g.admit(1); !errors.As(err, &full) || full.Available != 19*mib {
		t.Fatalf("after the writes were applied: %v; want full with 19 MiB free", err)
	}
}
