package kv

import (
	"context"
	"fmt"
	"syscall"
	"testing"
)

// BenchmarkScanVersions reads pages of 100 keys (a sysbench range read)
// at the newest versions of keys rewritten `versions` times and not yet
// collected (the life time keeps every version of the last ten minutes):
// what skipping the older versions of each key costs a range read.
func BenchmarkScanVersions(b *testing.B) {
	const n, page = 5000, 100
	for _, versions := range []int{1, 2, 4, 8, 32} {
		b.Run(fmt.Sprintf("versions=%d", versions), func(b *testing.B) {
			s, rc, keys, readTS := loadVersions(b, n, versions, false, false)
			benchScanPages(b, s, rc, keys, readTS, page)
		})
	}
}

// benchScanPages runs b.N Scans of page keys of keys at readTS, spread
// over them, and reports the process's CPU time per scan.
func benchScanPages(b *testing.B, s *Store, rc RegionCtx, keys [][]byte, readTS uint64, page int) {
	ctx := context.Background()
	n := len(keys)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for i := 0; i < b.N; i++ {
		j := (i * 7919) % (n - page)
		pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: keys[j], End: keys[j+page], Version: readTS})
		if err != nil || len(pairs) != page {
			b.Fatal(len(pairs), err)
		}
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the CPU time the process has used, user and system,
// in nanoseconds: a figure a loaded machine inflates less than wall time.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
