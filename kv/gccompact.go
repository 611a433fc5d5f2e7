package kv

import (
	"bytes"
	"log/slog"
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
// tombstones in it (region-compact-min-tombstones, 10,000); so does this.
//
// The applier reports every collecting batch it applies (collected), on
// every replica, since each replica's Pebble holds its own tombstones. The
// compactor accumulates the bounds of the deleted raw keys of each key
// space; once Threshold deletions have accumulated, its goroutine compacts
// those bounds, one compaction at a time, and then rests as long as the
// compaction took, so that compactions take at most half of a core's time
// however fast GC deletes.
type gcCompactor struct {
	db        *pebble.DB
	threshold int
	logger    *slog.Logger
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
	// busy is set from taking a batch of bounds to the end of the rest
	// after its compaction.
	busy        atomic.Bool
	compactions atomic.Uint64
	compactTime atomic.Int64 // nanoseconds

	mu sync.Mutex
	// pending maps a key space's prefix byte to the bounds [lo, hi] of
	// the raw keys deleted in it since its last compaction, and count is
	// the deletions they cover in all spaces.
	pending map[byte]*[2][]byte
	count   int
}

func newGCCompactor(db *pebble.DB, threshold int, logger *slog.Logger) *gcCompactor {
	return &gcCompactor{
		db:        db,
		threshold: threshold,
		logger:    logger,
		kick:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		pending:   make(map[byte]*[2][]byte),
	}
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
	c.mu.Lock()
	for _, op := range wb.ops {
		if !op.delete || op.rangeEnd != nil || len(op.key) == 0 {
			continue // range deletions compact themselves (UnsafeDestroyRange)
		}
		b := c.pending[op.key[0]]
		if b == nil {
			b = &[2][]byte{append([]byte(nil), op.key...), append([]byte(nil), op.key...)}
			c.pending[op.key[0]] = b
		} else if bytes.Compare(op.key, b[0]) < 0 {
			b[0] = append(b[0][:0], op.key...)
		} else if bytes.Compare(op.key, b[1]) > 0 {
			b[1] = append(b[1][:0], op.key...)
		}
		c.count++
	}
	due := c.count >= c.threshold
	c.mu.Unlock()
	if due {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// take hands the pending bounds over to a compaction and starts counting
// afresh.
func (c *gcCompactor) take() (bounds [][2][]byte, count int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.count < c.threshold {
		return nil, 0
	}
	for _, b := range c.pending {
		bounds = append(bounds, *b)
	}
	count = c.count
	c.pending, c.count = make(map[byte]*[2][]byte), 0
	return bounds, count
}

func (c *gcCompactor) run() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		c.busy.Store(true)
		bounds, count := c.take()
		if len(bounds) == 0 {
			c.busy.Store(false)
			continue
		}
		if err := c.enter(); err != nil {
			return // closed
		}
		began := time.Now()
		if c.before != nil {
			c.before()
		}
		for _, b := range bounds {
			// Compact's end is exclusive: extend it past the last key.
			end := append(append([]byte(nil), b[1]...), 0)
			if err := c.db.Compact(b[0], end, false); err != nil {
				c.logger.Warn("kv: compaction after GC failed", "start", b[0], "end", end, "err", err)
			}
		}
		took := time.Since(began)
		c.exit()
		c.compactions.Add(1)
		c.compactTime.Add(int64(took))
		c.logger.Debug("kv: compacted the ranges GC cleaned", "deletions", count, "took", took)
		// Rest as long as the compaction took.
		t := time.NewTimer(took)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
		c.busy.Store(false)
	}
}

// idle reports whether the compactor has nothing under way or due.
func (c *gcCompactor) idle() bool {
	c.mu.Lock()
	due := c.threshold >= 0 && c.count >= c.threshold
	c.mu.Unlock()
	return !due && !c.busy.Load() && len(c.kick) == 0
}

// GCCompactionStats are the compactions a store ran after GC since it
// opened (see Options.GCCompactTombstones).
type GCCompactionStats struct {
	// Compactions counts them, Time is their total duration.
	Compactions uint64
	Time        time.Duration
}

// GCCompactionStats returns the store's compactions after GC so far.
func (s *Store) GCCompactionStats() GCCompactionStats {
	return GCCompactionStats{Compactions: s.compactor.compactions.Load(), Time: time.Duration(s.compactor.compactTime.Load())}
}
