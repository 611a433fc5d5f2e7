package copr_test

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
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

// scanCounter is a kv.Client that counts the scan and batch get
// requests it passes on.
type scanCounter struct {
	kv.Client
	scans, batchGets atomic.Int64
}

// BatchGet implements kv.Client.
func (c *scanCounter) BatchGet(ctx context.Context, region kv.RegionCtx, keys [][]byte, version uint64) ([]kv.KvPair, error) {
	c.batchGets.Add(1)
	return c.Client.BatchGet(ctx, region, keys, version)
}

// Scan implements kv.Client.
func (c *scanCounter) Scan(ctx context.Context, req *kv.ScanRequest) ([]kv.KvPair, error) {
	c.scans.Add(1)
	return c.Client.Scan(ctx, req)
}

// countedStore returns a store over an in-memory kv store whose
// requests the returned scanCounter counts.
func countedStore(t *testing.T) (*txn.Store, *scanCounter) {
	t.Helper()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone, Coprocessor: copr.Evaluator{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	counter := &scanCounter{Client: kv.NewLocalClient(ks)}
	s := txn.NewStore(counter, txntest.NewClockOracle(0), txn.Options{})
	t.Cleanup(func() { _ = s.Close() })
	return s, counter
}

// TestRunLookupRangesAhead checks that the index ranges of a lookup read
// forwards to their ends are read together, one scan request for all the
// ranges of a region rather than one per range, and that a range with
// more entries than the read ahead takes (k BETWEEN 1 AND 2 below: about
// 310) goes on from its last entry read with an iterator: the rows
// are RunLookup's range by range, with the transaction's own writes.
func TestRunLookupRangesAhead(t *testing.T) {
	ctx := context.Background()
	s, counter := countedStore(t)
	tbl := indexedTable(t, 160, "a", 2)
	ix := &tbl.Indexes[0]
	addSevenths(t, s, tbl, 1200)
	ranges := inclusiveRanges(t, tbl, ix, [][2]any{{int64(1), int64(2)}, {int64(4), int64(4)}, {int64(5), int64(5)}, {int64(6), int64(6)}, {int64(8), int64(9)}})
	all := copr.Program{Columns: []int64{1, 2}, Output: []int{0, 1}}
	for _, buffered := range []bool{false, true} {
		rd, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if buffered {
			if err := executor.AddRecord(ctx, rd, tbl, tablecodec.IntHandle(5000), []any{int64(5000), int64(5)}); err != nil {
				t.Fatal(err)
			}
		}
		before := counter.scans.Load()
		out, err := copr.RunLookupRanges(ctx, rd, tbl, ix, ranges, &all)
		rows, _ := drainRows(t, out, err, 2)
		scans := counter.scans.Load() - before
		samePerRange(t, "RunLookupRanges ahead", rows, ranges, 0, func(r executor.KeyRange) (copr.Outputs, error) {
			return copr.RunLookup(ctx, rd, tbl, ix, r, &all)
		})
		// One request for the five ranges, and the pages of the rest of
		// the long range (k BETWEEN 1 AND 2) after its first entries
		// (where an iterator per range made a request per range and page). The range
		// with a buffered write is read with an iterator of its own.
		if max := int64(3); !buffered && scans > max {
			t.Errorf("%d scan requests for %d ranges, want at most %d", scans, len(ranges), max)
		}
		_ = rd.Rollback(ctx)
	}
}

// TestRunLookupCovering checks that a lookup whose program reads only
// columns the index's entries hold (the primary key and the indexed
// column) makes its rows from the entries, with no batch get of the
// rows, forwards and backwards, and outputs what the lookup that reads
// the rows does; a program that reads another column reads the rows.
func TestRunLookupCovering(t *testing.T) {
	ctx := context.Background()
	s, counter := countedStore(t)
	tbl := indexedTable(t, 170, "c", 3)
	ix := &tbl.Indexes[0]
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 300; i++ {
		k := any(i % 7)
		if i%11 == 0 {
			k = nil
		}
		if err := executor.AddRecord(ctx, tx, tbl, tablecodec.IntHandle(i), []any{i, k, 3 * i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var ranges []executor.KeyRange
	for _, b := range [][2]any{{nil, nil}, {int64(2), int64(3)}, {int64(5), int64(5)}} {
		r, err := tbl.IndexRange(ix, executor.Bound{Values: []any{b[0]}, Inclusive: true}, executor.Bound{Values: []any{b[1]}, Inclusive: true})
		if err != nil {
			t.Fatal(err)
		}
		ranges = append(ranges, r)
	}
	identity := func(int) func(any) any { return func(v any) any { return v } }
	keyOnly := copr.Program{Columns: []int64{1, 2}, Output: []int{0, 1}}
	limited := keyOnly
	limited.Limit = 20
	withQ := copr.Program{Columns: []int64{1, 2, 3}, Output: []int{0, 1, 2}}
	for _, c := range []struct {
		name    string
		p       copr.Program
		reverse bool
		covered bool
	}{
		{"covered", keyOnly, false, true},
		{"covered backwards", limited, true, true},
		{"not covered", withQ, false, false},
	} {
		rd, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cols := len(c.p.Output)
		out, err := copr.RunLookupWith(ctx, rd, tbl, ix, ranges, &c.p, copr.LookupOptions{Reverse: c.reverse})
		want, _ := drainRows(t, out, err, cols)
		before := counter.batchGets.Load()
		out, err = copr.RunLookupWith(ctx, rd, tbl, ix, ranges, &c.p, copr.LookupOptions{Reverse: c.reverse, Convert: identity})
		got, _ := drainRows(t, out, err, cols)
		gets := counter.batchGets.Load() - before
		if fmt.Sprint(got) != fmt.Sprint(want) || len(got) == 0 || len(got[0]) != cols {
			t.Errorf("%s: %v, reading the rows %v", c.name, got, want)
		}
		if c.covered != (gets == 0) {
			t.Errorf("%s: %d batch gets of rows", c.name, gets)
		}
		_ = rd.Rollback(ctx)
	}
}

// TestRunLookupAggregateBatch checks that a lookup feeding an aggregate
// without a limit, which reads every row its ranges point to, reads them
// in one batch get (up to the largest batch), where one that outputs rows
// starts small and doubles (a LIMIT above it may stop the read early):
// issue 13's count(*), sum(q) WHERE k < 100 OR k > 99900 made three
// requests for its 192 rows.
func TestRunLookupAggregateBatch(t *testing.T) {
	ctx := context.Background()
	s, counter := countedStore(t)
	tbl := indexedTable(t, 180, "g", 2)
	ix := &tbl.Indexes[0]
	addSevenths(t, s, tbl, 1200)
	// k = 2 and k BETWEEN 4 AND 5: about 470 rows, past a first batch.
	ranges := inclusiveRanges(t, tbl, ix, [][2]any{{int64(2), int64(2)}, {int64(4), int64(5)}})
	count := copr.Program{Columns: []int64{1, 2}, Aggregate: true, Aggs: []copr.Agg{{Func: copr.AggCountStar}}}
	rows := copr.Program{Columns: []int64{1, 2}, Output: []int{0, 1}}
	for _, c := range []struct {
		name             string
		p                copr.Program
		minGets, maxGets int64
	}{
		{"aggregate", count, 1, 1},
		{"rows", rows, 2, 1 << 10},
	} {
		rd, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		before := counter.batchGets.Load()
		out, err := copr.RunLookupRanges(ctx, rd, tbl, ix, ranges, &c.p)
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := out.Next(ctx); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		if n := out.Examined(); n < 400 {
			t.Errorf("%s: %d rows examined, want the ranges' ~470", c.name, n)
		}
		out.Close()
		if gets := counter.batchGets.Load() - before; gets < c.minGets || gets > c.maxGets {
			t.Errorf("%s: %d batch gets of rows, want %d to %d", c.name, gets, c.minGets, c.maxGets)
		}
		_ = rd.Rollback(ctx)
	}
}

// inclusiveRanges returns the ranges of index ix of tbl between each
// pair of bounds, both ends inclusive.
func inclusiveRanges(t *testing.T, tbl *executor.Table, ix *executor.Index, bounds [][2]any) []executor.KeyRange {
	t.Helper()
	var ranges []executor.KeyRange
	for _, b := range bounds {
		r, err := tbl.IndexRange(ix, executor.Bound{Values: []any{b[0]}, Inclusive: true}, executor.Bound{Values: []any{b[1]}, Inclusive: true})
		if err != nil {
			t.Fatal(err)
		}
		ranges = append(ranges, r)
	}
	return ranges
}
