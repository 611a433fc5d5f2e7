package kv

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkGetSpreadVersions measures point reads (a sysbench point
// select's KV read) of keys among 20,000 written `versions` times, laid
// out by loadSpread (the first version in the bottom level, each later
// one in a level-0 file of its own); cpu-ns/op is the reading thread's
// CPU time.
func BenchmarkGetSpreadVersions(b *testing.B) {
	for _, versions := range []int{1, 3} {
		b.Run(fmt.Sprintf("versions=%d", versions), func(b *testing.B) {
			ctx := context.Background()
			s, rc, keys := loadSpread(b, Options{}, versions)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ResetTimer()
			began := threadCPU(b)
			for i := 0; i < b.N; i++ {
				if v, err := s.Get(ctx, rc, keys[(i*7919)%len(keys)], 100000); err != nil || v == nil {
					b.Fatal(v, err)
				}
			}
			b.ReportMetric(float64((threadCPU(b)-began)/time.Nanosecond)/float64(b.N), "cpu-ns/op")
		})
	}
}
