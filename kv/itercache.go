package kv

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// iterCache keeps write-space iterators over the database for reuse by
// latch-free reads and by write commands (mvccReader.borrowIters).
// Opening and closing a Pebble iterator was about half the instructions
// of a point read (Pebble zeroes and pools a large structure each time),
// and a point read needs only a seek.
//
// A Pebble iterator reads the database as it was when the iterator was
// opened. The applier bumps the cache's generation after each batch it
// applies that changes the write space (writeBatch.changesWriteSpace),
// before it returns (and before the lock set forgets the locks the batch
// deleted, and before the command gives its latches up), and a cached
// iterator is reused only while the generation is the one it was opened
// at: then every batch that changed the write space before the reuse was
// applied before the iterator was opened, and the iterator sees what a
// fresh one would, except batches still being applied, which a fresh
// iterator may miss as well. Batches of the lock space alone (pessimistic
// locks, a prewrite's locks) change nothing such an iterator reads. A
// read-only workload reuses iterators indefinitely; under commits they go
// stale at once and are closed, which costs what opening a fresh iterator
// cost before.
//
// An open iterator also pins the memtables and sstables of the LSM
// version it reads: a compaction's inputs stay on disk, and a flushed
// memtable in memory, until the last iterator over them is closed. So a
// cached iterator is reused only while the LSM is the one it was opened
// over too (version, bumped by every flush and compaction: listen), and
// the cache closes its idle iterators after every flush and compaction
// (sweep), not at the next read only: a cache that no read comes back to
// (a store refusing writes on a full disk, an idle store after a bulk
// load) would otherwise hold the space of every compaction's inputs
// until the store closed. Issue 22's TestFullDiskCompactionLargerThanBallast
// stayed full for good on one cached iterator.
type iterCache struct {
	db *pebble.DB
	// gen counts the batches applied.
	gen atomic.Uint64
	// version counts the flushes and compactions ended, and the sweeps
	// after them (see sweep).
	version atomic.Uint64
	// changed wakes the sweeper (capacity 1: a wake-up pending covers
	// every change before it); done stops it and swept tells it stopped.
	changed chan struct{}
	done    chan struct{}
	swept   sync.WaitGroup

	mu     sync.Mutex
	free   []cachedIter
	closed bool
}

// iterCacheSize bounds the iterators kept: about one per concurrent reader.
const iterCacheSize = 16

// cachedIter is an iterator and the generation and LSM version it was
// opened at.
type cachedIter struct {
	it           *pebble.Iterator
	gen, version uint64
}

// newIterCache returns a cache for the database start will give it;
// listen may be called before (Pebble's listeners are set before Open).
func newIterCache() *iterCache {
	return &iterCache{free: make([]cachedIter, 0, iterCacheSize), changed: make(chan struct{}, 1), done: make(chan struct{})}
}

// listen adds the cache's handlers to Pebble's event listener, after
// those already there: every flush and compaction that ends changes the
// LSM version.
func (c *iterCache) listen(l *pebble.EventListener) {
	flushEnd, compactionEnd := l.FlushEnd, l.CompactionEnd
	l.FlushEnd = func(info pebble.FlushInfo) {
		if flushEnd != nil {
			flushEnd(info)
		}
		c.lsmChanged()
	}
	l.CompactionEnd = func(info pebble.CompactionInfo) {
		if compactionEnd != nil {
			compactionEnd(info)
		}
		c.lsmChanged()
	}
}

// lsmChanged marks cached iterators stale and wakes the sweeper. Pebble
// calls it holding its DB mutex, which closing an iterator may take: it
// closes nothing itself and never blocks.
func (c *iterCache) lsmChanged() {
	c.version.Add(1)
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// start gives the cache its database and starts the sweeper, which close
// stops.
func (c *iterCache) start(db *pebble.DB) {
	c.db = db
	c.swept.Add(1)
	go c.sweeper()
}

// sweeper closes idle iterators over an old LSM version after each change
// (sweep), until close.
func (c *iterCache) sweeper() {
	defer c.swept.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.changed:
			c.sweep()
		}
	}
}

// sweep closes the idle iterators opened before the latest LSM change.
// Pebble tells of a compaction's end before it installs the new version
// for readers, under its DB mutex: an iterator opened in between reads the
// old version with the new count. Metrics takes that mutex, so once it
// returns the new version is installed; the version is bumped once more,
// which makes such an iterator stale too.
func (c *iterCache) sweep() {
	_ = c.db.Metrics()
	v := c.version.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.free[:0]
	for _, ci := range c.free {
		if ci.version == v {
			kept = append(kept, ci)
			continue
		}
		_ = ci.it.Close()
	}
	clear(c.free[len(kept):])
	c.free = kept
}

// applied marks a batch that changed the write space applied: iterators
// opened before are stale.
func (c *iterCache) applied() { c.gen.Add(1) }

// current reports whether ci may be reused: no batch applied and no LSM
// change since it was opened.
func (c *iterCache) current(ci cachedIter) bool {
	return ci.gen == c.gen.Load() && ci.version == c.version.Load()
}

// get returns a write-space iterator that sees every batch applied before
// the call. The caller hands it back with put.
func (c *iterCache) get() (cachedIter, error) {
	gen, version := c.gen.Load(), c.version.Load()
	c.mu.Lock()
	for len(c.free) > 0 {
		ci := c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
		if ci.gen == gen && ci.version == version {
			c.mu.Unlock()
			return ci, nil
		}
		// Stale, and so is every iterator below it (they were put back
		// no later): close them all.
		_ = ci.it.Close()
		for _, old := range c.free {
			_ = old.it.Close()
		}
		clear(c.free)
		c.free = c.free[:0]
	}
	c.mu.Unlock()
	it, err := c.db.NewIter(&pebble.IterOptions{
		LowerBound: keyspace.SpaceStart(keyspace.Write),
		UpperBound: keyspace.SpaceEnd(keyspace.Write),
	})
	if err != nil {
		return cachedIter{}, fmt.Errorf("open write-space iterator: %w", err)
	}
	return cachedIter{it: it, gen: gen, version: version}, nil
}

// put hands an iterator back: kept if it is still current and healthy,
// closed otherwise.
func (c *iterCache) put(ci cachedIter) {
	if ci.it.Error() == nil && c.current(ci) {
		c.mu.Lock()
		if !c.closed && len(c.free) < cap(c.free) {
			c.free = append(c.free, ci)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	_ = ci.it.Close() // its error, if any, was reported by the read
}

// release closes the cached iterators. An open iterator pins the files
// of the LSM version it reads, so a compaction that deleted a range only
// gives the space back once they are closed (UnsafeDestroyRange).
func (c *iterCache) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ci := range c.free {
		_ = ci.it.Close()
	}
	clear(c.free)
	c.free = c.free[:0]
}

// close stops the sweeper and closes the cached iterators; later puts
// close theirs. The store calls it before it closes the database.
func (c *iterCache) close() {
	if c.db != nil {
		close(c.done)
		c.swept.Wait()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ci := range c.free {
		_ = ci.it.Close()
	}
	c.free = nil
	c.closed = true
}
