package sql

import (
	"io"
	"slices"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/sql/fastpath"
	"github.com/percdb/percdb/txn"
)

// scanEnds computes the result row of a range SELECT whose aggregates
// are each a MIN or MAX of the key column after those pinned
// (fastpath.ScanPlan.Ends): each is the first non-NULL value of that
// column in the ranges read forwards (MIN) or backwards (MAX), one row
// read past the NULLs, where the aggregate program read every row of the
// ranges. prog is the plan's program (its columns), filter the
// conditions the coprocessor evaluates (none: every condition bounds
// the key). It returns the row and how many rows were examined.
func (b *scanBinder) scanEnds(k *txn.Txn, ranges []executor.KeyRange, prog *copr.Program, filter []copr.Expr) (gsql.Row, int64, error) {
	sp, ctx := b.pl.Scan, b.r.ctx
	row := make(gsql.Row, len(sp.Out))
	if len(ranges) == 0 {
		return row, 0, nil
	}
	if !copr.Disjoint(ranges) {
		return nil, 0, errorString("range SELECT: the ranges of MIN or MAX overlap")
	}
	t := b.pl.Meta.Exec
	var examined int64
	for i, o := range sp.Out {
		col := copr.Expr{Op: copr.OpColumn, Col: o.Col}
		p := copr.Program{
			Columns: prog.Columns, Defaults: prog.Defaults, Trim: prog.Trim,
			Filter: append(slices.Clip(filter), copr.Expr{Op: copr.OpIsNotNull, Args: []copr.Expr{col}}),
			Output: []int{o.Col},
			Limit:  1,
		}
		if err := p.Validate(); err != nil {
			return nil, examined, err
		}
		var out copr.Outputs
		var err error
		switch {
		case o.Agg == fastpath.AggMin && sp.Index != nil:
			out, err = copr.RunLookupWith(ctx, k, t, sp.Index.Exec, ranges, &p, b.lookupOptions(false))
		case o.Agg == fastpath.AggMin:
			out, err = copr.RunRanges(ctx, k, t, ranges, &p)
		case sp.Index != nil:
			out, err = copr.RunLookupWith(ctx, k, t, sp.Index.Exec, ranges, &p, b.lookupOptions(true))
		default:
			out, err = copr.RunReverse(ctx, k, t, ranges, &p)
		}
		if err != nil {
			return nil, examined, err
		}
		for err == nil {
			var data []byte
			if data, err = out.Next(ctx); err == nil {
				err = copr.DecodeRows(data, 1, func(r []any) error {
					row[i] = r[0]
					return nil
				})
			}
		}
		examined += out.Examined()
		out.Close()
		if err != io.EOF {
			return nil, examined, err
		}
	}
	return row, examined, nil
}
