package sql

import (
	"container/list"
	"sync"
	"sync/atomic"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/fastpath"
)

// fastPlanKey identifies a statement's plan: its normalized digest and the
// database its unqualified table names resolve in.
type fastPlanKey struct {
	digest string
	db     string
}

// fastEntry is the cached decision for one fastPlanKey: either the
// statement's shape (and its plan for the latest catalog version seen), or
// why the fast path does not run it.
type fastEntry struct {
	key   fastPlanKey
	shape *fastpath.Shape
	// reason is why statements of this digest go to GMS, when shape is
	// nil.
	reason fastpath.Reason
	plan   atomic.Pointer[fastPlan]
	// noPlan holds the catalog version at which the shape was found not
	// to resolve (reason fastpath.ReasonTable), plus one; 0 when unknown.
	noPlan atomic.Uint64
	// scanAlt is set once the digest's SELECT ran as the range SELECT
	// its Shape.Alt is: later executions want their Alt too.
	scanAlt atomic.Bool
}

// fastPlanCache is the bounded cache of decisions and plans by digest,
// shared by the sessions of a server. Entries are evicted least recently
// used first; a plan is rebuilt when the catalog version changes.
type fastPlanCache struct {
	mu  sync.Mutex
	max int
	m   map[fastPlanKey]*list.Element
	lru list.List // of *fastEntry, most recent first
}

func newFastPlanCache(max int) *fastPlanCache {
	return &fastPlanCache{max: max, m: make(map[fastPlanKey]*list.Element)}
}

// get returns the entry of key, or nil.
func (c *fastPlanCache) get(key fastPlanKey) *fastEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*fastEntry)
}

// put stores e, unless an entry for its key is there already (which is
// returned instead), evicting the least recently used entry when full.
func (c *fastPlanCache) put(e *fastEntry) *fastEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[e.key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*fastEntry)
	}
	c.m[e.key] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.m, last.Value.(*fastEntry).key)
	}
	return e
}

// len returns how many entries the cache holds.
func (c *fastPlanCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// planFor returns e's plan for catalog cat, resolving and caching it when
// the cached one is for another version. cat must be committed (the fast
// path leaves a transaction that changed the schema to GMS), so that a
// version number names one catalog.
func (e *fastEntry) planFor(ctx *gsql.Context, p *DatabaseProvider, cat *catalog.Catalog, dbName string) (*fastPlan, fastpath.Reason, bool) {
	if pl := e.plan.Load(); pl != nil && pl.Version == cat.Version && pl.DB == dbName {
		return pl, 0, true
	}
	home := e.key.db
	if e.shape.DB != "" {
		home = e.shape.DB
	}
	if v := e.noPlan.Load(); v != 0 && v-1 == cat.Version && home == dbName {
		return nil, fastpath.ReasonTable, false
	}
	pl, reason, ok := newFastPlan(ctx, p, cat, dbName, e.shape)
	if home != dbName {
		// A prepared statement run after USE of another database: the
		// entry is its digest's in the database it was prepared in.
		return pl, reason, ok
	}
	if !ok {
		e.noPlan.Store(cat.Version + 1)
		return nil, reason, false
	}
	if cur := e.plan.Load(); cur == nil || cur.Version < pl.Version {
		e.plan.Store(pl)
	}
	return pl, 0, true
}

// A fastPlan is a shape's plan (fastpath.Plan) with the table package sql
// writes it through: GMS's table, whose editors and AUTO_INCREMENT
// handling the fast path's writes share with GMS's.
type fastPlan struct {
	*fastpath.Plan
	table *Table
	// scanProg is a range SELECT's coprocessor program without the
	// filter and the limit each execution gives it (fastpath_scan.go).
	scanProg *copr.Program
}

// newFastPlan resolves shape in database dbName of cat (fastpath.Resolve).
func newFastPlan(ctx *gsql.Context, p *DatabaseProvider, cat *catalog.Catalog, dbName string, shape *fastpath.Shape) (*fastPlan, fastpath.Reason, bool) {
	sp, reason, ok := fastpath.Resolve(ctx, p.metas, cat, dbName, shape, scanAggType)
	if !ok {
		return nil, reason, false
	}
	db, _ := cat.Database(dbName)
	pl := &fastPlan{Plan: sp, table: &Table{db: &Database{provider: p, def: db}, meta: sp.Meta}}
	if sp.Scan != nil {
		if pl.scanProg, ok = scanProgram(pl); !ok {
			return nil, fastpath.ReasonTable, false
		}
	}
	return pl, 0, true
}
