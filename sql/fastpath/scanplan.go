package fastpath

import (
	"slices"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/tablemeta"
)

// A range SELECT resolved against a table (ScanPlan): which rows it
// reads (ranges of the primary key, of integer columns, bounded by the
// WHERE clause's conditions on the key), what the coprocessor evaluates over
// them (the other conditions, or the aggregates), and what the SQL node
// does with the rows it gets back (sort, DISTINCT, OFFSET and LIMIT).
//
// The fast path answers as GMS does only where GMS's plan is known: GMS
// reads the primary key's range (it would read another index only for
// a condition or an order on that index's first column, which the fast
// path leaves to GMS), in key order, and sorts what it read stably, so
// that rows that tie in the ORDER BY keep their key order. GMS's top-N
// (ORDER BY with LIMIT) keeps tied rows in an order of its heap's
// making: the fast path runs ORDER BY ... LIMIT only when the order has
// no ties (its keys include every column of the primary key, or a
// DISTINCT's rows are ordered by all their columns). The conditions
// compare integer columns with integer values (or with each other),
// which GMS and the coprocessor evaluate alike; a condition naming a
// string, DECIMAL or temporal column (LocalType) is the SQL node's, which
// evaluates it with GMS's own expressions over the kept columns.
//
// A composite primary key (k1, k2, ...) is read as MySQL's range
// optimizer reads it: the key's leading columns pinned by equalities (=,
// <=>, IN: their points), then one column bounded by a range (or pinned
// too), make key ranges in key order (the points' product); a condition
// on a column past that one is not the range's, so the coprocessor
// evaluates it. Which conditions the ranges enforce depends only on the
// operators, never on the values: it is decided here, once per plan.

// ScanPlan is the resolution of a range SELECT's shape (Plan.Scan).
type ScanPlan struct {
	// Index is the secondary index whose entries are read, nil when the
	// primary key's range is (scanindex.go).
	Index *tablemeta.Index
	// KeyOrds are the schema positions of the columns of the key read
	// (the primary key's, or Index's), in key order (one for an integer
	// key); PrimaryOrds those of the primary key.
	KeyOrds     []int
	PrimaryOrds []int
	// Reads are the schema positions of the columns the coprocessor
	// reads, by program column. The first Kept of them are output, in
	// that order, and make the rows the SQL node gets.
	Reads []int
	Kept  int
	// Where is the WHERE clause's conditions with their columns
	// resolved, in the shape's order; KeyTerm says which of them bound
	// the primary key (a comparison, BETWEEN or IN of the key and
	// values), which the range enforces, and KeyCol which column of the
	// key (an index into KeyOrds) each of those bounds.
	Where   []PlanCond
	KeyTerm []bool
	KeyCol  []int
	// Local marks the conditions on columns the coprocessor does not
	// compare (strings, DECIMALs, dates and times): the SQL node
	// evaluates them over the kept columns with GMS's own expressions.
	Local []bool
	// Out are the result's columns, Order the ORDER BY's keys.
	Out   []PlanOut
	Order []PlanOrder
	// LocalAgg is set when the SQL node aggregates the kept columns of
	// the rows (COUNT and SUM only): a SUM of DECIMALs, which the
	// coprocessor does not add, or conditions the SQL node evaluates.
	LocalAgg bool
	// LockCols are the program columns of the primary key's columns
	// (PrimaryOrds), kept for SELECT ... FOR UPDATE, whose rows are
	// locked by the handles they make; nil when the statement locks
	// nothing. A plan has them only when every condition bounds the key
	// and the rows come in key order with no sort, or are sorted with
	// no LIMIT, so that the rows read are the rows returned (and those
	// OFFSET skips), which are the rows GMS's scan reads and locks one
	// by one.
	LockCols []int
	// ReverseTies is set when the ORDER BY is the key's leading columns,
	// each DESC: GMS then reads the key backwards instead of sorting
	// (its sort elimination), so that rows that tie come in reverse key
	// order.
	ReverseTies bool
	// Reverse is set when the rows come in the ORDER BY's order from the
	// key's ranges read backwards (the ORDER BY is the key's order, each
	// column DESC) under a LIMIT: the read sorts nothing and stops at
	// the limit (copr.RunReverse, copr.RunLookupReverse), as GMS's path
	// reads the key backwards (planrules.OrderByIndex). Order is then
	// empty.
	Reverse bool
	// Whole is set when no condition bounds the key: its ranges are the
	// whole table or index, read from one end under a LIMIT, which GMS
	// reports as a read without an index (SERVER_QUERY_NO_INDEX_USED).
	Whole bool
	// Ends is set when each aggregate is a MIN or MAX of the key column
	// after those the conditions pin to one value, and every condition
	// bounds the key (endOfKey): each is the first (MIN) or last (MAX)
	// non-NULL entry of the ranges, read from that end and stopped at
	// one row, as GMS's path reads it (planrules.MinMaxByIndex), where
	// the coprocessor aggregated every row of the range.
	Ends bool
	// Grouped is set for a GROUP BY (ScanShape.GroupBy): the program
	// groups the rows by program column GroupCol, an integer column,
	// keeping its value (an Out of AggNone is it), and the SQL node
	// sorts the groups by it, descending when GroupDesc (ORDER BY g
	// DESC), before OFFSET and LIMIT. Without an ORDER BY the groups
	// come as GMS's path meets them, in the order of the key it reads,
	// which the plan allows only where that is the group column's
	// ascending order (groupKeyOrder).
	Grouped   bool
	GroupCol  int
	GroupDesc bool
}

// PlanCond is a condition of the shape with its columns resolved: Cols
// holds, by operand, the program column of a column operand (-1 for a
// value); Args are the resolved conditions of AND, OR and NOT.
type PlanCond struct {
	Cols []int
	Args []PlanCond
}

// PlanOut is one result column: the kept column Col, or the aggregate
// Agg of program column Col (-1 for COUNT(*)).
type PlanOut struct {
	Agg AggFunc
	Col int
}

// PlanOrder is one ORDER BY key: kept column Col.
type PlanOrder struct {
	Col  int
	Desc bool
}

// IntKind is how a column's integers compare.
type IntKind uint8

// The integer kinds: Signed and Unsigned columns whose values are exact
// as doubles (at most 32 bits), and those of 64 bits, where a comparison
// of mixed signedness, which GMS makes in DOUBLE, may round.
const (
	NotInt IntKind = iota
	Signed
	Unsigned
	Signed64
	Unsigned64
)

// IntKindOf classifies typ.
func IntKindOf(typ gsql.Type) IntKind {
	if !types.IsInteger(typ) {
		return NotInt
	}
	wide := typ.Type() == sqltypes.Int64 || typ.Type() == sqltypes.Uint64
	switch {
	case types.IsUnsigned(typ) && wide:
		return Unsigned64
	case types.IsUnsigned(typ):
		return Unsigned
	case wide:
		return Signed64
	}
	return Signed
}

// AggType gives the result type of SUM (avg false) or AVG of a column of
// type arg: MySQL's, which package sql knows (exact DECIMALs).
type AggType func(avg bool, arg gsql.Type) (gsql.Type, bool)

// resolveScan resolves a range SELECT on table m: over its primary key,
// or else over one of its secondary indexes (scanindex.go). ok is false
// when the fast path does not run it on this table (ReasonTable).
func resolveScan(def *catalog.TableDef, m *tablemeta.Table, sc *ScanShape, aggType AggType) (*ScanPlan, gsql.Schema, bool) {
	if p, out, ok := resolveScanOn(def, m, sc, aggType, nil); ok {
		return p, out, true
	}
	for _, ix := range m.Indexes {
		if p, out, ok := resolveScanOn(def, m, sc, aggType, ix); ok {
			return p, out, true
		}
	}
	return nil, nil, false
}

// resolveScanOn resolves a range SELECT on table m read over its primary
// key (ix nil) or over the secondary index ix.
func resolveScanOn(def *catalog.TableDef, m *tablemeta.Table, sc *ScanShape, aggType AggType, ix *tablemeta.Index) (*ScanPlan, gsql.Schema, bool) {
	sch := m.Schema.Schema
	if m.Primary == nil || def.Temporary || sch.HasVirtualColumns() || m.Primary.Prefixed {
		return nil, nil, false
	}
	if ix != nil && (ix.Prefixed || ix.Exec == nil) {
		return nil, nil, false
	}
	switch m.Exec.HandleKind {
	case executor.HandleInt:
		if len(m.Primary.Ords) != 1 {
			return nil, nil, false
		}
	case executor.HandleCommon:
		// A clustered key of integer columns: its values bound the
		// range as integers.
		for _, ord := range m.Primary.Ords {
			if IntKindOf(sch[ord].Type) == NotInt {
				return nil, nil, false
			}
		}
	default:
		return nil, nil, false
	}
	p := &ScanPlan{KeyOrds: m.Primary.Ords, PrimaryOrds: m.Primary.Ords}
	if ix != nil {
		p.Index, p.KeyOrds = ix, ix.Ords
	}
	keyCol := make(map[int]int, len(p.KeyOrds)) // schema position -> key column
	for i, ord := range p.KeyOrds {
		keyCol[ord] = i
	}
	// indexed are the first columns of the secondary indexes (but the
	// one read): a condition or an order on one may make GMS read that
	// index, in its order.
	indexed := make(map[int]bool, len(m.Indexes))
	for _, im := range m.Indexes {
		if im != ix {
			indexed[im.Ords[0]] = true
		}
	}
	if ix != nil && indexed[ix.Ords[0]] {
		return nil, nil, false
	}
	ordOf := func(name string) (int, bool) {
		_, ord, ok := def.ColumnByName(name)
		return ord, ok
	}
	read := make(map[int]int) // schema position -> program column
	addRead := func(ord int) int {
		if c, ok := read[ord]; ok {
			return c
		}
		read[ord] = len(p.Reads)
		p.Reads = append(p.Reads, ord)
		return read[ord]
	}
	var out gsql.Schema
	// orderedKeys are the key columns the ORDER BY names; total is set
	// when the ORDER BY leaves no two rows tied.
	orderedKeys := make(map[int]bool)
	total := false
	// The kept columns first: the result's, then the ORDER BY's (and the
	// primary key's, for FOR UPDATE).
	if sc.Fields == nil {
		for ord := range sch {
			p.Out = append(p.Out, PlanOut{Col: addRead(ord)})
			out = append(out, sch[ord])
		}
	}
	if !sc.Aggregates() {
		for _, f := range sc.Fields {
			ord, ok := ordOf(f.Col)
			if !ok {
				return nil, nil, false
			}
			p.Out = append(p.Out, PlanOut{Col: addRead(ord)})
			out = append(out, sch[ord])
		}
		for _, o := range sc.Order {
			ord, ok := ordOf(o.Col)
			if !ok || indexed[ord] {
				return nil, nil, false
			}
			_, isOut := read[ord]
			if sc.Distinct && !isOut {
				// MySQL refuses it (3065); GMS's answer is its own.
				return nil, nil, false
			}
			if _, isKey := keyCol[ord]; isKey {
				orderedKeys[ord] = true
			}
			p.Order = append(p.Order, PlanOrder{Col: addRead(ord), Desc: o.Desc})
		}
		// Ordered by every column of the key, no two rows tie.
		total = len(orderedKeys) == len(p.KeyOrds)
		p.ReverseTies = len(sc.Order) > 0 && len(sc.Order) <= len(p.KeyOrds)
		for i, o := range sc.Order {
			ord, _ := ordOf(o.Col)
			p.ReverseTies = p.ReverseTies && o.Desc && ord == p.KeyOrds[i]
		}
		if sc.Distinct && len(sc.Order) > 0 {
			// DISTINCT rows differ in some column: ordered by all of
			// them, none tie.
			covered := make(map[int]bool)
			for _, o := range p.Order {
				covered[o.Col] = true
			}
			total = total || len(covered) == len(p.Out)
		}
		if ix != nil {
			p.ReverseTies = false
		}
		if sc.ForUpdate {
			if ix != nil || sc.Distinct {
				return nil, nil, false
			}
			for _, ord := range p.PrimaryOrds {
				p.LockCols = append(p.LockCols, addRead(ord))
			}
		}
	} else if sc.ForUpdate {
		return nil, nil, false
	}
	var groupOrd int
	if sc.GroupBy != "" {
		// An integer column that leads no other index (GMS could read
		// that one, in its order); grouped by its value, which the
		// coprocessor keys its groups by.
		var ok bool
		groupOrd, ok = ordOf(sc.GroupBy)
		if !ok || indexed[groupOrd] || IntKindOf(sch[groupOrd].Type) == NotInt {
			return nil, nil, false
		}
		p.Grouped, p.GroupCol = true, addRead(groupOrd)
		for _, o := range sc.Order {
			p.GroupDesc = o.Desc
		}
	}
	// The conditions the SQL node evaluates read kept columns.
	local := make([]PlanCond, len(sc.Where))
	p.Local = make([]bool, len(sc.Where))
	for i := range sc.Where {
		isLocal, ok := localTerm(&sc.Where[i], func(name string) gsql.Type {
			ord, ok := ordOf(name)
			if !ok || indexed[ord] {
				return nil
			}
			return sch[ord].Type
		})
		if !ok {
			return nil, nil, false
		}
		if !isLocal {
			continue
		}
		if sc.Aggregates() {
			// The coprocessor aggregates what it filters: the SQL
			// node aggregates what its conditions keep.
			p.LocalAgg = true
		}
		pc, ok := resolveCond(&sc.Where[i], func(name string) (int, bool) {
			ord, _ := ordOf(name)
			return addRead(ord), true
		}, 0)
		if !ok {
			return nil, nil, false
		}
		local[i], p.Local[i] = pc, true
	}
	p.Kept = len(p.Reads)
	if sc.Aggregates() {
		for _, f := range sc.Fields {
			if f.Agg == AggNone {
				// The GROUP BY's column (the shape allows no other).
				p.Out = append(p.Out, PlanOut{Col: p.GroupCol})
				out = append(out, sch[groupOrd])
				continue
			}
			if f.Agg == AggCountStar {
				p.Out = append(p.Out, PlanOut{Agg: f.Agg, Col: -1})
				out = append(out, &gsql.Column{Name: f.Text, Type: types.Int64})
				continue
			}
			ord, ok := ordOf(f.Col)
			if !ok {
				return nil, nil, false
			}
			typ := sch[ord].Type
			switch f.Agg {
			case AggCount:
				typ = types.Int64
			case AggSum, AggAvg:
				if IntKindOf(typ) == NotInt {
					if f.Agg != AggSum || !types.IsDecimal(typ) {
						return nil, nil, false
					}
					// The coprocessor sums integers only.
					p.LocalAgg = true
				}
				if typ, ok = aggType(f.Agg == AggAvg, typ); !ok {
					return nil, nil, false
				}
			case AggMin, AggMax:
				if IntKindOf(typ) == NotInt {
					return nil, nil, false
				}
			}
			p.Out = append(p.Out, PlanOut{Agg: f.Agg, Col: addRead(ord)})
			out = append(out, &gsql.Column{Name: f.Text, Type: typ, Nullable: true})
		}
		if p.LocalAgg && p.Grouped {
			// The SQL node does not group.
			return nil, nil, false
		}
		if p.LocalAgg {
			// The rows keep the aggregates' columns; the SQL node
			// computes COUNT and SUM (LocalAggregates, scanagg.go),
			// not the others.
			for _, o := range p.Out {
				if o.Agg != AggCountStar && o.Agg != AggCount && o.Agg != AggSum {
					return nil, nil, false
				}
			}
			p.Kept = len(p.Reads)
		}
	}
	// The conditions: on integer columns that no secondary index leads.
	// Which key column each bounds, and which of those the ranges pin.
	termCol := make([]int, len(sc.Where))
	pinned := make([]bool, len(p.KeyOrds))
	for i := range sc.Where {
		c := &sc.Where[i]
		termCol[i] = keyTerm(c, func(name string) int {
			ord, ok := ordOf(name)
			if !ok {
				return -1
			}
			if k, isKey := keyCol[ord]; isKey {
				return k
			}
			return -1
		})
		if k := termCol[i]; k >= 0 && IntKindOf(sch[p.KeyOrds[k]].Type) == NotInt && !textPoint(c, sch[p.KeyOrds[k]].Type) {
			// Of a secondary index's columns that are not integers,
			// only a string pinned by = bounds the range (its
			// collation key is one point).
			termCol[i] = -1
		}
		if termCol[i] >= 0 && pinsKey(c) {
			pinned[termCol[i]] = true
		}
	}
	// The ranges enforce the conditions on the pinned leading columns
	// and on the one after them.
	ranged := 0
	for ranged < len(pinned)-1 && pinned[ranged] {
		ranged++
	}
	hasKey := false
	for i := range sc.Where {
		c := &sc.Where[i]
		if p.Local[i] {
			// A string of a secondary index pinned by =: the range
			// narrows the rows to its collation key, and the SQL
			// node evaluates the condition as GMS does over them.
			isKey := termCol[i] >= 0 && termCol[i] <= ranged
			if !isKey {
				termCol[i] = -1
			}
			hasKey = hasKey || isKey && termCol[i] == 0
			p.Where = append(p.Where, local[i])
			p.KeyTerm = append(p.KeyTerm, isKey)
			p.KeyCol = append(p.KeyCol, termCol[i])
			continue
		}
		isKey := termCol[i] >= 0 && termCol[i] <= ranged
		if !isKey {
			termCol[i] = -1
		}
		pc, ok := resolveCond(c, func(name string) (int, bool) {
			ord, ok := ordOf(name)
			if !ok || indexed[ord] || IntKindOf(sch[ord].Type) == NotInt {
				return 0, false
			}
			if isKey {
				// The range enforces it: nothing to read.
				return -1, true
			}
			return addRead(ord), true
		}, 0)
		if !ok {
			return nil, nil, false
		}
		// The first column of the key must be bounded: a range of the
		// others alone is no range of the key.
		hasKey = hasKey || isKey && termCol[i] == 0
		p.Where = append(p.Where, pc)
		p.KeyTerm = append(p.KeyTerm, isKey)
		p.KeyCol = append(p.KeyCol, termCol[i])
	}
	none := make([]bool, len(p.KeyOrds)) // no column pinned
	ends := !hasKey && endOfKey(sc, p, none, ordOf)
	if !hasKey && !ends && (len(sc.Where) > 0 || sc.Limit == nil || sc.Distinct || !keyOrder(p, sc, ordOf, none, false) && !keyOrder(p, sc, ordOf, none, true)) {
		// No range: a scan of the whole table is GMS's (in parallel),
		// but, without a WHERE, for the first or last rows of the
		// key's order under a LIMIT, a read of the key from one end
		// that stops at the limit (ORDER BY k DESC, w DESC, id DESC
		// LIMIT 10 over an index on k), and MIN and MAX of the key's
		// first column. Conditions that bound no key leave the read
		// to GMS, which may stop anywhere in the key.
		return nil, nil, false
	}
	p.Whole = !hasKey
	// A key column that a condition pins to one value (=, <=>, which the
	// range enforces exactly on integers) is the same in every row: an
	// ORDER BY need not name it to leave no ties.
	single := make([]bool, len(p.KeyOrds))
	for i := range sc.Where {
		c := &sc.Where[i]
		if p.KeyTerm[i] && c.Op == CondCmp && (c.Cmp == CmpEQ || c.Cmp == CmpNullEQ) && IntKindOf(sch[p.KeyOrds[p.KeyCol[i]]].Type) != NotInt {
			single[p.KeyCol[i]] = true
		}
	}
	p.Ends = ends || endOfKey(sc, p, single, ordOf)
	if p.Grouped {
		// The groups of the key's ranges, sorted by the SQL node:
		// nothing of the order and LIMIT handling below applies.
		if !hasKey || len(sc.Order) == 0 && !groupKeyOrder(p, sc, ordOf, single) {
			return nil, nil, false
		}
		if len(sc.Order) == 0 && ix != nil && orBoundsKey(sc, p) {
			// GMS may read such a WHERE (k < 2 OR k > 5 AND id
			// BETWEEN ...) by a whole scan, its groups then in
			// primary-key order.
			return nil, nil, false
		}
		if ix != nil && !indexScanOK(def, m, sc, p, ranged) {
			return nil, nil, false
		}
		return p, out, true
	}
	if !total && len(sc.Order) > 0 {
		total = true
		for k, ord := range p.KeyOrds {
			total = total && (orderedKeys[ord] || single[k])
		}
	}
	if ix == nil && sc.Limit != nil && len(sc.Order) > 0 && !total {
		return nil, nil, false
	}
	if sc.Limit != nil && keyOrder(p, sc, ordOf, single, true) {
		// The key's order backwards, under a LIMIT: the ranges are
		// read backwards and the read stops at the limit, as GMS's
		// path reads them (planrules.OrderByIndex), where a forward
		// read would read and sort the whole range (WHERE w = 3 ORDER
		// BY id DESC LIMIT 10 read the 10,000 rows of w = 3). The
		// order leaves no ties (total, checked above for the primary
		// key, by indexScanOK for an index), so the rows are GMS's
		// whichever plan it makes. DISTINCT keeps the first of rows
		// it deems equal: which comes first is GMS's to say.
		if sc.Distinct {
			return nil, nil, false
		}
		p.Order, p.ReverseTies, p.Reverse = nil, false, true
	} else if inKeyOrder(p, sc, ordOf, single) {
		// The rows come in the ORDER BY's order from the key's range:
		// no sort, and a LIMIT stops the read.
		p.Order, p.ReverseTies = nil, false
	}
	if p.LockCols != nil && (len(p.Order) > 0 && (sc.Limit != nil || p.ReverseTies) || p.Reverse || !readsReturned(sc, p, keyCol, ordOf)) {
		// The rows GMS reads (and locks) would not be only those the
		// statement returns. A sort without a LIMIT returns every row
		// read, which the SQL node locks in key order before it sorts
		// them, as GMS's scan locks each row it reads before its Sort
		// sees any (TPC-C New-Order's (s_w_id, s_i_id) IN (...) ORDER
		// BY s_i_id FOR UPDATE). Under a LIMIT, GMS's path may read
		// fewer rows than the range holds (planrules.OrderByIndex
		// drops the sort where the values pin a column), and a sort
		// that GMS makes by reading the key backwards (ReverseTies)
		// locks in the other order, as a backward read (Reverse)
		// does: those stay GMS's.
		return nil, nil, false
	}
	if ix != nil && !indexScanOK(def, m, sc, p, ranged) {
		return nil, nil, false
	}
	return p, out, true
}

// inKeyOrder reports whether the ORDER BY of sc, over the primary key's
// range of plan p, is the key's own ascending order: each item names
// the next key column not pinned to a single value, or a pinned one
// (constant over the rows). Rows of one range in key order are then in
// the ORDER BY's order, and ties (an ORDER BY that stops before the
// key's last column) in key order, as GMS's stable sort and its sort
// elimination both leave them. Several ranges (an IN on a key column)
// come in key order too, as long as the IN's column is ordered before
// the columns after it, which the walk requires.
//
// A secondary index's entries come in the order of its columns, then of
// the primary key's (an entry ends with the row's handle, which sorts as
// the primary key does: executor/tablecodec), so over an index the key is
// the index's columns followed by the primary key's columns it does not
// have: WHERE k > ? ORDER BY k, id LIMIT 10 reads ten entries, where it
// read and sorted the whole range.
func inKeyOrder(p *ScanPlan, sc *ScanShape, ordOf func(string) (int, bool), single []bool) bool {
	return keyOrder(p, sc, ordOf, single, false)
}

// keyOrder is inKeyOrder for an ORDER BY whose keys are all ascending
// (desc false) or all descending (desc true: the key read backwards).
func keyOrder(p *ScanPlan, sc *ScanShape, ordOf func(string) (int, bool), single []bool, desc bool) bool {
	if len(sc.Order) == 0 {
		return false
	}
	keyOrds := p.KeyOrds
	if p.Index != nil {
		keyOrds = slices.Clone(keyOrds)
		for _, ord := range p.PrimaryOrds {
			if !slices.Contains(keyOrds, ord) {
				keyOrds = append(keyOrds, ord)
			}
		}
		// The primary key's columns past the index's count as not
		// pinned: a condition on one is not the index range's.
		single = append(slices.Clone(single), make([]bool, len(keyOrds)-len(single))...)
	}
	next := 0
	for _, o := range sc.Order {
		ord, ok := ordOf(o.Col)
		if !ok || o.Desc != desc {
			return false
		}
		k := slices.Index(keyOrds, ord)
		if k >= 0 && single[k] {
			continue
		}
		for next < len(keyOrds) && single[next] {
			next++
		}
		if next == len(keyOrds) || keyOrds[next] != ord {
			return false
		}
		next++
	}
	return true
}

// orBoundsKey reports whether one of the conditions that bound plan p's
// key is an OR.
func orBoundsKey(sc *ScanShape, p *ScanPlan) bool {
	for i := range sc.Where {
		if p.KeyTerm[i] && sc.Where[i].Op == CondOr {
			return true
		}
	}
	return false
}

// groupKeyOrder reports whether the rows of plan p's ranges come in the
// ascending order of sc's GROUP BY column, so that the groups of a GROUP
// BY without ORDER BY come in that order from GMS's path, which outputs
// them as it first meets them reading the same key: the column is the
// key's next one after those its conditions pin to one value (or one
// of those).
func groupKeyOrder(p *ScanPlan, sc *ScanShape, ordOf func(string) (int, bool), single []bool) bool {
	return keyOrder(p, &ScanShape{Order: []OrderKey{{Col: sc.GroupBy}}}, ordOf, single, false)
}

// keyTerm returns the key column c bounds by values (keyCol names them,
// -1 for a column not of the key), or -1: key op value, value op key,
// key BETWEEN values, key IN (values), and ORs (and ANDs under them) of
// those on one key column (k < 100 OR k > 99900), whose ranges are the
// union of their branches' (MySQL's range optimizer reads them so; GMS's
// range builder too).
func keyTerm(c *Cond, keyCol func(string) int) int {
	switch c.Op {
	case CondOr:
		return orKeyTerm(c, keyCol)
	case CondCmp:
		if c.Cmp == CmpNE {
			return -1
		}
		l, r := &c.Ops[0], &c.Ops[1]
		switch {
		case l.IsCol() && !r.IsCol():
			return keyCol(l.Col)
		case r.IsCol() && !l.IsCol():
			return keyCol(r.Col)
		}
	case CondBetween:
		if !c.Not && !c.Ops[1].IsCol() && !c.Ops[2].IsCol() {
			return keyCol(c.Ops[0].Col)
		}
	case CondIn:
		if !c.Not {
			return keyCol(c.Ops[0].Col)
		}
	}
	return -1
}

// orKeyTerm is keyTerm of an OR: the key column every branch bounds, a
// branch an OR or AND of such terms itself, or -1.
func orKeyTerm(c *Cond, keyCol func(string) int) int {
	col := -1
	for i := range c.Args {
		a := &c.Args[i]
		k := -1
		switch a.Op {
		case CondOr, CondAnd:
			k = orKeyTerm(a, keyCol)
		default:
			k = keyTerm(a, keyCol)
		}
		if k < 0 || col >= 0 && k != col {
			return -1
		}
		col = k
	}
	return col
}

// LocalType reports whether the SQL node compares values of a column of
// type typ with GMS's expressions (strings of a character set, DECIMALs,
// DATE, DATETIME and TIMESTAMP): values whose comparison GMS makes
// without a conversion that could warn, which the binder checks.
func LocalType(typ gsql.Type) bool {
	return types.IsTextOnly(typ) || types.IsDecimal(typ) || types.IsDateType(typ) ||
		types.IsDatetimeType(typ) || types.IsTimestampType(typ)
}

// localTerm reports whether c is a condition for the SQL node (it names
// a column of a LocalType); ok is false when neither the coprocessor nor
// the SQL node evaluates it: a column typeOf does not give (unknown, or
// leading a secondary index), of another type, or a comparison of two
// columns one of which is not an integer (their collations or
// conversions are GMS's to settle).
func localTerm(c *Cond, typeOf func(string) gsql.Type) (local, ok bool) {
	local, ok = false, true
	var walk func(c *Cond, depth int)
	walk = func(c *Cond, depth int) {
		if depth > maxCondDepth {
			ok = false
			return
		}
		cols := 0
		nonInt := false
		for i := range c.Ops {
			if !c.Ops[i].IsCol() {
				continue
			}
			cols++
			typ := typeOf(c.Ops[i].Col)
			switch {
			case typ == nil:
				ok = false
			case IntKindOf(typ) != NotInt:
			case LocalType(typ):
				nonInt, local = true, true
			default:
				ok = false
			}
		}
		if nonInt && (cols > 1 || c.Op == CondCmp && c.Cmp == CmpNullEQ) {
			// Two columns: their collations or conversions are GMS's
			// to settle; <=> of strings: GMS's planner makes it a
			// comparison under the column's collation, which
			// NullSafeEquals itself is not.
			ok = false
		}
		for i := range c.Args {
			walk(&c.Args[i], depth+1)
		}
	}
	walk(c, 0)
	return local && ok, ok
}

// pinsKey reports whether a key term pins its column to points (=, <=>,
// IN) rather than bounding it by a range.
func pinsKey(c *Cond) bool {
	return c.Op == CondIn || c.Op == CondCmp && (c.Cmp == CmpEQ || c.Cmp == CmpNullEQ)
}

// resolveCond resolves the columns of c by col.
func resolveCond(c *Cond, col func(string) (int, bool), depth int) (PlanCond, bool) {
	if depth > maxCondDepth {
		return PlanCond{}, false
	}
	pc := PlanCond{Cols: make([]int, len(c.Ops))}
	for i := range c.Ops {
		pc.Cols[i] = -1
		if !c.Ops[i].IsCol() {
			continue
		}
		p, ok := col(c.Ops[i].Col)
		if !ok {
			return PlanCond{}, false
		}
		pc.Cols[i] = p
	}
	for i := range c.Args {
		a, ok := resolveCond(&c.Args[i], col, depth+1)
		if !ok {
			return PlanCond{}, false
		}
		pc.Args = append(pc.Args, a)
	}
	return pc, true
}

// endOfKey reports whether sc's aggregates are each a MIN or MAX of the
// key column after those its conditions pin to one value, and all its
// conditions bound the key: the first or last entry of the key's range
// then answers each (ScanPlan.Ends), as GMS's path reads it
// (planrules.MinMaxByIndex, "Select tables optimized away" in MySQL),
// where the coprocessor would aggregate every row of the range (SELECT
// MAX(id) FROM t WHERE w = 3 read the 10,000 rows of w = 3 to return
// one value).
func endOfKey(sc *ScanShape, p *ScanPlan, single []bool, ordOf func(string) (int, bool)) bool {
	if !sc.Aggregates() || sc.GroupBy != "" || slices.Contains(p.KeyTerm, false) {
		return false
	}
	next := 0
	for next < len(single) && single[next] {
		next++
	}
	if next == len(single) {
		return false // one row at most
	}
	for _, f := range sc.Fields {
		if f.Agg != AggMin && f.Agg != AggMax {
			return false
		}
		if ord, ok := ordOf(f.Col); !ok || ord != p.KeyOrds[next] {
			return false
		}
	}
	return true
}

// readsReturned reports whether the rows GMS's scan reads (and under FOR
// UPDATE locks) are the rows the plan returns: every condition bounds
// the key, but for row IN lists of key columns, whose tuples GMS reads as
// points (planrules.ExpandRowComparisons) and the coprocessor keeps from
// the product of their values, so that both return, and lock, the rows
// of the tuples, as InnoDB does.
func readsReturned(sc *ScanShape, p *ScanPlan, keyCol map[int]int, ordOf func(string) (int, bool)) bool {
	for i := range sc.Where {
		if p.KeyTerm[i] {
			continue
		}
		c := &sc.Where[i]
		if c.Op != CondRowIn {
			return false
		}
		for _, o := range c.Ops {
			if !o.IsCol() {
				continue
			}
			ord, ok := ordOf(o.Col)
			if !ok {
				return false
			}
			if _, isKey := keyCol[ord]; !isKey {
				return false
			}
		}
	}
	return true
}
