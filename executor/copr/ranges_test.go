package copr_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// TestRunRanges checks that RunRanges gives, for a list of ranges, the
// outputs Run gives over each range in turn, in the store and over gRPC,
// with the table's rows cut into regions at keys inside the ranges:
// a filter, a limit, pages that stop inside a range, and a
// transaction's buffered writes (a row inserted and a row deleted) seen.
func TestRunRanges(t *testing.T) {
	ctx := context.Background()
	all, filter := pairPrograms()
	limit := all
	limit.Limit = 5
	paged := all
	paged.PageRows = 2
	stores, ks := clientsOf(t)
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			tbl := evenRows(t, s, 130+int64(len(name))) // each store its own table
			// Regions end inside the ranges [40, 50] and [150, ).
			for _, id := range []int64{44, 170} {
				if _, _, err := ks.SplitRegion(ctx, tablecodec.RowKey(nil, tbl.ID, tablecodec.IntHandle(id))); err != nil {
					t.Fatal(err)
				}
			}
			var ranges []executor.KeyRange
			for _, b := range [][2]any{{int64(0), int64(4)}, {int64(9), int64(9)}, {int64(10), int64(11)}, {int64(40), int64(50)}, {int64(150), nil}} {
				hi := executor.Bound{Inclusive: true}
				if b[1] != nil {
					hi.Values = []any{b[1]}
				}
				r, err := tbl.HandleRange(executor.Bound{Values: []any{b[0]}, Inclusive: true}, hi)
				if err != nil {
					t.Fatal(err)
				}
				ranges = append(ranges, r)
			}
			for _, c := range []runCase{{"all", all, false}, {"filter", filter, false}, {"limit", limit, false}, {"paged", paged, false}, {"buffered", all, true}} {
				rd, err := s.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if c.buffered {
					insertAndDelete(t, rd, tbl, 45, 10)
				}
				out, err := copr.RunRanges(ctx, rd, tbl, ranges, &c.p)
				rows, _ := drainRows(t, out, err, 2)
				samePerRange(t, "RunRanges "+c.name, rows, ranges, c.p.Limit, func(r executor.KeyRange) (copr.Outputs, error) {
					out, _, err := copr.Run(ctx, rd, tbl, r, &c.p)
					return out, err
				})
				_ = rd.Rollback(ctx)
			}
		})
	}
}

// pairPrograms returns programs over evenRows' tables: all outputs every
// row's two columns, filter those whose second column is 2.
func pairPrograms() (all, filter copr.Program) {
	all = copr.Program{Columns: []int64{1, 2}, Output: []int{0, 1}}
	filter = all
	filter.Filter = []copr.Expr{{Op: copr.OpEQ, Cmp: copr.CmpSigned, Args: []copr.Expr{
		{Op: copr.OpColumn, Col: 1}, {Op: copr.OpConst, Const: &copr.Datum{Int: 2}}}}}
	return all, filter
}

// evenRows creates table id in s with an integer primary key and a
// second column, and commits the rows (i*2, i%3) for i in [0, 100).
func evenRows(t *testing.T, s *txn.Store, id int64) *executor.Table {
	t.Helper()
	ctx := context.Background()
	tbl := &executor.Table{
		ID: id, Name: fmt.Sprint("t", id),
		Columns:    []executor.Column{{ID: 1}, {ID: 2}},
		HandleKind: executor.HandleInt,
		PrimaryKey: []executor.IndexColumn{{Offset: 0}},
	}
	if err := tbl.Validate(); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 100; i++ {
		if err := executor.AddRecord(ctx, tx, tbl, tablecodec.IntHandle(i*2), []any{i * 2, i % 3}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// insertAndDelete buffers in tx an insert of row (ins, 1) and a delete
// of row (del, del/2%3) of an evenRows table.
func insertAndDelete(t *testing.T, tx *txn.Txn, tbl *executor.Table, ins, del int64) {
	t.Helper()
	ctx := context.Background()
	if err := executor.AddRecord(ctx, tx, tbl, tablecodec.IntHandle(ins), []any{ins, int64(1)}); err != nil {
		t.Fatal(err)
	}
	if err := executor.RemoveRecord(ctx, tx, tbl, tablecodec.IntHandle(del), []any{del, del / 2 % 3}); err != nil {
		t.Fatal(err)
	}
}

// samePerRange checks that rows, a run's output rows of two columns over
// ranges, are what run gives over each range in turn, the limit's taken
// from their start.
func samePerRange(t *testing.T, what string, rows [][]any, ranges []executor.KeyRange, limit int64, run func(executor.KeyRange) (copr.Outputs, error)) {
	t.Helper()
	var each [][]any
	for _, r := range ranges {
		out, err := run(r)
		got, _ := drainRows(t, out, err, 2)
		each = append(each, got...)
	}
	if limit > 0 && len(each) > int(limit) {
		each = each[:limit]
	}
	if fmt.Sprint(each) != fmt.Sprint(rows) || len(rows) == 0 {
		t.Errorf("%s: %v; per range: %v", what, rows, each)
	}
}

// indexedTable returns table id with an integer primary key on its
// first column, a secondary index k on its second, and cols columns.
func indexedTable(t *testing.T, id int64, name string, cols int) *executor.Table {
	t.Helper()
	tbl := &executor.Table{
		ID: id, Name: name,
		HandleKind: executor.HandleInt,
		PrimaryKey: []executor.IndexColumn{{Offset: 0}},
		Indexes:    []executor.Index{{ID: 1, Name: "k", Columns: []executor.IndexColumn{{Offset: 1}}}},
	}
	for i := 1; i <= cols; i++ {
		tbl.Columns = append(tbl.Columns, executor.Column{ID: int64(i)})
	}
	if err := tbl.Validate(); err != nil {
		t.Fatal(err)
	}
	return tbl
}

// runCase is a program a test runs, over writes of the transaction's own
// when buffered.
type runCase struct {
	name     string
	p        copr.Program
	buffered bool
}
