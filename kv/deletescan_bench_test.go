package kv

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkScanPastDeletes measures a scan with LIMIT 1 whose first
// visible key lies past n keys deleted after their last write (a Put and
// a Delete each, as a queue table's consumed rows before GC collects
// them: TPC-C's NEW-ORDER, which Delivery reads from the front with
// ORDER BY ... LIMIT 1). With a lock held elsewhere in the store the scan
// cannot take the latch-free path and also checks the lock space over
// the keys it walked (locked=true). It reports the time per deleted key
// stepped over.
func BenchmarkScanPastDeletes(b *testing.B) {
	for _, n := range []int{100, 1000} {
		for _, locked := range []bool{false, true} {
			b.Run(fmt.Sprintf("deleted=%d/locked=%t", n, locked), func(b *testing.B) { benchScanPastDeletes(b, n, locked) })
		}
	}
}

func benchScanPastDeletes(b *testing.B, n int, locked bool) {
	ctx := context.Background()
	s, err := Open(b.TempDir(), Options{SyncWrites: SyncNone})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	rc := s.Regions()[0].Ctx()
	keys := make([][]byte, n+1)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("t1_r%08d", i))
	}
	commit := func(op Op, batch [][]byte, startTS uint64) {
		muts := make([]Mutation, len(batch))
		for i, k := range batch {
			muts[i] = Mutation{Op: op, Key: k, Value: []byte("a short row value")}
			if op == OpDelete {
				muts[i].Value = nil
			}
		}
		if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: batch[0], StartTS: startTS, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
			b.Fatal(resp, err)
		}
		if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: batch, StartTS: startTS, CommitTS: startTS + 10}); err != nil {
			b.Fatal(err)
		}
	}
	commit(OpPut, keys, 100)
	commit(OpDelete, keys[:n], 200)
	if locked {
		// A transaction still writing elsewhere: its lock may block a
		// read at readTS, so no read is latch-free.
		muts := []Mutation{{Op: OpPut, Key: []byte("z"), Value: []byte("v")}}
		if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: muts[0].Key, StartTS: 300, LockTTL: 100000}); err != nil || len(resp.Errors) > 0 {
			b.Fatal(resp, err)
		}
	}
	// One level, no compaction left to run: the measurement is the
	// walk's alone.
	if err := s.db.Compact([]byte{0}, []byte{0xff}, false); err != nil {
		b.Fatal(err)
	}
	const readTS = 400
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: keys[0], End: []byte("t1_s"), Version: readTS, Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(pairs) != 1 || string(pairs[0].Key) != string(keys[n]) {
			b.Fatalf("scan found %q, want %q", pairs, keys[n])
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/deleted")
}
