package tso_test

import (
	"context"
	"testing"

	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/tso/internal/tsotest"
)

// TestBatchClientOverOracle runs many callers through a BatchClient over a
// real oracle: every caller's timestamps rise, no two callers share one,
// and no timestamp is asked of the oracle for nobody.
func TestBatchClientOverOracle(t *testing.T) {
	o := openOracle(t, openStore(t, t.TempDir()), tso.Options{})
	src := &tsotest.CountingSource{Source: o}
	c := tso.NewBatchClient(src, tso.ClientOptions{MaxBatch: 16})
	defer c.Close()

	const callers = 64
	rounds := 500
	if testing.Short() {
		rounds = 100
	}
	tsotest.CheckIssued(t, tsotest.Callers(t, callers, rounds, func(ctx context.Context, _ int) (uint64, uint32, error) {
		ts, err := c.GetTimestamp(ctx)
		return ts, 1, err
	}))
	if got := src.Timestamps.Load(); got != callers*int64(rounds) {
		t.Fatalf("oracle issued %d timestamps for %d requests", got, callers*rounds)
	}
	t.Logf("%d requests, %d oracle calls", callers*rounds, src.Calls.Load())
}

// BenchmarkBatchClientOracle measures timestamps per second through a
// BatchClient over an in-process oracle, with 64 concurrent callers; the
// Cancelable variant gives each caller its own cancelable context.
func BenchmarkBatchClientOracle(b *testing.B) {
	for _, cancelable := range []bool{false, true} {
		name := "Background"
		if cancelable {
			name = "Cancelable"
		}
		b.Run(name, func(b *testing.B) {
			o := openOracle(b, openStore(b, b.TempDir()), tso.Options{})
			src := &tsotest.CountingSource{Source: o}
			c := tso.NewBatchClient(src, tso.ClientOptions{})
			defer c.Close()
			tsotest.Bench(b, tsotest.BenchOptions{Callers: 64, Cancelable: cancelable}, c.GetTimestamp)
			src.ReportBatching(b)
		})
	}
}

// BenchmarkOracleDirect measures the oracle alone: 64 callers each asking
// for one timestamp per call, no batching.
func BenchmarkOracleDirect(b *testing.B) {
	o := openOracle(b, openStore(b, b.TempDir()), tso.Options{})
	tsotest.Bench(b, tsotest.BenchOptions{Callers: 64}, func(ctx context.Context) (uint64, error) {
		return o.GetTimestamps(ctx, 1)
	})
}

// TestBatchClientTimestampAbove: a timestamp above a floor one past the
// newest issued costs one oracle call (two timestamps in it), where
// asking again after a plain GetTimestamp at the floor costs two; mixed
// with plain callers over batches too small for every pair, all
// timestamps stay distinct and rising per caller.
func TestBatchClientTimestampAbove(t *testing.T) {
	ctx := context.Background()
	o := openOracle(t, openStore(t, t.TempDir()), tso.Options{})
	src := &tsotest.CountingSource{Source: o}
	c := tso.NewBatchClient(src, tso.ClientOptions{MaxBatch: 3})
	defer c.Close()

	for range 100 {
		last, err := c.GetTimestamp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		calls := src.Calls.Load()
		// A one-phase commit may have taken last+1, the next timestamp.
		ts, err := c.GetTimestampAbove(ctx, last+1)
		if err != nil {
			t.Fatal(err)
		}
		if ts <= last+1 {
			t.Fatalf("GetTimestampAbove(%d) = %d, want above the floor", last+1, ts)
		}
		if n := src.Calls.Load() - calls; n != 1 {
			t.Fatalf("GetTimestampAbove made %d oracle calls, want 1", n)
		}
	}

	rounds := 300
	if testing.Short() {
		rounds = 60
	}
	tsotest.CheckIssued(t, tsotest.Callers(t, 16, rounds, func(ctx context.Context, i int) (uint64, uint32, error) {
		if i%2 == 0 {
			ts, err := c.GetTimestamp(ctx)
			return ts, 1, err
		}
		ts, err := c.GetTimestampAbove(ctx, 0)
		return ts, 1, err
	}))
}
