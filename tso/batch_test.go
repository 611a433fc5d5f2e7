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
