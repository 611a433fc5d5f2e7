package fastpath

import (
	"container/list"
	"sync"
	"sync/atomic"

	"github.com/percdb/percdb/sql/catalog"
)

// Key identifies a statement's plan: its normalized digest and the
// database its unqualified table names resolve in.
type Key struct {
	Digest string
	DB     string
}

// Planned is what the cache needs of the plan its user runs (package
// sql's, which adds the table it writes through to a Plan): the Plan it
// was resolved from, whose catalog version and database say whether it
// is still current.
type Planned[T any] interface {
	*T
	// Base returns the Plan the plan was made from.
	Base() *Plan
}

// Entry is the cached decision for one Key: either the statement's shape
// (and its plan for the latest catalog version seen), or why the fast
// path does not run it. T is the user's plan type (Planned).
type Entry[T any, P Planned[T]] struct {
	Key   Key
	Shape *Shape
	// Reason is why statements of this digest go to GMS, when Shape is
	// nil.
	Reason Reason
	plan   atomic.Pointer[T]
	// noPlan holds the catalog version at which the shape was found not
	// to resolve (reason ReasonTable), plus one; 0 when unknown.
	noPlan atomic.Uint64
	// scanAlt is set once the digest's SELECT ran as the range SELECT
	// its Shape.Alt is: later executions want their Alt too.
	scanAlt atomic.Bool
}

// RanAsScan records that the entry's SELECT ran as the range SELECT its
// Shape.Alt is, so that later executions make their Alt too.
func (e *Entry[T, P]) RanAsScan() { e.scanAlt.Store(true) }

// WantsAlt reports whether the entry's statements ran as their range
// SELECT (RanAsScan).
func (e *Entry[T, P]) WantsAlt() bool { return e.scanAlt.Load() }

// Cache is the bounded cache of decisions and plans by digest, shared
// by the sessions of a server. Entries are evicted least recently used
// first; a plan is rebuilt when the catalog version changes.
type Cache[T any, P Planned[T]] struct {
	mu  sync.Mutex
	max int
	m   map[Key]*list.Element
	lru list.List // of *Entry, most recent first
}

// NewCache returns a cache of at most max entries.
func NewCache[T any, P Planned[T]](max int) *Cache[T, P] {
	return &Cache[T, P]{max: max, m: make(map[Key]*list.Element)}
}

// Get returns the entry of key, or nil.
func (c *Cache[T, P]) Get(key Key) *Entry[T, P] {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*Entry[T, P])
}

// Put stores e, unless an entry for its key is there already (which is
// returned instead), evicting the least recently used entry when full.
func (c *Cache[T, P]) Put(e *Entry[T, P]) *Entry[T, P] {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[e.Key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*Entry[T, P])
	}
	c.m[e.Key] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.m, last.Value.(*Entry[T, P]).Key)
	}
	return e
}

// Len returns how many entries the cache holds.
func (c *Cache[T, P]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// A Resolver resolves an entry's shape in database dbName of cat: the
// user's counterpart of Resolve.
type Resolver[T any] func(cat *catalog.Catalog, dbName string, shape *Shape) (*T, Reason, bool)

// PlanFor returns e's plan for catalog cat, resolving it with resolve
// and caching it when the cached one is for another version. cat must be
// committed (the fast path leaves a transaction that changed the schema
// to GMS), so that a version number names one catalog.
func (e *Entry[T, P]) PlanFor(cat *catalog.Catalog, dbName string, resolve Resolver[T]) (*T, Reason, bool) {
	if pl := e.plan.Load(); pl != nil {
		if b := P(pl).Base(); b.Version == cat.Version && b.DB == dbName {
			return pl, 0, true
		}
	}
	home := e.Key.DB
	if e.Shape.DB != "" {
		home = e.Shape.DB
	}
	if v := e.noPlan.Load(); v != 0 && v-1 == cat.Version && home == dbName {
		return nil, ReasonTable, false
	}
	pl, reason, ok := resolve(cat, dbName, e.Shape)
	if home != dbName {
		// A prepared statement run after USE of another database: the
		// entry is its digest's in the database it was prepared in.
		return pl, reason, ok
	}
	if !ok {
		e.noPlan.Store(cat.Version + 1)
		return nil, reason, false
	}
	if cur := e.plan.Load(); cur == nil || P(cur).Base().Version < P(pl).Base().Version {
		e.plan.Store(pl)
	}
	return pl, 0, true
}
