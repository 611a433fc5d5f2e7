package kv

import (
	"fmt"
	"hash/maphash"
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
// stale at once for scans. A point read (getFor) may still reuse one: the
// applier also records, per slot of user keys (by hash), the generation
// of the last batch that changed a write record of a key in the slot
// (wrote), and an iterator opened at generation g reads a key as a fresh
// one would when no batch after g changed the key's slot (nor deleted a
// range: wide). The slots are raised before the lock set forgets the
// batch's locks, as the generation is, so a read that found a key
// unlocked and reuses an older iterator for it cannot miss the commit
// that removed the lock. Under commits to other rows, the point reads of
// a busy store keep reusing their iterators.
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
	// gen counts the batches applied that changed the write space.
	gen atomic.Uint64
	// wrote holds, per slot of user keys (slotOf), the generation of the
	// last batch that changed a write record of a key in the slot; wide,
	// the generation of the last batch that deleted a range. Both only
	// rise.
	wrote [keySlots]atomic.Uint64
	wide  atomic.Uint64
	seed  maphash.Seed
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

// keySlots is how many slots iterCache.wrote hashes user keys into: enough
// that a point read seldom shares its key's slot with a row written since
// its iterator was opened, at 8 bytes each.
const keySlots = 4096

// cachedIter is an iterator and the generation and LSM version it was
// opened at.
type cachedIter struct {
	it           *pebble.Iterator
	gen, version uint64
}

// newIterCache returns a cache for the database start will give it;
// listen may be called before (Pebble's listeners are set before Open).
func newIterCache() *iterCache {
	return &iterCache{free: make([]cachedIter, 0, iterCacheSize), changed: make(chan struct{}, 1), done: make(chan struct{}), seed: maphash.MakeSeed()}
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

// applied marks wb, a batch that changed the write space, applied:
// iterators opened before are stale for scans, and for point reads of
// the keys whose write records it changed.
func (c *iterCache) applied(wb *writeBatch) {
	g := c.gen.Add(1)
	var buf [64]byte
	for _, op := range wb.ops {
		switch {
		case op.rangeEnd == nil && len(op.key) > 0 && unreadByIterators(op.key[0]):
		case op.rangeEnd == nil && len(op.key) > 0 && op.key[0] == keyspace.Write:
			key, _, err := keyspace.AppendDecodeWriteKey(buf[:0], op.key)
			if err != nil {
				// Not a key we can place: stale for every key.
				raise(&c.wide, g)
				continue
			}
			raise(&c.wrote[c.slotOf(key)], g)
		default:
			// A range deletion, or a space not placed key by key.
			raise(&c.wide, g)
		}
	}
}

// raise sets v to g unless it holds a later generation already (batches
// of different keys are applied concurrently).
func raise(v *atomic.Uint64, g uint64) {
	for {
		cur := v.Load()
		if cur >= g || v.CompareAndSwap(cur, g) {
			return
		}
	}
}

// slotOf returns the slot of wrote that user key falls in.
func (c *iterCache) slotOf(key []byte) int {
	return int(maphash.Bytes(c.seed, key) % keySlots)
}

// currentFor reports whether ci reads keys as a fresh iterator would: no
// LSM change since it was opened, and no batch since then changed a
// write record of any of keys (by slot) or deleted a range.
func (c *iterCache) currentFor(ci cachedIter, version uint64, keys [][]byte) bool {
	if ci.version != version || c.wide.Load() > ci.gen {
		return false
	}
	for _, k := range keys {
		if c.wrote[c.slotOf(k)].Load() > ci.gen {
			return false
		}
	}
	return true
}

// get returns a write-space iterator that sees every batch applied before
// the call. The caller hands it back with put.
func (c *iterCache) get() (cachedIter, error) {
	gen, version := c.gen.Load(), c.version.Load()
	return c.take(gen, version, func(ci cachedIter) bool { return ci.gen == gen && ci.version == version })
}

// getFor is get for a point read of keys: the iterator may predate
// batches that changed no write record of keys (currentFor). The caller
// hands it back with put.
func (c *iterCache) getFor(keys [][]byte) (cachedIter, error) {
	gen, version := c.gen.Load(), c.version.Load()
	return c.take(gen, version, func(ci cachedIter) bool { return c.currentFor(ci, version, keys) })
}

// take returns the newest cached iterator if usable says so, else a fresh
// one opened at gen and version (the newest being unusable, so are the
// older ones below it, for the same keys: they are closed).
func (c *iterCache) take(gen, version uint64, usable func(cachedIter) bool) (cachedIter, error) {
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		ci := c.free[n-1]
		if usable(ci) {
			c.free = c.free[:n-1]
			c.mu.Unlock()
			return ci, nil
		}
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

// put hands an iterator back: kept if it is healthy, over the current
// LSM version and no older than the newest kept (so that the newest is on
// top: take closes what is below an unusable one), closed otherwise. One
// that batches made stale for scans is kept for point reads (getFor).
func (c *iterCache) put(ci cachedIter) {
	if ci.it.Error() == nil && ci.version == c.version.Load() {
		c.mu.Lock()
		n := len(c.free)
		if !c.closed && n < cap(c.free) && (n == 0 || c.free[n-1].gen <= ci.gen) {
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
