package keyviz

import (
	"sort"
	"sync"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
)

// Options shape a Recorder. Zero fields take the defaults.
type Options struct {
	// Interval is the time one column covers; default 10 s.
	Interval time.Duration
	// Columns is how many columns are kept, the current one included;
	// default 180 (half an hour at the default interval).
	Columns int
	// MaxSpans bounds the parts counted in one column; default 1,000.
	MaxSpans int
	// ByRegion splits each part by the region the requests went to
	// (kv.RequestStats.Region), so that the rows follow the regions'
	// boundaries: a SQL node of a cluster sets it.
	ByRegion bool
}

// Defaults of Options.
const (
	DefaultInterval = 10 * time.Second
	DefaultColumns  = 180
	DefaultMaxSpans = 1000
)

// Part says which part of a table a span is.
type Part int8

// The parts of a table's key range.
const (
	// PartRows is the table's rows (t{table}_r...).
	PartRows Part = iota
	// PartIndex is one of its indexes (t{table}_i{index}...).
	PartIndex
	// PartOther is any other key of the table (acknowledgements, or a
	// request that named only the table's prefix).
	PartOther
	// PartMeta is the keys outside every table (catalog, settings).
	PartMeta
	// PartOverflow counts what came past Options.MaxSpans.
	PartOverflow
)

// Span is a part of the key space.
type Span struct {
	TableID int64 // 0 for PartMeta and PartOverflow
	Part    Part
	IndexID int64 // for PartIndex
	// Region is the region the requests went to, with Options.ByRegion
	// (0 otherwise, and for PartOverflow).
	Region uint64
}

// Cell is what the requests to one span did in one column.
type Cell struct {
	ReadKeys, ReadBytes, WriteKeys, WriteBytes uint64
	// Requests counts them.
	Requests uint64
}

// Add adds o's counts to c.
func (c *Cell) Add(o Cell) {
	c.ReadKeys += o.ReadKeys
	c.ReadBytes += o.ReadBytes
	c.WriteKeys += o.WriteKeys
	c.WriteBytes += o.WriteBytes
	c.Requests += o.Requests
}

// column is one time column.
type column struct {
	start time.Time
	cells map[Span]*Cell
}

// Recorder counts requests by span and time column. It is safe for
// concurrent use.
type Recorder struct {
	opts Options
	now  func() time.Time

	mu sync.Mutex
	// cols is a ring of the kept columns; cur indexes the current one.
	cols []column
	cur  int
}

// New returns a Recorder with opts.
func New(opts Options) *Recorder {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Columns <= 0 {
		opts.Columns = DefaultColumns
	}
	if opts.MaxSpans <= 0 {
		opts.MaxSpans = DefaultMaxSpans
	}
	return &Recorder{opts: opts, now: time.Now}
}

// SpanOf returns the span of key.
func SpanOf(key []byte) Span {
	id, err := tablecodec.DecodeTableID(key)
	if err != nil {
		return Span{Part: PartMeta}
	}
	switch {
	case tablecodec.IsIndexKey(key):
		if _, idx, _, err := tablecodec.DecodeIndexKey(key); err == nil {
			return Span{TableID: id, Part: PartIndex, IndexID: idx}
		}
	case tablecodec.HasRecordPrefix(key):
		return Span{TableID: id, Part: PartRows}
	}
	return Span{TableID: id, Part: PartOther}
}

// ObserveRequest implements kv.RequestObserver.
func (r *Recorder) ObserveRequest(s kv.RequestStats) {
	var c Cell
	c.Requests = 1
	if s.Write {
		c.WriteKeys, c.WriteBytes = uint64(s.Keys), uint64(s.Bytes)
	} else {
		c.ReadKeys, c.ReadBytes = uint64(s.Keys), uint64(s.Bytes)
	}
	span := SpanOf(s.Key)
	if r.opts.ByRegion {
		span.Region = s.Region
	}
	r.Add(span, c)
}

// Add counts c for span in the current column.
func (r *Recorder) Add(span Span, c Cell) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	col := r.column(now)
	cell, ok := col.cells[span]
	if !ok {
		if len(col.cells) >= r.opts.MaxSpans {
			span = Span{Part: PartOverflow}
			cell = col.cells[span]
		}
		if cell == nil {
			cell = &Cell{}
			col.cells[span] = cell
		}
	}
	cell.Add(c)
}

// column returns the column now falls in, starting new ones as time
// passes. The caller holds mu.
func (r *Recorder) column(now time.Time) *column {
	start := now.Truncate(r.opts.Interval)
	if r.cols == nil {
		r.cols = make([]column, r.opts.Columns)
		r.cols[0] = column{start: start, cells: map[Span]*Cell{}}
		return &r.cols[0]
	}
	cur := &r.cols[r.cur]
	if !start.After(cur.start) {
		return cur // a clock step back counts in the current column
	}
	r.cur = (r.cur + 1) % len(r.cols)
	r.cols[r.cur] = column{start: start, cells: map[Span]*Cell{}}
	return &r.cols[r.cur]
}

// Heatmap is a copy of the kept columns.
type Heatmap struct {
	Interval time.Duration
	// Times are the columns' starts, oldest first; a column in which no
	// request came is there, empty, so that time runs evenly.
	Times []time.Time
	// Spans are the spans with any request, in key order (table, then
	// rows before indexes by ID, then other).
	Spans []Span
	// Cells[i][j] is span i in column j.
	Cells [][]Cell
}

// Snapshot returns the heatmap of the columns up to now.
func (r *Recorder) Snapshot() Heatmap {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	h := Heatmap{Interval: r.opts.Interval}
	if r.cols == nil {
		return h
	}
	// Columns, oldest first, with the empty ones between filled in.
	end := now.Truncate(r.opts.Interval)
	first := end.Add(-time.Duration(r.opts.Columns-1) * r.opts.Interval)
	byStart := make(map[time.Time]*column, len(r.cols))
	for i := range r.cols {
		if c := &r.cols[i]; c.cells != nil && !c.start.Before(first) {
			byStart[c.start] = c
		}
	}
	if cur := r.cols[r.cur].start; cur.After(end) {
		end = cur
	}
	seen := map[Span]bool{}
	var cols []*column
	for t := first; !t.After(end); t = t.Add(r.opts.Interval) {
		c := byStart[t]
		if c == nil && len(h.Times) == 0 {
			continue // nothing yet: start at the first column with data
		}
		h.Times = append(h.Times, t)
		cols = append(cols, c)
		if c != nil {
			for s := range c.cells {
				seen[s] = true
			}
		}
	}
	for s := range seen {
		h.Spans = append(h.Spans, s)
	}
	sort.Slice(h.Spans, func(i, j int) bool { return lessSpan(h.Spans[i], h.Spans[j]) })
	h.Cells = make([][]Cell, len(h.Spans))
	for i, s := range h.Spans {
		h.Cells[i] = make([]Cell, len(cols))
		for j, c := range cols {
			if c != nil {
				if cell := c.cells[s]; cell != nil {
					h.Cells[i][j] = *cell
				}
			}
		}
	}
	return h
}

// lessSpan orders spans as their keys are ordered: meta first, then by
// table, rows, indexes by ID, other; overflow last; a part's regions by
// id (the caller, which knows the regions' ranges, may order them by key).
func lessSpan(a, b Span) bool {
	rank := func(s Span) int {
		switch s.Part {
		case PartMeta:
			return 0
		case PartOverflow:
			return 2
		}
		return 1
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra < rb
	}
	if a.TableID != b.TableID {
		return a.TableID < b.TableID
	}
	if a.Part != b.Part {
		return a.Part < b.Part
	}
	if a.IndexID != b.IndexID {
		return a.IndexID < b.IndexID
	}
	return a.Region < b.Region
}
