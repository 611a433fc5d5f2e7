package executor

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
)

// ScanOptions tunes a scan. The zero value scans forward without a limit.
type ScanOptions struct {
	// Reverse scans in descending key order. Default false.
	Reverse bool
	// Limit stops the scan after this many entries; 0 means no limit.
	Limit int
	// FirstPage, when positive, is how many entries the scan's first
	// request to the store asks for (txn.IterOptions.FirstPage): a
	// caller that expects to need few asks for few. Without it a Limit
	// is the first page.
	FirstPage int
	// BatchSize bounds how many rows an index lookup reads per BatchGet.
	// The first batch reads at most initialLookupBatch and each next one
	// twice as many, so that a query that stops early (LIMIT, EXISTS) reads
	// little while a long one pays few round trips. Default 1024.
	BatchSize int
}

const (
	defaultLookupBatch = 1024
	initialLookupBatch = 32
)

// RowIterator yields rows; Next returns io.EOF after the last one. It is
// not safe for concurrent use; Close releases it and may be called at any
// time, more than once.
type RowIterator interface {
	Next(ctx context.Context) (Row, error)
	Close()
}

// IndexIterator walks the entries of one index in a key range, in key
// order (or reverse), yielding the handle of each.
type IndexIterator struct {
	it     txn.Iterator
	t      *Table
	ix     *Index
	prefix []byte
	left   int // entries still allowed by the limit; -1 for no limit
	// started: the first Next must not advance the underlying iterator,
	// which a new txn iterator has already positioned.
	started bool
}

// ScanIndex opens an iterator over the entries of ix in r (see
// Table.IndexRange), in index order or reverse.
func ScanIndex(ctx context.Context, s Scanner, t *Table, ix *Index, r KeyRange, opts ScanOptions) (*IndexIterator, error) {
	it, err := openIter(ctx, s, r, opts)
	if err != nil {
		return nil, fmt.Errorf("table %s: scan index %s: %w", t.Name, ix.Name, err)
	}
	return &IndexIterator{
		it: it, t: t, ix: ix,
		prefix: tablecodec.IndexPrefix(nil, t.ID, ix.ID),
		left:   limitLeft(opts.Limit),
	}, nil
}

func openIter(ctx context.Context, s Scanner, r KeyRange, opts ScanOptions) (txn.Iterator, error) {
	first := opts.FirstPage
	if first <= 0 {
		first = opts.Limit
	}
	return s.IterWith(ctx, r.Start, r.End, txn.IterOptions{Reverse: opts.Reverse, FirstPage: first})
}

func limitLeft(limit int) int {
	if limit <= 0 {
		return -1
	}
	return limit
}

// advance moves the underlying iterator to the next pair to yield, or
// reports io.EOF.
func advance(ctx context.Context, it txn.Iterator, started *bool, left *int) error {
	if *left == 0 {
		return io.EOF
	}
	if *started {
		if err := it.Next(ctx); err != nil {
			return err
		}
	}
	*started = true
	if !it.Valid() {
		return io.EOF
	}
	if *left > 0 {
		*left--
	}
	return nil
}

// Next returns the handle and the key of the next entry, or io.EOF. The
// key is valid until the next call.
func (x *IndexIterator) Next(ctx context.Context) (tablecodec.Handle, []byte, error) {
	if err := advance(ctx, x.it, &x.started, &x.left); err != nil {
		return tablecodec.Handle{}, nil, x.fail(err)
	}
	key := x.it.Key()
	if !bytes.HasPrefix(key, x.prefix) {
		return tablecodec.Handle{}, nil, fmt.Errorf("table %s: scan of index %s met key %x outside the index", x.t.Name, x.ix.Name, key)
	}
	h, err := tablecodec.DecodeIndexHandle(key, x.it.Value(), len(x.ix.Columns), x.t.HandleKind == HandleCommon)
	if err != nil {
		return tablecodec.Handle{}, nil, fmt.Errorf("table %s: scan index %s: %w", x.t.Name, x.ix.Name, err)
	}
	return h, key, nil
}

func (x *IndexIterator) fail(err error) error {
	if err == io.EOF {
		return err
	}
	return fmt.Errorf("table %s: scan index %s: %w", x.t.Name, x.ix.Name, err)
}

// Close releases the iterator.
func (x *IndexIterator) Close() { x.it.Close() }

// tableScan is the RowIterator of ScanTable.
type tableScan struct {
	it      txn.Iterator
	t       *Table
	d       *RowDecoder
	left    int
	started bool
}

// ScanTable opens an iterator over the rows of t in r (t.RowRange() for a
// full scan, t.HandleRange for a primary-key range), in handle order or
// reverse, decoded by d.
func ScanTable(ctx context.Context, s Scanner, t *Table, d *RowDecoder, r KeyRange, opts ScanOptions) (RowIterator, error) {
	it, err := openIter(ctx, scannerFor(s, d), r, opts)
	if err != nil {
		return nil, fmt.Errorf("table %s: scan rows: %w", t.Name, err)
	}
	return &tableScan{it: it, t: t, d: d, left: limitLeft(opts.Limit)}, nil
}

// TableRows is a RowIterator over pairs of t's rows already read (a
// locking range read's, txn.Txn.LockRange), in their order, decoded by d
// as ScanTable decodes them.
func TableRows(t *Table, d *RowDecoder, pairs []kv.KvPair) RowIterator {
	return &tableScan{it: NewPairsIterator(pairs), t: t, d: d, left: limitLeft(0)}
}

// NewPairsIterator is a txn.Iterator over pairs in memory, in their order.
func NewPairsIterator(pairs []kv.KvPair) txn.Iterator { return &pairsIter{pairs: pairs} }

// pairsIter is NewPairsIterator's iterator.
type pairsIter struct{ pairs []kv.KvPair }

func (it *pairsIter) Valid() bool   { return len(it.pairs) > 0 }
func (it *pairsIter) Key() []byte   { return it.pairs[0].Key }
func (it *pairsIter) Value() []byte { return it.pairs[0].Value }
func (it *pairsIter) Close()        {}

// Next implements txn.Iterator.
func (it *pairsIter) Next(context.Context) error {
	it.pairs = it.pairs[1:]
	return nil
}

// Next implements RowIterator.
func (s *tableScan) Next(ctx context.Context) (Row, error) {
	if err := advance(ctx, s.it, &s.started, &s.left); err != nil {
		if err == io.EOF {
			return Row{}, err
		}
		return Row{}, fmt.Errorf("table %s: scan rows: %w", s.t.Name, err)
	}
	tid, h, err := tablecodec.DecodeRowKey(s.it.Key(), s.t.HandleKind == HandleCommon)
	if err != nil || tid != s.t.ID {
		return Row{}, fmt.Errorf("table %s: scan met key %x, not a row of the table (%v)", s.t.Name, s.it.Key(), err)
	}
	row, err := s.d.Decode(s.it.Value())
	if err != nil {
		return Row{}, fmt.Errorf("scan row %v: %w", h, err)
	}
	return Row{Handle: h, Values: row}, nil
}

// Close implements RowIterator.
func (s *tableScan) Close() { s.it.Close() }

// indexLookup is the RowIterator of IndexLookup.
type indexLookup struct {
	x       *IndexIterator
	s       Scanner
	d       *RowDecoder
	batch   int // size of the next batch
	max     int
	handles []tablecodec.Handle
	rows    []Row
	pos     int
	eof     bool
}

// IndexLookup scans ix over r and reads the row of each entry, yielding
// rows in index order (or reverse). Rows are read in batches of handles,
// one BatchGet each (see ScanOptions.BatchSize). An entry whose row is
// missing is an error wrapping ErrIndexInconsistent.
func IndexLookup(ctx context.Context, s Scanner, t *Table, ix *Index, d *RowDecoder, r KeyRange, opts ScanOptions) (RowIterator, error) {
	s = scannerFor(s, d)
	x, err := ScanIndex(ctx, s, t, ix, r, opts)
	if err != nil {
		return nil, err
	}
	max := opts.BatchSize
	if max <= 0 {
		max = defaultLookupBatch
	}
	return &indexLookup{x: x, s: s, d: d, batch: min(initialLookupBatch, max), max: max}, nil
}

// Next implements RowIterator.
func (l *indexLookup) Next(ctx context.Context) (Row, error) {
	if l.pos == len(l.rows) {
		if l.eof {
			return Row{}, io.EOF
		}
		if err := l.fill(ctx); err != nil {
			return Row{}, err
		}
		if len(l.rows) == 0 {
			return Row{}, io.EOF
		}
	}
	r := l.rows[l.pos]
	l.rows[l.pos] = Row{}
	l.pos++
	return r, nil
}

// NextHandles appends the handles of the next entries, at most n, to
// handles; eof reports that the range has no more.
func (x *IndexIterator) NextHandles(ctx context.Context, handles []tablecodec.Handle, n int) (_ []tablecodec.Handle, eof bool, err error) {
	handles, _, eof, err = x.nextEntries(ctx, handles, nil, false, n)
	return handles, eof, err
}

// NextEntries is NextHandles that also appends each entry's key to keys
// (a copy: the iterator's own is reused).
func (x *IndexIterator) NextEntries(ctx context.Context, handles []tablecodec.Handle, keys [][]byte, n int) (_ []tablecodec.Handle, _ [][]byte, eof bool, err error) {
	return x.nextEntries(ctx, handles, keys, true, n)
}

func (x *IndexIterator) nextEntries(ctx context.Context, handles []tablecodec.Handle, keys [][]byte, keep bool, n int) (_ []tablecodec.Handle, _ [][]byte, eof bool, err error) {
	for i := 0; i < n; i++ {
		h, key, err := x.Next(ctx)
		if err == io.EOF {
			return handles, keys, true, nil
		}
		if err != nil {
			return handles, keys, false, err
		}
		handles = append(handles, h)
		if keep {
			keys = append(keys, bytes.Clone(key))
		}
	}
	return handles, keys, false, nil
}

// fill reads the next batch of handles and their rows.
func (l *indexLookup) fill(ctx context.Context) error {
	l.rows, l.pos = l.rows[:0], 0
	var err error
	if l.handles, l.eof, err = l.x.NextHandles(ctx, l.handles[:0], l.batch); err != nil {
		return err
	}
	l.batch = min(2*l.batch, l.max)
	if len(l.handles) == 0 {
		return nil
	}
	l.rows, err = lookupRows(ctx, l.s, l.x.t, l.x.ix, l.d, l.handles, l.rows)
	return err
}

// lookupRows appends to rows the rows of handles, the entries of ix read,
// with one batch read.
func lookupRows(ctx context.Context, r Reader, t *Table, ix *Index, d *RowDecoder, handles []tablecodec.Handle, rows []Row) ([]Row, error) {
	keys := make([][]byte, len(handles))
	for i, h := range handles {
		keys[i] = tablecodec.RowKey(nil, t.ID, h)
	}
	vals, err := r.BatchGet(ctx, keys)
	if err != nil {
		return rows, fmt.Errorf("table %s: index %s lookup of %d rows: %w", t.Name, ix.Name, len(keys), err)
	}
	for i, k := range keys {
		v, ok := vals[string(k)]
		if !ok {
			return rows, fmt.Errorf("table %s: index %s entry points to row %v: %w", t.Name, ix.Name, handles[i], ErrIndexInconsistent)
		}
		row, err := d.Decode(v)
		if err != nil {
			return rows, fmt.Errorf("index %s lookup of row %v: %w", ix.Name, handles[i], err)
		}
		rows = append(rows, Row{Handle: handles[i], Values: row})
	}
	return rows, nil
}

// Close implements RowIterator.
func (l *indexLookup) Close() { l.x.Close() }

// Covers reports whether the entries of ix hold the values of the columns
// at offsets exactly, so that IndexOnly can build rows from them without
// reading the rows: each column is one of the index's columns or of the
// primary key's (which the entry's handle carries), keyed whole and by
// its own bytes (no prefix, no collation sort key, no trimmed spaces).
func (t *Table) Covers(ix *Index, offsets []int) bool {
	for _, off := range offsets {
		if _, _, ok := t.entryPosition(ix, off); !ok {
			return false
		}
	}
	return true
}

// entryPosition says where an index entry keeps the value of the column at
// offset off: the pos-th indexed value (inHandle false) or the pos-th
// value of the handle (inHandle true); ok is false when it keeps no exact
// copy of it.
func (t *Table) entryPosition(ix *Index, off int) (pos int, inHandle, ok bool) {
	exact := func(c IndexColumn) bool {
		return c.Offset == off && c.PrefixLen == 0 && c.CollationKey == nil && !c.TrimTrailingSpaces
	}
	for i, c := range ix.Columns {
		if exact(c) {
			return i, false, true
		}
	}
	if t.HandleKind == HandleRowID {
		return 0, false, false
	}
	for i, c := range t.PrimaryKey {
		if exact(c) {
			return i, true, true
		}
	}
	return 0, false, false
}

// indexOnly is the RowIterator of IndexOnly.
type indexOnly struct {
	x *IndexIterator
	d *EntryDecoder
}

type entryValue struct {
	pos      int
	inHandle bool
}

// EntryDecoder takes the values of some columns of a table's rows from
// the entries of an index that holds them exactly (Table.Covers), without
// reading the rows.
type EntryDecoder struct {
	t  *Table
	ix *Index
	// from[i] is where output position i comes from (entryPosition).
	from []entryValue
	vals []any // the entry's indexed values, reused
}

// NewEntryDecoder returns the decoder of the columns at offsets (nil:
// every column) from entries of ix, or an error when ix does not hold
// one of them exactly.
func NewEntryDecoder(t *Table, ix *Index, offsets []int) (*EntryDecoder, error) {
	if offsets == nil {
		offsets = make([]int, len(t.Columns))
		for i := range offsets {
			offsets[i] = i
		}
	}
	from := make([]entryValue, len(offsets))
	for i, off := range offsets {
		pos, inHandle, ok := t.entryPosition(ix, off)
		if !ok {
			return nil, fmt.Errorf("table %s: index %s does not cover column offset %d", t.Name, ix.Name, off)
		}
		from[i] = entryValue{pos: pos, inHandle: inHandle}
	}
	return &EntryDecoder{t: t, ix: ix, from: from, vals: make([]any, len(ix.Columns))}, nil
}

// IndexOnly scans ix over r, in index order or reverse, and yields rows of
// the columns at offsets (nil: every column) taken from the entries alone,
// without reading the rows: t.Covers(ix, offsets) must hold. Values come
// back as tablecodec.DecodeKey returns them (int64, uint64, float64,
// []byte for strings, ...), not in the column's own Go type: the caller
// converts them.
func IndexOnly(ctx context.Context, s Scanner, t *Table, ix *Index, offsets []int, r KeyRange, opts ScanOptions) (RowIterator, error) {
	d, err := NewEntryDecoder(t, ix, offsets)
	if err != nil {
		return nil, err
	}
	x, err := ScanIndex(ctx, s, t, ix, r, opts)
	if err != nil {
		return nil, err
	}
	return &indexOnly{x: x, d: d}, nil
}

// Next implements RowIterator.
func (o *indexOnly) Next(ctx context.Context) (Row, error) {
	h, key, err := o.x.Next(ctx)
	if err != nil {
		return Row{}, err
	}
	row, err := o.d.Decode(key, h)
	if err != nil {
		return Row{}, err
	}
	return Row{Handle: h, Values: row}, nil
}

// Decode returns the values of the decoder's columns held by the entry
// whose key is key and whose handle is h, as tablecodec.DecodeKey returns
// them.
func (d *EntryDecoder) Decode(key []byte, h tablecodec.Handle) ([]any, error) {
	t, ix := d.t, d.ix
	_, _, b, err := tablecodec.DecodeIndexKey(key)
	for i := range d.vals {
		if err != nil {
			break
		}
		b, d.vals[i], err = tablecodec.DecodeKey(b)
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: index %s entry %x: %w", t.Name, ix.Name, key, err)
	}
	var handleVals []any
	row := make([]any, len(d.from))
	for i, f := range d.from {
		switch {
		case !f.inHandle:
			row[i] = d.vals[f.pos]
		case h.IsInt():
			row[i] = h.Int
		default:
			if handleVals == nil {
				if handleVals, err = tablecodec.DecodeKeys(h.Common); err != nil || len(handleVals) != len(t.PrimaryKey) {
					return nil, fmt.Errorf("table %s: index %s entry %x: handle of %d values: %v: %w", t.Name, ix.Name, key, len(handleVals), err, tablecodec.ErrCorrupt)
				}
			}
			row[i] = handleVals[f.pos]
		}
	}
	return row, nil
}

// Close implements RowIterator.
func (o *indexOnly) Close() { o.x.Close() }

// IndexLookupRanges reads, for each of ranges (ranges of ix's entries,
// ascending and disjoint, as Table.IndexRange makes them), the rows its
// entries point to, in index order: the entries of every range with one
// multi-range read (txn.Txn.ScanRanges: one request per region, not one
// per range), then every row with one batch read. At most limit entries
// of each range are read (0: all): full[i] reports that range i had
// limit of them, and may have more, which were not read. A batch of
// lookups (a batched join's ranges of one index) is so two requests per
// region rather than two per range.
func IndexLookupRanges(ctx context.Context, k *txn.Txn, t *Table, ix *Index, d *RowDecoder, ranges []KeyRange, limit int) (rows [][]Row, full []bool, err error) {
	byRange, _, last, err := IndexHandleRanges(ctx, k, t, ix, ranges, limit)
	if err != nil {
		return nil, nil, err
	}
	full = make([]bool, len(ranges))
	var handles []tablecodec.Handle
	for i, hs := range byRange {
		full[i] = last[i] != nil
		handles = append(handles, hs...)
	}
	all, err := lookupRows(ctx, readerFor(k, d), t, ix, d, handles, make([]Row, 0, len(handles)))
	if err != nil {
		return nil, nil, err
	}
	rows = make([][]Row, len(ranges))
	for i, hs := range byRange {
		rows[i], all = all[:len(hs):len(hs)], all[len(hs):]
	}
	return rows, full, nil
}

// IndexHandleRanges reads the handles of the entries of each of ranges
// (ranges of ix's entries, ascending and disjoint), in index order, with
// one multi-range read (txn.Txn.ScanRanges: one request per region, not
// one per range), at most limit of each range (0: all), and the entries'
// keys, keys[i][j] handles[i][j]'s. last[i] is the key of range i's last
// entry read when it had limit of them, and may have more, which were
// not read (nil otherwise): the range goes on after it.
func IndexHandleRanges(ctx context.Context, k *txn.Txn, t *Table, ix *Index, ranges []KeyRange, limit int) (handles [][]tablecodec.Handle, keys [][][]byte, last [][]byte, err error) {
	krs := make([]kv.KeyRange, len(ranges))
	for i, r := range ranges {
		krs[i] = kv.KeyRange{Start: r.Start, End: r.End}
	}
	entries, err := k.ScanRanges(ctx, krs, limit)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("table %s: scan index %s: %w", t.Name, ix.Name, err)
	}
	prefix := tablecodec.IndexPrefix(nil, t.ID, ix.ID)
	handles = make([][]tablecodec.Handle, len(ranges))
	keys = make([][][]byte, len(ranges))
	last = make([][]byte, len(ranges))
	for i, es := range entries {
		if limit > 0 && len(es) >= limit {
			last[i] = es[len(es)-1].Key
		}
		handles[i] = make([]tablecodec.Handle, 0, len(es))
		keys[i] = make([][]byte, 0, len(es))
		for _, e := range es {
			if !bytes.HasPrefix(e.Key, prefix) {
				return nil, nil, nil, fmt.Errorf("table %s: scan of index %s met key %x outside the index", t.Name, ix.Name, e.Key)
			}
			h, err := tablecodec.DecodeIndexHandle(e.Key, e.Value, len(ix.Columns), t.HandleKind == HandleCommon)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("table %s: scan index %s: %w", t.Name, ix.Name, err)
			}
			handles[i] = append(handles[i], h)
			keys[i] = append(keys[i], e.Key)
		}
	}
	return handles, keys, last, nil
}
