package copr_test

import (
	"context"
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
)

// TestRunLookupRanges checks that a lookup over a list of index ranges
// (an IN list on a secondary index), whose batches of rows span the
// ranges, outputs what RunLookup gives range by range, the limit's taken
// from their start: in the store and over gRPC, with a filter, a limit,
// and writes of the transaction's own.
func TestRunLookupRanges(t *testing.T) {
	ctx := context.Background()
	all := copr.Program{Columns: []int64{1, 2}, Output: []int{0, 1}}
	filter := all
	filter.Filter = []copr.Expr{{Op: copr.OpIn, Cmp: copr.CmpSigned, Args: []copr.Expr{
		{Op: copr.OpColumn, Col: 0}, intConst(8), intConst(10), intConst(44), intConst(390), intConst(2)}}}
	limit := all
	limit.Limit = 50
	for name, s := range clients(t) {
		t.Run(name, func(t *testing.T) {
			tbl := indexedTable(t, 150+int64(len(name)), "l", 2)
			ix := &tbl.Indexes[0]
			row := addSevenths(t, s, tbl, 400)
			// k IS NULL, k = 1, k = 3, k BETWEEN 5 AND 6: about 50 rows
			// each, more than a first batch of handles.
			var ranges []executor.KeyRange
			for _, b := range [][2]any{{nil, nil}, {int64(1), int64(1)}, {int64(3), int64(3)}, {int64(5), int64(6)}} {
				r, err := tbl.IndexRange(ix, executor.Bound{Values: []any{b[0]}, Inclusive: true}, executor.Bound{Values: []any{b[1]}, Inclusive: true})
				if err != nil {
					t.Fatal(err)
				}
				ranges = append(ranges, r)
			}
			for _, c := range []runCase{{"all", all, false}, {"filter", filter, false}, {"limit", limit, false}, {"buffered", all, true}} {
				rd, err := s.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if c.buffered {
					if err := executor.AddRecord(ctx, rd, tbl, tablecodec.IntHandle(1000), []any{int64(1000), int64(3)}); err != nil {
						t.Fatal(err)
					}
					if err := executor.RemoveRecord(ctx, rd, tbl, tablecodec.IntHandle(5), row(5)); err != nil {
						t.Fatal(err)
					}
				}
				out, err := copr.RunLookupRanges(ctx, rd, tbl, ix, ranges, &c.p)
				rows, _ := drainRows(t, out, err, 2)
				samePerRange(t, "RunLookupRanges "+c.name, rows, ranges, c.p.Limit, func(r executor.KeyRange) (copr.Outputs, error) {
					return copr.RunLookup(ctx, rd, tbl, ix, r, &c.p)
				})
				_ = rd.Rollback(ctx)
			}
			// Ranges out of order are refused.
			rd, err := s.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := copr.RunLookupRanges(ctx, rd, tbl, ix, []executor.KeyRange{ranges[2], ranges[1]}, &all); err == nil {
				t.Error("ranges out of order were read")
			}
			_ = rd.Rollback(ctx)
		})
	}
}

func intConst(v int64) copr.Expr { return copr.Expr{Op: copr.OpConst, Const: &copr.Datum{Int: v}} }
