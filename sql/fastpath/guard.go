package fastpath

import "sync/atomic"

// SchemaGuard lets autocommit reads use the cached catalog without reading
// the schema version with every row. Every DDL commits through this
// node's Transaction.commit (package sql), which marks itself in progress around the
// commit and the cache update that follows it (a seqlock): a read that
// saw no DDL in progress when it began, and the same count of finished
// ones when it ended, ran entirely under one catalog. That catalog is the
// latest if it was verified, by a read of the version key (package sql's versionedReader)
// since the last DDL finished: a DDL whose commit failed in a way that does
// not say whether it took effect leaves the cache behind the store, and
// the first read after it finds out. On a SQL node of a cluster, a DDL of
// another node counts as one of this node's once the node's schema lease
// loads its version (package sql's ddllease.go), which it does before it reports the
// version, so before any later schema change can commit: a read uses the
// newest catalog or the one before, as F1 allows.
type SchemaGuard struct {
	inflight atomic.Int64
	done     atomic.Uint64
	// verified is the count of finished DDLs at which the cached catalog
	// was last found to be the latest, plus one (0: never).
	verified atomic.Uint64
}

// Changing marks a DDL commit in progress; the returned function,
// called once the committed catalog is cached (or the commit failed),
// ends it.
func (g *SchemaGuard) Changing() func() {
	g.inflight.Add(1)
	return func() {
		g.done.Add(1)
		g.inflight.Add(-1)
	}
}

// Begin returns the count of finished DDL commits, and false if one is in
// progress.
func (g *SchemaGuard) Begin() (uint64, bool) {
	n := g.done.Load()
	return n, g.inflight.Load() == 0
}

// Unchanged reports whether no DDL committed since Begin returned n.
func (g *SchemaGuard) Unchanged(n uint64) bool {
	return g.inflight.Load() == 0 && g.done.Load() == n
}

// Trusted reports whether the cached catalog was verified after the n-th
// DDL finished.
func (g *SchemaGuard) Trusted(n uint64) bool { return g.verified.Load() == n+1 }

// Verify records that a read of the version key found the cached catalog
// the latest, with n DDLs finished and none since.
func (g *SchemaGuard) Verify(n uint64) {
	if g.Unchanged(n) {
		g.verified.Store(n + 1)
	}
}
