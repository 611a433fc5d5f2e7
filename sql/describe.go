package sql

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/percdb/percdb/sql/explain"
)

// describe answers EXPLAIN: in MySQL's tabular format (sql/explain) unless
// the plan text was asked for (FORMAT=TREE, EXPLAIN PLAN), which GMS
// answers, or EXPLAIN ANALYZE (explainanalyze.go). Either describes the plan that runs: an
// UPDATE or DELETE with the access path planWriteAccess gives it.
func (b *compatBuilder) describe(ctx *gsql.Context, n *plan.DescribeQuery, row gsql.Row) (gsql.RowIter, error) {
	child, replanned, err := b.planWriteAccess(ctx, n.Child)
	if err != nil {
		return nil, err
	}
	if n.Format.Analyze {
		return b.explainAnalyze(ctx, child, row) // explainanalyze.go
	}
	if n.Format.Plan {
		if !replanned {
			return nil, nil
		}
		return b.gms.Build(ctx, n.WithQuery(child), row)
	}
	var rows []gsql.Row
	for _, r := range explain.Plan(ctx, child, b.rowCount, b.keyRows, batchedJoin, aggregatedJoin) {
		rows = append(rows, r.SQLRow())
	}
	return gsql.RowsToRowIter(rows...), nil
}

// keyRows is the statistics' estimate of the rows of t whose first
// pinned columns of idx equal given values: rows / distinct values of the
// prefix, rounded up.
func (b *compatBuilder) keyRows(ctx *gsql.Context, db string, t gsql.Table, idx gsql.Index, pinned int) (uint64, bool) {
	if b.a == nil || b.a.Catalog.StatsProvider == nil || pinned < 1 {
		return 0, false
	}
	exprs := idx.Expressions()
	if pinned > len(exprs) {
		return 0, false
	}
	cols := make([]string, pinned)
	for i, e := range exprs[:pinned] {
		cols[i] = strings.ToLower(e[strings.LastIndexByte(e, '.')+1:])
	}
	st, ok := b.a.Catalog.StatsProvider.GetStats(ctx, gsql.NewStatQualifier(db, "", t.Name(), idx.ID()), cols)
	if !ok || st == nil || st.DistinctCount() == 0 {
		return 0, false
	}
	return (st.RowCount() + st.DistinctCount() - 1) / st.DistinctCount(), true
}

// rowCount is the planner's count of t's rows (0 when unknown).
func (b *compatBuilder) rowCount(ctx *gsql.Context, db string, t gsql.Table) uint64 {
	if b.a == nil || b.a.Catalog.StatsProvider == nil {
		return 0
	}
	n, err := b.a.Catalog.StatsProvider.RowCount(ctx, db, t)
	if err != nil {
		return 0
	}
	return n
}
