package tsotest

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/percdb/percdb/tso"
)

// BenchOptions tunes Bench.
type BenchOptions struct {
	// Callers is how many goroutines call at once. Default 64.
	Callers int
	// Cancelable gives each goroutine its own cancelable context, as a
	// caller with a request deadline has; otherwise all use
	// context.Background, which a BatchClient waits on more cheaply.
	Cancelable bool
}

// Bench makes b.N calls of get from opts.Callers goroutines and reports
// the timestamps per second as "ts/s", so that the figures of the oracle,
// the batching client and the gRPC service compare.
func Bench(b *testing.B, opts BenchOptions, get func(context.Context) (uint64, error)) {
	if opts.Callers <= 0 {
		opts.Callers = 64
	}
	procs := runtime.GOMAXPROCS(0)
	// RunParallel starts parallelism*GOMAXPROCS goroutines.
	b.SetParallelism((opts.Callers + procs - 1) / procs)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		if opts.Cancelable {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
		}
		for pb.Next() {
			if _, err := get(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ts/s")
}

// CountingSource counts the calls and timestamps that reach a Source.
type CountingSource struct {
	tso.Source
	Calls, Timestamps atomic.Int64
}

// GetTimestamps implements tso.Source.
func (s *CountingSource) GetTimestamps(ctx context.Context, count uint32) (uint64, error) {
	s.Calls.Add(1)
	s.Timestamps.Add(int64(count))
	return s.Source.GetTimestamps(ctx, count)
}

// ReportBatching reports how many timestamps each Source call carried, on
// average, as "ts/call".
func (s *CountingSource) ReportBatching(b *testing.B) {
	if calls := s.Calls.Load(); calls > 0 {
		b.ReportMetric(float64(s.Timestamps.Load())/float64(calls), "ts/call")
	}
}
