package sql

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/memory"
	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/statistics"
	"github.com/percdb/percdb/sql/tablemeta"
	"github.com/percdb/percdb/txn"
)

// GMS's join planner and index costing ask the engine's statistics
// provider how many rows a table has. Its in-memory provider only knows
// tables that ANALYZE TABLE has seen since the server started, and
// answers 0 for every other: every table looks empty, every join order
// costs the same, and the planner kept orders that cross join two
// 100-row tables before joining them to anything (sqllogictest select4:
// 8 s for a query MySQL answers in milliseconds).
//
// tableStats answers instead with a count of the table's rows (rowCounts),
// an estimate that reads committed rows without regard to locks (countRows)
// and is kept for a while: counting is a
// range scan, too slow to repeat for every statement a server plans. The
// count stops at rowCountCap rows, enough to tell a small table from a
// big one, which is what join ordering needs; a table at the cap is
// counted again less often. A count that is out of date changes plans,
// never answers. The statistics of ANALYZE TABLE (package
// sql/statistics), when a table has them, come first.

// Limits of the row counts tableStats keeps.
const (
	// rowCountCap is the most rows counted; a bigger table counts as
	// this many.
	rowCountCap = 10_000
	// rowCountFresh is how long a count below the cap is used.
	rowCountFresh = time.Second
	// rowCountFreshCapped is how long a count at the cap is used.
	rowCountFreshCapped = 10 * time.Second
)

// tableStats is the engine's sql.StatsProvider. For percdb's tables it
// answers from the statistics ANALYZE TABLE stores (package
// sql/statistics: row count, per-index NDV and histograms, loaded by every
// node through its statistics cache), and without them from a capped
// count of the rows (rowCounts), as before; other tables (none today)
// go to GMS's in-memory provider. It is safe for concurrent use.
type tableStats struct {
	*memory.StatsProv
	p *DatabaseProvider
	// converted caches ToGMS's statistics per table ID, for one version
	// of the statistics and one definition of the table (gmsStats).
	converted sync.Map
}

// gmsStats is a table's statistics converted for GMS.
type gmsStats struct {
	version uint64
	meta    *tablemeta.Table
	stats   []gsql.Statistic
}

func newTableStats(p *DatabaseProvider) *tableStats {
	return &tableStats{StatsProv: memory.NewStatsProv(), p: p}
}

var _ gsql.StatsProvider = (*tableStats)(nil)

// percdbTable returns the percdb table under t, or nil.
func percdbTable(t gsql.Table) *Table {
	switch t := t.(type) {
	case *Table:
		return t
	case *IndexedTable:
		return t.Table
	}
	return nil
}

// RowCount implements sql.StatsProvider.
func (s *tableStats) RowCount(ctx *gsql.Context, db string, table gsql.Table) (uint64, error) {
	if t := percdbTable(table); t != nil && t.db != nil {
		return t.db.provider.estimatedRows(ctx, t), nil
	}
	return s.StatsProv.RowCount(ctx, db, table)
}

// AnalyzeTable implements sql.StatsProvider: ANALYZE TABLE collects and
// stores the table's statistics (DatabaseProvider.analyze).
func (s *tableStats) AnalyzeTable(ctx *gsql.Context, table gsql.Table, db string) error {
	if t := percdbTable(table); t != nil && t.db != nil {
		var done, total atomic.Int64
		stop := reportProgress(ctx, func() string {
			if n := total.Load(); n > 0 {
				d := done.Load()
				return fmt.Sprintf("analyzing %s: %d%% (%d of %d parts read)", t.meta.Def.Name, 100*d/n, d, n)
			}
			return "analyzing " + t.meta.Def.Name
		})
		defer stop()
		return t.db.provider.analyze(ctx, t.meta, statistics.CollectOptions{Parallel: runtime.GOMAXPROCS(0),
			Progress: func(d, n int) { done.Store(int64(d)); total.Store(int64(n)) }})
	}
	return s.StatsProv.AnalyzeTable(ctx, table, db)
}

// GetTableStats implements sql.StatsProvider: the statistics of each
// index, when the table was analyzed.
func (s *tableStats) GetTableStats(ctx *gsql.Context, db string, table gsql.Table) ([]gsql.Statistic, error) {
	t := percdbTable(table)
	if t == nil || t.db == nil {
		return s.StatsProv.GetTableStats(ctx, db, table)
	}
	return s.tableStatistics(ctx, t), nil
}

// tableStatistics returns the GMS statistics of t's indexes, converted
// once per version of its statistics and definition of the table.
func (s *tableStats) tableStatistics(ctx *gsql.Context, t *Table) []gsql.Statistic {
	st := s.p.stats.Get(ctx, t.meta.Exec.ID)
	if st == nil {
		return nil
	}
	if c, ok := s.converted.Load(st.TableID); ok {
		if g := c.(*gmsStats); g.version == st.Version && g.meta == t.meta {
			return g.stats
		}
	}
	var idxs []statistics.GMSIndex
	gidx, _ := t.GetIndexes(ctx)
	for _, gi := range gidx {
		im := gi.(*Index).im
		x := statistics.GMSIndex{Index: gi, Primary: im.IsPrimary, Ords: im.Ords}
		if im.Exec != nil {
			x.ID = im.Exec.ID
		}
		idxs = append(idxs, x)
	}
	out := statistics.ToGMS(ctx, st, t.meta.DBName, t.meta.Def.Name, t.meta.Schema.Schema, idxs)
	s.converted.Store(st.TableID, &gmsStats{version: st.Version, meta: t.meta, stats: out})
	return out
}

// GetStats implements sql.StatsProvider: the statistics of an index, or
// of a prefix of its columns (GMS asks so when it costs a lookup join).
func (s *tableStats) GetStats(ctx *gsql.Context, qual gsql.StatQualifier, cols []string) (gsql.Statistic, bool) {
	db, err := s.p.Database(ctx, qual.Database)
	if err != nil {
		return s.StatsProv.GetStats(ctx, qual, cols)
	}
	tbl, ok, err := db.GetTableInsensitive(ctx, qual.Tab)
	t := percdbTable(tbl)
	if err != nil || !ok || t == nil {
		return s.StatsProv.GetStats(ctx, qual, cols)
	}
	for _, st := range s.tableStatistics(ctx, t) {
		if !strings.EqualFold(st.Qualifier().Index(), qual.Index()) || len(cols) > len(st.Columns()) {
			continue
		}
		for i, c := range cols {
			if !strings.EqualFold(c, st.Columns()[i]) {
				return nil, false
			}
		}
		if len(cols) == len(st.Columns()) {
			return st, true
		}
		return s.prefix(ctx, t, qual.Index(), st, len(cols))
	}
	return nil, false
}

// prefix returns the statistics of the first n columns of index name.
func (s *tableStats) prefix(ctx *gsql.Context, t *Table, name string, st gsql.Statistic, n int) (gsql.Statistic, bool) {
	ix := s.p.indexStats(ctx, t, name)
	if ix == nil || n > len(ix.NDV) {
		return nil, false
	}
	return statistics.Prefix(st, n, ix.NDV[n-1]), true
}

// indexStats returns the stored statistics of t's index name, or nil.
func (p *DatabaseProvider) indexStats(ctx *gsql.Context, t *Table, name string) *statistics.Index {
	st := p.stats.Get(ctx, t.meta.Exec.ID)
	if st == nil {
		return nil
	}
	if t.meta.Primary != nil && strings.EqualFold(t.meta.Primary.Def.Name, name) {
		return st.Index(0, true)
	}
	for _, im := range t.meta.Indexes {
		if strings.EqualFold(im.Def.Name, name) && im.Exec != nil {
			return st.Index(im.Exec.ID, false)
		}
	}
	return nil
}

// estimatedRows is t's row count for the planner and TABLE_ROWS: that of
// its statistics plus the rows this node's commits inserted less those
// they deleted since, else the capped count of rowCounts.
func (p *DatabaseProvider) estimatedRows(ctx *gsql.Context, t *Table) uint64 {
	if st := p.stats.Get(ctx, t.meta.Exec.ID); st != nil {
		_, delta := p.modified.Since(st.TableID, st.Version)
		return uint64(max(int64(st.RowCount)+delta, 0))
	}
	return p.rowCounts.get(ctx, t)
}

// analyze collects the statistics of table m with at most parallel
// walks, and stores them unless the table was dropped or rewritten (given
// a new ID) meanwhile: then the ANALYZE reports the table missing, as
// MySQL's does.
func (p *DatabaseProvider) analyze(ctx context.Context, m *tablemeta.Table, opts statistics.CollectOptions) error {
	tx, err := p.store.Begin(ctx)
	if err != nil {
		return toSQLError(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	st, err := statistics.Collect(ctx, tx, m.Exec, opts)
	if err != nil {
		return toSQLError(err)
	}
	exists := func(ctx context.Context, k *txn.Txn) (bool, error) {
		cat, err := p.catalogs.Load(ctx, k)
		if err != nil {
			return false, err
		}
		_, ok := tableDefByID(cat, m.Def.ID)
		return ok, nil
	}
	if err := statistics.Save(ctx, p.store, st, exists); err != nil {
		if errors.Is(err, statistics.ErrTableGone) {
			return gsql.ErrTableNotFound.New(m.Def.Name)
		}
		return toSQLError(err)
	}
	p.stats.Put(st)
	p.modified.Analyzed(st.TableID, st.Version)
	return nil
}

// tableDefByID returns the definition of the table with ID id in cat.
func tableDefByID(cat *catalog.Catalog, id int64) (*catalog.TableDef, bool) {
	for _, tables := range cat.Tables {
		for _, def := range tables {
			if def.ID == id {
				return def, true
			}
		}
	}
	return nil, false
}

// rowCounts keeps the row counts of a server's tables, for the planner
// (tableStats) and for information_schema.TABLES and SHOW TABLE STATUS
// (Table.RowCount). The DatabaseProvider owns it; it is safe for
// concurrent use.
type rowCounts struct {
	// now is the clock, time.Now outside tests.
	now func() time.Time

	mu     sync.Mutex
	counts map[int64]rowCount // by table ID
}

// rowCount is one table's count and when it was taken.
type rowCount struct {
	rows uint64
	at   time.Time
}

func newRowCounts() *rowCounts {
	return &rowCounts{now: time.Now, counts: make(map[int64]rowCount)}
}

// get returns t's row count, counted again (countRows) when the kept
// one is too old. Statistics are advice: a failed count is 0, and a
// planner without counts still plans.
func (c *rowCounts) get(ctx *gsql.Context, t *Table) uint64 {
	id := t.meta.Exec.ID
	now := c.now()
	c.mu.Lock()
	kept, ok := c.counts[id]
	c.mu.Unlock()
	fresh := rowCountFresh
	if kept.rows >= rowCountCap {
		fresh = rowCountFreshCapped
	}
	if ok && now.Sub(kept.at) < fresh {
		return kept.rows
	}
	n, err := countRows(ctx, t, rowCountCap)
	if err != nil {
		return 0
	}
	c.mu.Lock()
	c.counts[id] = rowCount{rows: n, at: now}
	c.mu.Unlock()
	return n
}

// countRows counts t's rows, stopping at limit, as an estimate: it reads
// the newest committed rows and ignores every lock (txn's EstimateKeys),
// so planning never waits for, resolves or spins on another transaction's
// locks, and takes no timestamp. Rows a transaction has committed but not
// yet resolved count at their previous versions, and the asking
// transaction's own uncommitted rows do not count: advice for the
// planner, never an answer.
func countRows(ctx *gsql.Context, t *Table, limit uint64) (uint64, error) {
	r := t.meta.Exec.RowRange()
	n, err := t.db.provider.store.EstimateKeys(ctx, r.Start, r.End, int(min(limit, math.MaxInt32)))
	if err != nil {
		return 0, fmt.Errorf("count rows of %s: %w", t.Name(), err)
	}
	return uint64(n), nil
}

// RowCount implements sql.StatisticsTable: the estimate the planner uses,
// which information_schema.TABLES shows as TABLE_ROWS and SHOW TABLE
// STATUS as Rows. Like InnoDB's, it is never exact (a count at most a
// few seconds old, at most rowCountCap), so GMS does not answer COUNT(*)
// from it.
func (t *Table) RowCount(ctx *gsql.Context) (uint64, bool, error) {
	return t.db.provider.estimatedRows(ctx, t), false, nil
}

// DataLength implements sql.StatisticsTable: percdb does not know a
// table's size on disk (its rows share Pebble's files with every other
// table's), and says 0.
func (t *Table) DataLength(*gsql.Context) (uint64, error) { return 0, nil }

var _ gsql.StatisticsTable = (*Table)(nil)
