package sql

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/schemalease"
)

// The schema lease of a SQL node of a cluster (sql/schemalease, Lease):
// F1's rule of at most two schema versions in use, kept across the SQL
// nodes. A node follows the versions other nodes publish (loading each,
// waiting for its own transactions that wrote a changed table under an
// older one, then reporting it to pd); a schema change, before it commits
// and after, waits until every node with a live lease has loaded the
// version before it and the one it committed; a node whose lease is not
// known to be held refuses commits with 8027. The single node has no
// lease: p.lease is nil and none of this runs.

// codeSchemaExpired is TiDB's ErrInfoSchemaExpired.
const codeSchemaExpired = 8027

// schemaExpiredError is the MySQL error for a commit on a node whose
// schema lease could not be renewed in time.
func schemaExpiredError(err error) error {
	return mysql.NewSQLError(codeSchemaExpired, stateGeneral,
		"Information schema is out of date: schema failed to update in 1 lease, please make sure TiDB can connect to TiKV (%v)", err)
}

// leaseLoader returns the loader of the node's schema lease: it reads the
// newest catalog into the cache and reports which tables differ from the
// catalog it loaded before. The lease calls it from one goroutine at a
// time (Start, then its follower), which owns prev.
func (p *DatabaseProvider) leaseLoader() schemalease.Loader {
	var prev *catalog.Catalog
	return func(ctx context.Context) (uint64, []int64, error) {
		c, err := p.readCatalog(ctx)
		if err != nil {
			return 0, nil, err
		}
		var tables []int64
		if prev == nil {
			tables = nil
		} else if tables, err = differingTables(prev, c); err != nil {
			return 0, nil, err
		}
		if prev != nil && prev.Version != c.Version {
			// The fast path's autocommit reads trust the cached catalog
			// only until the next read of the version key
			// (fastpath.SchemaGuard): a DDL of another node
			// counts as one of this node's.
			p.fast.schemaChanging()()
		}
		prev = c
		return c.Version, tables, nil
	}
}

// differingTables returns the IDs of the tables whose definitions differ
// between two catalogs loaded separately (by content, unlike
// changedTables, which compares the definitions of one lineage by
// identity): changed, added or gone. Never nil.
func differingTables(base, next *catalog.Catalog) ([]int64, error) {
	before := tablesByID(base)
	ids := []int64{}
	for id, def := range tablesByID(next) {
		old, ok := before[id]
		delete(before, id)
		if ok && old == def {
			continue
		}
		if ok {
			a, err := json.Marshal(old)
			if err != nil {
				return nil, fmt.Errorf("compare table %s: %w", old.Name, err)
			}
			b, err := json.Marshal(def)
			if err != nil {
				return nil, fmt.Errorf("compare table %s: %w", def.Name, err)
			}
			if bytes.Equal(a, b) {
				continue
			}
		}
		ids = append(ids, id)
	}
	for id := range before {
		ids = append(ids, id)
	}
	return ids, nil
}

// syncBeforeSchemaChange waits, before a schema change commits over
// version base, until every SQL node has loaded base: a change whose
// predecessor's wait was cut short (the statement was killed, or its node
// died) must not put a third version in use. Nothing on a single node.
func (p *DatabaseProvider) syncBeforeSchemaChange(ctx context.Context, base uint64) error {
	if p.lease == nil {
		return nil
	}
	return p.lease.Sync(ctx, base)
}

// syncAfterSchemaChange runs after a schema change committed version v
// and this node's transactions of older versions are gone (or marked
// stale): it reports v as this node's and waits for every other SQL
// node to load it. Nothing on a single node.
func (p *DatabaseProvider) syncAfterSchemaChange(ctx context.Context, v uint64) error {
	if p.lease == nil {
		return nil
	}
	p.lease.Loaded(v)
	if err := p.lease.Report(ctx); err != nil {
		return err
	}
	return p.lease.Sync(ctx, v)
}

// cacheCurrentFor reports whether an autocommit read of table def may use
// the cached catalog without reading the schema version with its rows
// (the fast path, fastpath_exec.go), the cache being the newest this
// node has learnt of (fastpath.SchemaGuard). Not when def is fenced, about to be
// rewritten (TRUNCATE, or an ALTER TABLE that copies it into a new table
// ID, ddl.go): once the rewrite commits, the rows are under the new ID,
// and a read of the old one would return rows that are gone and miss rows
// written since, for as long as this node has not loaded the rewrite.
// Every node has loaded the fence before the rewrite commits (its commit
// syncs the version it builds on), so checking the reads of fenced tables
// covers the rewrite's window. Nor on a SQL node of a cluster whose
// schema lease is not held, or that knows of a newer version than it has
// loaded (schemalease.Lease.Current): schema changes elsewhere may have
// stopped waiting for it, and its cache may be any number of versions
// behind. A checked read that finds the version moved goes to GMS's
// path, which reads the catalog at its own snapshot.
func (p *DatabaseProvider) cacheCurrentFor(def *catalog.TableDef) bool {
	return def.Fence == "" && (p.lease == nil || p.lease.Current())
}

// leaseNode returns the node's name in its schema lease, "" on a single
// node.
func (p *DatabaseProvider) leaseNode() string {
	if p.lease == nil {
		return ""
	}
	return p.lease.Node()
}

// liveNodes returns the SQL nodes whose schema leases are alive, this one
// included (none on a single node).
func (p *DatabaseProvider) liveNodes(ctx context.Context) (map[string]uint64, error) {
	if p.lease == nil {
		return nil, nil
	}
	return p.lease.LiveNodes(ctx)
}
