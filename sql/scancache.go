package sql

import (
	"strconv"
	"strings"
	"sync"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/catalog"
)

// A nested-loop join reads its inner table again for every row of the
// outer one: the same key range of the same snapshot, each time a new
// range scan of the store. Within one statement that writes nothing the
// answer cannot change (the transaction's snapshot is fixed and its own
// buffered writes do not move), so a transaction keeps the rows of small
// range reads for the rest of the statement and serves repeats from
// memory. A statement that writes (a table editor's stage is open) or
// changes the catalog neither fills nor reads the cache.
//
// Most statements read each range once, and copying every row they read
// into the cache cost them more than the cache saved the others (a few
// percent of the CPU of sqllogictest's 1,000-row tables), so the cache
// only notes a range the first time a statement reads it and keeps its
// rows the second time: a repeated read costs one store scan more, a
// single one no copy at all.

// Limits of the scan cache: a read longer than maxCachedScan rows is not
// kept, a statement keeps at most maxCachedRows rows, and notes at most
// maxSeenScans ranges read once.
const (
	maxCachedScan = 4096
	maxCachedRows = 1 << 16
	maxSeenScans  = 1 << 16
)

// scanCache holds the rows of one statement's range reads.
type scanCache struct {
	mu sync.Mutex
	// pid is the statement (GMS's process ID of the query) the rows
	// belong to.
	pid     uint64
	entries map[scanKey][]executor.Row
	rows    int
	// seen holds the ranges the statement has read once.
	seen map[scanKey]struct{}
}

// scanKey names one range read: the table definition it was read with,
// the index (0 for the rows themselves), the range, the direction and the
// columns decoded (projectionKey).
type scanKey struct {
	def        *catalog.TableDef
	index      int64
	start, end string
	reverse    bool
	columns    string
}

func newScanKey(def *catalog.TableDef, index int64, kr keyRange, reverse bool, columns string) scanKey {
	return scanKey{def: def, index: index, start: string(kr.Start), end: string(kr.End), reverse: reverse, columns: columns}
}

// projectionKey spells the schema positions of a projection for a scan
// key: "" for all columns, else "(" and each position followed by a
// comma.
func projectionKey(projection []int) string {
	if projection == nil {
		return ""
	}
	var cols strings.Builder
	cols.WriteByte('(')
	for _, p := range projection {
		cols.WriteString(strconv.Itoa(p))
		cols.WriteByte(',')
	}
	return cols.String()
}

// lookup returns the rows of key kept earlier in statement pid (cached),
// or whether the read about to be made should be kept (keep: the
// statement has read key before).
func (c *scanCache) lookup(pid uint64, key scanKey) (rows []executor.Row, cached, keep bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forStatement(pid)
	if rows, ok := c.entries[key]; ok {
		return rows, true, false
	}
	if _, ok := c.seen[key]; ok {
		return nil, false, true
	}
	if len(c.seen) < maxSeenScans {
		c.seen[key] = struct{}{}
	}
	return nil, false, false
}

// put keeps the rows of key for the rest of statement pid.
func (c *scanCache) put(pid uint64, key scanKey, rows []executor.Row) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forStatement(pid)
	if c.rows+len(rows) > maxCachedRows {
		return
	}
	c.entries[key] = rows
	c.rows += len(rows)
}

// forStatement empties the cache when it holds another statement's reads.
func (c *scanCache) forStatement(pid uint64) {
	if c.pid != pid || c.entries == nil {
		c.pid, c.entries, c.rows, c.seen = pid, make(map[scanKey][]executor.Row), 0, make(map[scanKey]struct{})
	}
}

// cloneRows copies the row slices (not the values), so that GMS may
// change a returned row without changing the cached one.
func cloneRows(rows []executor.Row) []executor.Row {
	out := make([]executor.Row, len(rows))
	for i, r := range rows {
		out[i] = executor.Row{Handle: r.Handle, Values: append([]any(nil), r.Values...)}
	}
	return out
}
