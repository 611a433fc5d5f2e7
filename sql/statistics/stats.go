package statistics

import (
	"bytes"
	"slices"
	"sort"

	"github.com/percdb/percdb/executor/copr"
)

// Table is what ANALYZE TABLE learned of one table.
type Table struct {
	// TableID is the table's ID (executor.Table.ID).
	TableID int64
	// Version is the start timestamp of the transaction that stored the
	// statistics: a later ANALYZE stores a higher one.
	Version uint64
	// AnalyzedAt is when they were collected, in Unix milliseconds.
	AnalyzedAt int64
	// RowCount is the number of rows the collection read.
	RowCount uint64
	Columns  []Column
	Indexes  []Index
}

// Column is the statistics of one column's values.
type Column struct {
	// ID is the column's ID (executor.Column.ID).
	ID int64
	// NDV is the estimated number of distinct non-NULL values.
	NDV uint64
	// Nulls is the number of NULLs.
	Nulls uint64
	// AvgSize is the average size of a non-NULL value's key encoding.
	AvgSize uint64
	// Hist is the distribution of the non-NULL values.
	Hist Histogram
}

// Index is the statistics of an index's tuples: the primary key or a
// secondary index.
type Index struct {
	// ID is the index's ID (executor.Index.ID); 0 with Primary.
	ID      int64
	Primary bool
	// ColumnIDs are the indexed columns, in key order.
	ColumnIDs []int64
	// NDV[i] is the estimated number of distinct tuples of the first
	// i+1 columns, NULLs counted as one value.
	NDV []uint64
	// Hist is the distribution of whole tuples, NULLs included (the
	// NULL encoding sorts first).
	Hist Histogram
}

// Histogram is a distribution of encoded values (tablecodec key
// encodings of a value or a tuple, which sort as the values do): the
// most frequent values with their counts, and equal-depth buckets of the
// others.
type Histogram struct {
	TopN    []TopN
	Buckets []Bucket
}

// TopN is one frequent value and its estimated count.
type TopN struct {
	Value []byte
	Count uint64
}

// Bucket is a range of values [Lower, Upper] (values of the TopN left
// out) with its estimated rows, rows equal to Upper (Repeats) and
// distinct values.
type Bucket struct {
	Lower, Upper []byte
	Count        uint64
	Repeats      uint64
	NDV          uint64
}

// Total returns the rows the histogram describes.
func (h *Histogram) Total() uint64 {
	var n uint64
	for _, t := range h.TopN {
		n += t.Count
	}
	for _, b := range h.Buckets {
		n += b.Count
	}
	return n
}

// EqualRows estimates the rows equal to the encoded value v: its TopN
// count, or the average count per distinct value of the bucket that
// holds it, or 0 when no bucket holds it.
func (h *Histogram) EqualRows(v []byte) uint64 {
	for _, t := range h.TopN {
		if bytes.Equal(t.Value, v) {
			return t.Count
		}
	}
	i := sort.Search(len(h.Buckets), func(i int) bool { return bytes.Compare(h.Buckets[i].Upper, v) >= 0 })
	if i == len(h.Buckets) || bytes.Compare(h.Buckets[i].Lower, v) > 0 {
		return 0
	}
	// The bucket's average: its upper bound's Repeats is one sample's
	// count, too noisy to estimate by (GMS reads it as it likes).
	b := &h.Buckets[i]
	return max(b.Count/max(b.NDV, 1), 1)
}

// Index returns the statistics of the index with ID id (the primary key
// for primary), or nil.
func (t *Table) Index(id int64, primary bool) *Index {
	for i := range t.Indexes {
		if ix := &t.Indexes[i]; ix.Primary == primary && (primary || ix.ID == id) {
			return ix
		}
	}
	return nil
}

// Column returns the statistics of the column with ID id, or nil.
func (t *Table) Column(id int64) *Column {
	for i := range t.Columns {
		if t.Columns[i].ID == id {
			return &t.Columns[i]
		}
	}
	return nil
}

// Histogram shape limits.
const (
	// MaxBuckets is the most buckets of a histogram.
	MaxBuckets = 64
	// MaxTopN is the most frequent values a histogram keeps apart.
	MaxTopN = 20
)

// buildHistogram builds the histogram of total values (NDV of them
// distinct) from a uniform sample of them, sorted.
func buildHistogram(sample [][]byte, total, ndv uint64) Histogram {
	var h Histogram
	n := len(sample)
	if n == 0 || total == 0 {
		return h
	}
	scale := float64(total) / float64(n)
	scaled := func(c int) uint64 { return max(uint64(float64(c)*scale+0.5), 1) }
	type run struct {
		v   []byte
		cnt int
	}
	var runs []run
	for _, v := range sample {
		if len(runs) > 0 && bytes.Equal(runs[len(runs)-1].v, v) {
			runs[len(runs)-1].cnt++
			continue
		}
		runs = append(runs, run{v: v, cnt: 1})
	}
	// The most frequent values seen more than once, and at least twice
	// as often as a value of a uniform distribution would be, go to the
	// TopN (a uniform column's values vary by sampling alone: seen 10
	// times on average, one in a few hundred is seen 20 times).
	avg := float64(n) / float64(max(ndv, uint64(len(runs)), 1)) * scale
	byCount := slices.Clone(runs)
	slices.SortStableFunc(byCount, func(a, b run) int { return b.cnt - a.cnt })
	top := map[string]bool{}
	for _, r := range byCount {
		if len(h.TopN) == MaxTopN || r.cnt < 2 || float64(r.cnt)*scale < 2*avg {
			break
		}
		h.TopN = append(h.TopN, TopN{Value: r.v, Count: scaled(r.cnt)})
		top[string(r.v)] = true
	}
	slices.SortFunc(h.TopN, func(a, b TopN) int { return bytes.Compare(a.Value, b.Value) })
	rest := runs[:0:0]
	left := 0
	for _, r := range runs {
		if !top[string(r.v)] {
			rest = append(rest, r)
			left += r.cnt
		}
	}
	if len(rest) == 0 {
		return h
	}
	// Distinct values of the sample stand for more of the table's: the
	// table's NDV outside the TopN over the sample's.
	ndvScale := max(float64(ndv)-float64(len(h.TopN)), float64(len(rest))) / float64(len(rest))
	depth := (left + MaxBuckets - 1) / MaxBuckets
	var b *Bucket
	cnt, distinct := 0, 0
	for i, r := range rest {
		if b == nil {
			h.Buckets = append(h.Buckets, Bucket{Lower: r.v})
			b = &h.Buckets[len(h.Buckets)-1]
			cnt, distinct = 0, 0
		}
		cnt += r.cnt
		distinct++
		if cnt >= depth || i == len(rest)-1 {
			b.Upper = r.v
			b.Count = scaled(cnt)
			b.Repeats = scaled(r.cnt)
			b.NDV = max(uint64(float64(distinct)*ndvScale+0.5), 1)
			b = nil
		}
	}
	return h
}

// IndexSpec names an index whose statistics Build collects: its ID (0
// and Primary for the primary key) and the positions of its columns in
// the collection's columns.
type IndexSpec struct {
	ID      int64
	Primary bool
	Columns []int
}

// Build turns a collection (a merged copr.Sample over the columns with
// IDs columnIDs and the tuples of indexes) into a table's statistics.
func Build(s *copr.Sample, tableID int64, columnIDs []int64, indexes []IndexSpec) *Table {
	t := &Table{TableID: tableID, RowCount: s.Rows}
	rows := s.Sampled()
	null := []byte{0} // the key encoding of NULL
	for i, id := range columnIDs {
		c := Column{ID: id, Nulls: s.Nulls[i]}
		nonNull := s.Rows - min(s.Nulls[i], s.Rows)
		c.NDV = min(s.Columns[i].NDV(), nonNull)
		if nonNull > 0 {
			c.AvgSize = s.Sizes[i] / nonNull
		}
		var vals [][]byte
		for _, r := range rows {
			if !bytes.Equal(r.Values[i], null) {
				vals = append(vals, r.Values[i])
			}
		}
		slices.SortFunc(vals, bytes.Compare)
		c.Hist = buildHistogram(vals, nonNull, c.NDV)
		t.Columns = append(t.Columns, c)
	}
	for k, spec := range indexes {
		ix := Index{ID: spec.ID, Primary: spec.Primary}
		for j, pos := range spec.Columns {
			ix.ColumnIDs = append(ix.ColumnIDs, columnIDs[pos])
			var ndv uint64
			if j == 0 {
				ndv = t.Columns[pos].NDV
				if s.Nulls[pos] > 0 {
					ndv++
				}
			} else {
				ndv = s.Prefixes[k][j-1].NDV()
			}
			// A longer prefix has at least as many distinct tuples.
			if j > 0 {
				ndv = max(ndv, ix.NDV[j-1])
			}
			ix.NDV = append(ix.NDV, min(ndv, s.Rows))
		}
		vals := make([][]byte, 0, len(rows))
		for _, r := range rows {
			var tuple []byte
			for _, pos := range spec.Columns {
				tuple = append(tuple, r.Values[pos]...)
			}
			vals = append(vals, tuple)
		}
		slices.SortFunc(vals, bytes.Compare)
		var ndv uint64
		if len(ix.NDV) > 0 {
			ndv = ix.NDV[len(ix.NDV)-1]
		}
		ix.Hist = buildHistogram(vals, s.Rows, ndv)
		t.Indexes = append(t.Indexes, ix)
	}
	return t
}

// Tuples returns the column positions of each index, as a sampling
// program's SampleSpec.Tuples wants them.
func Tuples(indexes []IndexSpec) [][]int {
	out := make([][]int, len(indexes))
	for i, ix := range indexes {
		out[i] = ix.Columns
	}
	return out
}
