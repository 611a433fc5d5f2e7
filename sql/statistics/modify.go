package statistics

import (
	"sync"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// Modifications counts, per table, the rows this node's committed
// transactions wrote or deleted (each row key once per transaction), in
// memory: counting costs a walk of a committing transaction's buffered
// keys, no KV write. The counts of a table start again at each ANALYZE of
// it on this node. They drive auto-analyze (AutoAnalyzer) and adjust the
// row count of the statistics (Since). It is safe for concurrent use.
type Modifications struct {
	mu     sync.Mutex
	tables map[int64]*modified
}

// modified is one table's count since the statistics of version
// analyzed: rows changed, and rows inserted less rows deleted.
type modified struct {
	rows     uint64
	delta    int64
	analyzed uint64
}

// NewModifications returns empty counts.
func NewModifications() *Modifications { return &Modifications{tables: map[int64]*modified{}} }

// Committed counts the row keys tx wrote or deleted; tx has committed.
func (m *Modifications) Committed(tx *txn.Txn) {
	var last int64
	var n uint64
	var delta int64
	flush := func() {
		if n == 0 {
			return
		}
		t := m.tables[last]
		if t == nil {
			t = &modified{}
			m.tables[last] = t
		}
		t.rows += n
		t.delta += delta
		n, delta = 0, 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tx.EachWrite(func(key []byte, d int) {
		if !tablecodec.IsRowKey(key) {
			return
		}
		id, err := tablecodec.DecodeTableID(key)
		if err != nil {
			return
		}
		if id != last {
			flush()
			last = id
		}
		n++
		delta += int64(d)
	})
	flush()
}

// Since returns the rows of table id changed since the statistics of
// version were collected, and the rows inserted less those deleted (as
// far as this node saw).
func (m *Modifications) Since(id int64, version uint64) (changed uint64, delta int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.tables[id]; t != nil && t.analyzed <= version {
		return t.rows, t.delta
	}
	return 0, 0
}

// Analyzed starts table id's count again: statistics of version were
// just stored.
func (m *Modifications) Analyzed(id int64, version uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tables[id] = &modified{analyzed: version}
}

// Each calls fn with each table's count.
func (m *Modifications) Each(fn func(id int64, rows uint64)) {
	m.mu.Lock()
	snapshot := make(map[int64]uint64, len(m.tables))
	for id, t := range m.tables {
		snapshot[id] = t.rows
	}
	m.mu.Unlock()
	for id, n := range snapshot {
		fn(id, n)
	}
}

// Forget drops table id's count (the table is gone).
func (m *Modifications) Forget(id int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.tables, id)
}
