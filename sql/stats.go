package sql

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/memory"
	gsql "github.com/dolthub/go-mysql-server/sql"
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
// never answers. Histograms of ANALYZE TABLE, when there are some, come
// first, as GMS's provider keeps them.

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

// tableStats is the engine's sql.StatsProvider: GMS's in-memory provider
// with row counts for tables it has no statistics of. It is safe for
// concurrent use.
type tableStats struct {
	*memory.StatsProv
	counts *rowCounts
}

func newTableStats(counts *rowCounts) *tableStats {
	return &tableStats{StatsProv: memory.NewStatsProv(), counts: counts}
}

var _ gsql.StatsProvider = (*tableStats)(nil)

// RowCount implements sql.StatsProvider.
func (s *tableStats) RowCount(ctx *gsql.Context, db string, table gsql.Table) (uint64, error) {
	if n, err := s.StatsProv.RowCount(ctx, db, table); err != nil || n > 0 {
		return n, err
	}
	switch t := table.(type) {
	case *Table:
		return s.counts.get(ctx, t), nil
	case *IndexedTable:
		return s.counts.get(ctx, t.Table), nil
	}
	return 0, nil
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
	return t.db.provider.rowCounts.get(ctx, t), false, nil
}

// DataLength implements sql.StatisticsTable: percdb does not know a
// table's size on disk (its rows share Pebble's files with every other
// table's), and says 0.
func (t *Table) DataLength(*gsql.Context) (uint64, error) { return 0, nil }

var _ gsql.StatisticsTable = (*Table)(nil)
