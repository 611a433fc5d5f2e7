package kv

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkLastChange reads keys whose newest version is a Put under
// `locks` Lock records (committed SELECT ... FOR UPDATE of unchanged
// rows), with the Lock records' last-change pointers and with them
// stripped (records written before pointers existed): a BatchGet of 10
// keys (valueWrite) and a Scan of 100 (decideForward). cpu-ns/op is the
// process's CPU time per operation, which the machine's load changes
// less than the wall clock. Run with -count and compare with benchstat.
func BenchmarkLastChange(b *testing.B) {
	const n, batch, page = 2000, 10, 100
	for _, locks := range []int{1, 2, 4, 8, 16, 64} {
		for _, pointers := range []bool{true, false} {
			ctx := context.Background()
			var (
				s      *Store
				rc     RegionCtx
				keys   [][]byte
				readTS uint64
			)
			// The store outlives each sub-benchmark's runs: it is the
			// outer benchmark's to clean up.
			outer := b
			load := func(b *testing.B) {
				if s == nil {
					s, rc, keys, readTS = loadLocked(outer, n, locks, pointers)
				}
			}
			name := fmt.Sprintf("locks=%d/pointers=%t", locks, pointers)
			b.Run("get/"+name, func(b *testing.B) {
				load(b)
				get := make([][]byte, batch)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := processCPU(b)
				for i := 0; i < b.N; i++ {
					for j := range get {
						get[j] = keys[(i*batch+j)*7919%n]
					}
					pairs, err := s.BatchGet(ctx, rc, get, readTS)
					if err != nil || len(pairs) != batch {
						b.Fatal(len(pairs), err)
					}
				}
				b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
			})
			b.Run("scan/"+name, func(b *testing.B) {
				load(b)
				benchScanPages(b, s, rc, keys, readTS, page)
			})
		}
	}
}

// loadLocked writes n keys, a Put each, then locks them `locks` times
// in transactions that change nothing, flushing each but the last, and
// strips the Lock records' pointers unless pointers is set. It returns a timestamp above
// every record.
func loadLocked(b *testing.B, n, locks int, pointers bool) (*Store, RegionCtx, [][]byte, uint64) {
	ctx := context.Background()
	s, rc := memStore(b)
	keys := rowKeys(n)
	writeVersion(b, s, rc, keys, []byte("a short row value of some 40 bytes......"), 100)
	for v := 1; v <= locks; v++ {
		startTS := uint64(200 + 10*v)
		for lo := 0; lo < n; lo += 1000 {
			batch := keys[lo:min(lo+1000, n)]
			muts := make([]Mutation, len(batch))
			for i, k := range batch {
				muts[i] = Mutation{Op: OpLock, Key: k}
			}
			if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: batch[0], StartTS: startTS, LockTTL: 3000}); err != nil || len(resp.Errors) > 0 {
				b.Fatal(resp, err)
			}
			if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: batch, StartTS: startTS, CommitTS: startTS + 5}); err != nil {
				b.Fatal(err)
			}
		}
		if !pointers {
			stripLastChange(b, s)
		}
		if v < locks {
			// Spread over level-0 files and the memtable, as a
			// key's records lie while they are young: a seek
			// positions every one of them.
			if err := s.db.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	return s, rc, keys, uint64(200 + 10*locks + 50)
}
