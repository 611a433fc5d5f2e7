package statistics

import (
	"bytes"
	"math"
	"time"

	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"

	"github.com/percdb/percdb/executor/tablecodec"
)

// Row estimates of index ranges. A read of an index range pins its
// leading columns to one value each and bounds, at most, the column
// after them (later columns do not narrow what is read): TPC-C's
// Stock-Level reads ORDER-LINE where (ol_w_id, ol_d_id) = (w, d) and
// ol_o_id is in a window of 20 orders. GMS's costing (its histogram
// filters) applies the equalities to the index's tuple histogram and an
// inequality only when it is on the index's first column, so it counted
// every order line of the district, 15-20 times the truth, and chose
// joins by that.
//
// RangeSelectivity estimates such a range as MySQL's range optimizer and
// TiDB's estimator do from per-column statistics, assuming the bounded
// column independent of the pinned prefix: the fraction of rows that
// have the prefix (the index's NDV of that prefix, or the first column's
// histogram when only it is pinned) times the fraction of rows whose
// next column is within the bounds (that column's histogram: the TopN
// values in the range, the buckets inside it, and of a bucket the range
// cuts, the part of its value span the range covers when its bounds are
// numbers, times and durations, else half of it). A range beyond the
// histogram's values, where rows inserted since ANALYZE go (a growing
// key), counts at the histogram's average density over the values it
// covers, at most a bucket's rows and the rows changed since ANALYZE.
// Without changes such a range holds nothing the statistics know of.

// ColumnBound is one end of a range of a column's values.
type ColumnBound struct {
	// Value is the bound's tablecodec key encoding; nil is no bound
	// (a lower bound without a value includes NULL, which sorts first).
	Value []byte
	// Inclusive: Value itself is in the range.
	Inclusive bool
}

// KeyRange is a range of an index's tuples as a read covers it.
type KeyRange struct {
	// Points are the key encodings of the values the leading columns
	// are pinned to (the NULL encoding for IS NULL).
	Points [][]byte
	// Bounded: the column after Points is bounded by Lower and Upper;
	// otherwise the range is every tuple that starts with Points.
	Bounded      bool
	Lower, Upper ColumnBound
}

// nullKey is the key encoding of NULL, the smallest of every value.
var nullKey = []byte{0}

// RangeSelectivity estimates the fraction of t's rows in r, a range of
// index ix, changed being the rows written since the statistics were
// collected; ok is false when the statistics do not cover the columns r
// names.
func (t *Table) RangeSelectivity(ix *Index, r KeyRange, changed uint64) (sel float64, ok bool) {
	k := len(r.Points)
	if t.RowCount == 0 || k > len(ix.ColumnIDs) || (r.Bounded && k == len(ix.ColumnIDs)) {
		return 0, false
	}
	rows := float64(t.RowCount)
	sel = 1
	switch {
	case k == 1:
		c := t.Column(ix.ColumnIDs[0])
		if c == nil {
			return 0, false
		}
		sel = c.equalRows(r.Points[0]) / rows
	case k > 1:
		if k > len(ix.NDV) || ix.NDV[k-1] == 0 {
			return 0, false
		}
		sel = 1 / float64(ix.NDV[k-1])
	}
	if r.Bounded {
		c := t.Column(ix.ColumnIDs[k])
		if c == nil {
			return 0, false
		}
		sel *= c.rangeRows(r.Lower, r.Upper, changed) / rows
	}
	return min(max(sel, 0), 1), true
}

// equalRows estimates the rows whose value is v (the NULL encoding for
// NULL): its TopN count or its bucket's average, else, for a value no
// bucket holds, the average rows per distinct value.
func (c *Column) equalRows(v []byte) float64 {
	if bytes.Equal(v, nullKey) {
		return float64(c.Nulls)
	}
	if n := c.Hist.EqualRows(v); n > 0 {
		return float64(n)
	}
	return float64(c.Hist.Total()) / float64(max(c.NDV, 1))
}

// rangeRows estimates the rows whose value is within [lo, hi] (each
// bound inclusive or not, or absent).
func (c *Column) rangeRows(lo, hi ColumnBound, changed uint64) float64 {
	var n float64
	// NULL sorts first: it is in the range when the lower bound admits
	// it (none, or NULL inclusive) and the upper bound is not below it.
	if (lo.Value == nil || bytes.Equal(lo.Value, nullKey) && lo.Inclusive) &&
		(hi.Value == nil || !bytes.Equal(hi.Value, nullKey) || hi.Inclusive) {
		n += float64(c.Nulls)
	}
	if bytes.Equal(lo.Value, nullKey) {
		lo = ColumnBound{} // no lower bound among the values
	}
	if hi.Value != nil && bytes.Compare(hi.Value, nullKey) <= 0 {
		return n // no value is at most NULL
	}
	return n + c.Hist.rangeRows(lo, hi) + c.Hist.outOfRange(lo, hi, changed)
}

// rangeRows estimates the values of h within [lo, hi], NULL not among
// them.
func (h *Histogram) rangeRows(lo, hi ColumnBound) float64 {
	var n float64
	for _, t := range h.TopN {
		if above(t.Value, lo) && below(t.Value, hi) {
			n += float64(t.Count)
		}
	}
	for _, b := range h.Buckets {
		in := func(v []byte) bool { return above(v, lo) && below(v, hi) }
		switch {
		case in(b.Lower) && in(b.Upper):
			n += float64(b.Count)
		case hi.Value != nil && bytes.Compare(hi.Value, b.Lower) < 0,
			lo.Value != nil && bytes.Compare(lo.Value, b.Upper) > 0:
			// Disjoint.
		default:
			n += float64(b.Count) * overlap(b.Lower, b.Upper, lo, hi)
		}
	}
	return n
}

// outOfRange estimates the values of [lo, hi] beyond the histogram's
// lowest and highest values, which ANALYZE did not see (rows inserted
// since): the histogram's average density over the values the range
// covers there, at most the rows of one bucket per side, and changed, the
// rows written since, in all. A range open above counts a bucket's rows
// beyond the highest value. Only values with a position (numbers, times)
// count.
func (h *Histogram) outOfRange(lo, hi ColumnBound, changed uint64) float64 {
	if len(h.Buckets) == 0 || changed == 0 {
		return 0
	}
	first, last := h.Buckets[0], h.Buckets[len(h.Buckets)-1]
	minV, ok1 := position(first.Lower)
	maxV, ok2 := position(last.Upper)
	if !ok1 || !ok2 || maxV <= minV {
		return 0
	}
	density := float64(h.Total()) / (maxV - minV)
	var n float64
	switch {
	case hi.Value == nil && lo.Value != nil:
		n = float64(last.Count)
	case hi.Value != nil && lo.Value != nil:
		l, okL := position(lo.Value)
		u, okU := position(hi.Value)
		if !okL || !okU {
			return 0
		}
		// Above the highest value.
		if u > maxV {
			n += min(density*(u-max(l, maxV)), float64(last.Count))
		}
		// Below the lowest.
		if l < minV {
			n += min(density*(min(u, minV)-l), float64(first.Count))
		}
	}
	return min(max(n, 0), float64(changed))
}

// above reports whether v is at or above bound lo.
func above(v []byte, lo ColumnBound) bool {
	if lo.Value == nil {
		return true
	}
	c := bytes.Compare(v, lo.Value)
	return c > 0 || c == 0 && lo.Inclusive
}

// below reports whether v is at or below bound hi.
func below(v []byte, hi ColumnBound) bool {
	if hi.Value == nil {
		return true
	}
	c := bytes.Compare(v, hi.Value)
	return c < 0 || c == 0 && hi.Inclusive
}

// overlap is the part of a bucket's values [lower, upper] within [lo,
// hi]: by position where the values have one (integers counted as
// discrete values), else half.
func overlap(lower, upper []byte, lo, hi ColumnBound) float64 {
	l, okL := position(lower)
	u, okU := position(upper)
	if !okL || !okU || u < l {
		return 0.5
	}
	from, to := l, u
	discrete := isDiscrete(lower) && isDiscrete(upper)
	if lo.Value != nil {
		p, ok := position(lo.Value)
		if !ok {
			return 0.5
		}
		if discrete && !lo.Inclusive {
			p++
		}
		from = max(from, p)
	}
	if hi.Value != nil {
		p, ok := position(hi.Value)
		if !ok {
			return 0.5
		}
		if discrete && !hi.Inclusive {
			p--
		}
		to = min(to, p)
	}
	if discrete {
		return max(0, to-from+1) / (u - l + 1)
	}
	if u == l {
		if from <= to {
			return 1
		}
		return 0
	}
	return max(0, to-from) / (u - l)
}

// position returns an encoded value's place on the number line: numbers,
// times (seconds) and durations; ok is false for other values.
func position(b []byte) (float64, bool) {
	_, v, err := tablecodec.DecodeKey(b)
	if err != nil {
		return 0, false
	}
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		return v, !math.IsInf(v, 0)
	case decimal.Decimal:
		f, _ := v.Float64()
		return f, true
	case types.Timespan:
		return float64(v), true
	case time.Time:
		return float64(v.UnixNano()) / 1e9, true
	}
	return 0, false
}

// isDiscrete reports whether an encoded value is an integer.
func isDiscrete(b []byte) bool {
	_, v, err := tablecodec.DecodeKey(b)
	if err != nil {
		return false
	}
	switch v.(type) {
	case int64, uint64:
		return true
	}
	return false
}
