package kv

import (
	"context"
	"testing"
)

// BenchmarkGetAmidCommits is a point read on a store that commits all the
// time: each op commits one row in one phase (as an autocommit UPDATE
// does) and reads another, from sstables (1,000 rows, flushed). Before the
// cache kept generations per key, every commit made the cached iterators
// stale and the read opened a fresh one; count instructions with
// callgrind for an A/B (docs/benchmarks.md, issue 13's write path):
//
//	go test ./kv -run '^$' -bench GetAmidCommits -benchmem
func BenchmarkGetAmidCommits(b *testing.B) {
	s, rc, keys := loadBenchKeys(b, 1000, true)
	ctx := context.Background()
	value := []byte("a short row value of some 40 bytes......")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := keys[(i*7)%len(keys)]
		startTS := uint64(100 + 10*i)
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: w, StartTS: startTS, MaxCommitTS: startTS + 5, TryOnePC: true,
			Mutations: []Mutation{{Op: OpPut, Key: w, Value: value}}})
		if err != nil || resp.OnePCCommitTS == 0 || len(resp.Errors) > 0 {
			b.Fatal(resp, err)
		}
		r := keys[(i*13+1)%len(keys)]
		if v, err := s.Get(ctx, rc, r, startTS+8); err != nil || v == nil {
			b.Fatal(v, err)
		}
	}
}
