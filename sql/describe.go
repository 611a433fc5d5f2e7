package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/percdb/percdb/sql/explain"
)

// describe answers EXPLAIN: in MySQL's tabular format (sql/explain) unless
// the plan text was asked for (FORMAT=TREE, EXPLAIN PLAN) or EXPLAIN
// ANALYZE, which GMS answers. Either describes the plan that runs: an
// UPDATE or DELETE with the access path planWriteAccess gives it.
func (b *compatBuilder) describe(ctx *gsql.Context, n *plan.DescribeQuery, row gsql.Row) (gsql.RowIter, error) {
	child, replanned, err := b.planWriteAccess(ctx, n.Child)
	if err != nil {
		return nil, err
	}
	if n.Format.Plan || n.Format.Analyze {
		if !replanned {
			return nil, nil
		}
		return b.gms.Build(ctx, n.WithQuery(child), row)
	}
	var rows []gsql.Row
	for _, r := range explain.Plan(ctx, child, b.rowCount) {
		rows = append(rows, r.SQLRow())
	}
	return gsql.RowsToRowIter(rows...), nil
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
