package kv

import (
	"context"
	"fmt"
	"testing"
)

// openBenchStore opens an on-disk store (so that SyncAlways really waits
// for the disk) closed at the end of the benchmark.
func openBenchStore(b *testing.B, sync SyncMode) *Store {
	b.Helper()
	s, err := Open(b.TempDir(), Options{SyncWrites: sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkGet reads a committed short value (in the write record), warm.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	s := openBenchStore(b, SyncNone)
	rc := s.Regions()[0].Ctx()
	const keys = 1000
	var muts []Mutation
	var all [][]byte
	for i := 0; i < keys; i++ {
		k := []byte(fmt.Sprintf("t1_r%08d", i))
		muts = append(muts, Mutation{Op: OpPut, Key: k, Value: []byte("a short row value of some 40 bytes......")})
		all = append(all, k)
	}
	if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: all[0], StartTS: 10, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
		b.Fatal(resp, err)
	}
	if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: all, StartTS: 10, CommitTS: 20}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, err := s.Get(ctx, rc, all[i%keys], 30)
		if err != nil || v == nil {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkPrewriteCommit runs whole two-phase transactions of 1 and 10
// keys, with and without syncing the WAL.
func BenchmarkPrewriteCommit(b *testing.B) {
	for _, sync := range []SyncMode{SyncNone, SyncAlways} {
		for _, n := range []int{1, 10} {
			b.Run(fmt.Sprintf("keys=%d/sync=%v", n, sync == SyncAlways), func(b *testing.B) {
				benchPrewriteCommit(b, sync, n)
			})
		}
	}
}

func benchPrewriteCommit(b *testing.B, sync SyncMode, n int) {
	ctx := context.Background()
	s := openBenchStore(b, sync)
	rc := s.Regions()[0].Ctx()
	value := []byte("a short row value of some 40 bytes......")
	muts := make([]Mutation, n)
	keys := make([][]byte, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range muts {
			keys[j] = []byte(fmt.Sprintf("t1_r%08d_%02d", i, j))
			muts[j] = Mutation{Op: OpPut, Key: keys[j], Value: value}
		}
		start := uint64(2*i + 10)
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: keys[0], StartTS: start, LockTTL: 1000})
		if err != nil || len(resp.Errors) > 0 {
			b.Fatal(resp, err)
		}
		if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: start, CommitTS: start + 1}); err != nil {
			b.Fatal(err)
		}
	}
}
