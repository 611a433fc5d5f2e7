package kv

import (
	"bytes"
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

// BenchmarkGet reads a committed short value (in the write record), warm:
// from the memtable, and from sstables after a flush (as a server reads
// most rows).
func BenchmarkGet(b *testing.B) {
	for _, flushed := range []bool{false, true} {
		name := "memtable"
		if flushed {
			name = "sstable"
		}
		b.Run(name, func(b *testing.B) {
			s, rc, keys := loadBenchKeys(b, 1000, flushed)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v, err := s.Get(ctx, rc, keys[i%len(keys)], 30)
				if err != nil || v == nil {
					b.Fatal(v, err)
				}
			}
		})
	}
}

// BenchmarkBatchGet reads 4 committed short values at once from sstables.
func BenchmarkBatchGet(b *testing.B) {
	for _, n := range []int{4, 16} {
		b.Run(fmt.Sprintf("short/keys=%d", n), func(b *testing.B) { benchBatchGet(b, 40, n) })
		// Over the short-value limit: the values are in the data space.
		b.Run(fmt.Sprintf("long/keys=%d", n), func(b *testing.B) { benchBatchGet(b, 300, n) })
	}
}

// benchBatchGet reads n of 1,000 keys of values of size bytes, flushed,
// in one BatchGet, spread over the keys as a lookup join's batch is.
func benchBatchGet(b *testing.B, size, n int) {
	s, rc, keys := loadBenchValues(b, 1000, true, bytes.Repeat([]byte{'v'}, size))
	ctx := context.Background()
	batch := make([][]byte, n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range batch {
			batch[k] = keys[(i*7+k*61)%len(keys)]
		}
		pairs, err := s.BatchGet(ctx, rc, batch, 30)
		if err != nil || len(pairs) != n {
			b.Fatal(pairs, err)
		}
	}
}

// loadBenchKeys opens an on-disk store and commits n keys with 40-byte
// values at 20, flushing the memtable to sstables when flush is set.
func loadBenchKeys(b *testing.B, n int, flush bool) (*Store, RegionCtx, [][]byte) {
	return loadBenchValues(b, n, flush, []byte("a short row value of some 40 bytes......"))
}

// loadBenchValues commits n keys with value each, in one transaction.
func loadBenchValues(b *testing.B, n int, flush bool, value []byte) (*Store, RegionCtx, [][]byte) {
	ctx := context.Background()
	s := openBenchStore(b, SyncNone)
	rc := s.Regions()[0].Ctx()
	var muts []Mutation
	var keys [][]byte
	for i := 0; i < n; i++ {
		k := []byte(fmt.Sprintf("t1_r%08d", i))
		muts = append(muts, Mutation{Op: OpPut, Key: k, Value: value})
		keys = append(keys, k)
	}
	if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: keys[0], StartTS: 10, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
		b.Fatal(resp, err)
	}
	if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: 10, CommitTS: 20}); err != nil {
		b.Fatal(err)
	}
	if flush {
		if err := s.db.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	return s, rc, keys
}

// BenchmarkPrewriteCommit runs whole two-phase transactions of 1 and 10
// keys, with and without syncing the WAL, and with a context that cannot
// end (the command writes itself) or one that can, as a statement's
// (the write runs on a goroutine of its own: inflight.go).
func BenchmarkPrewriteCommit(b *testing.B) {
	for _, sync := range []SyncMode{SyncNone, SyncAlways} {
		for _, n := range []int{1, 10} {
			for _, cancellable := range []bool{false, true} {
				b.Run(fmt.Sprintf("keys=%d/sync=%v/cancellable=%v", n, sync == SyncAlways, cancellable), func(b *testing.B) {
					ctx := context.Background()
					if cancellable {
						var cancel context.CancelFunc
						ctx, cancel = context.WithCancel(ctx)
						defer cancel()
					}
					benchPrewriteCommit(b, ctx, sync, n)
				})
			}
		}
	}
}

func benchPrewriteCommit(b *testing.B, ctx context.Context, sync SyncMode, n int) {
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

// BenchmarkScan scans 100 of 1,000 committed keys (one version each) from
// sstables, as a range query of sysbench's oltp_read_only does, forward
// and (reverse/) in descending order, as ORDER BY ... DESC reads.
func BenchmarkScan(b *testing.B) {
	for _, reverse := range []bool{false, true} {
		dir := ""
		if reverse {
			dir = "reverse/"
		}
		for _, page := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("%sshort/page=%d", dir, page), func(b *testing.B) { benchScan(b, 40, page, reverse) })
			// Over the short-value limit: the values are in the data space.
			b.Run(fmt.Sprintf("%slong/page=%d", dir, page), func(b *testing.B) { benchScan(b, 300, page, reverse) })
		}
	}
}

// benchScan scans pages of page keys of 1,000 values of n bytes, flushed.
func benchScan(b *testing.B, n, page int, reverse bool) {
	s, rc, keys := loadBenchValues(b, 1000, true, bytes.Repeat([]byte{'v'}, n))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := (i * page) % (len(keys) - page)
		pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: keys[j], End: keys[j+page], Version: 30, Reverse: reverse})
		if err != nil || len(pairs) != page {
			b.Fatal(len(pairs), err)
		}
	}
}
