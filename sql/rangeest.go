package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/planrules"
	"github.com/percdb/percdb/sql/statistics"
	"github.com/percdb/percdb/sql/tablemeta"
)

// rangeRows estimates the rows a read of ranges of index im of t returns,
// from the table's statistics (statistics.RangeSelectivity: the pinned
// prefix's share of the rows times the share of the next column's values
// within its bounds); ok is false when t has no statistics for im, which
// then leaves the estimate to GMS. Each range that is not empty counts
// at least one row, and the whole at most the table's rows.
func (p *DatabaseProvider) rangeRows(ctx *gsql.Context, t *Table, im *tablemeta.Index, ranges gsql.MySQLRangeCollection) (float64, bool) {
	if len(ranges) == 0 {
		return 0, false
	}
	krs := make([]statistics.KeyRange, 0, len(ranges))
	for _, r := range ranges {
		kr, empty, ok := statsRange(ctx, im, r)
		if !ok {
			return 0, false
		}
		if !empty {
			krs = append(krs, kr)
		}
	}
	rows, _, ok := p.keyRangeRows(ctx, t.meta, im, krs)
	return rows, ok
}

// keyRangeRows estimates the rows a read of the ranges krs of index im
// of table m returns, as rangeRows does, and the table's rows (those of
// its statistics, with the changes this node counted since); ok is false
// when m has no statistics for im.
func (p *DatabaseProvider) keyRangeRows(ctx *gsql.Context, m *tablemeta.Table, im *tablemeta.Index, krs []statistics.KeyRange) (rows, total float64, ok bool) {
	if im.Prefixed {
		return 0, 0, false
	}
	st := p.stats.Get(ctx, m.Exec.ID)
	if st == nil {
		return 0, 0, false
	}
	var ix *statistics.Index
	if im.IsPrimary {
		ix = st.Index(0, true)
	} else if im.Exec != nil {
		ix = st.Index(im.Exec.ID, false)
	}
	if ix == nil || len(ix.ColumnIDs) != len(im.Ords) {
		return 0, 0, false
	}
	changed, delta := p.modified.Since(st.TableID, st.Version)
	total = float64(max(int64(st.RowCount)+delta, 0))
	for _, kr := range krs {
		sel, ok := st.RangeSelectivity(ix, kr, changed)
		if !ok {
			return 0, 0, false
		}
		n := sel * total
		if len(kr.Points) == len(im.Ords) && im.Unique && !hasNullKey(kr.Points) {
			n = 1
		}
		rows += max(n, 1)
	}
	return min(rows, max(total, 1)), total, true
}

// hasNullKey reports whether a point is NULL, which a unique index holds
// any number of.
func hasNullKey(points [][]byte) bool {
	for _, p := range points {
		if len(p) == 1 && p[0] == 0 {
			return true
		}
	}
	return false
}

// statsRange turns one of GMS's ranges on an index into the statistics'
// form: the encoded values of its leading point columns and the bounds of
// the next one, as keyRangeOf reads it. A bound whose value does not
// convert to the column's type is dropped (the read widens likewise);
// empty reports a range that holds no row.
func statsRange(ctx *gsql.Context, im *tablemeta.Index, r gsql.MySQLRange) (kr statistics.KeyRange, empty, ok bool) {
	encode := func(v any, i int) ([]byte, bool) {
		kv, ok := boundValue(ctx, v, im, i)
		if !ok {
			return nil, false
		}
		b, err := tablecodec.EncodeKey(nil, kv)
		return b, err == nil
	}
	for i, ce := range r {
		if i >= len(im.Ords) {
			break
		}
		if v, isPoint := planrules.PointValue(ctx, ce); isPoint {
			if v == nil && im.IsPrimary {
				return kr, true, true // primary-key columns are never NULL
			}
			if b, ok := encode(v, i); ok {
				kr.Points = append(kr.Points, b)
				continue
			}
		}
		kr.Bounded = true
		switch c := ce.LowerBound.(type) {
		case gsql.AboveAll:
			return kr, true, true
		case gsql.AboveNull:
			kr.Lower = statistics.ColumnBound{Value: []byte{0}}
		case gsql.Below:
			if b, ok := encode(gsql.GetMySQLRangeCutKey(c), i); ok {
				kr.Lower = statistics.ColumnBound{Value: b, Inclusive: true}
			}
		case gsql.Above:
			if b, ok := encode(gsql.GetMySQLRangeCutKey(c), i); ok {
				kr.Lower = statistics.ColumnBound{Value: b}
			}
		}
		switch c := ce.UpperBound.(type) {
		case gsql.BelowNull:
			return kr, true, true
		case gsql.AboveNull:
			kr.Upper = statistics.ColumnBound{Value: []byte{0}, Inclusive: true}
		case gsql.Below:
			if b, ok := encode(gsql.GetMySQLRangeCutKey(c), i); ok {
				kr.Upper = statistics.ColumnBound{Value: b}
			}
		case gsql.Above:
			if b, ok := encode(gsql.GetMySQLRangeCutKey(c), i); ok {
				kr.Upper = statistics.ColumnBound{Value: b, Inclusive: true}
			}
		}
		return kr, false, true
	}
	return kr, false, true
}

// RangeRows implements explain.RangeEstimator: EXPLAIN's rows of a range
// read, rangeRows's estimate.
func (t *Table) RangeRows(ctx *gsql.Context, idx gsql.Index, ranges gsql.MySQLRangeCollection) (uint64, bool) {
	x, ok := idx.(*Index)
	if !ok || t.db == nil || x.table == nil || x.table.meta != t.meta {
		return 0, false
	}
	n, ok := t.db.provider.rangeRows(ctx, t, x.im, ranges)
	return uint64(n + 0.5), ok
}
