package sql

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/sql/foreignkey"
	"github.com/percdb/percdb/sql/perfschema"
	"github.com/percdb/percdb/sql/schemalease"
	"github.com/percdb/percdb/sql/statistics"
	"github.com/percdb/percdb/sql/stmtsummary"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// DatabaseProvider is the root of percdb's GMS backend: it finds databases
// in the catalog and creates and drops them. It is shared by every session
// of a Server; per-transaction state lives in Transaction.
type DatabaseProvider struct {
	store *txn.Store
	// runner runs the statements of stored functions' bodies (the
	// engine; set once by the server before it serves).
	runner gsql.StatementRunner
	// accounts are GMS's accounts (set once by the server before it
	// serves), which CURRENT_ROLE() reads (package privileges).
	accounts *mysql_db.MySQLDb
	// uuidShort is this server's UUID_SHORT() (compat/uuidshort.go).
	uuidShort *compat.UUIDShort
	// builtins are GMS's built-in functions' names, which stored
	// functions do not shadow (storedfunc.go).
	builtins builtinNames
	// actions runs the node's built-in observer actions (nil until the
	// server is open): ADMIN WATCH kicks it, ADMIN SHOW OBSERVERS shows
	// its counts.
	actions *actionRunner
	// localKV is the single node's store (nil in a cluster), and
	// regionDetail a cluster's pd (nil on the single node): what
	// information_schema.TIKV_REGION_STATUS reads besides the routes
	// (regionstatus.go).
	localKV      *kv.Store
	regionDetail func(ctx context.Context, region uint64) (RegionDetail, error)
	// lockWaits shows which connections wait for row locks
	// (pessimistic.go).
	lockWaits lockWaitView
	catalogs  *catalog.Cache
	metas     *tablemeta.Cache
	ids       *catalog.Allocators
	// tableLocks are the LOCK TABLES and FLUSH TABLES WITH READ LOCK
	// locks of this node's sessions (tablelocks.go).
	tableLocks tableLocks
	// fast is the fast path (fastpath_handler.go); nil runs everything
	// through GMS.
	fast *fastPath
	// plans counts the uses of the sessions' plan caches (plancache_exec.go).
	plans planCacheStats
	// textPlans counts the text plan cache's executions (textplancache.go).
	textPlans planCacheStats
	// lookups counts the batched lookup joins' reads (lookupjoin.go).
	lookups lookupJoinStats
	// lookupAggs counts the programs of aggregates per join key
	// (lookupagg.go).
	lookupAggs atomic.Uint64
	// groupedRuns counts the correlated subqueries run once, grouped
	// (decorrelate.go).
	groupedRuns atomic.Uint64
	// rowCounts are the tables' row counts for the planner and
	// information_schema (stats.go).
	rowCounts *rowCounts
	// stats are the tables' statistics of ANALYZE TABLE, as stored by
	// any node; modified counts the rows this node's commits changed per
	// table, for auto-analyze (stats.go, autoanalyze.go).
	stats    *statistics.Cache
	modified *statistics.Modifications
	// autoAnalyze are the auto-analyze variables (autoanalyze.go).
	autoAnalyze autoAnalyzeSettings
	// schemas tracks the schema versions this node's transactions use,
	// so that a schema change waits until older ones are gone before the
	// next may commit (schemalease, ddl.go).
	schemas *schemalease.Tracker
	// lease is the node's schema lease on a SQL node of a cluster, nil
	// on the single node (ddllease.go).
	lease *schemalease.Lease
	// ddlWait is how long a schema change waits for transactions that use
	// an older schema before it marks them stale (their commits of writes
	// then fail with 8028). Config.DDLWaitTimeout.
	ddlWait time.Duration
	// ranges deletes the data DDLs left unreachable (package ddljob).
	ranges *ddljob.Deleter
	// jobs are the online schema changes of this node (package ddljob).
	jobs ddljob.Jobs
	// gc is the node's garbage collector (gc.go); nil until the server
	// starts it.
	gc *nodeGC
	// txnSizeLimit is percdb_txn_total_size_limit (txnlimit.go).
	txnSizeLimit atomic.Int64
	// digests are the node's statement statistics by digest
	// (performance_schema, perfschema.go); nil when not collected.
	digests *stmtsummary.Summary
	// statsOff is percdb_statement_stats turned OFF (stmtstats.go): the
	// node's statements are not counted in its statistics.
	statsOff atomic.Bool
}

var (
	_ gsql.DatabaseProvider         = (*DatabaseProvider)(nil)
	_ gsql.CollatedDatabaseProvider = (*DatabaseProvider)(nil)
)

func newDatabaseProvider(store *txn.Store) *DatabaseProvider {
	p := &DatabaseProvider{
		store:     store,
		catalogs:  &catalog.Cache{},
		metas:     &tablemeta.Cache{},
		ids:       catalog.NewAllocators(store),
		rowCounts: newRowCounts(),
		stats:     statistics.NewCache(store, statistics.DefaultLease),
		modified:  statistics.NewModifications(),
		schemas:   schemalease.New(),
		ddlWait:   DefaultDDLWaitTimeout,
		uuidShort: compat.NewUUIDShort(time.Now()),
	}
	p.ranges = ddljob.NewDeleter(p.store)
	p.txnSizeLimit.Store(defaultTxnSizeLimit)
	p.autoAnalyze.enabled, p.autoAnalyze.ratio = true, defaultAutoAnalyzeRatio
	return p
}

// Database implements sql.DatabaseProvider.
func (p *DatabaseProvider) Database(ctx *gsql.Context, name string) (gsql.Database, error) {
	if perfschema.IsDatabase(name) {
		return perfschema.NewDatabase(p.digests), nil
	}
	if db, ok, err := p.planMarkerDatabase(ctx, name); ok {
		return db, err
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, err
	}
	cat, err := tx.catalog(ctx)
	if err != nil {
		return nil, toSQLError(err)
	}
	def, ok := cat.Database(name)
	if !ok {
		return nil, gsql.ErrDatabaseNotFound.New(name)
	}
	return &Database{provider: p, def: def}, nil
}

// HasDatabase implements sql.DatabaseProvider.
func (p *DatabaseProvider) HasDatabase(ctx *gsql.Context, name string) bool {
	_, err := p.Database(ctx, name)
	return err == nil
}

// AllDatabases implements sql.DatabaseProvider.
func (p *DatabaseProvider) AllDatabases(ctx *gsql.Context) []gsql.Database {
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil
	}
	cat, err := tx.catalog(ctx)
	if err != nil {
		ctx.GetLogger().WithError(err).Warn("read catalog")
		return nil
	}
	defs := cat.SortedDatabases()
	out := make([]gsql.Database, 0, len(defs)+1)
	for _, d := range defs {
		out = append(out, &Database{provider: p, def: d})
	}
	// performance_schema in its place by name, as MySQL lists it.
	i := sort.Search(len(defs), func(i int) bool { return defs[i].Name >= perfschema.DatabaseName })
	out = slices.Insert(out, i, gsql.Database(perfschema.NewDatabase(p.digests)))
	return out
}

// CreateDatabase implements sql.MutableDatabaseProvider.
func (p *DatabaseProvider) CreateDatabase(ctx *gsql.Context, name string) error {
	return p.CreateCollatedDatabase(ctx, name, gsql.Collation_Unspecified)
}

// CreateCollatedDatabase implements sql.CollatedDatabaseProvider. GMS
// passes its own default, utf8mb4_0900_bin, when the statement names no
// collation; percdb uses MySQL 8's default instead (docs/compatibility.md).
func (p *DatabaseProvider) CreateCollatedDatabase(ctx *gsql.Context, name string, collation gsql.CollationID) error {
	if collation == gsql.Collation_Unspecified || collation == gsql.Collation_Default {
		collation = tablemeta.DefaultCollationID()
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	if perfschema.IsDatabase(name) {
		return gsql.ErrDatabaseExists.New(name)
	}
	return toSQLError(tx.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		if _, ok := c.Database(name); ok {
			return gsql.ErrDatabaseExists.New(name)
		}
		id, err := catalog.NextID(ctx, k)
		if err != nil {
			return err
		}
		def := &catalog.DatabaseDef{ID: id, Name: name, Collation: collation.Name()}
		if err := catalog.PutJSON(k, catalog.DatabaseKey(name), def); err != nil {
			return err
		}
		c.Databases[strings.ToLower(name)] = def
		return nil
	}))
}

// DropDatabase implements sql.MutableDatabaseProvider: the database's
// tables (with their rows and indexes), views, triggers and stored
// procedures go with it.
func (p *DatabaseProvider) DropDatabase(ctx *gsql.Context, name string) error {
	if perfschema.IsDatabase(name) {
		return perfschema.ErrSystemDatabase(ctx, name)
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	checks := foreignkey.Checks(ctx)
	return toSQLError(tx.changeCatalog(ctx, func(c *catalog.Catalog, k *txn.Txn) error {
		def, ok := c.Database(name)
		if !ok {
			return gsql.ErrDatabaseNotFound.New(name)
		}
		k.AllowWhenDiskFull() // it frees space, so it must work on a full disk
		if checks {
			if err := foreignkey.CheckNoOutsideReferences(c, def); err != nil {
				return err
			}
		}
		for _, t := range c.SortedTables(def.ID) {
			if err := ddljob.ScheduleTable(k, t, "DROP DATABASE"); err != nil {
				return err
			}
		}
		if err := deleteRange(ctx, k, catalog.TablesPrefix(def.ID), tablecodec.PrefixNext(catalog.TablesPrefix(def.ID))); err != nil {
			return err
		}
		for _, prefix := range [][]byte{catalog.ViewsPrefix(def.ID), catalog.TriggersPrefix(def.ID), catalog.ProceduresPrefix(def.ID), catalog.FunctionsPrefix(def.ID)} {
			if err := deleteRange(ctx, k, prefix, tablecodec.PrefixNext(prefix)); err != nil {
				return err
			}
		}
		if err := k.Delete(catalog.DatabaseKey(name)); err != nil {
			return fmt.Errorf("drop database %q: %w", name, err)
		}
		delete(c.Databases, strings.ToLower(name))
		delete(c.Tables, def.ID)
		delete(c.Views, def.ID)
		delete(c.Triggers, def.ID)
		delete(c.Procedures, def.ID)
		delete(c.Functions, def.ID)
		return nil
	}))
}

// deleteRange deletes every key in [start, end) inside the transaction.
func deleteRange(ctx context.Context, k *txn.Txn, start, end []byte) error {
	it, err := k.Iter(ctx, start, end)
	if err != nil {
		return fmt.Errorf("delete range %q: %w", start, err)
	}
	var keys [][]byte
	for it.Valid() {
		keys = append(keys, append([]byte(nil), it.Key()...))
		if err := it.Next(ctx); err != nil {
			it.Close()
			return fmt.Errorf("delete range %q: %w", start, err)
		}
	}
	it.Close()
	for _, key := range keys {
		if err := k.Delete(key); err != nil {
			return fmt.Errorf("delete %q: %w", key, err)
		}
	}
	return nil
}

// dropTableData deletes every row and index entry of t.
func dropTableData(ctx context.Context, k *txn.Txn, t *catalog.TableDef) error {
	start, end := tablecodec.TableRange(t.ID)
	return deleteRange(ctx, k, start, end)
}

// readCatalog returns the catalog as of now, read in a transaction of its
// own (the cache's copy when it is current).
func (p *DatabaseProvider) readCatalog(ctx context.Context) (*catalog.Catalog, error) {
	k, err := p.store.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = k.Rollback(ctx) }()
	return p.catalogs.Load(ctx, k)
}
