package copr_test

import (
	"context"
	"errors"
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/txn"
)

// TestLimitFirstPage checks that a read under a LIMIT asks the store for
// the rows it wants, not a scan page: in a transaction reading the
// latest state (txn.Store.BeginLatest), whose one request stands only
// if the caller needs no more, a backward read of the last row by
// primary key takes no timestamp, and a lookup of three rows through an
// index gets its three entries in one page, so that its rows' read is a
// second request (txn.ErrLatestSpent). With a page of txn's
// ScanPageSize either would be read at a start_ts instead. In the store
// and over gRPC.
func TestLimitFirstPage(t *testing.T) {
	ctx := context.Background()
	for name, s := range clients(t) {
		t.Run(name, func(t *testing.T) {
			tbl := indexedTable(t, 190+int64(len(name)), "fp", 2)
			addSevenths(t, s, tbl, 700) // more rows than a scan page
			whole, err := tbl.HandleRange(executor.Bound{}, executor.Bound{})
			if err != nil {
				t.Fatal(err)
			}
			// An ordinary read first settles the load's locks.
			rd, err := s.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			all := copr.Program{Columns: []int64{1, 2}, Output: []int{0, 1}}
			out, err := copr.RunRanges(ctx, rd, tbl, []executor.KeyRange{whole}, &all)
			if rows, _ := drainRows(t, out, err, 2); len(rows) != 700 {
				t.Fatalf("%d rows, want 700", len(rows))
			}
			_ = rd.Rollback(ctx)

			calls := s.OracleCalls()
			last := all
			last.Limit = 1
			rd, err = s.BeginLatest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out, err = copr.RunReverse(ctx, rd, tbl, []executor.KeyRange{whole}, &last)
			rows, _ := drainRows(t, out, err, 2)
			if len(rows) != 1 || rows[0][0] != int64(699) || s.OracleCalls() != calls || !rd.ReadLatest() {
				t.Fatalf("last row %v with %d timestamps (read at the latest state: %v), want 699 with none", rows, s.OracleCalls()-calls, rd.ReadLatest())
			}
			_ = rd.Rollback(ctx)

			three := all
			three.Limit = 3
			ix := &tbl.Indexes[0]
			keys, err := tbl.IndexRange(ix, executor.Bound{Values: []any{int64(2)}, Inclusive: true}, executor.Bound{})
			if err != nil {
				t.Fatal(err)
			}
			rd, err = s.BeginLatest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = copr.RunLookup(ctx, rd, tbl, ix, keys, &three)
			if !errors.Is(err, txn.ErrLatestSpent) {
				t.Fatalf("lookup of three rows at the latest state: %v, want ErrLatestSpent", err)
			}
			_ = rd.Rollback(ctx)
		})
	}
}
