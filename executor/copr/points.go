package copr

import (
	"context"
	"fmt"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/txn"
)

// RunPoints evaluates p over the rows of t at keys, row keys in
// ascending order, or descending for a statement that reads its key
// backwards (no two the same), at tx's snapshot: the rows are read
// with one batched point read (txn's BatchGet: one request per region,
// the regions in parallel, and a pessimistic transaction's values of the
// rows it holds locked from memory) and fed, in the keys' order, to the
// program in process. A key with no row is skipped. The outputs are
// those Run gives for ranges holding exactly those keys.
//
// An IN list over the whole primary key ((w, id) IN ((1, 5), (1, 77)),
// w = 1 AND id IN (...)) is a set of points: one Run per point cost a
// coprocessor request, and an encoding and a compilation of p, each
// (TPC-C New-Order's fifteen stock rows made fifteen), where RunPoints
// costs one round trip and one evaluation. The rows read are the rows
// the keys name, so evaluating them on the SQL node ships nothing a
// filter next to the data would have kept back beyond those rows.
func RunPoints(ctx context.Context, tx *txn.Txn, t *executor.Table, keys [][]byte, p *Program) (Outputs, error) {
	e, err := p.Start()
	if err != nil {
		return nil, err
	}
	// The rows are read for the program's columns only: a pessimistic
	// transaction may move its snapshot past changes to the others.
	rd := tx.ReadingWith(executor.ColumnsComparator(t, p.Columns))
	vals, err := rd.BatchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	it := &pointsIter{keys: keys, vals: vals, pos: -1}
	it.skip()
	return &localRun{e: e, it: it}, nil
}

// pointsIter is a txn.Iterator over the found keys of a batched point
// read, in the keys' order.
type pointsIter struct {
	keys [][]byte
	vals map[string][]byte
	pos  int
}

// skip moves to the next key that has a row.
func (p *pointsIter) skip() {
	for p.pos++; p.pos < len(p.keys); p.pos++ {
		if _, ok := p.vals[string(p.keys[p.pos])]; ok {
			return
		}
	}
}

func (p *pointsIter) Valid() bool                { return p.pos < len(p.keys) }
func (p *pointsIter) Key() []byte                { return p.keys[p.pos] }
func (p *pointsIter) Value() []byte              { return p.vals[string(p.keys[p.pos])] }
func (p *pointsIter) Next(context.Context) error { p.skip(); return nil }
func (p *pointsIter) Close()                     {}
