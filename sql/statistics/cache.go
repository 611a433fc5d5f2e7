package statistics

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/percdb/percdb/txn"
)

// DefaultLease is how long a node uses the statistics it has before it
// looks for newer ones in the store (TiDB's stats lease is 3 s).
const DefaultLease = 3 * time.Second

// Cache holds the statistics of a node's tables, as stored (Save) by any
// node: it scans the version entries at most once per lease and reads
// the statistics of each table whose version changed. It is safe for
// concurrent use; one caller refreshes while the others use what is
// cached.
type Cache struct {
	store *txn.Store
	lease time.Duration
	now   func() time.Time

	mu         sync.Mutex
	tables     map[int64]*Table
	checked    time.Time
	refreshing bool
	// generation counts the changes of the cached statistics, for the
	// plan caches, which keep a plan only under the statistics it was
	// chosen by.
	generation atomic.Uint64
}

// Generation returns a number that changes whenever statistics newer
// than the cached ones are cached.
func (c *Cache) Generation() uint64 { return c.generation.Load() }

// NewCache returns an empty cache over store, refreshed every lease.
func NewCache(store *txn.Store, lease time.Duration) *Cache {
	return &Cache{store: store, lease: lease, now: time.Now, tables: map[int64]*Table{}}
}

// Get returns the statistics of table id, or nil when it was never
// analyzed. Statistics are advice: a failed refresh keeps what is cached.
func (c *Cache) Get(ctx context.Context, id int64) *Table {
	c.mu.Lock()
	stale := !c.refreshing && c.now().Sub(c.checked) >= c.lease
	if stale {
		c.refreshing = true
	}
	c.mu.Unlock()
	if stale {
		err := c.refresh(ctx)
		c.mu.Lock()
		c.refreshing = false
		if err == nil {
			c.checked = c.now()
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tables[id]
}

// Put caches st, which this node just stored, unless a newer version is
// cached.
func (c *Cache) Put(st *Table) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.tables[st.TableID]; old == nil || old.Version < st.Version {
		c.tables[st.TableID] = st
		c.generation.Add(1)
	}
}

// Refresh reads the statistics stored since the last refresh now.
func (c *Cache) Refresh(ctx context.Context) error {
	if err := c.refresh(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.checked = c.now()
	c.mu.Unlock()
	return nil
}

func (c *Cache) refresh(ctx context.Context) error {
	tx, err := c.store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("refresh statistics: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	start, end := VersionsRange()
	it, err := tx.Iter(ctx, start, end)
	if err != nil {
		return fmt.Errorf("refresh statistics: %w", err)
	}
	var changed []VersionEntry
	c.mu.Lock()
	for ; it.Valid(); err = it.Next(ctx) {
		e, derr := DecodeVersion(it.Key(), it.Value())
		if derr != nil {
			continue // written by a later format: no statistics
		}
		if old := c.tables[e.TableID]; old == nil || old.Version < e.Version {
			changed = append(changed, e)
		}
	}
	c.mu.Unlock()
	it.Close()
	if err != nil {
		return fmt.Errorf("refresh statistics: %w", err)
	}
	for _, e := range changed {
		v, ok, err := tx.Get(ctx, StatsKey(e.TableID))
		if err != nil {
			return fmt.Errorf("refresh statistics of table %d: %w", e.TableID, err)
		}
		if !ok {
			continue
		}
		st, err := DecodeTable(v)
		if err != nil {
			continue
		}
		c.Put(st)
	}
	return nil
}
