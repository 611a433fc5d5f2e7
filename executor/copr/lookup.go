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
	return runLookup(ctx, tx, t, ix, rs, p, LookupOptions{})
}

// LookupOptions are the options of RunLookupWith.
type LookupOptions struct {
	// Reverse reads the ranges in descending index order, as
	// RunLookupReverse does.
	Reverse bool
	// Convert, when set, lets the lookup answer from the index's
	// entries alone, without reading the rows, where the index holds
	// each of the program's columns exactly (executor.Table.Covers) and
	// Convert has a conversion for each, as InnoDB answers "Using
	// index": Convert(off) converts the value an entry holds of the
	// column at offset off (as tablecodec.DecodeKey returns it) to the
	// Go type the table's rows hold it in, and is nil for a column it
	// does not convert exactly.
	Convert func(offset int) func(any) any
}

// RunLookupWith is RunLookupRanges (RunLookupReverse when o.Reverse)
// with options o.
func RunLookupWith(ctx context.Context, tx *txn.Txn, t *executor.Table, ix *executor.Index, rs []executor.KeyRange, p *Program, o LookupOptions) (Outputs, error) {
	if o.Reverse {
		if err := reversible(t, p); err != nil {
			return nil, err
		}
	}
	return runLookup(ctx, tx, t, ix, rs, p, o)
}

// entryRows makes the row values a covering lookup feeds its program
// from the index's entries (LookupOptions.Convert).
type entryRows struct {
	d    *executor.EntryDecoder
	conv []func(any) any
	ids  []int64
}

// coveringRows returns the entryRows of p's columns from entries of ix,
// nil when ix does not hold them all exactly or convert has no
// conversion for one.
func coveringRows(t *executor.Table, ix *executor.Index, p *Program, convert func(int) func(any) any) *entryRows {
	offsets := make([]int, len(p.Columns))
	conv := make([]func(any) any, len(p.Columns))
	for i, id := range p.Columns {
		off := slices.IndexFunc(t.Columns, func(c executor.Column) bool { return c.ID == id })
		if off < 0 {
			return nil
		}
		if conv[i] = convert(off); conv[i] == nil {
			return nil
		}
		offsets[i] = off
	}
	if !t.Covers(ix, offsets) {
		return nil
	}
	d, err := executor.NewEntryDecoder(t, ix, offsets)
	if err != nil {
		return nil
	}
	return &entryRows{d: d, conv: conv, ids: p.Columns}
}

// row returns the row value of the entry whose key is key and handle h.
func (r *entryRows) row(key []byte, h tablecodec.Handle) ([]byte, error) {
	vals, err := r.d.Decode(key, h)
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		vals[i] = r.conv[i](v)
	}
	return tablecodec.EncodeRow(r.ids, vals)
}

// runLookup is RunLookupRanges with options o: in descending index order
// when o.Reverse (the ranges from the last, each read backwards:
// RunLookupReverse).
func runLookup(ctx context.Context, tx *txn.Txn, t *executor.Table, ix *executor.Index, rs []executor.KeyRange, p *Program, o LookupOptions) (Outputs, error) {
	reverse := o.Reverse
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
	// The rows are read for the program's columns only: a pessimistic
	// transaction may move its snapshot past changes to the others.
	it := &lookupIter{tx: tx, rest: rest, opts: opts, rd: tx.ReadingWith(executor.ColumnsComparator(t, p.Columns)), t: t, ix: ix, batch: firstBatch(p)}
	// Several ranges read forwards to their ends (an IN list, an OR of
	// ranges) are read ahead together, one request per region
	// (txn.Txn.ScanRanges), where an iterator per range costs a request,
	// a store iterator and its buffers per range. Backwards, or under a
	// LIMIT that stops the read early, they are read one by one.
	it.ahead = !reverse && opts.FirstPage == 0 && len(rest) > 1
	if o.Convert != nil {
		it.cover = coveringRows(t, ix, p, o.Convert)
	}
	if !it.ahead {
		x, err := executor.ScanIndex(ctx, tx, t, ix, rest[0], opts)
		if err != nil {
			return nil, err
		}
		it.x, it.rest = x, rest[1:]
	}
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
// filter rejects cost a few more round trips, not a wasted batch). An
// aggregate without a Limit reads every row its ranges point to, and
// nothing stops it early: its first batch is the largest, one request
// where doubling made several (192 rows: three BatchGets of 32, 64 and
// 96, each with its region check, lock probes and store iterator, and a
// round trip when the regions are on other processes).
func firstBatch(p *Program) int {
	if p.Limit > 0 && len(p.OrderBy) == 0 && !p.Aggregate && p.Limit < firstLookupBatch {
		return int(p.Limit)
	}
	if p.Aggregate && p.Limit == 0 {
		return maxLookupBatch
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

// The read ahead of a lookup's index ranges (lookupIter.ahead): how many
// ranges one multi-range read takes at most, and how many entries of each
// (a range with more goes on with an iterator from its last one read), so
// that what is read ahead stays bounded.
const (
	aheadRanges  = 64
	aheadEntries = 256
)

// lookupIter is a txn.Iterator over the rows an index range points to,
// in index order: row keys and values.
type lookupIter struct {
	// x is the iterator over the index range being read, nil when none
	// is open.
	x *executor.IndexIterator
	// tx scans rest, the index ranges after x's, in turn, as opts
	// says (backwards: rest is then in descending order).
	tx   *txn.Txn
	rest []executor.KeyRange
	opts executor.ScanOptions
	// ahead is set when rest is read ahead, up to aheadRanges at once
	// (executor.IndexHandleRanges): pre are the handles read of those
	// ranges not yet taken, front first, and then[i] the rest of pre[i]'s
	// range past its aheadEntries entries (nil when it had fewer),
	// which an iterator reads after them.
	ahead bool
	pre   [][]tablecodec.Handle
	then  []*executor.KeyRange
	// cover, when set, makes the rows from the entries, which are not
	// read (LookupOptions.Convert): entries are the keys of the
	// entries of handles, preEntries those of pre.
	cover      *entryRows
	entries    [][]byte
	preEntries [][][]byte
	rd         *txn.ReadView
	t          *executor.Table
	ix         *executor.Index
	batch      int
	handles    []tablecodec.Handle
	// keys and vals are the current batch's row keys and values
	// (vals[i] is keys[i]'s), pos the current pair. They are slices, not
	// the map BatchGet returns: a map built and probed per row (and a
	// key allocated per row) was about a tenth of a covered GROUP BY's
	// CPU.
	keys [][]byte
	vals [][]byte
	pos  int
	eof  bool // the index ranges are read to their end
}

func (l *lookupIter) Valid() bool   { return l.pos < len(l.keys) }
func (l *lookupIter) Key() []byte   { return l.keys[l.pos] }
func (l *lookupIter) Value() []byte { return l.vals[l.pos] }

// rowKeyLen is the length of the row key of handle h in table id, which
// sizes the buffer a batch's keys share (a guess for handles of varying
// lengths: the buffer grows past it).
func rowKeyLen(id int64, h tablecodec.Handle) int {
	var b [64]byte
	return len(tablecodec.RowKey(b[:0], id, h))
}

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

// next takes the handles read ahead into the batch, as many as it has
// room for, or opens the iterator that goes on with them, or reads the
// next ranges: those of rest ahead together (ahead), else the first of
// them with an iterator (x).
func (l *lookupIter) next(ctx context.Context) error {
	var err error
	switch {
	case len(l.pre) > 0:
		hs, es := l.pre[0], l.preEntries[0]
		n := min(len(hs), l.batch-len(l.handles))
		l.handles = append(l.handles, hs[:n]...)
		if l.cover != nil {
			l.entries = append(l.entries, es[:n]...)
		}
		if n < len(hs) {
			l.pre[0], l.preEntries[0] = hs[n:], es[n:]
			return nil
		}
		then := l.then[0]
		l.pre, l.preEntries, l.then = l.pre[1:], l.preEntries[1:], l.then[1:]
		if then != nil {
			l.x, err = executor.ScanIndex(ctx, l.tx, l.t, l.ix, *then, l.opts)
		}
	case len(l.rest) == 0:
	case l.ahead:
		group := l.rest[:min(len(l.rest), aheadRanges)]
		hs, es, last, err := executor.IndexHandleRanges(ctx, l.tx, l.t, l.ix, group, aheadEntries)
		if err != nil {
			return err
		}
		l.rest = l.rest[len(group):]
		l.pre, l.preEntries, l.then = hs, es, make([]*executor.KeyRange, len(group))
		for i, k := range last {
			if k != nil {
				// The entries after the last one read.
				l.then[i] = &executor.KeyRange{Start: append(slices.Clip(k), 0), End: group[i].End}
			}
		}
	default:
		l.x, err = executor.ScanIndex(ctx, l.tx, l.t, l.ix, l.rest[0], l.opts)
		l.rest = l.rest[1:]
	}
	if err != nil {
		l.x = nil
	}
	return err
}

// fill reads the next batch of entries and their rows, checking that
// every entry has its row.
func (l *lookupIter) fill(ctx context.Context) error {
	l.keys, l.pos = l.keys[:0], 0
	l.handles, l.entries = l.handles[:0], l.entries[:0]
	for len(l.handles) < l.batch {
		if l.x != nil {
			var (
				eof bool
				err error
			)
			if l.cover != nil {
				l.handles, l.entries, eof, err = l.x.NextEntries(ctx, l.handles, l.entries, l.batch-len(l.handles))
			} else {
				l.handles, eof, err = l.x.NextHandles(ctx, l.handles, l.batch-len(l.handles))
			}
			if err != nil {
				return err
			}
			if !eof {
				break
			}
			// The range is done: the batch goes on with the next one.
			l.x.Close()
			l.x = nil
			continue
		}
		if err := l.next(ctx); err != nil {
			return err
		}
		if l.x == nil && len(l.pre) == 0 && len(l.rest) == 0 {
			break
		}
	}
	l.eof = l.x == nil && len(l.pre) == 0 && len(l.rest) == 0
	l.batch = min(2*l.batch, maxLookupBatch)
	if len(l.handles) == 0 {
		return nil
	}
	// The batch's row keys share one buffer, new for each batch (a key
	// handed out stays valid after the next fill).
	buf := make([]byte, 0, len(l.handles)*rowKeyLen(l.t.ID, l.handles[0]))
	for _, h := range l.handles {
		start := len(buf)
		buf = tablecodec.RowKey(buf, l.t.ID, h)
		l.keys = append(l.keys, buf[start:len(buf):len(buf)])
	}
	l.vals = l.vals[:0]
	if l.cover != nil {
		for i := range l.keys {
			v, err := l.cover.row(l.entries[i], l.handles[i])
			if err != nil {
				return fmt.Errorf("table %s: index %s: %w", l.t.Name, l.ix.Name, err)
			}
			l.vals = append(l.vals, v)
		}
		return nil
	}
	got, err := l.rd.BatchGet(ctx, l.keys)
	if err != nil {
		return fmt.Errorf("table %s: index %s lookup of %d rows: %w", l.t.Name, l.ix.Name, len(l.keys), err)
	}
	for i, k := range l.keys {
		v, ok := got[string(k)]
		if !ok {
			return fmt.Errorf("table %s: index %s entry points to row %v: %w", l.t.Name, l.ix.Name, l.handles[i], executor.ErrIndexInconsistent)
		}
		l.vals = append(l.vals, v)
	}
	return nil
}
