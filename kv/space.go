package kv

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// Disk protection, after TiKV's storage.reserve-space and CockroachDB's
// ballast file.
//
// A store on disk keeps a ballast: a file of ReserveSpace bytes
// (BallastFile in the store's directory), allocated at open. Writes are
// measured against the free space of the file system:
//
//   - free space >= ReserveSpace: normal. The ballast is in place.
//   - free space < ReserveSpace: the store is full. Prewrites that add data
//     (a Put or Insert mutation) fail at once with *DiskFullError, unless the
//     request says it frees space (PrewriteRequest.AllowWhenDiskFull: the
//     small catalog writes of DROP and TRUNCATE). Everything else goes on:
//     reads, commits and rollbacks of transactions already prewritten,
//     lock resolution, and deletes, so that an operator can free space from
//     SQL and nothing half-written is left behind. The ballast is deleted,
//     which gives Pebble ReserveSpace bytes to flush its memtables, compact
//     and write the tombstones of those deletes.
//   - the store leaves the full state when the free space is at least twice
//     ReserveSpace: it allocates the ballast again and accepts writes. The
//     gap between the two thresholds keeps it from flapping.
//
// The free space is read (statfs) at most every spaceCheckInterval, by the
// write that needs it, so a store with no writes does no work. Between
// two reads each admitted write counts against the last figure (twice its
// bytes: the log, then the table file its memtable becomes), and a write
// that would take the count below the reserve reads the free space at
// once, so that a burst of large writes cannot overshoot the reserve
// between two reads. An admitted write counts as used in every read
// until it is applied (in flight): before that it shows neither in the
// free space nor in the memtables, and a burst of writes queued behind
// Pebble's commit pipeline (a large statement's prewrites, sent side by
// side) would otherwise be forgotten by each read, admitted far past the
// reserve, and fill the disk beyond what the ballast gives back, so that
// the flushes of what was admitted fail and writes stall (issue 22).
// A flush or compaction that fails for want of space (Pebble's
// background error) puts the store in the full state at once
// and releases the ballast, so that Pebble can finish its work. A
// ballast larger than the file system, or a directory that cannot hold
// it, fails Open with a clear error.

// BallastFile is the name of the ballast file in the store's directory.
const BallastFile = "SPACE-RESERVE"

// Bounds of the default ReserveSpace: 2% of the file system, at least
// MinDefaultReserveSpace and at most MaxDefaultReserveSpace, and never more
// than a quarter of the file system.
const (
	MinDefaultReserveSpace = 32 << 20
	MaxDefaultReserveSpace = 2 << 30
)

// spaceCheckInterval is how stale the free-space figure a write is
// measured against may be.
const spaceCheckInterval = 100 * time.Millisecond

// DiskFullError: the store's file system has less free space than the
// reserve, or than a compaction waiting for room needs, so the store
// refuses writes that add data (MySQL error 1021).
type DiskFullError struct {
	Dir       string
	Available uint64
	// Needed is the free space at which writes are accepted again: twice
	// the reserve, or more while a compaction waits for room.
	Needed uint64
	// Stalled: the storage cannot flush its memtables for want of space,
	// so the store refuses every write, deletes included (writestall.go).
	Stalled bool
	// CannotCompact (with Stalled): the storage holds writes while a
	// compaction needs more room than the disk could ever give the store
	// (compactgate.go), whatever the free space.
	CannotCompact bool
}

func (e *DiskFullError) Error() string { return "disk full: " + e.Dir + ": " + e.Reason() }

// Reason says how full the disk is and what still works.
func (e *DiskFullError) Reason() string {
	if e.CannotCompact {
		return fmt.Sprintf("%s free, but the storage holds writes while its level 0 waits for a compaction that needs more room than the file system could ever give it, so every write is refused until the storage takes writes again; grow the file system or move data off it; reads still work",
			formatBytes(e.Available))
	}
	if e.Stalled {
		return fmt.Sprintf("%s free; the storage cannot flush its memory to disk, so every write is refused until %s are; reads still work",
			formatBytes(e.Available), formatBytes(e.Needed))
	}
	return fmt.Sprintf("%s free; writes are refused until %s are (twice the reserve, whose ballast file was released, or room for a pending compaction and the reserve); reads, DELETE, TRUNCATE and DROP still work",
		formatBytes(e.Available), formatBytes(e.Needed))
}

// diskUsage is what a file system reports: bytes available to the process
// and its total size, and the free bytes only root may use (ext4's
// reserved blocks), which the process can never have.
type diskUsage struct {
	avail, total, rootOnly uint64
}

// spaceGuard decides whether the store may accept writes that add data,
// and owns the ballast file. Safe for concurrent use.
type spaceGuard struct {
	dir     string
	ballast string
	reserve uint64
	usage   func(dir string) (diskUsage, error) // statfs; replaced in tests
	// pending, once set (by Open, before the store serves), returns the
	// bytes Pebble has accepted but not yet written to table files (its
	// memtables): they count as used, since their flush needs them.
	pending func() uint64
	now     func() time.Time
	log     *slog.Logger

	// risk is set while the store is full or its free space is below
	// riskReserves times the reserve (noteRiskLocked): a write may then
	// meet Pebble's stall on a full disk, so commands own their writes
	// (inflight.go). Read without mu on every write.
	risk atomic.Bool

	mu         sync.Mutex
	checked    time.Time
	full       bool
	avail      uint64
	hasBallast bool
	// compactNeed is the free space a compaction waiting for room needs
	// (compactgate.go), set at compactNeedAt; 0: none waits.
	compactNeed   uint64
	compactNeedAt time.Time
	// inflight is what the admitted writes not yet applied (queued for
	// their latches or in Pebble's commit pipeline) will take: it shows
	// neither in the free space nor in the memtables, so every read of
	// the free space counts it as used (admit, settle).
	inflight uint64
	// refused counts the writes refused because the disk was full,
	// refusedStalled those refused because the storage was stalled on it
	// (writestall.go).
	refused, refusedStalled uint64
}

// compactNeedLife is how long a waiting compaction's need holds the store
// full after it was last stated: a compaction that gave up is picked
// again within a moment and states it anew, one that is not (a manual
// compaction that failed) must not keep writes refused for good.
const compactNeedLife = 3 * compactionMaxWait

// newSpaceGuard sets up disk protection for the store in dir: reserve is
// Options.ReserveSpace (0: the default for the file system; negative: no
// protection, nil guard). It allocates the ballast unless the disk is
// already too full for it, in which case the store starts full.
func newSpaceGuard(dir string, reserve int64, usage func(string) (diskUsage, error), log *slog.Logger) (*spaceGuard, error) {
	if reserve < 0 {
		return nil, nil
	}
	u, err := usage(dir)
	if err != nil {
		return nil, fmt.Errorf("disk space of %s: %w", dir, err)
	}
	ballast := filepath.Join(dir, BallastFile)
	have := uint64(0)
	if fi, err := os.Stat(ballast); err == nil {
		have = uint64(fi.Size())
	}
	if reserve == 0 {
		reserve = int64(defaultReserve(u.total))
	}
	if uint64(reserve) >= u.total {
		return nil, fmt.Errorf("reserve space of %s is not below the size of the file system of %s (%s)", formatBytes(uint64(reserve)), dir, formatBytes(u.total))
	}
	g := &spaceGuard{dir: dir, ballast: ballast, reserve: uint64(reserve), usage: usage, now: time.Now, log: log}
	g.mu.Lock()
	defer g.mu.Unlock()
	if have != 0 && have != g.reserve {
		// The reserve changed since the last start: size it anew.
		if err := os.Remove(ballast); err != nil {
			return nil, fmt.Errorf("remove ballast %s: %w", ballast, err)
		}
		u.avail += have
		have = 0
	}
	g.hasBallast = have == g.reserve
	g.avail = u.avail
	g.checked = g.now()
	switch {
	case g.hasBallast:
		g.full = u.avail < g.reserve
	case u.avail >= 2*g.reserve:
		if err := allocateBallast(ballast, int64(g.reserve)); err != nil {
			return nil, fmt.Errorf("allocate ballast %s of %s: %w", ballast, formatBytes(g.reserve), err)
		}
		g.hasBallast = true
		g.avail -= g.reserve
	default:
		g.full = true
	}
	if g.full {
		log.Warn("disk full at start: writes are refused until space is freed", "dir", dir, "available", formatBytes(g.avail), "reserve", formatBytes(g.reserve))
		g.releaseLocked()
	}
	return g, nil
}

// defaultReserve is the reserve of a file system of total bytes when
// Options.ReserveSpace is 0.
func defaultReserve(total uint64) uint64 {
	r := max(total/50, MinDefaultReserveSpace)
	return min(r, MaxDefaultReserveSpace, total/4)
}

// admit reports whether a write that adds about n bytes may go ahead:
// nil, or a *DiskFullError. A write it lets through counts as in flight
// until the caller settles it (settle), once it is applied or failed.
func (g *spaceGuard) admit(n uint64) error {
	if g == nil {
		return nil
	}
	cost := 2 * n
	g.mu.Lock()
	now := g.now()
	stat := now.Sub(g.checked) >= spaceCheckInterval || (!g.full && g.avail < g.reserve+cost)
	if stat {
		g.checked = now
		// Read the figures without g.mu: pending takes Pebble's mutex,
		// under which Pebble calls storageFull, which takes g.mu.
		g.mu.Unlock()
		u, err := g.usage(g.dir)
		var pending uint64
		if err == nil && g.pending != nil {
			pending = g.pending()
		}
		g.mu.Lock()
		if err == nil {
			used := pending + g.inflight
			g.avail = u.avail - min(used, u.avail)
			if !g.full && g.avail < g.reserve+cost && g.avail >= g.reserve {
				// This write would cross the reserve.
				g.avail -= min(cost, g.avail)
			}
			g.update()
		} else {
			g.log.Warn("cannot read free disk space", "dir", g.dir, "err", err.Error())
		}
	}
	defer g.mu.Unlock()
	defer g.noteRiskLocked()
	if g.full {
		g.refused++
		return &DiskFullError{Dir: g.dir, Available: g.avail, Needed: g.neededLocked()}
	}
	g.avail -= min(cost, g.avail)
	g.inflight += cost
	return nil
}

// settle is told that a write admit let through for n bytes is applied
// (its bytes are in a memtable, which pending counts, or in a table) or
// failed: it no longer counts as in flight.
func (g *spaceGuard) settle(n uint64) {
	if g == nil || n == 0 {
		return
	}
	g.mu.Lock()
	g.inflight -= min(2*n, g.inflight)
	g.mu.Unlock()
}

// riskReserves is how many reserves of free space the store has left when
// its writes start to run as owned writes (inflight.go).
const riskReserves = 4

// noteRiskLocked sets risk from the latest figures. Called with g.mu held.
func (g *spaceGuard) noteRiskLocked() {
	g.risk.Store(g.full || g.avail < riskReserves*g.reserve)
}

// atRisk reports whether the disk is full or close to it (risk).
func (g *spaceGuard) atRisk() bool { return g != nil && g.risk.Load() }

// storageFull is told of a flush or compaction that failed for want of
// space: the store is full whatever the last figure said.
func (g *spaceGuard) storageFull() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.full {
		g.avail = 0
		g.update()
	}
	g.noteRiskLocked()
}

// compactionWaiting is told by the compaction gate that a compaction
// waits for need bytes of free space (0: it has them, or gave up and
// none waits). While one waits the store is full: it refuses writes that
// add data and releases the ballast, and leaves the full state only once
// the disk holds the compaction's need as well as the reserve.
func (g *spaceGuard) compactionWaiting(need uint64) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.compactNeed, g.compactNeedAt = need, g.now()
	if need > 0 && !g.full {
		g.log.Warn("a compaction waits for room on the disk", "dir", g.dir, "needed", formatBytes(need))
		g.avail = 0
		g.update()
	}
}

// stalledError returns the *DiskFullError of a write refused because the
// storage is stalled on the full disk, or, when cannotCompact (a
// compaction can never fit), stalled whatever the free space; nil when
// neither (a stall then is a flush under way, which ends by itself).
// It counts nothing (countStalled does).
func (g *spaceGuard) stalledError(cannotCompact bool) *DiskFullError {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.full && !cannotCompact {
		return nil
	}
	return &DiskFullError{Dir: g.dir, Available: g.avail, Needed: g.neededLocked(), Stalled: true, CannotCompact: !g.full}
}

// countStalled counts a write refused with stalledError's error.
func (g *spaceGuard) countStalled() {
	g.mu.Lock()
	g.refusedStalled++
	g.mu.Unlock()
}

// neededLocked is the free space at which the store accepts writes
// again: twice the reserve, or a waiting compaction's need plus the
// reserve when that is more.
func (g *spaceGuard) neededLocked() uint64 {
	n := 2 * g.reserve
	if g.compactNeed > 0 && g.now().Sub(g.compactNeedAt) < compactNeedLife {
		n = max(n, g.compactNeed+g.reserve)
	}
	return n
}

// update moves between the normal and the full state on g.avail.
func (g *spaceGuard) update() {
	switch {
	case !g.full && g.avail < g.reserve:
		g.full = true
		g.log.Warn("disk full: writes are refused until space is freed; the ballast is released", "dir", g.dir, "available", formatBytes(g.avail), "reserve", formatBytes(g.reserve))
		g.releaseLocked()
	case g.full && g.avail >= g.neededLocked():
		if !g.hasBallast {
			if err := allocateBallast(g.ballast, int64(g.reserve)); err != nil {
				// Not fatal: the store goes on without a
				// ballast and tries again at the next check.
				_ = os.Remove(g.ballast)
				g.log.Warn("cannot allocate the ballast again", "path", g.ballast, "err", err)
				return
			}
			g.hasBallast = true
			g.avail -= g.reserve
		}
		g.full = false
		g.log.Info("disk space freed: writes are accepted again", "dir", g.dir, "available", formatBytes(g.avail))
	}
}

// releaseLocked deletes the ballast, giving its space to the store.
func (g *spaceGuard) releaseLocked() {
	if !g.hasBallast {
		return
	}
	if err := os.Remove(g.ballast); err != nil && !errors.Is(err, os.ErrNotExist) {
		g.log.Warn("cannot delete the ballast", "path", g.ballast, "err", err)
		return
	}
	g.hasBallast = false
	g.avail += g.reserve
}

// allocateBallast creates path with size bytes allocated on disk (not a
// sparse file: the point is to hold the space), synced.
func allocateBallast(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	err = allocate(f, size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
	}
	return err
}

// addedBytes returns the bytes of the values and keys a prewrite of muts
// adds, 0 when it writes no value.
func addedBytes(muts []Mutation) uint64 {
	var n uint64
	puts := false
	for _, m := range muts {
		if m.Op == OpPut || m.Op == OpInsert {
			puts = true
		}
		n += uint64(len(m.Key) + len(m.Value))
	}
	if !puts {
		return 0
	}
	return n
}

// formatBytes prints n in binary units, as "12.0 MiB".
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// writeZeros writes size zero bytes to f, where the file system cannot
// allocate blocks without writing them.
func writeZeros(f *os.File, size int64) error {
	buf := make([]byte, 1<<20)
	for size > 0 {
		n := min(size, int64(len(buf)))
		if _, err := f.Write(buf[:n]); err != nil {
			return err
		}
		size -= n
	}
	return nil
}
