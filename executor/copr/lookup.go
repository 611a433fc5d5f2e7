package copr

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// RunLookup evaluates p over the rows that the entries of index ix in r
// point to, in index order: the entries are scanned through tx, their
// rows read by primary key in batches (one BatchGet each, as TiDB's
// IndexLookUp reads a table's side) and fed to the program in process.
// The outputs are those Run gives for the same rows in that order. An
// entry whose row is missing is an error wrapping
// executor.ErrIndexInconsistent.
//
// The program is evaluated on the SQL node, not next to the data: an
// index's rows lie anywhere in the table's key space, so no one region
// holds them.
func RunLookup(ctx context.Context, tx *txn.Txn, t *executor.Table, ix *executor.Index, r executor.KeyRange, p *Program) (Outputs, error) {
	return RunLookupRanges(ctx, tx, t, ix, []executor.KeyRange{r}, p)
}

// RunLookupRanges is RunLookup over a list of ranges of the index,
// ascending and disjoint (Disjoint), read one after another as one
// evaluation: the rows of an IN list or an OR of ranges on the index
// are read in batches that span its ranges, one BatchGet for the rows
// of many small ranges rather than one per range at least.
func RunLookupRanges(ctx context.Context, tx *txn.Txn, t *executor.Table, ix *executor.Index, rs []executor.KeyRange, p *Program) (Outputs, error) {
	return runLookup(ctx, tx, t, ix, rs, p, false)
}

// runLookup is RunLookupRanges, in descending index order when reverse
// (the ranges from the last, each read backwards: RunLookupReverse).
func runLookup(ctx context.Context, tx *txn.Txn, t *executor.Table, ix *executor.Index, rs []executor.KeyRange, p *Program, reverse bool) (Outputs, error) {
	if len(rs) == 0 || !Disjoint(rs) {
		return nil, fmt.Errorf("table %s: index %s lookup of %d ranges that are not ascending and disjoint", t.Name, ix.Name, len(rs))
	}
	e, err := p.Start()
	if err != nil {
		return nil, err
	}
	rest := rs
	if reverse {
		rest = slices.Clone(rs)
		slices.Reverse(rest)
	}
	// Under a LIMIT the index's first page is the rows wanted: LIMIT 10
	// reads ten entries, not a scan page of them. Without one it is a
	// scan page, which the batches of rows read in turn.
	opts := executor.ScanOptions{Reverse: reverse, FirstPage: wantedRows(p)}
	x, err := executor.ScanIndex(ctx, tx, t, ix, rest[0], opts)
	if err != nil {
		return nil, err
	}
	// The rows are read for the program's columns only: a pessimistic
	// transaction may move its snapshot past changes to the others.
	it := &lookupIter{x: x, tx: tx, rest: rest[1:], opts: opts, rd: tx.ReadingWith(executor.ColumnsComparator(t, p.Columns)), t: t, ix: ix, batch: firstBatch(p)}
	if err := it.fill(ctx); err != nil {
		it.Close()
		return nil, err
	}
	return &localRun{e: e, it: it}, nil
}

// The batches of handles a lookup reads: the first small, so that a
// statement that stops early (LIMIT) reads little, each next one twice
// as many up to maxLookupBatch.
const (
	firstLookupBatch = 32
	maxLookupBatch   = 1024
)

// firstBatch returns how many handles the first batch of a lookup for p
// reads: firstLookupBatch, or fewer for a program that wants fewer rows
// (a Limit that no top-N reads past): MIN or MAX by one end of an index
// wants one row, and read 32 (each batch after it doubles, so rows a
// filter rejects cost a few more round trips, not a wasted batch).
func firstBatch(p *Program) int {
	if p.Limit > 0 && len(p.OrderBy) == 0 && !p.Aggregate && p.Limit < firstLookupBatch {
		return int(p.Limit)
	}
	return firstLookupBatch
}

// wantedRows returns how many rows a walk feeding p should ask the store
// for first: p's Limit when the program stops at it (no top-N or
// aggregate reads past it), else 0 (a scan page).
func wantedRows(p *Program) int {
	if p.Limit > 0 && len(p.OrderBy) == 0 && !p.Aggregate && p.Limit < math.MaxInt32 {
		return int(p.Limit)
	}
	return 0
}

// lookupIter is a txn.Iterator over the rows an index range points to,
// in index order: row keys and values.
type lookupIter struct {
	x *executor.IndexIterator
	// tx scans rest, the index ranges after x's, in turn, as opts
	// says (backwards: rest is then in descending order).
	tx      *txn.Txn
	rest    []executor.KeyRange
	opts    executor.ScanOptions
	rd      *txn.ReadView
	t       *executor.Table
	ix      *executor.Index
	batch   int
	handles []tablecodec.Handle
	// keys and vals are the current batch's row keys and values, pos
	// the current pair.
	keys [][]byte
	vals map[string][]byte
	pos  int
	eof  bool // the index ranges are read to their end
}

func (l *lookupIter) Valid() bool   { return l.pos < len(l.keys) }
func (l *lookupIter) Key() []byte   { return l.keys[l.pos] }
func (l *lookupIter) Value() []byte { return l.vals[string(l.keys[l.pos])] }

// Close implements txn.Iterator.
func (l *lookupIter) Close() {
	if l.x != nil {
		l.x.Close()
	}
}

// Next implements txn.Iterator.
func (l *lookupIter) Next(ctx context.Context) error {
	if l.pos++; l.pos < len(l.keys) || l.eof {
		return nil
	}
	return l.fill(ctx)
}

// fill reads the next batch of entries and their rows, checking that
// every entry has its row.
func (l *lookupIter) fill(ctx context.Context) error {
	var err error
	l.keys, l.pos = l.keys[:0], 0
	l.handles = l.handles[:0]
	for {
		if l.handles, l.eof, err = l.x.NextHandles(ctx, l.handles, l.batch-len(l.handles)); err != nil {
			return err
		}
		if !l.eof || len(l.rest) == 0 {
			break
		}
		// The range is done: the batch goes on with the next one.
		l.x.Close()
		if l.x, err = executor.ScanIndex(ctx, l.tx, l.t, l.ix, l.rest[0], l.opts); err != nil {
			l.x = nil
			return err
		}
		l.rest = l.rest[1:]
		l.eof = false
		if len(l.handles) >= l.batch {
			break
		}
	}
	l.batch = min(2*l.batch, maxLookupBatch)
	if len(l.handles) == 0 {
		return nil
	}
	for _, h := range l.handles {
		l.keys = append(l.keys, tablecodec.RowKey(nil, l.t.ID, h))
	}
	if l.vals, err = l.rd.BatchGet(ctx, l.keys); err != nil {
		return fmt.Errorf("table %s: index %s lookup of %d rows: %w", l.t.Name, l.ix.Name, len(l.keys), err)
	}
	for i, k := range l.keys {
		if _, ok := l.vals[string(k)]; !ok {
			return fmt.Errorf("table %s: index %s entry points to row %v: %w", l.t.Name, l.ix.Name, l.handles[i], executor.ErrIndexInconsistent)
		}
	}
	return nil
}
