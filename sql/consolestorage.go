package sql

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/internal/statusserver"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/console"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/sql/safepoint"
	"github.com/percdb/percdb/tso"
)

// The console's storage page (console.Storage): the node's store on disk,
// the LSM, the largest tables and the garbage collector. Sizes are
// estimates from the table files' metadata (kv.Store.ApproximateSize), so
// the page reads no rows however large the tables.

// Bounds of the storage page's work.
const (
	// storageTables is how many of the largest tables it lists.
	storageTables = 20
	// storageTablesMeasured is how many tables it measures at most; a
	// catalog larger than this is listed from the first ones found.
	storageTablesMeasured = 10_000
	// storageReadTimeout bounds its reads of the store (delete ranges,
	// service safe points).
	storageReadTimeout = 5 * time.Second
)

// Storage implements console.Source.
func (c consoleSource) Storage() console.Storage {
	var out console.Storage
	p := c.s.provider
	if p.gc != nil {
		set := p.gc.settings.get()
		out.GC.LifeTime, out.GC.RunInterval = set.LifeTime.String(), set.RunInterval.String()
		if p.gc.worker != nil {
			st := p.gc.worker.Stats()
			out.GC.SafePoint, out.GC.LastRun = st.SafePoint, st.LastRun
			if st.SafePoint != 0 {
				out.GC.SafePointTime = tso.Time(st.SafePoint).UTC()
			}
			out.GC.Runs, out.GC.FailedRuns = st.Runs, st.FailedRuns
			out.GC.VersionsDeleted, out.GC.BytesReclaimed, out.GC.RangesDestroyed = st.VersionsDeleted, st.BytesDeleted+st.RangeBytesReclaimed, st.RangesDestroyed
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), storageReadTimeout)
	defer cancel()
	pending := c.gcRecords(ctx, &out.GC)
	ks := c.s.kvStore
	if ks == nil {
		out.Note = "This SQL node keeps no data: the stores below are the KV nodes', each read from its status port (the address it registered with pd)."
		out.Stores = c.clusterStores(ctx)
		out.Tables = c.clusterTables(ctx, out.Stores)
		return out
	}
	out.Local = true
	f, err := statusserver.ReadStoreFigures(ks)
	if err != nil {
		slog.Debug("console: store figures", "err", err)
	}
	out.StoreFigures = f
	for i, b := range pending {
		out.GC.PendingRanges[i].Bytes, _ = ks.ApproximateSize(b[0], b[1])
	}
	out.Tables = c.largestTables()
	return out
}

// largestTables measures the catalog's tables and returns the largest.
func (c consoleSource) largestTables() []console.TableSize {
	ks := c.s.kvStore
	names := c.tableNames()
	sizes := make([]console.TableSize, 0, len(names))
	for id, name := range names {
		if len(sizes) == storageTablesMeasured {
			break
		}
		start, end := tablecodec.TableRange(id)
		n, err := ks.ApproximateSize(start, end)
		if err != nil {
			slog.Debug("console: table size", "table", name, "err", err)
			continue
		}
		sizes = append(sizes, console.TableSize{Table: name, Bytes: n})
	}
	return largestFirst(sizes)
}

// largestFirst sorts sizes by size, largest first (then by name), and
// cuts them to the storageTables largest.
func largestFirst(sizes []console.TableSize) []console.TableSize {
	slices.SortFunc(sizes, func(a, b console.TableSize) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Table, b.Table))
	})
	return sizes[:min(len(sizes), storageTables)]
}

// tableNames returns "db.table" of every table in the cached catalog by
// table id.
func (c consoleSource) tableNames() map[int64]string {
	tables, dbNames := c.catalogTables()
	out := make(map[int64]string, len(tables))
	for id, def := range tables {
		out[id] = dbNames[def.DBID] + "." + def.Name
	}
	return out
}

// catalogTables returns the cached catalog's tables by id and its
// databases' names by id (both empty before a catalog is cached).
func (c consoleSource) catalogTables() (map[int64]*catalog.TableDef, map[int64]string) {
	tables := map[int64]*catalog.TableDef{}
	dbNames := map[int64]string{}
	if cat := c.s.provider.catalogs.Cached(); cat != nil {
		for _, db := range cat.Databases {
			dbNames[db.ID] = db.Name
		}
		for _, byName := range cat.Tables {
			for _, def := range byName {
				tables[def.ID] = def
			}
		}
	}
	return tables, dbNames
}

// gcRecords fills in the ranges waiting for destruction and the service
// safe points, read from the store, and returns the bounds of each
// pending range.
func (c consoleSource) gcRecords(ctx context.Context, gc *console.StorageGC) (bounds [][2][]byte) {
	k, err := c.s.provider.store.Begin(ctx)
	if err != nil {
		slog.Debug("console: gc records", "err", err)
		return nil
	}
	defer func() { _ = k.Rollback(ctx) }()
	if recs, err := ddljob.ReadRanges(ctx, k); err == nil {
		for _, r := range recs {
			gc.PendingRanges = append(gc.PendingRanges, console.PendingRange{What: r.Rec.What, NotBefore: r.Rec.NotBefore})
			bounds = append(bounds, [2][]byte{r.Rec.Start, r.Rec.End})
		}
	}
	if sps, err := safepoint.Read(ctx, k); err == nil {
		now := time.Now()
		for _, e := range sps {
			exp := time.UnixMilli(e.Rec.Expires).UTC()
			gc.ServiceSafePoints = append(gc.ServiceSafePoints, console.ServiceSafePoint{
				ID: e.ID, What: e.Rec.What, TS: e.Rec.TS, Time: tso.Time(e.Rec.TS).UTC(), Expires: exp, Expired: !now.Before(exp),
			})
		}
	}
	return bounds
}
