package copr_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// TestRunReverse checks that a backward read of table ranges
// (RunReverse) and of index ranges (RunLookupReverse) outputs the rows
// the forward read outputs, in the other order, cut at the limit from
// the last: in the store and over gRPC, over a table split into regions,
// with a filter, a limit, pages that stop inside a range, and writes of
// the transaction's own (which only the in-process read sees); and that
// without such writes RunReverse is evaluated next to the data (one
// coprocessor request per region and page, no scan).
func TestRunReverse(t *testing.T) {
	ctx := context.Background()
	all := copr.Program{Columns: []int64{1, 2}, Output: []int{0, 1}}
	filter := all
	filter.Filter = []copr.Expr{{Op: copr.OpIn, Cmp: copr.CmpSigned, Args: []copr.Expr{
		{Op: copr.OpColumn, Col: 1}, intConst(1), intConst(5)}}}
	paged := all
	paged.PageRows = 64
	stores, ks := clientsOf(t)
	var seen commandCounts
	stores["counted"] = txn.NewStore(kv.Instrument(kv.NewLocalClient(ks), &seen), txntest.NewClockOracle(0), txn.Options{})
	t.Cleanup(func() { _ = stores["counted"].Close() })
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			tbl := indexedTable(t, 170+int64(len(name)), "rv", 2)
			ix := &tbl.Indexes[0]
			// More rows than a scan page (txn's ScanPageSize).
			row := addSevenths(t, s, tbl, 700)
			for _, h := range []int64{20, 250, 600} {
				if _, _, err := ks.SplitRegion(ctx, tablecodec.RowKey(nil, tbl.ID, tablecodec.IntHandle(h))); err != nil {
					t.Fatal(err)
				}
			}
			handles := func(lo, hi int64) executor.KeyRange {
				r, err := tbl.HandleRange(executor.Bound{Values: []any{lo}, Inclusive: true}, executor.Bound{Values: []any{hi}, Inclusive: true})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			keys := func(lo, hi any) executor.KeyRange {
				r, err := tbl.IndexRange(ix, executor.Bound{Values: []any{lo}, Inclusive: true}, executor.Bound{Values: []any{hi}, Inclusive: true})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			whole, err := tbl.HandleRange(executor.Bound{}, executor.Bound{})
			if err != nil {
				t.Fatal(err)
			}
			tableRanges := [][]executor.KeyRange{{whole}, {handles(3, 40)}, {handles(3, 40), handles(100, 399), handles(650, 800)}}
			indexRanges := [][]executor.KeyRange{{keys(nil, int64(6))}, {keys(nil, nil), keys(int64(2), int64(3)), keys(int64(5), int64(6))}}
			for _, limit := range []int64{0, 1, 7, 300} {
				for _, pc := range []struct {
					name string
					p    copr.Program
				}{{"all", all}, {"filter", filter}, {"paged", paged}} {
					p := pc.p
					p.Limit = limit
					for _, buffered := range []bool{false, true} {
						what := fmt.Sprintf("%s limit %d buffered %v", pc.name, limit, buffered)
						rd, err := s.Begin(ctx)
						if err != nil {
							t.Fatal(err)
						}
						if buffered {
							if err := executor.AddRecord(ctx, rd, tbl, tablecodec.IntHandle(1000), []any{int64(1000), int64(5)}); err != nil {
								t.Fatal(err)
							}
							if err := executor.RemoveRecord(ctx, rd, tbl, tablecodec.IntHandle(36), row(36)); err != nil {
								t.Fatal(err)
							}
						}
						forward := p
						forward.Limit = 0
						for _, rs := range tableRanges {
							before := seen.of(kv.CmdScan)
							out, err := copr.RunReverse(ctx, rd, tbl, rs, &p)
							got, _ := drainRows(t, out, err, 2)
							if name == "counted" && !buffered && seen.of(kv.CmdScan) != before {
								t.Errorf("RunReverse %s: read by %d scans, not next to the data", what, seen.of(kv.CmdScan)-before)
							}
							out, err = copr.RunRanges(ctx, rd, tbl, rs, &forward)
							want, _ := drainRows(t, out, err, 2)
							sameBackwards(t, "RunReverse "+what, got, want, limit)
						}
						for _, rs := range indexRanges {
							out, err := copr.RunLookupReverse(ctx, rd, tbl, ix, rs, &p)
							got, _ := drainRows(t, out, err, 2)
							out, err = copr.RunLookupRanges(ctx, rd, tbl, ix, rs, &forward)
							want, _ := drainRows(t, out, err, 2)
							sameBackwards(t, "RunLookupReverse "+what, got, want, limit)
						}
						_ = rd.Rollback(ctx)
					}
				}
			}
			// A top-N is not read backwards; ranges out of order are
			// refused.
			rd, err := s.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			topN := all
			topN.Limit, topN.OrderBy = 3, []copr.Order{{Col: 1, Desc: true}}
			if _, err := copr.RunReverse(ctx, rd, tbl, []executor.KeyRange{whole}, &topN); err == nil {
				t.Error("a top-N was read backwards")
			}
			if _, err := copr.RunReverse(ctx, rd, tbl, []executor.KeyRange{handles(100, 200), handles(1, 5)}, &all); err == nil {
				t.Error("ranges out of order were read")
			}
			_ = rd.Rollback(ctx)
		})
	}
}

// commandCounts counts the requests of each command an instrumented
// client served.
type commandCounts struct{ n [64]atomic.Int64 }

// ObserveRequest implements kv.RequestObserver.
func (c *commandCounts) ObserveRequest(r kv.RequestStats) { c.n[r.Command].Add(1) }

// of returns how many requests of cmd were served.
func (c *commandCounts) of(cmd kv.Command) int64 { return c.n[cmd].Load() }

// addSevenths commits n rows (i, i % 7) to tbl for i in [0, n), but
// (i, NULL) for every eleventh, and returns the function that makes row
// i.
func addSevenths(t *testing.T, s *txn.Store, tbl *executor.Table, n int64) func(int64) []any {
	t.Helper()
	ctx := context.Background()
	row := func(i int64) []any {
		if i%11 == 0 {
			return []any{i, nil}
		}
		return []any{i, i % 7}
	}
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < n; i++ {
		if err := executor.AddRecord(ctx, tx, tbl, tablecodec.IntHandle(i), row(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return row
}

// sameBackwards checks that got is want reversed, cut at limit (0: no
// limit).
func sameBackwards(t *testing.T, what string, got, want [][]any, limit int64) {
	t.Helper()
	want = slices.Clone(want)
	slices.Reverse(want)
	if limit > 0 && len(want) > int(limit) {
		want = want[:limit]
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
		t.Errorf("%s: %d rows %v; want %d rows %v", what, len(got), got, len(want), want)
	}
}
