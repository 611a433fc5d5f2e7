package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/memo"
)

// Row estimates of index range reads in GMS's join planner. The memo
// takes a static index read's rows from GMS's histogram filters, which
// apply an inequality only on an index's first column: a read of a
// range of ORDER-LINE's key (w, d, o_id BETWEEN ...) counted every order
// line of the district (rangeest.go). Every join order and join
// operator the memo costs rests on those counts.
//
// GMS v0.20.0 has no hook for cardinalities, only the coster, which the
// memo calls for every expression bottom up, after it has set every
// group's row count (memo.CardMemoGroups). So before the coster costs an
// expression, refineCards gives its input groups percdb's estimate: a
// group whose expression is a static index read gets the statistics'
// estimate of its ranges (DatabaseProvider.rangeRows), and a group above
// one whose count changed has its count computed again by GMS's own
// rules (CardMemoGroups over the refined inputs). Each group is visited
// once: its count is then a refinedStats. A table without statistics
// keeps GMS's counts, so plans without statistics do not change.
// @percdb_range_estimates = 0 keeps GMS's counts for a session (the
// differential test compares both).
const rangeEstimatesUserVar = "percdb_range_estimates"

// refinedStats is a memo group's row count once refineCards has seen the
// group; changed says it differs from GMS's.
type refinedStats struct {
	gsql.Statistic
	changed bool
}

// refineCards gives the input groups of n percdb's row estimates.
func refineCards(ctx *gsql.Context, n memo.RelExpr) {
	if !userVarOn(ctx, rangeEstimatesUserVar) {
		return
	}
	for _, g := range n.Children() {
		refineGroup(ctx, g)
	}
}

// refineGroup gives g and the groups under it percdb's row estimates,
// and reports whether g's changed.
func refineGroup(ctx *gsql.Context, g *memo.ExprGroup) bool {
	if g == nil || g.RelProps == nil {
		return false
	}
	st := g.RelProps.GetStats()
	if r, ok := st.(*refinedStats); ok {
		return r.changed
	}
	if st == nil {
		return false
	}
	changed := false
	for _, c := range g.First.Children() {
		if refineGroup(ctx, c) {
			changed = true
		}
	}
	if is, ok := g.First.(*memo.IndexScan); ok {
		if rows, ok := indexScanRows(ctx, is); ok && uint64(rows) != st.RowCount() {
			st, changed = st.WithRowCount(uint64(rows)), true
		}
	} else if changed {
		// GMS's rules again, over the refined inputs.
		g.RelProps.SetStats(nil)
		memo.CardMemoGroups(ctx, g)
		if st = g.RelProps.GetStats(); st == nil {
			return false
		}
		if r, ok := st.(*refinedStats); ok {
			st = r.Statistic
		}
	}
	g.RelProps.SetStats(&refinedStats{Statistic: st, changed: changed})
	return changed
}

// indexScanRows estimates the rows of a static index read of a percdb
// table from its statistics.
func indexScanRows(ctx *gsql.Context, is *memo.IndexScan) (float64, bool) {
	ita := is.Table
	if ita == nil || !ita.IsStatic() {
		return 0, false
	}
	x, ok := ita.Index().(*Index)
	if !ok || x.table == nil || x.table.db == nil {
		return 0, false
	}
	lookup, err := ita.GetLookup(ctx, nil)
	if err != nil || lookup.IsEmptyRange {
		return 0, false
	}
	ranges, ok := lookup.Ranges.(gsql.MySQLRangeCollection)
	if !ok {
		return 0, false
	}
	return x.table.db.provider.rangeRows(ctx, x.table, x.im, ranges)
}
