package copr_test

import (
	"context"
	"math/rand"
	"strings"
	"syscall"
	"testing"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// BenchmarkScanPrograms evaluates scanbench's aggregates (bench/scan) in
// one store over 100,000 rows of (id, w, k, q, pad) with an index on k,
// flushed to sstables: each iteration sends one program over the whole
// range, response by response, as one region's walk (no parallel parts,
// no SQL), and reports the time per row. "walk" is the store's own
// key-only scan of the rows, the floor under every program:
//
//	go test ./executor/copr -run '^$' -bench ScanPrograms -count 6
func BenchmarkScanPrograms(b *testing.B) {
	benchScanPrograms(b, 100)
}

// BenchmarkScanProgramsLong is BenchmarkScanPrograms over rows with a
// 300-byte pad, past the store's short-value limit as TPC-C's stock rows
// are: each row's value is in the data space.
func BenchmarkScanProgramsLong(b *testing.B) {
	benchScanPrograms(b, 300)
}

func benchScanPrograms(b *testing.B, padLen int) {
	ctx := context.Background()
	ks, err := kv.Open(b.TempDir(), kv.Options{SyncWrites: kv.SyncNone, Coprocessor: copr.Evaluator{}})
	if err != nil {
		b.Fatal(err)
	}
	defer ks.Close()
	s := txn.NewStore(kv.NewLocalClient(ks), txntest.NewClockOracle(0), txn.Options{})
	tbl := &executor.Table{
		ID: 70, Name: "t",
		Columns:    []executor.Column{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5}},
		HandleKind: executor.HandleInt,
		PrimaryKey: []executor.IndexColumn{{Offset: 0}},
		Indexes:    []executor.Index{{ID: 1, Name: "k", Columns: []executor.IndexColumn{{Offset: 2}}}},
	}
	if err := tbl.Validate(); err != nil {
		b.Fatal(err)
	}
	const rows = 100000
	r := rand.New(rand.NewSource(1))
	pad := strings.Repeat("x", padLen)
	for i := 0; i < rows; i += 5000 {
		tx, err := s.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for id := i + 1; id <= i+5000; id++ {
			row := []any{int32(id), int32(id%10 + 1), int32(r.Intn(rows) + 1), int32(r.Intn(100)), pad}
			if err := executor.AddRecord(ctx, tx, tbl, tablecodec.IntHandle(int64(id)), row); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// Close waits for the secondaries committed in the background: the
	// walks meet no lock.
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if err := ks.Flush(); err != nil {
		b.Fatal(err)
	}
	ixRange, err := tbl.IndexRange(&tbl.Indexes[0], executor.Bound{}, executor.Bound{})
	if err != nil {
		b.Fatal(err)
	}
	const version = 1 << 62 // past every commit
	col := func(i int) *copr.Expr { return &copr.Expr{Op: copr.OpColumn, Col: i} }
	countStar := []copr.Agg{{Func: copr.AggCountStar}}
	for _, c := range []struct {
		name string
		r    executor.KeyRange
		p    *copr.Program
	}{
		{"count(*)", tbl.RowRange(), &copr.Program{Aggregate: true, Aggs: countStar}},
		{"count(*) of index k", ixRange, &copr.Program{Aggregate: true, Aggs: countStar}},
		{"count(*) WHERE q > 50", tbl.RowRange(), &copr.Program{Columns: []int64{4}, Aggregate: true, Aggs: countStar,
			Filter: []copr.Expr{{Op: copr.OpGT, Cmp: copr.CmpSigned, Args: []copr.Expr{*col(0), {Op: copr.OpConst, Const: &copr.Datum{Int: 50}}}}}}},
		{"COUNT(DISTINCT k)", tbl.RowRange(), &copr.Program{Columns: []int64{3}, Aggregate: true, DistinctInts: true, GroupBy: []copr.Expr{*col(0)}}},
		{"GROUP BY w: count(*), max(id)", tbl.RowRange(), &copr.Program{Columns: []int64{2, 1}, Aggregate: true, GroupBy: []copr.Expr{*col(0)},
			Keep: []int{0}, Aggs: []copr.Agg{{Func: copr.AggCountStar}, {Func: copr.AggMax, Arg: col(1)}}}},
		{"ORDER BY q DESC, id LIMIT 10", tbl.RowRange(), &copr.Program{Columns: []int64{2, 1, 4},
			OrderBy: []copr.Order{{Col: 2, Desc: true}, {Col: 1}}, Limit: 10, Output: []int{0, 1, 2}}},
		{"count(*), sum(q) WHERE k BETWEEN 1000 AND 6000", tbl.RowRange(), &copr.Program{Columns: []int64{3, 4}, Aggregate: true,
			Filter: []copr.Expr{
				{Op: copr.OpGE, Cmp: copr.CmpSigned, Args: []copr.Expr{*col(0), {Op: copr.OpConst, Const: &copr.Datum{Int: 1000}}}},
				{Op: copr.OpLE, Cmp: copr.CmpSigned, Args: []copr.Expr{*col(0), {Op: copr.OpConst, Const: &copr.Datum{Int: 6000}}}}},
			Aggs: []copr.Agg{{Func: copr.AggCountStar}, {Func: copr.AggSum, Arg: col(1)}}}},
		{"GROUP BY w: sum(q)", tbl.RowRange(), &copr.Program{Columns: []int64{2, 4}, Aggregate: true, GroupBy: []copr.Expr{*col(0)},
			Keep: []int{0}, Aggs: []copr.Agg{{Func: copr.AggSum, Arg: col(1)}}}},
	} {
		prog, err := c.p.Encode()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for range b.N {
				n := int64(0)
				for start := c.r.Start; start != nil; {
					resp, err := ks.Coprocessor(ctx, &kv.CoprocessorRequest{Region: ks.Regions()[0].Ctx(), Start: start, End: c.r.End, Version: version, Program: prog})
					if err != nil {
						b.Fatal(err)
					}
					n += resp.Visited
					start = resp.Resume
				}
				if n != rows {
					b.Fatalf("%d rows visited, want %d", n, rows)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
			// The process's CPU time, which a loaded machine inflates
			// less than the wall time.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/rows, "cpu-ns/row")
		})
	}
	b.Run("walk", func(b *testing.B) {
		for range b.N {
			pairs, err := ks.Scan(ctx, &kv.ScanRequest{Region: ks.Regions()[0].Ctx(), Start: tbl.RowRange().Start, End: tbl.RowRange().End, Version: version, KeyOnly: true})
			if err != nil || len(pairs) != rows {
				b.Fatal(len(pairs), err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
	})
}

// processCPU is the process's user and system CPU time so far, in
// nanoseconds (0 where it cannot be read).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
