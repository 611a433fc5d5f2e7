package sql

import (
	"strconv"
	"strings"
	"sync"

	"github.com/percdb/percdb/executor"
)

// A nested-loop join reads its inner table again for every row of the
// outer one: the same key range of the same snapshot, each time a new
// range scan of the store. Within one statement that writes nothing the
// answer cannot change (the transaction's snapshot is fixed and its own
// buffered writes do not move), so a transaction keeps the rows of small
// range reads for the rest of the statement and serves repeats from
// memory. A statement that writes (a table editor's stage is open) or
// changes the catalog neither fills nor reads the cache.

// Limits of the scan cache, in rows: a read longer than maxCachedScan is
// not kept, and a statement keeps at most maxCachedRows.
const (
	maxCachedScan = 4096
	maxCachedRows = 1 << 16
)

// scanCache holds the rows of one statement's range reads.
type scanCache struct {
	mu sync.Mutex
	// pid is the statement (GMS's process ID of the query) the rows
	// belong to.
	pid     uint64
	entries map[scanKey][]executor.Row
	rows    int
}

// scanKey names one range read: the table definition it was read with,
// the index (0 for the rows themselves), the range, the direction and the
// columns decoded (projectionKey).
type scanKey struct {
	def        *TableDef
	index      int64
	start, end string
	reverse    bool
	columns    string
}

func newScanKey(def *TableDef, index int64, kr keyRange, reverse bool, columns string) scanKey {
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

// get returns the rows of key read earlier in statement pid.
func (c *scanCache) get(pid uint64, key scanKey) ([]executor.Row, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pid != pid {
		return nil, false
	}
	rows, ok := c.entries[key]
	return rows, ok
}

// put keeps the rows of key for the rest of statement pid.
func (c *scanCache) put(pid uint64, key scanKey, rows []executor.Row) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pid != pid || c.entries == nil {
		c.pid, c.entries, c.rows = pid, make(map[scanKey][]executor.Row), 0
	}
	if c.rows+len(rows) > maxCachedRows {
		return
	}
	c.entries[key] = rows
	c.rows += len(rows)
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
