package kv

import (
	"bytes"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
)

// DefaultGCCompactTombstones is Options.GCCompactTombstones when left zero:
// TiKV's region-compact-min-tombstones.
const DefaultGCCompactTombstones = 10000

// gcCompactor compacts the key ranges that GC has just cleaned.
//
// GC deletes old versions with point deletions, and a point deletion is a
// tombstone that every read of the range steps over until a compaction
// drops it together with the record it deletes. Pebble picks compactions
// by level sizes, not by tombstones, so a table under steady updates and
// GC keeps a tombstone per collected version for a long time: a full scan
// of 20,000 keys with two live versions each took 3.3x the time of the
// same keys loaded once until the range was compacted, and 1.08x after
// (BenchmarkScanAfterGC). TiKV compacts a region once GC has left enough
// tombstones in it, and enough of them against its keys
// (region-compact-min-tombstones 10,000, region-compact-tombstones-percent
// 30); so does this.
//
// The applier reports every collecting batch it applies (collected), on
// every replica, since each replica's Pebble holds its own tombstones. A
// batch is one GC page, so its deletions lie in a narrow span of raw keys;
// the compactor keeps those spans. Once threshold/4 deletions have come in
// since it last looked, its goroutine merges the spans that overlap or lie
// close together (at most compactMergeGap bytes of sstables between them,
// Pebble's estimate from file metadata) and compacts each merged span that
// holds at least threshold deletions and at least compactMinDensity of
// them per MiB of sstables: a few deletions spread over a large table do
// not rewrite it. The other spans stay, and gather the deletions of later
// passes over the same keys. One compaction runs at a time, and the
// goroutine rests after each as long as it took, so that compactions take
// at most half of a core's time however fast GC deletes.
type gcCompactor struct {
	db        *pebble.DB
	threshold int
	logger    *slog.Logger
	// usage estimates the bytes of sstables in [lo, hi) (the store's
	// Pebble; tests give their own).
	usage func(lo, hi []byte) uint64
	// before runs ahead of each compaction (the store releases its cached
	// iterators, which would pin the files the compaction replaces);
	// enter/exit bracket it as a command of the store, so that Close
	// waits for it.
	before     func()
	enter      func() error
	exit       func()
	kick, stop chan struct{}
	stopOnce   sync.Once
	done       chan struct{}
	// busy is set from taking the spans to the end of the rest after
	// their compactions.
	busy        atomic.Bool
	compactions atomic.Uint64
	compactTime atomic.Int64 // nanoseconds
	// compactedBytes sums the sstable bytes of the spans compacted, as
	// Pebble estimated them just before each compaction: what the
	// compactions rewrote (their input), not what they freed.
	compactedBytes atomic.Uint64

	mu sync.Mutex
	// spans are the spans of deleted raw keys not compacted yet, total
	// their deletions; fresh counts the deletions reported since the
	// goroutine last took them.
	spans        []deletedSpan
	total, fresh int
	// reads are the spans range reads reported (read), readCount their
	// hidden points; gcSinceRead counts GC's deletions since the last
	// report.
	reads                  []deletedSpan
	readCount, gcSinceRead int
	// latestDue: the latest space's copies churned enough to compact it
	// (latestcompact.go).
	latestDue bool
	// latestCompactions counts the compactions of the latest space.
	latestCompactions atomic.Uint64
}

// deletedSpan is a span of raw keys [lo, hi] (hi included) holding count
// deletions by GC.
type deletedSpan struct {
	lo, hi []byte
	count  int
}

const (
	// compactMergeGap: spans with at most this many bytes of sstables
	// between them are compacted as one.
	compactMergeGap = 4 << 20
	// compactMinDensity is the deletions per MiB of sstables a span needs
	// to be compacted: about one record in ten of a table of short rows
	// (TiKV asks 30% of a region's keys).
	compactMinDensity = 1000
)

func newGCCompactor(db *pebble.DB, threshold int, logger *slog.Logger) *gcCompactor {
	c := &gcCompactor{
		db:        db,
		threshold: threshold,
		logger:    logger,
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	c.usage = func(lo, hi []byte) uint64 {
		n, err := db.EstimateDiskUsage(lo, hi)
		if err != nil {
			return 0
		}
		return n
	}
	return c
}

// start runs the compactor's goroutine until close.
func (c *gcCompactor) start() { go c.run() }

// close stops the goroutine; it returns before a compaction in flight
// ends (the store's Close waits for it through enter/exit).
func (c *gcCompactor) close() { c.stopOnce.Do(func() { close(c.stop) }) }

// wait returns once the goroutine has ended.
func (c *gcCompactor) wait() { <-c.done }

// collected records the point deletions of a collecting batch.
func (c *gcCompactor) collected(wb *writeBatch) {
	if c == nil || c.threshold < 0 {
		return
	}
	var sp deletedSpan
	for _, op := range wb.ops {
		if !op.delete || op.rangeEnd != nil || len(op.key) == 0 {
			continue // range deletions compact themselves (UnsafeDestroyRange)
		}
		if sp.count > 0 && sp.lo[0] != op.key[0] {
			// Another key space (a long value's data key): a span of its own.
			c.add(sp)
			sp = deletedSpan{}
		}
		if sp.count == 0 {
			sp.lo, sp.hi = op.key, op.key
		} else if bytes.Compare(op.key, sp.lo) < 0 {
			sp.lo = op.key
		} else if bytes.Compare(op.key, sp.hi) > 0 {
			sp.hi = op.key
		}
		sp.count++
	}
	if sp.count > 0 {
		c.add(sp)
	}
}

// read records a span where range reads stepped over sp.count hidden
// points (scancost.go): read-triggered compaction. Planned with GC's
// spans, it counts as that many deletions, so that tombstones scans keep
// crossing are compacted although GC's deletions alone stay under the
// threshold or density (a small table scanned often, the rest of a pass).
//
// A read counts only when GC deleted nothing since the read reported
// before it: while a GC pass is under way its own deletions bring the
// compaction when it is through, and compacting its first pages on the
// word of the scans would rewrite the range once more for the rest. The
// spans reported before a compaction ended are dropped (what they crossed
// may be gone; a scan still crossing it says so again).
func (c *gcCompactor) read(sp deletedSpan) {
	if c == nil || c.threshold < 0 {
		return
	}
	sp.lo = append([]byte(nil), sp.lo...)
	sp.hi = append([]byte(nil), sp.hi...)
	c.mu.Lock()
	defer c.mu.Unlock()
	quiet := c.gcSinceRead == 0
	c.gcSinceRead = 0
	if !quiet {
		return
	}
	c.reads = append(c.reads, sp)
	c.readCount += sp.count
	c.maybeKickLocked()
}

// add keeps a span (copying its keys: the batch's are not the
// compactor's) and wakes the goroutine when enough came in.
func (c *gcCompactor) add(sp deletedSpan) {
	sp.lo = append([]byte(nil), sp.lo...)
	sp.hi = append([]byte(nil), sp.hi...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, sp)
	c.fresh += sp.count
	c.total += sp.count
	c.gcSinceRead += sp.count
	c.maybeKickLocked()
}

// maybeKickLocked wakes the goroutine when a quarter of the threshold came
// in, or enough in all with a little new (the spans kept last time may now
// make one to compact). c.mu is held.
func (c *gcCompactor) maybeKickLocked() {
	if c.fresh >= c.threshold/4 || c.total >= c.threshold && c.fresh >= max(c.threshold/64, 1) ||
		c.readCount >= c.threshold/4 {
		c.busy.Store(true) // until the goroutine has looked (idle)
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// compactLatest asks for a compaction of the whole latest space, run with
// the next spans (latestcompact.go).
func (c *gcCompactor) compactLatest() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.latestDue = true
	c.busy.Store(true)
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// take hands the spans over to the goroutine, those of reads included;
// latest says whether the latest space is due too.
func (c *gcCompactor) take() (spans []deletedSpan, latest bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	spans = append(c.spans, c.reads...)
	c.spans, c.total, c.fresh = nil, 0, 0
	c.reads, c.readCount = nil, 0
	latest, c.latestDue = c.latestDue, false
	return spans, latest
}

// dropReads forgets the reads reported so far: a compaction just ended.
func (c *gcCompactor) dropReads() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads, c.readCount = nil, 0
}

// giveBack returns the spans the goroutine did not compact.
func (c *gcCompactor) giveBack(spans []deletedSpan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, spans...)
	for _, sp := range spans {
		c.total += sp.count
	}
	// Deletions that came in while the goroutine planned may complete a
	// span it kept.
	c.maybeKickLocked()
}

// plan merges spans (sorting them) and splits them into those to compact
// now and those to keep (see gcCompactor).
func (c *gcCompactor) plan(spans []deletedSpan) (compact, keep []deletedSpan) {
	slices.SortFunc(spans, func(a, b deletedSpan) int { return bytes.Compare(a.lo, b.lo) })
	var merged []deletedSpan
	for _, sp := range spans {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			if last.lo[0] == sp.lo[0] && (bytes.Compare(sp.lo, last.hi) <= 0 || c.usage(last.hi, sp.lo) <= compactMergeGap) {
				if bytes.Compare(sp.hi, last.hi) > 0 {
					last.hi = sp.hi
				}
				last.count += sp.count
				continue
			}
		}
		merged = append(merged, sp)
	}
	for _, sp := range merged {
		mib := float64(c.usage(sp.lo, spanEnd(sp.hi))) / (1 << 20)
		if sp.count >= c.threshold && float64(sp.count) >= compactMinDensity*mib {
			compact = append(compact, sp)
		} else {
			keep = append(keep, sp)
		}
	}
	return compact, keep
}

// spanEnd is the exclusive end just past hi.
func spanEnd(hi []byte) []byte { return append(append([]byte(nil), hi...), 0) }

func (c *gcCompactor) run() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		if err := c.enter(); err != nil {
			return // closed
		}
		spans, latest := c.take()
		compact, keep := c.plan(spans)
		c.giveBack(keep)
		if latest {
			// Its own span: its key space is not GC's.
			compact = append(compact, latestSpan())
			c.latestCompactions.Add(1)
		}
		if len(compact) == 0 {
			c.exit()
			c.rested()
			continue
		}
		began := time.Now()
		if c.before != nil {
			c.before()
		}
		count := 0
		for _, sp := range compact {
			c.compactedBytes.Add(c.usage(sp.lo, spanEnd(sp.hi)))
			if err := c.db.Compact(sp.lo, spanEnd(sp.hi), false); err != nil {
				c.logger.Warn("kv: compaction after GC failed", "start", sp.lo, "end", sp.hi, "err", err)
			}
			count += sp.count
		}
		took := time.Since(began)
		c.exit()
		c.dropReads()
		c.compactions.Add(uint64(len(compact)))
		c.compactTime.Add(int64(took))
		c.logger.Debug("kv: compacted the ranges GC cleaned", "ranges", len(compact), "deletions", count, "took", took)
		// Rest as long as the compactions took.
		t := time.NewTimer(took)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
		c.rested()
	}
}

// rested clears busy unless a kick is waiting (add set it again).
func (c *gcCompactor) rested() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.kick) == 0 {
		c.busy.Store(false)
	}
}

// idle reports whether the compactor has nothing under way or due.
func (c *gcCompactor) idle() bool {
	return !c.busy.Load() && len(c.kick) == 0
}

// GCCompactionStats are the compactions a store ran after GC since it
// opened (see Options.GCCompactTombstones).
type GCCompactionStats struct {
	// Compactions counts them, Time is their total duration.
	Compactions uint64
	Time        time.Duration
	// Bytes sums the sstable bytes of the ranges compacted, estimated
	// before each compaction (what they rewrote).
	Bytes uint64
}

// GCCompactionStats returns the store's compactions after GC so far.
func (s *Store) GCCompactionStats() GCCompactionStats {
	return GCCompactionStats{
		Compactions: s.compactor.compactions.Load(),
		Time:        time.Duration(s.compactor.compactTime.Load()),
		Bytes:       s.compactor.compactedBytes.Load(),
	}
}
