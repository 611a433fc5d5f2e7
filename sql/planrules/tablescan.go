package planrules

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// A read of a secondary index that is not covering reads each entry's row
// by its primary key: a point read per row, where a scan of the table
// reads the rows in key order, next to the data, with the filter
// evaluated there. GMS reads any index its WHERE clause bounds, however
// much of the table the bounds keep: WHERE k < 100 OR k > 99900 on a
// table of 1,000,000 rows with k in 1..1,000,000 made 900,000 point
// reads (62 s, where MariaDB scanned the table in 2 s). MySQL's range
// optimizer compares the range's cost with the table scan's, from the
// rows the range is estimated to hold (records_in_range); PreferTableScan
// does the same with the rows percdb's statistics estimate
// (WideReadTable.RangeRows) and the cost ratio IndexLookupRowCost.

// IndexLookupRowCost is what reading one row through a secondary index
// costs, in rows of a table scan: measured on a table of 1,000,000 rows
// (server CPU of SELECT count(*), sum(q) FROM t WHERE k BETWEEN 1 AND n
// against the same over the whole table, docs/benchmarks.md, branch
// scan1m8) at 20 rows with the table in Pebble's block cache and at 80
// when it is not; the smaller is taken, so an index read is left alone
// unless the scan is clearly cheaper. A range estimated to hold more than
// 1/IndexLookupRowCost of the table's rows is read by a scan instead.
const IndexLookupRowCost = 20

// WideReadTable is a table whose statistics estimate the rows a read of
// ranges of one of its indexes returns (false without statistics) and
// its rows.
type WideReadTable interface {
	gsql.StatisticsTable
	RangeRows(ctx *gsql.Context, idx gsql.Index, ranges gsql.MySQLRangeCollection) (uint64, bool)
}

// coveringTable is a table that reads the columns a statement needs from
// an index's entries alone (explain.CoveringTable, which this package
// does not import).
type coveringTable interface {
	CoveredBy(idx gsql.Index) bool
}

// IndexedReader is a table read through an index lookup (GMS's
// IndexedAccess result) that knows the table it reads.
type IndexedReader interface {
	// Unindexed returns the table read whole, with the same columns.
	Unindexed() gsql.Table
}

// scanOf returns a read of the whole table ita reads through an index.
func scanOf(ita *plan.IndexedTableAccess) (gsql.Node, bool) {
	mtn, ok := ita.TableNode.(gsql.MutableTableNode)
	if !ok {
		return nil, false
	}
	ir, ok := mtn.WrappedTable().(IndexedReader)
	if !ok {
		return nil, false
	}
	scan, err := mtn.WithTable(ir.Unindexed())
	if err != nil {
		return nil, false
	}
	return scan, true
}

// PreferTableScanRule is PreferTableScan as an analyzer rule; it runs
// after PreferPinnedIndex, on the index read that rule settled on.
func PreferTableScanRule(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return PreferTableScan(ctx, n)
}

// PreferTableScan replaces each static read of a secondary index under a
// Filter (under a table alias or not) by a scan of its table when the
// index does not cover the read and the table's statistics estimate that
// the read's ranges hold more than 1/IndexLookupRowCost of the table's
// rows. The Filter stays above and decides, so no answer changes. A statement with a LIMIT is left
// alone (an index read in the ORDER BY's order may stop after a few rows,
// where the scan reads everything), as is a read that feeds a merge join
// (which needs the index's order).
func PreferTableScan(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	if hasLimit(n) {
		return n, transform.SameTree, nil
	}
	merged := mergeInputs(n)
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		f, ok := n.(*plan.Filter)
		if !ok {
			return n, transform.SameTree, nil
		}
		read := f.Child
		alias, aliased := read.(*plan.TableAlias)
		if aliased {
			read = alias.Child
		}
		ita, ok := read.(*plan.IndexedTableAccess)
		if !ok || !ita.IsStatic() || merged[ita] {
			return n, transform.SameTree, nil
		}
		lookup, err := ita.GetLookup(ctx, nil)
		if err != nil || lookup.Index == nil || lookup.IsSpatialLookup || strings.EqualFold(lookup.Index.ID(), "PRIMARY") {
			return n, transform.SameTree, nil
		}
		ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
		if !ok || len(ranges) == 0 {
			return n, transform.SameTree, nil
		}
		t := ita.TableNode.UnderlyingTable()
		if c, ok := t.(coveringTable); ok && c.CoveredBy(lookup.Index) {
			return n, transform.SameTree, nil
		}
		wt, ok := t.(WideReadTable)
		if !ok {
			return n, transform.SameTree, nil
		}
		if !wideRead(ctx, wt, lookup.Index, ranges) {
			return n, transform.SameTree, nil
		}
		scan, ok := scanOf(ita)
		if !ok {
			return n, transform.SameTree, nil
		}
		if aliased {
			if scan, err = alias.WithChildren(scan); err != nil {
				return nil, transform.SameTree, err
			}
		}
		ret, err := f.WithChildren(scan)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return ret, transform.NewTree, nil
	})
}

// wideRead reports whether t's statistics estimate that the read of idx
// by ranges holds more than 1/IndexLookupRowCost of t's rows.
func wideRead(ctx *gsql.Context, t WideReadTable, idx gsql.Index, ranges gsql.MySQLRangeCollection) bool {
	rows, ok := t.RangeRows(ctx, idx, ranges)
	if !ok {
		return false
	}
	total, _, err := t.RowCount(ctx)
	if err != nil || total == 0 {
		return false
	}
	return WideRead(float64(rows), float64(total))
}

// MinScanRows is the fewest rows a table must hold for a read of it to
// be moved off an index: below it any plan's read costs well under a
// millisecond, and the estimates come from a handful of rows.
const MinScanRows = 10000

// WideRead reports whether a read of an index estimated at rows of a
// table of total rows is better made by a scan of the table.
func WideRead(rows, total float64) bool {
	return total >= MinScanRows && rows*IndexLookupRowCost > total
}

// hasLimit reports whether n holds a LIMIT or a top-N anywhere.
func hasLimit(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		switch n.(type) {
		case *plan.Limit, *plan.TopN:
			found = true
		}
		return !found
	})
	return found
}
