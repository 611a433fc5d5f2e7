package fastpath

import (
	"slices"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/tablemeta"
)

// A range SELECT over a secondary index (ScanPlan.Index): the WHERE
// clause bounds the index's first column, and the ranges are the index's
// (its leading columns pinned by =, <=> or IN, integers, or strings
// pinned by =, then one integer column bounded), read in index order,
// each entry's row read by its primary key (copr.RunLookup) and fed to
// the same coprocessor program as a primary-key range's rows.
//
// Which rows GMS returns does not depend on the index it reads; their
// order may. GMS reads the primary key's range or the whole table (rows
// in primary-key order), or this index (entries in the order of the
// index's columns, then of the primary key), and sorts what it read
// stably, or, when the ORDER BY is a prefix of the index's columns,
// reads the index (backwards for DESC) instead of sorting; a LIMIT over a
// sort is a top-N, whose ties come in an order of its heap's making. So
// the fast path runs only what every one of those plans answers alike
// (the other secondary indexes are out of the question: a condition or an
// order on one's first column declines):
//
//   - aggregates, which no order changes (COUNT, SUM and AVG of
//     integers, MIN, MAX);
//   - an ORDER BY without ties: the primary key's columns each ordered
//     or pinned to one integer by =, with or without LIMIT;
//   - an ORDER BY, without LIMIT, of the index's columns after those
//     pinned to one value, all ascending: the index's order is then that
//     order, ties in primary-key order, which is what a stable sort of
//     the primary key's order gives (TPC-C's customers by last name,
//     ORDER BY c_first);
//   - no ORDER BY when every column of the index is pinned to one value:
//     the entries then come in primary-key order.
//
// DISTINCT keeps the first of rows its comparison deems equal, which
// may differ in their bytes: declined. The index is read only where its
// range is longer than the primary key's (more columns bounded): GMS's
// choice too, and what a lookup per row is worth.

// textPoint reports whether c pins a string column of type typ to one
// value by =, which a range of its collation key enforces.
func textPoint(c *Cond, typ gsql.Type) bool {
	return types.IsTextOnly(typ) && c.Op == CondCmp && c.Cmp == CmpEQ
}

// indexScanOK reports whether the plan p over a secondary index answers
// sc as GMS does whatever it reads (above). ranged is the last column of
// the index its ranges bound.
func indexScanOK(def *catalog.TableDef, m *tablemeta.Table, sc *ScanShape, p *ScanPlan, ranged int) bool {
	sch := m.Schema.Schema
	ordOf := func(name string) int {
		_, ord, ok := def.ColumnByName(name)
		if !ok {
			return -1
		}
		return ord
	}
	// pinned: columns a top-level = (or <=>) pins to one value, integers
	// anywhere, strings where the index's range enforces it.
	pinned := make(map[int]bool)
	for i := range sc.Where {
		c := &sc.Where[i]
		if c.Op != CondCmp || c.Cmp != CmpEQ && c.Cmp != CmpNullEQ || c.Ops[0].IsCol() == c.Ops[1].IsCol() {
			continue
		}
		col := c.Ops[0].Col
		if col == "" {
			col = c.Ops[1].Col
		}
		ord := ordOf(col)
		if ord < 0 {
			return false
		}
		if IntKindOf(sch[ord].Type) != NotInt || p.KeyTerm[i] {
			pinned[ord] = true
		}
	}
	// The index's range must be longer than the primary key's.
	if ranged+1 <= primaryPrefix(sc, ordOf, p.PrimaryOrds) {
		return false
	}
	if sc.Aggregates() {
		return true
	}
	if sc.Distinct {
		return false
	}
	ixOrds := p.Index.Ords
	// lead: the index's leading columns pinned to one value.
	lead := 0
	for lead < len(ixOrds) && lead <= ranged && pinned[ixOrds[lead]] {
		lead++
	}
	if len(sc.Order) == 0 {
		return lead == len(ixOrds)
	}
	ordered := make(map[int]bool)
	var rest []int // the ORDER BY's columns not pinned
	asc := true
	for _, o := range sc.Order {
		ord := ordOf(o.Col)
		if ord < 0 {
			return false
		}
		ordered[ord] = true
		asc = asc && !o.Desc
		if !pinned[ord] {
			rest = append(rest, ord)
		}
	}
	total := true
	for _, ord := range p.PrimaryOrds {
		total = total && (ordered[ord] || pinned[ord])
	}
	if total {
		return true
	}
	return sc.Limit == nil && asc && slices.Equal(rest, ixOrds[lead:])
}

// primaryPrefix returns how many of the primary key's leading columns the
// conditions bound: those pinned (=, <=>, IN), and the one after them if
// a condition bounds it.
func primaryPrefix(sc *ScanShape, ordOf func(string) int, pkOrds []int) int {
	keyCol := func(name string) int {
		return slices.Index(pkOrds, ordOf(name))
	}
	pinned := make([]bool, len(pkOrds))
	bounded := make([]bool, len(pkOrds))
	for i := range sc.Where {
		c := &sc.Where[i]
		if k := keyTerm(c, keyCol); k >= 0 {
			bounded[k] = true
			pinned[k] = pinned[k] || pinsKey(c)
		}
	}
	n := 0
	for n < len(pkOrds) && pinned[n] {
		n++
	}
	if n < len(pkOrds) && bounded[n] {
		n++
	}
	return n
}
