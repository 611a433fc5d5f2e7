package sql

import (
	"bytes"
	"sort"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/planrules"
	"github.com/percdb/percdb/sql/tablemeta"
)

// Index is a primary or secondary index as GMS's analyzer sees it. The
// analyzer turns filters into sql.MySQLRangeCollection lookups on it; the
// table turns those into key ranges (keyRanges below).
type Index struct {
	table *Table
	im    *tablemeta.Index
}

var (
	_ gsql.Index        = (*Index)(nil)
	_ gsql.OrderedIndex = (*Index)(nil)
)

// Order implements sql.OrderedIndex: reads through an index return rows in
// ascending key order, which is the order of the index's columns (strings
// by their collation, NULLs first), or descending for a reverse lookup.
func (x *Index) Order() gsql.IndexOrder { return gsql.IndexOrderAsc }

// Reversible implements sql.OrderedIndex.
func (x *Index) Reversible() bool { return true }

// ID implements sql.Index.
func (x *Index) ID() string { return x.im.Def.Name }

// Database implements sql.Index.
func (x *Index) Database() string { return x.table.meta.DBName }

// Table implements sql.Index.
func (x *Index) Table() string { return x.table.meta.Def.Name }

// Expressions implements sql.Index.
func (x *Index) Expressions() []string {
	out := make([]string, len(x.im.Ords))
	for i, ord := range x.im.Ords {
		out[i] = x.table.meta.Def.Name + "." + x.table.meta.Schema.Schema[ord].Name
	}
	return out
}

// IsUnique implements sql.Index.
func (x *Index) IsUnique() bool { return x.im.Unique }

// IsSpatial implements sql.Index.
func (x *Index) IsSpatial() bool { return false }

// IsFullText implements sql.Index.
func (x *Index) IsFullText() bool { return false }

// IsVector implements sql.Index.
func (x *Index) IsVector() bool { return false }

// Comment implements sql.Index.
func (x *Index) Comment() string { return x.im.Def.Comment }

// IndexType implements sql.Index.
func (x *Index) IndexType() string { return "BTREE" }

// IsGenerated implements sql.Index.
func (x *Index) IsGenerated() bool { return false }

// ColumnExpressionTypes implements sql.Index. GMS converts the values
// of a lookup to these types, and fails the statement when one does not
// fit: d = 12345.67 on a DECIMAL(6,2) column failed with "Out of range
// value" through an index and was false by a scan. A DECIMAL column is
// given the widest precision of its scale here; keyRangeOf converts the
// values to the column's own type, and one that does not fit widens the
// range (GMS's filter decides).
func (x *Index) ColumnExpressionTypes() []gsql.ColumnExpressionType {
	exprs := x.Expressions()
	out := make([]gsql.ColumnExpressionType, len(exprs))
	for i, e := range exprs {
		out[i] = gsql.ColumnExpressionType{Expression: e, Type: lookupType(x.im.Types[i])}
	}
	return out
}

// lookupType is the type GMS converts lookup values of a column of type t
// to (see ColumnExpressionTypes).
func lookupType(t gsql.Type) gsql.Type {
	d, ok := t.(gsql.DecimalType)
	if !ok || d.Precision() == types.DecimalTypeMaxPrecision {
		return t
	}
	if wide, err := types.CreateDecimalType(types.DecimalTypeMaxPrecision, d.Scale()); err == nil {
		return wide
	}
	return t
}

// CanSupport implements sql.Index.
func (x *Index) CanSupport(*gsql.Context, ...gsql.Range) bool { return true }

// CanSupportOrderBy implements sql.Index: percdb does not promise index
// order to the analyzer yet, so it always sorts.
func (x *Index) CanSupportOrderBy(gsql.Expression) bool { return false }

// PrefixLengths implements sql.Index: nil for an index of whole columns
// (GMS takes any non-empty answer for a prefix index, which no foreign
// key may use).
func (x *Index) PrefixLengths() []uint16 {
	if !x.im.Prefixed {
		return nil
	}
	out := make([]uint16, len(x.im.Def.Columns))
	for i, c := range x.im.Def.Columns {
		out[i] = uint16(c.Length)
	}
	return out
}

// keyRange is one read of a lookup: a key range to scan, or a single row
// to get, by handle (a primary-key point) or by unique index values (a
// unique secondary-index point).
type keyRange struct {
	executor.KeyRange
	// point: the range is one key, read with a Get rather than a scan.
	point bool
	// handle is the row's handle of a primary-key point.
	handle tablecodec.Handle
	// vals are the index values of a unique secondary-index point.
	vals []any
}

// keyRanges turns the ranges of a lookup into sorted, disjoint reads.
// Bounds are made inclusive and values that do not convert exactly to the
// column's type widen the range, so a read may return rows the lookup does
// not want: percdb tells GMS its lookups are not precise (PreciseMatch),
// so GMS keeps filtering the rows.
func keyRanges(ctx *gsql.Context, m *tablemeta.Table, im *tablemeta.Index, ranges gsql.MySQLRangeCollection) ([]keyRange, error) {
	out := make([]keyRange, 0, len(ranges))
	for _, r := range ranges {
		kr, empty, err := keyRangeOf(ctx, m, im, r)
		if err != nil {
			return nil, err
		}
		if !empty {
			out = append(out, kr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Start, out[j].Start) < 0 })
	// Merge overlapping ranges, so that no row is read twice.
	merged := out[:0]
	for _, kr := range out {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			if last.End == nil || bytes.Compare(kr.Start, last.End) < 0 {
				if last.point && kr.point && bytes.Equal(last.Start, kr.Start) {
					continue
				}
				if last.End != nil && (kr.End == nil || bytes.Compare(kr.End, last.End) > 0) {
					last.End = kr.End
				}
				last.point, last.vals = false, nil
				continue
			}
		}
		merged = append(merged, kr)
	}
	return merged, nil
}

// keyRangeOf turns one range into a read; empty reports a range that cannot
// hold any row. Key ranges cover the longest prefix of point values plus
// the bounds of the next column; later columns only narrow GMS's filter.
func keyRangeOf(ctx *gsql.Context, m *tablemeta.Table, im *tablemeta.Index, r gsql.MySQLRange) (keyRange, bool, error) {
	var points []any
	for i, ce := range r {
		if i >= len(im.Ords) {
			break
		}
		if v, ok := planrules.PointValue(ctx, ce); ok {
			if v == nil && im.IsPrimary {
				return keyRange{}, true, nil // primary-key columns are never NULL
			}
			if kv, ok := boundValue(ctx, v, im, i); ok {
				points = append(points, kv)
				continue
			}
		}
		lo := executor.Bound{Values: points, Inclusive: true}
		switch c := ce.LowerBound.(type) {
		case gsql.AboveAll:
			return keyRange{}, true, nil
		case gsql.AboveNull:
			lo = executor.Bound{Values: appendValue(points, nil), Inclusive: false}
		case gsql.Below, gsql.Above:
			cut, empty := exclusiveIntCut(ctx, c, im, i, true)
			if empty {
				return keyRange{}, true, nil
			}
			if kv, ok := boundValue(ctx, cut, im, i); ok {
				lo.Values = appendValue(points, kv)
			}
		}
		hi := executor.Bound{Values: points, Inclusive: true}
		switch c := ce.UpperBound.(type) {
		case gsql.BelowNull:
			return keyRange{}, true, nil
		case gsql.AboveNull:
			hi.Values = appendValue(points, nil)
		case gsql.Below, gsql.Above:
			cut, empty := exclusiveIntCut(ctx, c, im, i, false)
			if empty {
				return keyRange{}, true, nil
			}
			if kv, ok := boundValue(ctx, cut, im, i); ok {
				hi.Values = appendValue(points, kv)
			}
		}
		return boundsRange(m, im, lo, hi)
	}
	all := executor.Bound{Values: points, Inclusive: true}
	kr, empty, err := boundsRange(m, im, all, all)
	if err != nil || empty || len(points) < len(im.Ords) || !im.Unique || im.Prefixed {
		return kr, empty, err
	}
	// Every column has one value: at most one row.
	if im.IsPrimary {
		_, h, err := tablecodec.DecodeRowKey(kr.Start, m.Exec.HandleKind == executor.HandleCommon)
		if err != nil {
			return keyRange{}, false, err
		}
		kr.point, kr.handle = true, h
		return kr, false, nil
	}
	for _, v := range points {
		if v == nil {
			return kr, false, nil // NULLs do not collide: a scan
		}
	}
	kr.point, kr.vals = true, points
	return kr, false, nil
}

// exclusiveIntCut returns the value a key range bounds column i of index
// im at for cut c, its lower bound when lower is set: c's key, which the
// range reads inclusively (the filter checks it), but for an exclusive
// bound on an integer column (Above a lower end, col > 3; Below an upper
// one, col < 3) the integer next to it (planrules.ExclusiveIntBound: 4,
// 2), which reads exactly the values it admits, so that the entries at
// the key are not read and DropEnforcedFilters drops the comparison.
// empty reports that no value of the column's type lies past the bound.
func exclusiveIntCut(ctx *gsql.Context, c gsql.MySQLRangeCut, im *tablemeta.Index, i int, lower bool) (cut any, empty bool) {
	key := gsql.GetMySQLRangeCutKey(c)
	_, above := c.(gsql.Above)
	if above != lower {
		return key, false // an inclusive bound
	}
	n, empty, ok := planrules.ExclusiveIntBound(ctx, key, im.Types[i], lower)
	switch {
	case !ok:
		return key, false
	case empty:
		return nil, true
	}
	return n, false
}

// boundsRange returns the key range of an index (or of the rows, for the
// primary key) between two bounds.
func boundsRange(m *tablemeta.Table, im *tablemeta.Index, lo, hi executor.Bound) (keyRange, bool, error) {
	if im.IsPrimary && m.Exec.HandleKind == executor.HandleInt {
		// Int handles are whole int64s: a NULL or partial bound is no
		// bound at all.
		lo, hi = intBound(lo), intBound(hi)
	}
	var kr executor.KeyRange
	var err error
	if im.IsPrimary {
		kr, err = m.Exec.HandleRange(lo, hi)
	} else {
		kr, err = m.Exec.IndexRange(im.Exec, lo, hi)
	}
	if err != nil {
		return keyRange{}, false, err
	}
	if kr.End != nil && bytes.Compare(kr.Start, kr.End) >= 0 {
		return keyRange{}, true, nil
	}
	return keyRange{KeyRange: kr}, false, nil
}

// intBound drops a bound an int handle cannot express (NULL).
func intBound(b executor.Bound) executor.Bound {
	if len(b.Values) == 1 && b.Values[0] == nil {
		return executor.Bound{Inclusive: true}
	}
	return b
}

// appendValue returns points with v appended, without sharing points'
// backing array.
func appendValue(points []any, v any) []any {
	return append(append(make([]any, 0, len(points)+1), points...), v)
}

// boundValue converts a range value to the type of column i of the index;
// ok false means it does not convert, and the bound is dropped (widening
// the range).
func boundValue(ctx *gsql.Context, v any, im *tablemeta.Index, i int) (any, bool) {
	if v == nil {
		return nil, true
	}
	c, inRange, err := im.Types[i].Convert(ctx, v)
	if err != nil || !inRange {
		return nil, false
	}
	return c, true
}
