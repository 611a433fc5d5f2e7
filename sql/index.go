package sql

import (
	"bytes"
	"fmt"
	"sort"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/executor/tablecodec"
)

// Index is a primary or secondary index as GMS's analyzer sees it. The
// analyzer turns filters into sql.MySQLRangeCollection lookups on it; the
// table turns those into key ranges (keyRanges below).
type Index struct {
	table *Table
	im    *indexMeta
}

var _ gsql.Index = (*Index)(nil)

// ID implements sql.Index.
func (x *Index) ID() string { return x.im.def.Name }

// Database implements sql.Index.
func (x *Index) Database() string { return x.table.meta.dbName }

// Table implements sql.Index.
func (x *Index) Table() string { return x.table.meta.def.Name }

// Expressions implements sql.Index.
func (x *Index) Expressions() []string {
	out := make([]string, len(x.im.ords))
	for i, ord := range x.im.ords {
		out[i] = x.table.meta.def.Name + "." + x.table.meta.schema.Schema[ord].Name
	}
	return out
}

// IsUnique implements sql.Index.
func (x *Index) IsUnique() bool { return x.im.unique }

// IsSpatial implements sql.Index.
func (x *Index) IsSpatial() bool { return false }

// IsFullText implements sql.Index.
func (x *Index) IsFullText() bool { return false }

// IsVector implements sql.Index.
func (x *Index) IsVector() bool { return false }

// Comment implements sql.Index.
func (x *Index) Comment() string { return x.im.def.Comment }

// IndexType implements sql.Index.
func (x *Index) IndexType() string { return "BTREE" }

// IsGenerated implements sql.Index.
func (x *Index) IsGenerated() bool { return false }

// ColumnExpressionTypes implements sql.Index.
func (x *Index) ColumnExpressionTypes() []gsql.ColumnExpressionType {
	exprs := x.Expressions()
	out := make([]gsql.ColumnExpressionType, len(exprs))
	for i, e := range exprs {
		out[i] = gsql.ColumnExpressionType{Expression: e, Type: x.im.types[i]}
	}
	return out
}

// CanSupport implements sql.Index.
func (x *Index) CanSupport(*gsql.Context, ...gsql.Range) bool { return true }

// CanSupportOrderBy implements sql.Index: percdb does not promise index
// order to the analyzer yet, so it always sorts.
func (x *Index) CanSupportOrderBy(gsql.Expression) bool { return false }

// PrefixLengths implements sql.Index.
func (x *Index) PrefixLengths() []uint16 {
	out := make([]uint16, len(x.im.prefix))
	for i, p := range x.im.prefix {
		out[i] = uint16(p)
	}
	return out
}

// keyRange is a range of keys [start, end) to scan; end nil means no bound.
// point marks a range that is exactly one key (a lookup, not a scan).
type keyRange struct {
	start, end []byte
	point      bool
}

// keyRanges turns the ranges of a lookup into sorted, disjoint key ranges.
// Bounds are made inclusive and values that do not convert exactly to the
// column's type widen the range, so a range may hold keys the lookup does
// not want: percdb tells GMS its lookups are not precise (PreciseMatch),
// so GMS keeps filtering the rows. Exact single-key ranges are marked as
// points, for a Get instead of a scan.
func (m *tableMeta) keyRanges(ctx *gsql.Context, im *indexMeta, ranges gsql.MySQLRangeCollection) ([]keyRange, error) {
	out := make([]keyRange, 0, len(ranges))
	for _, r := range ranges {
		kr, empty, err := m.keyRange(ctx, im, r)
		if err != nil {
			return nil, err
		}
		if !empty {
			out = append(out, kr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].start, out[j].start) < 0 })
	// Merge overlapping ranges, so that no key is read twice.
	merged := out[:0]
	for _, kr := range out {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			if last.end == nil || bytes.Compare(kr.start, last.end) < 0 {
				if last.point && kr.point && bytes.Equal(last.start, kr.start) {
					continue
				}
				if last.end != nil && (kr.end == nil || bytes.Compare(kr.end, last.end) > 0) {
					last.end = kr.end
				}
				last.point = false
				continue
			}
		}
		merged = append(merged, kr)
	}
	return merged, nil
}

// keyRange turns one range into a key range; empty reports a range that
// cannot hold any key.
func (m *tableMeta) keyRange(ctx *gsql.Context, im *indexMeta, r gsql.MySQLRange) (keyRange, bool, error) {
	if im.primary && m.handle == handleInt {
		return m.intHandleRange(ctx, r)
	}
	var prefix []byte
	if im.primary {
		prefix = tablecodec.RecordPrefix(nil, m.def.ID)
	} else {
		prefix = tablecodec.IndexPrefix(nil, m.def.ID, im.def.ID)
	}
	buf := prefix
	allPoints := true
	for i, ce := range r {
		if i >= len(im.ords) {
			break
		}
		if v, ok := pointValue(ctx, ce); ok {
			kv, ok, err := boundValue(ctx, v, im, i)
			if err != nil {
				return keyRange{}, false, err
			}
			if ok {
				if buf, err = tablecodec.EncodeKey(buf, kv); err != nil {
					return keyRange{}, false, err
				}
				continue
			}
			// The value does not convert: scan the whole rest.
		}
		allPoints = false
		start, sok, err := m.lowerKey(ctx, buf, im, i, ce.LowerBound)
		if err != nil || !sok {
			return keyRange{}, !sok, err
		}
		end, eok, err := m.upperKey(ctx, buf, im, i, ce.UpperBound)
		if err != nil || !eok {
			return keyRange{}, !eok, err
		}
		return keyRange{start: start, end: end}, false, nil
	}
	full := len(r) >= len(im.ords)
	if allPoints && full && im.unique && (im.primary || !hasNullPoint(ctx, r)) && noPrefix(im) {
		return keyRange{start: buf, end: tablecodec.PrefixNext(buf), point: true}, false, nil
	}
	start, end := tablecodec.PrefixRange(buf)
	return keyRange{start: start, end: end}, false, nil
}

// lowerKey returns the start key for a lower bound on column i after the
// encoded prefix buf; ok false means the range is empty.
func (m *tableMeta) lowerKey(ctx *gsql.Context, buf []byte, im *indexMeta, i int, cut gsql.MySQLRangeCut) ([]byte, bool, error) {
	switch c := cut.(type) {
	case gsql.BelowNull:
		return buf, true, nil
	case gsql.AboveNull:
		return tablecodec.PrefixNext(appendNull(buf)), true, nil
	case gsql.AboveAll:
		return nil, false, nil
	case gsql.Below, gsql.Above:
		kv, ok, err := boundValue(ctx, gsql.GetMySQLRangeCutKey(c), im, i)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return buf, true, nil
		}
		start, err := tablecodec.EncodeKey(append([]byte(nil), buf...), kv)
		return start, true, err
	}
	return nil, false, fmt.Errorf("unknown range bound %T", cut)
}

// upperKey returns the end key for an upper bound on column i.
func (m *tableMeta) upperKey(ctx *gsql.Context, buf []byte, im *indexMeta, i int, cut gsql.MySQLRangeCut) ([]byte, bool, error) {
	switch c := cut.(type) {
	case gsql.BelowNull:
		return nil, false, nil
	case gsql.AboveNull:
		return tablecodec.PrefixNext(appendNull(buf)), true, nil
	case gsql.AboveAll:
		return tablecodec.PrefixNext(buf), true, nil
	case gsql.Below, gsql.Above:
		kv, ok, err := boundValue(ctx, gsql.GetMySQLRangeCutKey(c), im, i)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return tablecodec.PrefixNext(buf), true, nil
		}
		end, err := tablecodec.EncodeKey(append([]byte(nil), buf...), kv)
		if err != nil {
			return nil, false, err
		}
		return tablecodec.PrefixNext(end), true, nil
	}
	return nil, false, fmt.Errorf("unknown range bound %T", cut)
}

// intHandleRange is keyRange for the primary key of an int-handle table,
// whose row keys hold the handle as 8 bare bytes.
func (m *tableMeta) intHandleRange(ctx *gsql.Context, r gsql.MySQLRange) (keyRange, bool, error) {
	recStart, recEnd := tablecodec.RecordRange(m.def.ID)
	if len(r) == 0 {
		return keyRange{start: recStart, end: recEnd}, false, nil
	}
	ce := r[0]
	if v, ok := pointValue(ctx, ce); ok {
		if v == nil {
			return keyRange{}, true, nil
		}
		if h, ok := intBound(ctx, v); ok {
			key := m.rowKey(tablecodec.IntHandle(h))
			return keyRange{start: key, end: tablecodec.PrefixNext(key), point: true}, false, nil
		}
	}
	start, end := recStart, recEnd
	switch c := ce.LowerBound.(type) {
	case gsql.AboveAll:
		return keyRange{}, true, nil
	case gsql.Below, gsql.Above:
		if h, ok := intBound(ctx, gsql.GetMySQLRangeCutKey(c)); ok {
			start = m.rowKey(tablecodec.IntHandle(h))
		}
	}
	switch c := ce.UpperBound.(type) {
	case gsql.BelowNull, gsql.AboveNull:
		return keyRange{}, true, nil
	case gsql.Below, gsql.Above:
		if h, ok := intBound(ctx, gsql.GetMySQLRangeCutKey(c)); ok {
			end = tablecodec.PrefixNext(m.rowKey(tablecodec.IntHandle(h)))
		}
	}
	return keyRange{start: start, end: end}, false, nil
}

// intBound converts a bound to an int handle, rounding toward the inside
// of nothing in particular: the range is made inclusive and GMS filters.
func intBound(ctx *gsql.Context, v any) (int64, bool) {
	if v == nil {
		return 0, false
	}
	c, inRange, err := types.Int64.Convert(ctx, v)
	if err != nil || !inRange {
		return 0, false
	}
	h, ok := c.(int64)
	return h, ok
}

// pointValue reports whether ce is a single value [v, v].
func pointValue(ctx *gsql.Context, ce gsql.MySQLRangeColumnExpr) (any, bool) {
	switch lo := ce.LowerBound.(type) {
	case gsql.BelowNull:
		if _, ok := ce.UpperBound.(gsql.AboveNull); ok {
			return nil, true
		}
	case gsql.Below:
		if hi, ok := ce.UpperBound.(gsql.Above); ok {
			if cmp, err := ce.Typ.Compare(ctx, lo.Key, hi.Key); err == nil && cmp == 0 {
				return lo.Key, true
			}
		}
	}
	return nil, false
}

// boundValue converts a range value to what column i of the index puts in
// its key; ok false means it does not convert and the bound is dropped.
func boundValue(ctx *gsql.Context, v any, im *indexMeta, i int) (any, bool, error) {
	if v == nil {
		return nil, true, nil
	}
	typ := im.types[i]
	c, inRange, err := typ.Convert(ctx, v)
	if err != nil || !inRange {
		return nil, false, nil
	}
	kv, err := keyValue(c, typ, im.prefix[i])
	if err != nil {
		return nil, false, nil
	}
	return kv, true, nil
}

func appendNull(buf []byte) []byte {
	out, _ := tablecodec.EncodeKey(append([]byte(nil), buf...), nil)
	return out
}

func hasNullPoint(ctx *gsql.Context, r gsql.MySQLRange) bool {
	for _, ce := range r {
		if v, ok := pointValue(ctx, ce); ok && v == nil {
			return true
		}
	}
	return false
}

func noPrefix(im *indexMeta) bool {
	for _, p := range im.prefix {
		if p > 0 {
			return false
		}
	}
	return true
}
