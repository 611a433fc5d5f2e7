package sql

import (
	"math"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/memo"
)

// GMS's join planner (its memo) costs a plan as the sum of its operators'
// costs. Reading a table costs nothing there (a scan or index read has
// cost 0; a filter over it costs its CPU per row), so the only price of a
// hash join's build side was the rows left after its filter, while a
// lookup join paid for its output rows at a random read each, whatever
// the index. TPC-C's Stock-Level (the order lines of 20 orders, about
// 200 rows, joined to the warehouse's stock on the stock's primary key,
// WHERE s_quantity < ?) was planned as a hash join that read the whole
// stock table for every transaction: the filter's estimate of the stock
// rows left was below the estimate of the order lines.
//
// joinCoster is GMS's coster with the reads joins make counted, as
// MySQL's and TiDB's cost models count them:
//
//   - a hash join also pays a sequential read for every row its build side
//     reads from its table (a scan's table rows, an index read's range
//     estimate), not only for the rows it hashes;
//   - a lookup join pays one index seek per outer row and the rows each
//     seek reads: one on a whole unique key (eq_ref), else the inner
//     table's rows per distinct value of the key prefix the lookup pins
//     (ANALYZE TABLE's statistics); its inner table is not read as a
//     whole, so the inner input's own cost (a filter's CPU over the whole
//     table) is taken back off. A lookup on a key prefix of a table
//     without statistics keeps GMS's cost.
//
// Every other operator keeps GMS's cost.
type joinCoster struct {
	memo.Coster
}

// The memo's cost factors (GMS's coster.go): a sequential and a random
// read of a row, and evaluating an expression.
const (
	seqIOCost  = 1
	randIOCost = 1.3
	cpuCost    = 0.01
)

// EstimateCost implements memo.Coster.
func (c joinCoster) EstimateCost(ctx *gsql.Context, n memo.RelExpr, s gsql.StatsProvider) (float64, error) {
	// Index range reads counted from the statistics (joincard.go).
	refineCards(ctx, n)
	switch n := n.(type) {
	case *memo.LookupJoin:
		perKey, ok := lookupRowsPerKey(ctx, n)
		if !ok {
			break
		}
		outer := math.Max(1, float64(n.Left.RelProps.GetStats().RowCount()))
		// The memo adds the inner input's cost (n.Right.Cost, computed
		// before this operator's) to this one's: it is taken off here.
		return outer*randIOCost + outer*perKey*(seqIOCost+cpuCost) - n.Right.Cost, nil
	case *memo.HashJoin:
		cost, err := c.Coster.EstimateCost(ctx, n, s)
		if err != nil {
			return cost, err
		}
		return cost + seqIOCost*rowsRead(ctx, n.Right, s), nil
	case *memo.MergeJoin:
		cost, err := c.Coster.EstimateCost(ctx, n, s)
		if err != nil || n.Injective {
			return cost, err
		}
		ndv, ok := mergePrefixNDV(ctx, n)
		if !ok {
			return cost, nil
		}
		left := math.Max(1, float64(n.Left.RelProps.GetStats().RowCount()))
		right := math.Max(1, float64(n.Right.RelProps.GetStats().RowCount()))
		return cost + cpuCost*left*right/ndv, nil
	}
	return c.Coster.EstimateCost(ctx, n, s)
}

// lookupRowsPerKey estimates the rows one lookup of lj reads: one for a
// lookup on a whole unique key, else the inner table's rows over the
// distinct values of the key prefix the lookup pins, when the table has
// statistics.
func lookupRowsPerKey(ctx *gsql.Context, lj *memo.LookupJoin) (float64, bool) {
	if lj.Injective {
		return 1, true
	}
	if lj.Lookup == nil || lj.Lookup.Index == nil || lj.Lookup.Table == nil {
		return 0, false
	}
	x, ok := lj.Lookup.Index.SqlIdx().(*Index)
	if !ok || x.table.db == nil {
		return 0, false
	}
	p := x.table.db.provider
	ix := p.indexStats(ctx, x.table, x.im.Def.Name)
	k := len(lj.Lookup.Table.Expressions())
	if ix == nil || k == 0 || k > len(ix.NDV) || ix.NDV[k-1] == 0 {
		return 0, false
	}
	return float64(p.estimatedRows(ctx, x.table)) / float64(ix.NDV[k-1]), true
}

// mergePrefixNDV returns the distinct values of the prefix of mj's inner
// index that the merge compares, when the table has statistics.
func mergePrefixNDV(ctx *gsql.Context, mj *memo.MergeJoin) (float64, bool) {
	if mj.InnerScan == nil || mj.InnerScan.Index == nil || mj.CmpCnt < 1 {
		return 0, false
	}
	x, ok := mj.InnerScan.Index.SqlIdx().(*Index)
	if !ok || x.table.db == nil {
		return 0, false
	}
	ix := x.table.db.provider.indexStats(ctx, x.table, x.im.Def.Name)
	if ix == nil || mj.CmpCnt > len(ix.NDV) || ix.NDV[mj.CmpCnt-1] == 0 {
		return 0, false
	}
	return float64(ix.NDV[mj.CmpCnt-1]), true
}

// rowsRead estimates the rows join input g reads from its table when it
// is one table's read, filtered or not: a scan reads the table's rows, an
// index read the rows of its ranges. Another input (a join, a derived
// table) counts 0: its own operators are costed.
func rowsRead(ctx *gsql.Context, g *memo.ExprGroup, s gsql.StatsProvider) float64 {
	for g != nil {
		switch b := g.Best.(type) {
		case *memo.Filter:
			g = b.Child
			continue
		case *memo.IndexScan:
			// The statistics' count of its ranges (joincard.go).
			if st, ok := g.RelProps.GetStats().(*refinedStats); ok && st.changed {
				return float64(st.RowCount())
			}
			if b.Stats != nil {
				return float64(b.Stats.RowCount())
			}
			return tableRows(ctx, b.Table, s)
		case *memo.TableScan:
			return tableRows(ctx, b.Table, s)
		case *memo.TableAlias:
			return tableRows(ctx, b.Table.Child, s)
		}
		return 0
	}
	return 0
}

// tableRows is the row count of the table n reads, 0 when n reads none.
func tableRows(ctx *gsql.Context, n gsql.Node, s gsql.StatsProvider) float64 {
	tn, ok := n.(gsql.TableNode)
	if !ok {
		return 0
	}
	t := tn.UnderlyingTable()
	db := ""
	if d, ok := t.(gsql.Databaseable); ok {
		db = d.Database()
	}
	rows, err := s.RowCount(ctx, db, t)
	if err != nil {
		return 0
	}
	return float64(rows)
}
