package planrules

import (
	"slices"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS drops an ORDER BY over an index read (its rule replaceIdxSort) only
// when the sort columns are a prefix of the index's columns: ORDER BY o
// over a read of the index (w, d, o) with w and d pinned by the WHERE
// clause, the shape of "the oldest order of a district" (TPC-C's
// Delivery: ... WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT
// 1 FOR UPDATE), sorted every row of the district to return one, and
// under FOR UPDATE locked them all. MySQL's rule is wider: rows read
// through an index come in the order of its columns, and a column that
// has one value in every row read orders nothing, so the sort is the
// index's order when the sort columns, less those pinned to one value,
// are the index's columns less those pinned, from the first on, all in
// one direction (descending: the index read backwards).
//
// OrderByIndex applies that rule to every Sort over (Filters over) a
// static index read. The rows of the read are the same; only the Sort
// goes, and with it the reading of every row before the first is
// returned: a LIMIT above stops the read.

// OrderByIndexRule is OrderByIndex as an analyzer rule; it must run after
// the access paths are chosen and before GMS turns a Sort under a Limit
// into a TopN (its rule insertTopN).
func OrderByIndexRule(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return OrderByIndex(ctx, n)
}

// OrderByIndex removes from n every Sort whose order the index read under
// it already gives (see above), reading the index backwards for a
// descending sort.
//
// A Sort of a whole table under a LIMIT (ORDER BY k, id LIMIT 10 with no
// WHERE clause) becomes a read of the whole of an index that gives its
// order, when the LIMIT is at most maxLimitByIndex rows: MySQL reads such
// an index too rather than sort the table (test_if_cheaper_ordering). A
// secondary index costs a lookup of each entry's row, which the LIMIT
// bounds.
func OrderByIndex(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	n, same1, err := transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.Sort)
		if !ok {
			return n, transform.SameTree, nil
		}
		read, ok, err := orderedRead(ctx, s.Child, s.SortFields)
		if err == nil && !ok {
			// A join in its outer side's order (outerorder.go).
			read, ok, err = orderedJoin(ctx, s.Child, s.SortFields)
		}
		if err != nil || !ok {
			return n, transform.SameTree, err
		}
		return read, transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, same2, err := transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		l, ok := n.(*plan.Limit)
		if !ok {
			return n, transform.SameTree, nil
		}
		bound, ok := literalCount(l.Limit)
		if !ok {
			return n, transform.SameTree, nil
		}
		// The nodes between the Limit and the Sort keep its order.
		var path []gsql.Node
		child := l.Child
		for {
			switch c := child.(type) {
			case *plan.Offset:
				off, ok := literalCount(c.Offset)
				if !ok {
					return n, transform.SameTree, nil
				}
				bound += off
				path, child = append(path, c), c.Child
				continue
			case *plan.Project:
				path, child = append(path, c), c.Child
				continue
			}
			break
		}
		s, ok := child.(*plan.Sort)
		if !ok || bound > maxLimitByIndex {
			return n, transform.SameTree, nil
		}
		rt, ok := s.Child.(*plan.ResolvedTable)
		if !ok {
			return n, transform.SameTree, nil
		}
		read, ok, err := wholeIndexRead(ctx, rt, s.SortFields, false)
		if err != nil || !ok {
			return n, transform.SameTree, err
		}
		for i := len(path) - 1; i >= 0; i-- {
			if read, err = path[i].WithChildren(read); err != nil {
				return nil, transform.SameTree, err
			}
		}
		ret, err := l.WithChildren(read)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return ret, transform.NewTree, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, same1 && same2, nil
}

// maxLimitByIndex is the largest LIMIT (with its OFFSET) under which a
// Sort of a whole table becomes a read of an index in its order: a lookup
// of a row by its primary key costs about what sorting some tens of rows
// does, so past some thousands of rows of a table of unknown size the
// sort may be the cheaper.
const maxLimitByIndex = 1000

// literalCount returns the value of a LIMIT or OFFSET given as an
// integer literal.
func literalCount(e gsql.Expression) (int64, bool) {
	lit, ok := e.(*expression.Literal)
	if !ok {
		return 0, false
	}
	switch v := lit.Value().(type) {
	case int8:
		return int64(v), v >= 0
	case int16:
		return int64(v), v >= 0
	case int32:
		return int64(v), v >= 0
	case int64:
		return v, v >= 0
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint64:
		return int64(v), v <= 1<<62
	}
	return 0, false
}

// wholeIndexRead returns a read of the whole of an index of rt's table
// (the scan rt) that gives its rows in the order of sort (backwards for a
// descending one), and false when no index does; of the primary key
// only when primaryOnly.
func wholeIndexRead(ctx *gsql.Context, rt *plan.ResolvedTable, sort gsql.SortFields, primaryOnly bool) (gsql.Node, bool, error) {
	ia, ok := rt.UnderlyingTable().(gsql.IndexAddressable)
	if !ok {
		return nil, false, nil
	}
	idxs, err := ia.GetIndexes(ctx)
	if err != nil {
		return nil, false, nil
	}
	for _, idx := range idxs {
		if primaryOnly && !strings.EqualFold(idx.ID(), "PRIMARY") {
			continue
		}
		l, ok := colConds{}.lookup(ctx, idx, 0)
		if !ok {
			continue
		}
		ita, err := plan.NewStaticIndexedAccessForTableNode(ctx, rt, l)
		if err != nil {
			continue
		}
		read, ok, err := orderedRead(ctx, ita, sort)
		if err != nil {
			return nil, false, err
		}
		if ok {
			return read, true, nil
		}
	}
	return nil, false, nil
}

// MinMaxByIndexRule is MinMaxByIndex as an analyzer rule, to run where
// OrderByIndexRule does. Outside a subquery it also splits a GroupBy of
// several MIN and MAX aggregates (see MinMaxByIndex).
func MinMaxByIndexRule(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return minMaxByIndex(ctx, n, scope.IsEmpty())
}

// MinMaxByIndex answers MIN(col) or MAX(col), the one aggregate of a
// query without GROUP BY, from the first row of an index read in col's
// order (backwards for MAX) whose col is not NULL, when the read gives
// that order (see OrderByIndex), or of the whole of an index that leads
// with col when there is no WHERE clause (SELECT MAX(k) FROM t): SELECT MIN(no_o_id) FROM new_order WHERE
// no_w_id = ? AND no_d_id = ? reads one row of the district, where it
// read them all. GMS's own rule (replaceAgg) does so only for the first
// column of a primary key. The aggregate stays, over at most one row, so
// that no row still gives one NULL.
//
// Several such aggregates (SELECT MIN(k), MAX(k), MAX(id) FROM t WHERE
// w = 3) become one GroupBy each, each over its own one-row read, joined
// by a cross join of their one-row results, whose row is the aggregates'
// in the order selected, as MySQL's optimizer answers each from an
// index's end ("Select tables optimized away"). The split is made only
// when every aggregate can be so answered; one that cannot (a COUNT, a
// MIN of an unindexed column) would read every row anyway.
func MinMaxByIndex(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	return minMaxByIndex(ctx, n, true)
}

// minMaxByIndex is MinMaxByIndex; split allows the cross join of several
// aggregates, which the rule leaves out of subqueries, whose rows carry
// the outer scope's row before their own.
func minMaxByIndex(ctx *gsql.Context, n gsql.Node, split bool) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		gb, ok := n.(*plan.GroupBy)
		if !ok || len(gb.GroupByExprs) != 0 || len(gb.SelectedExprs) == 0 ||
			(len(gb.SelectedExprs) > 1 && !split) {
			return n, transform.SameTree, nil
		}
		var out gsql.Node
		for _, sel := range gb.SelectedExprs {
			read, ok, err := minMaxRead(ctx, gb.Child, sel)
			if err != nil || !ok {
				return n, transform.SameTree, err
			}
			one := plan.NewGroupBy([]gsql.Expression{sel}, nil, read)
			if out == nil {
				out = one
			} else {
				out = plan.NewCrossJoin(out, one)
			}
		}
		if len(gb.SelectedExprs) == 1 {
			ret, err := gb.WithChildren(out.(*plan.GroupBy).Child)
			if err != nil {
				return nil, transform.SameTree, err
			}
			return ret, transform.NewTree, nil
		}
		return out, transform.NewTree, nil
	})
}

// minMaxRead returns, for sel, a MIN or MAX of a column (under an
// alias or not) aggregated over child, a read of at most the one row of
// child that gives the aggregate's value (Limit 1 over the ordered read,
// with NULLs of the column filtered out), and false when sel is not such
// an aggregate or no index gives its order.
func minMaxRead(ctx *gsql.Context, child gsql.Node, sel gsql.Expression) (gsql.Node, bool, error) {
	if a, ok := sel.(*expression.Alias); ok {
		sel = a.Child
	}
	var arg gsql.Expression
	var order gsql.SortOrder
	switch agg := sel.(type) {
	case *aggregation.Min:
		arg, order = agg.Child, gsql.Ascending
		if agg.Window() != nil {
			return nil, false, nil
		}
	case *aggregation.Max:
		arg, order = agg.Child, gsql.Descending
		if agg.Window() != nil {
			return nil, false, nil
		}
	default:
		return nil, false, nil
	}
	col, ok := arg.(*expression.GetField)
	if !ok {
		return nil, false, nil
	}
	sort := gsql.SortFields{{Column: col, Order: order}}
	var read gsql.Node
	var err error
	if rt, isScan := child.(*plan.ResolvedTable); isScan {
		// No WHERE clause: the first row of the whole index.
		read, ok, err = wholeIndexRead(ctx, rt, sort, false)
	} else {
		read, ok, err = orderedRead(ctx, child, sort)
	}
	if err != nil || !ok {
		return nil, false, err
	}
	if col.IsNullable() {
		// One filter, which the coprocessor takes with the limit.
		notNull := gsql.Expression(expression.NewNot(expression.NewIsNull(col)))
		if f, ok := read.(*plan.Filter); ok {
			read = plan.NewFilter(expression.NewAnd(f.Expression, notNull), f.Child)
		} else {
			read = plan.NewFilter(notNull, read)
		}
	}
	return plan.NewLimit(expression.NewLiteral(int64(1), types.Int64), read), true, nil
}

// orderedRead returns child, Filters over a static index read, with the
// read made to give its rows in the order of sort (read backwards for a
// descending one), and false when it cannot (see OrderByIndex).
func orderedRead(ctx *gsql.Context, child gsql.Node, sort gsql.SortFields) (gsql.Node, bool, error) {
	// The filters between the sort and the read keep the order.
	filters, child := underFilters(child)
	ita, ok := child.(*plan.IndexedTableAccess)
	if !ok || !ita.IsStatic() {
		return nil, false, nil
	}
	reverse, ok := sortedByIndex(ctx, sort, ita)
	if !ok && len(filters) > 0 {
		ita, reverse, ok = orderingIndex(ctx, filters, ita, sort)
	}
	if !ok {
		return nil, false, nil
	}
	var read gsql.Node = ita
	if lookup, err := ita.GetLookup(ctx, nil); err != nil {
		return nil, false, nil
	} else if lookup.IsReverse != reverse {
		lookup = gsql.NewIndexLookup(lookup.Index, lookup.Ranges.(gsql.MySQLRangeCollection),
			lookup.IsPointLookup, lookup.IsEmptyRange, lookup.IsSpatialLookup, reverse)
		nita, err := plan.NewStaticIndexedAccessForTableNode(ctx, ita.TableNode, lookup)
		if err != nil {
			return nil, false, nil
		}
		read = nita
	}
	read, err := withFilters(filters, read)
	return read, err == nil, err
}

// orderingIndex returns a read of another index of ita's table that
// gives the order of sort and is as selective as ita by the filters'
// equalities and bounds (pinScore: as many leading columns pinned, the
// next as bounded), as MySQL switches to an index that avoids a sort
// when it reads no more rows (test_if_skip_sort_order). GMS's coster
// chooses between indexes of equal estimates without regard to order
// (with statistics, WHERE w = 1 ORDER BY d, id read the index (w, d,
// last) and sorted, where the primary key (w, d, id) gives the order).
func orderingIndex(ctx *gsql.Context, filters []*plan.Filter, ita *plan.IndexedTableAccess, sort gsql.SortFields) (*plan.IndexedTableAccess, bool, bool) {
	lookup, err := ita.GetLookup(ctx, nil)
	if err != nil || lookup.Index == nil || lookup.IsSpatialLookup {
		return nil, false, false
	}
	ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
	if !ok {
		return nil, false, false
	}
	cur := readScore(ctx, ranges, len(lookup.Index.Expressions()))
	exprs := make([]gsql.Expression, len(filters))
	for i, f := range filters {
		exprs[i] = f.Expression
	}
	conds := columnConditions(expression.JoinAnd(exprs...), strings.ToLower(ita.Name()))
	ia, ok := ita.TableNode.UnderlyingTable().(gsql.IndexAddressable)
	if !ok {
		return nil, false, false
	}
	idxs, err := ia.GetIndexes(ctx)
	if err != nil {
		return nil, false, false
	}
	for _, idx := range idxs {
		if strings.EqualFold(idx.ID(), lookup.Index.ID()) {
			continue
		}
		k, score := conds.pinScore(idx)
		if score < cur {
			continue
		}
		nl, ok := conds.lookup(ctx, idx, k)
		if !ok {
			continue
		}
		nita, err := plan.NewStaticIndexedAccessForTableNode(ctx, ita.TableNode, nl)
		if err != nil {
			continue
		}
		if reverse, ok := sortedByIndex(ctx, sort, nita); ok {
			return nita, reverse, true
		}
	}
	return nil, false, false
}

// sortedByIndex reports whether the rows of the static index read ita
// come in the order of sort (see OrderByIndex), and whether only when
// read backwards.
func sortedByIndex(ctx *gsql.Context, sort gsql.SortFields, ita *plan.IndexedTableAccess) (reverse, ok bool) {
	lookup, err := ita.GetLookup(ctx, nil)
	if err != nil || lookup.Index == nil || lookup.IsEmptyRange || lookup.IsSpatialLookup {
		return false, false
	}
	idx := lookup.Index
	oi, ordered := idx.(gsql.OrderedIndex)
	if !ordered || oi.Order() != gsql.IndexOrderAsc || idx.IsSpatial() || idx.IsFullText() || idx.IsVector() {
		return false, false
	}
	for _, l := range idx.PrefixLengths() {
		if l != 0 {
			return false, false // keys order rows by a prefix of a value
		}
	}
	ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
	if !ok || len(ranges) == 0 {
		return false, false
	}
	cols := append(indexColumns(idx), primaryKeySuffix(ctx, ita, idx)...)
	pinned := pinnedColumns(ctx, ranges, len(cols))
	table := strings.ToLower(ita.Name())
	next := 0 // the index column the next sort field must be
	dir := gsql.SortOrder(0)
	for _, sf := range sort {
		gf, ok := sf.Column.(*expression.GetField)
		if !ok || !strings.EqualFold(gf.Table(), table) {
			return false, false
		}
		name := strings.ToLower(gf.Name())
		col := -1
		for i, c := range cols {
			if c == name {
				col = i
				break
			}
		}
		if col >= 0 && pinned[col] {
			continue // one value in every row: orders nothing
		}
		for next < len(cols) && pinned[next] {
			next++
		}
		if col < 0 || col != next {
			return false, false
		}
		if dir == 0 {
			dir = sf.Order
		} else if sf.Order != dir {
			return false, false
		}
		next++
	}
	if dir == gsql.Descending {
		if !oi.Reversible() {
			return false, false
		}
		return true, true
	}
	return lookup.IsReverse && dir == 0, true
}

// primaryKeySuffix returns the lower-case names of the primary-key
// columns of ita's table that idx, a secondary index, does not have: the
// columns that order the entries of one value of idx's columns. An entry
// of a secondary index ends with the row's handle (executor/tablecodec:
// a non-unique index always, a unique one when a value is NULL, and a
// unique entry without NULLs is one row), and the handle sorts as the
// primary key's values do (an int handle is the one signed integer
// column; a common handle their key encoding), so the index gives the
// order (its columns, then these), as InnoDB's secondary indexes do
// (MySQL's "extended keys"): WHERE k > ? ORDER BY k, id LIMIT 10 reads
// ten entries. Nil for the primary key itself, a table without one, or a
// primary key over prefixes of values.
func primaryKeySuffix(ctx *gsql.Context, ita *plan.IndexedTableAccess, idx gsql.Index) []string {
	if strings.EqualFold(idx.ID(), "PRIMARY") {
		return nil
	}
	ia, ok := ita.TableNode.UnderlyingTable().(gsql.IndexAddressable)
	if !ok {
		return nil
	}
	idxs, err := ia.GetIndexes(ctx)
	if err != nil {
		return nil
	}
	for _, pk := range idxs {
		if !strings.EqualFold(pk.ID(), "PRIMARY") {
			continue
		}
		for _, l := range pk.PrefixLengths() {
			if l != 0 {
				return nil
			}
		}
		have := indexColumns(idx)
		var out []string
		for _, c := range indexColumns(pk) {
			if !slices.Contains(have, c) {
				out = append(out, c)
			}
		}
		return out
	}
	return nil
}

// pinnedColumns reports, for each of the first n columns of an index,
// whether every range pins it to one and the same value (NULL counts as a
// value: IS NULL pins a column too).
func pinnedColumns(ctx *gsql.Context, ranges gsql.MySQLRangeCollection, n int) []bool {
	out := make([]bool, n)
	for i := range out {
		var first any
		out[i] = true
		for j, r := range ranges {
			if i >= len(r) {
				out[i] = false
				break
			}
			v, ok := PointValue(ctx, r[i])
			if !ok {
				out[i] = false
				break
			}
			if j == 0 {
				first = v
				continue
			}
			if (v == nil) != (first == nil) {
				out[i] = false
				break
			}
			if v != nil {
				if cmp, err := r[i].Typ.Compare(ctx, first, v); err != nil || cmp != 0 {
					out[i] = false
					break
				}
			}
		}
	}
	return out
}

// PointValue reports whether ce is one value [v, v], v nil for NULL.
func PointValue(ctx *gsql.Context, ce gsql.MySQLRangeColumnExpr) (any, bool) {
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
