package statistics

import (
	"bytes"
	"sort"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/stats"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/executor/tablecodec"
)

// GMSIndex is one index of a table as ToGMS needs it: GMS's index, and
// the identity and schema positions of its columns.
type GMSIndex struct {
	Index   gsql.Index
	ID      int64
	Primary bool
	Ords    []int
}

// ToGMS returns the statistics of st as GMS's costing reads them
// (sql.StatsProvider): one sql.Statistic per index of idxs, over its
// whole column tuple, its histogram's upper bounds and most common values
// decoded to the columns' types (sch), the TopN values placed in the
// bucket that holds them as GMS keeps them. An index without statistics
// (created after the last ANALYZE) is left out; GMS then costs the table
// by row count alone, as it does without statistics.
func ToGMS(ctx *gsql.Context, st *Table, db, table string, sch gsql.Schema, idxs []GMSIndex) []gsql.Statistic {
	var out []gsql.Statistic
	for _, gi := range idxs {
		ix := st.Index(gi.ID, gi.Primary)
		if ix == nil || len(ix.ColumnIDs) != len(gi.Ords) || len(ix.NDV) == 0 {
			continue
		}
		cols := make([]string, len(gi.Ords))
		typs := make([]gsql.Type, len(gi.Ords))
		for i, o := range gi.Ords {
			cols[i] = strings.ToLower(sch[o].Name)
			typs[i] = sch[o].Type
		}
		buckets, lower := gmsBuckets(ctx, &ix.Hist, typs)
		var nulls uint64
		if c := st.Column(ix.ColumnIDs[0]); c != nil {
			nulls = c.Nulls
		}
		var avg uint64
		for _, id := range ix.ColumnIDs {
			if c := st.Column(id); c != nil {
				avg += c.AvgSize
			}
		}
		qual := gsql.NewStatQualifier(db, "", table, gi.Index.ID())
		var s gsql.Statistic = stats.NewStatistic(st.RowCount, ix.NDV[len(ix.NDV)-1], nulls, avg,
			time.UnixMilli(st.AnalyzedAt), qual, cols, typs, buckets, gsql.IndexClassDefault, lower)
		if fds, colSet, err := stats.IndexFds(strings.ToLower(table), sch, gi.Index); err == nil {
			s = s.WithFuncDeps(fds).WithColSet(colSet)
		}
		out = append(out, s)
	}
	return out
}

// Prefix returns s cut to its first n columns: the distinct count of that
// prefix (ndv) and the histogram's bounds cut to n values, buckets with
// equal bounds merged. GMS asks for an index prefix's statistics when it
// costs a lookup on its leading columns.
func Prefix(s gsql.Statistic, n int, ndv uint64) gsql.Statistic {
	if n >= len(s.Columns()) {
		return s
	}
	var buckets []gsql.HistogramBucket
	for _, b := range s.Histogram() {
		ub := b.UpperBound()[:n]
		if k := len(buckets); k > 0 && equalRows(buckets[k-1].UpperBound(), ub) {
			p := buckets[k-1]
			buckets[k-1] = stats.NewHistogramBucket(p.RowCount()+b.RowCount(), p.DistinctCount(), p.NullCount()+b.NullCount(), b.BoundCount()+p.BoundCount(), ub, append(p.McvCounts(), b.McvCounts()...), append(p.Mcvs(), b.Mcvs()...))
			continue
		}
		buckets = append(buckets, stats.NewHistogramBucket(b.RowCount(), max(b.DistinctCount()*ndv/max(s.DistinctCount(), 1), 1), b.NullCount(), b.BoundCount(), ub, b.McvCounts(), b.Mcvs()))
	}
	var lower gsql.Row
	if lb := s.LowerBound(); len(lb) >= n {
		lower = lb[:n]
	}
	return stats.NewStatistic(s.RowCount(), ndv, s.NullCount(), s.AvgSize(), s.CreatedAt(), s.Qualifier(),
		s.Columns()[:n], s.Types()[:n], buckets, s.IndexClass(), lower)
}

func equalRows(a, b gsql.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gmsBuckets converts h to GMS's buckets, and returns the lowest value.
func gmsBuckets(ctx *gsql.Context, h *Histogram, typs []gsql.Type) ([]gsql.HistogramBucket, gsql.Row) {
	type bucket struct {
		upper           []byte
		count, ndv, rep uint64
		mcvs            []gsql.Row
		mcvCounts       []uint64
	}
	bs := make([]bucket, len(h.Buckets))
	for i, b := range h.Buckets {
		bs[i] = bucket{upper: b.Upper, count: b.Count, ndv: b.NDV, rep: b.Repeats}
	}
	for _, t := range h.TopN {
		row, ok := decodeRow(ctx, t.Value, typs)
		if !ok {
			continue
		}
		i := sort.Search(len(bs), func(i int) bool { return bytes.Compare(bs[i].upper, t.Value) >= 0 })
		if i == len(bs) {
			bs = append(bs, bucket{upper: t.Value})
		}
		b := &bs[i]
		b.count += t.Count
		b.ndv++
		b.mcvs = append(b.mcvs, row)
		b.mcvCounts = append(b.mcvCounts, t.Count)
		if bytes.Equal(b.upper, t.Value) {
			b.rep = t.Count
		}
	}
	out := make([]gsql.HistogramBucket, 0, len(bs))
	for _, b := range bs {
		upper, ok := decodeRow(ctx, b.upper, typs)
		if !ok {
			return nil, nil
		}
		out = append(out, stats.NewHistogramBucket(b.count, b.ndv, 0, b.rep, upper, b.mcvCounts, b.mcvs))
	}
	var lower gsql.Row
	first := []byte(nil)
	if len(h.Buckets) > 0 {
		first = h.Buckets[0].Lower
	}
	if len(h.TopN) > 0 && (first == nil || bytes.Compare(h.TopN[0].Value, first) < 0) {
		first = h.TopN[0].Value
	}
	if first != nil {
		lower, _ = decodeRow(ctx, first, typs)
	}
	return out, lower
}

// decodeRow decodes an encoded tuple to values of typs.
func decodeRow(ctx *gsql.Context, b []byte, typs []gsql.Type) (gsql.Row, bool) {
	vals, err := tablecodec.DecodeKeys(b)
	if err != nil || len(vals) != len(typs) {
		return nil, false
	}
	row := make(gsql.Row, len(vals))
	for i, v := range vals {
		if bs, ok := v.([]byte); ok && types.IsText(typs[i]) {
			v = string(bs)
		}
		if v != nil {
			if cv, _, err := typs[i].Convert(ctx, v); err == nil {
				v = cv
			}
		}
		row[i] = v
	}
	return row, true
}
