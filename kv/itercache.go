package kv

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// iterCache keeps write-space iterators over the database for reuse by
// latch-free reads. Opening and closing a Pebble iterator was about half
// the instructions of a point read (Pebble zeroes and pools a large
// structure each time), and a point read needs only a seek.
//
// A Pebble iterator reads the database as it was when the iterator was
// opened. The applier bumps the cache's generation after each batch it
// applies, before it returns (and before the lock set forgets the locks
// the batch deleted), and a cached iterator is reused only while the
// generation is the one it was opened at: then every batch applied before
// the reuse was applied before the iterator was opened, and the iterator
// sees what a fresh one would, except batches still being applied, which a
// fresh iterator may miss as well. A read-only workload reuses iterators
// indefinitely; under writes they go stale at once and are closed, which
// costs what opening a fresh iterator cost before.
//
// An idle cache may hold stale iterators, which pin the memtables and
// sstables they read until the next read or Close; at most
// iterCacheSize of them.
type iterCache struct {
	db *pebble.DB
	// gen counts the batches applied.
	gen atomic.Uint64

	mu     sync.Mutex
	free   []cachedIter
	closed bool
}

// iterCacheSize bounds the iterators kept: about one per concurrent reader.
const iterCacheSize = 16

// cachedIter is an iterator and the generation it was opened at.
type cachedIter struct {
	it  *pebble.Iterator
	gen uint64
}

func newIterCache(db *pebble.DB) *iterCache {
	return &iterCache{db: db, free: make([]cachedIter, 0, iterCacheSize)}
}

// applied marks a batch applied: iterators opened before are stale.
func (c *iterCache) applied() { c.gen.Add(1) }

// get returns a write-space iterator that sees every batch applied before
// the call. The caller hands it back with put.
func (c *iterCache) get() (cachedIter, error) {
	gen := c.gen.Load()
	c.mu.Lock()
	for len(c.free) > 0 {
		ci := c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
		if ci.gen == gen {
			c.mu.Unlock()
			return ci, nil
		}
		// Stale, and so is every iterator below it (they were put back
		// no later): close them all.
		_ = ci.it.Close()
		for _, old := range c.free {
			_ = old.it.Close()
		}
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
	return cachedIter{it: it, gen: gen}, nil
}

// put hands an iterator back: kept if it is still current and healthy,
// closed otherwise.
func (c *iterCache) put(ci cachedIter) {
	if ci.it.Error() == nil && ci.gen == c.gen.Load() {
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

// close closes the cached iterators; later puts close theirs. The store
// calls it before it closes the database.
// release closes the cached iterators. An open iterator pins the files
// of the LSM version it reads, so a compaction that deleted a range only
// gives the space back once they are closed (UnsafeDestroyRange).
func (c *iterCache) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ci := range c.free {
		_ = ci.it.Close()
	}
	c.free = c.free[:0]
}

func (c *iterCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ci := range c.free {
		_ = ci.it.Close()
	}
	c.free = nil
	c.closed = true
}
