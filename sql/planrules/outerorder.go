package planrules

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// A join of percdb's plans (nested loop, lookup or hash) yields its rows
// outer row by outer row, in the order its outer side gives them: it
// reads the outer side once and joins each row with its inner rows
// before the next. So an ORDER BY of columns of the outer table only is
// the join's order when the outer table's read gives it (OrderByIndex's
// rule, indexorder.go), as MySQL orders a join by its first table's
// index and sorts nothing ("Using filesort" only for later tables):
//
//	SELECT ... FROM t b JOIN t a ON a.k = b.id AND b.w = a.w
//	WHERE a.q = 3 ORDER BY a.w, a.id LIMIT 20
//
// with a as the outer side read in the order of its primary key (w, id)
// sorted every joined row to return twenty; without the Sort, the LIMIT
// stops the join (and its outer read) after twenty. A full scan of the
// outer table becomes a read of the whole of its primary key, which
// reads the same rows in the same order (a table's rows are stored in
// its primary key's order), so that it can be made to give the order; a
// secondary index read whole would cost a row lookup per entry, which
// no LIMIT bounds here (the join's condition decides how many outer
// rows the LIMIT's rows need).
//
// Joins whose rows do not come in their outer side's order are left
// alone: merge joins (ordered by the join key), range-heap joins, full
// and right outer joins (their unmatched inner rows come last) and
// lateral joins.

// orderedJoin returns child, a join under Filters, with its outer side's
// read made to give the rows in the order of sort, and false when it
// cannot.
func orderedJoin(ctx *gsql.Context, child gsql.Node, sort gsql.SortFields) (gsql.Node, bool, error) {
	filters, child := underFilters(child)
	j, ok := child.(*plan.JoinNode)
	if !ok || !keepsOuterOrder(j.Op) {
		return nil, false, nil
	}
	left, ok, err := orderedOuter(ctx, j.Left(), sort)
	if err != nil || !ok {
		return nil, false, err
	}
	out, err := j.WithChildren(left, j.Right())
	if err == nil {
		out, err = withFilters(filters, out)
	}
	return out, err == nil, err
}

// keepsOuterOrder reports whether a join of type op yields its rows in
// the order of its outer (left) side's rows (see above).
func keepsOuterOrder(op plan.JoinType) bool {
	switch op {
	case plan.JoinTypeCross, plan.JoinTypeCrossHash,
		plan.JoinTypeInner, plan.JoinTypeSemi, plan.JoinTypeAnti,
		plan.JoinTypeLeftOuter, plan.JoinTypeLeftOuterExcludeNulls,
		plan.JoinTypeLookup, plan.JoinTypeLeftOuterLookup, plan.JoinTypeSemiLookup, plan.JoinTypeAntiLookup,
		plan.JoinTypeHash, plan.JoinTypeLeftOuterHash, plan.JoinTypeLeftOuterHashExcludeNulls,
		plan.JoinTypeSemiHash, plan.JoinTypeAntiHash:
		return true
	}
	return false
}

// orderedOuter returns n, a join's outer side, made to give its rows in
// the order of sort: Filters over a join (its own outer side decides),
// or over a [TableAlias over a] static index read or full scan.
func orderedOuter(ctx *gsql.Context, n gsql.Node, sort gsql.SortFields) (gsql.Node, bool, error) {
	filters, under := underFilters(n)
	switch u := under.(type) {
	case *plan.JoinNode:
		return orderedJoin(ctx, n, sort)
	case *plan.IndexedTableAccess:
		// orderedRead may read another index the filters allow.
		return orderedRead(ctx, n, sort)
	case *plan.ResolvedTable:
		read, ok, err := wholeIndexRead(ctx, u, sort, true)
		if err != nil || !ok {
			return nil, false, err
		}
		read, err = withFilters(filters, read)
		return read, err == nil, err
	case *plan.TableAlias:
		// The sort names the alias; the read names its table.
		renamed, ok := renameSortTable(sort, u.Name(), u.Child)
		if !ok {
			return nil, false, nil
		}
		var read gsql.Node
		var err error
		switch c := u.Child.(type) {
		case *plan.IndexedTableAccess:
			read, ok, err = orderedRead(ctx, c, renamed)
		case *plan.ResolvedTable:
			read, ok, err = wholeIndexRead(ctx, c, renamed, true)
		default:
			return nil, false, nil
		}
		if err != nil || !ok {
			return nil, false, err
		}
		if read, err = u.WithChildren(read); err == nil {
			read, err = withFilters(filters, read)
		}
		return read, err == nil, err
	}
	return nil, false, nil
}

// underFilters returns the Filters over n, the outermost first, and the
// node under them.
func underFilters(n gsql.Node) ([]*plan.Filter, gsql.Node) {
	var filters []*plan.Filter
	for {
		f, ok := n.(*plan.Filter)
		if !ok {
			return filters, n
		}
		filters = append(filters, f)
		n = f.Child
	}
}

// withFilters puts filters (the outermost first) back over n.
func withFilters(filters []*plan.Filter, n gsql.Node) (gsql.Node, error) {
	for i := len(filters) - 1; i >= 0; i-- {
		var err error
		if n, err = filters[i].WithChildren(n); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// renameSortTable returns sort with its columns of table alias named by
// the table read under the alias, false when a column is not the
// alias's.
func renameSortTable(sort gsql.SortFields, alias string, read gsql.Node) (gsql.SortFields, bool) {
	nt, ok := read.(gsql.Nameable)
	if !ok {
		return nil, false
	}
	out := make(gsql.SortFields, len(sort))
	for i, sf := range sort {
		gf, ok := sf.Column.(*expression.GetField)
		if !ok || !strings.EqualFold(gf.Table(), alias) {
			return nil, false
		}
		sf.Column = gf.WithTable(nt.Name())
		out[i] = sf
	}
	return out, true
}
