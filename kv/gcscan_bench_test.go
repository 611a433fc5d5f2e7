package kv

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// BenchmarkScanAfterGC measures a full scan of 20,000 keys that were each
// rewritten `versions` times and then collected at a safe point below the
// newest version (so every key keeps two versions, as a table under steady
// updates does with a life time of about one update per row), against the
// same keys loaded once: the cost GC leaves behind, with and without the
// compaction of the collected ranges (gccompact.go).
func BenchmarkScanAfterGC(b *testing.B) {
	const n, versions = 20000, 8
	b.Run("fresh", func(b *testing.B) { benchScanVersions(b, n, 1, false, false) })
	b.Run("nogc", func(b *testing.B) { benchScanVersions(b, n, versions, false, false) })
	b.Run("gc/compact=off", func(b *testing.B) { benchScanVersions(b, n, versions, true, false) })
	b.Run("gc/compact=on", func(b *testing.B) { benchScanVersions(b, n, versions, true, true) })
}

func benchScanVersions(b *testing.B, n, versions int, gc, compact bool) {
	ctx := context.Background()
	s, rc, keys, readTS := loadVersions(b, n, versions, gc, compact)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var got int
		start := keys[0]
		for {
			pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: start, Version: readTS, Limit: 1024})
			if err != nil {
				b.Fatal(err)
			}
			got += len(pairs)
			if len(pairs) < 1024 {
				break
			}
			start = append(append([]byte(nil), pairs[len(pairs)-1].Key...), 0)
		}
		if got != n {
			b.Fatalf("scan found %d keys, want %d", got, n)
		}
	}
}

// loadVersions writes n keys `versions` times (each version flushed to an
// sstable of its own), collected below the newest version when gc, and
// returns the store, its region, the keys and a timestamp that reads the
// newest versions.
func loadVersions(b *testing.B, n, versions int, gc, compact bool) (*Store, RegionCtx, [][]byte, uint64) {
	ctx := context.Background()
	opts := Options{SyncWrites: SyncNone}
	if !compact {
		opts.GCCompactTombstones = -1
	}
	s, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	rc := s.Regions()[0].Ctx()
	keys := rowKeys(n)
	value := []byte("a short row value of some 40 bytes......")
	for v := 1; v <= versions; v++ {
		writeVersion(b, s, rc, keys, value, uint64(100*v))
	}
	if gc {
		runGC(ctx, b, s, rc, uint64(100*(versions-1)+20)) // keeps the last two versions
		if err := s.db.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	for compact && !s.compactor.idle() {
		time.Sleep(10 * time.Millisecond)
	}
	return s, rc, keys, uint64(100*versions + 50)
}

// BenchmarkScanSpreadVersions measures a full Coprocessor walk of 20,000
// keys of 130-byte rows, each written `versions` times, with sstable
// blocks of Pebble's default size and of blockSize, the first version
// compacted to the bottom level and each later one flushed to a level-0
// file of its own, as the versions younger than the GC safe point lie in
// a table under updates; cpu-us/op is the walk's thread CPU time, which
// the machine's load changes less than the wall clock.
func BenchmarkScanSpreadVersions(b *testing.B) {
	for _, bs := range []int{4 << 10, blockSize} {
		for _, versions := range []int{1, 3} {
			b.Run(fmt.Sprintf("block=%dKiB/versions=%d", bs>>10, versions), func(b *testing.B) { benchScanSpread(b, bs, versions) })
		}
	}
}

// BenchmarkScanFormats measures the walk of BenchmarkScanSpreadVersions
// (32 KiB blocks) with the sstables of the format of before (RocksDBv2:
// NextPrefix compares keys, every value in the data blocks) and of
// storeFormat (Pebblev3: prefix bits, older versions' values in value
// blocks; comparer.go), the versions spread over levels as there, and all
// compacted into the bottom level, as a range is after the compaction
// that follows GC.
func BenchmarkScanFormats(b *testing.B) {
	formats := []struct {
		name   string
		format pebble.FormatMajorVersion
	}{{"RocksDBv2", pebble.FormatMostCompatible}, {"Pebblev3", storeFormat}}
	for _, layout := range []string{"spread", "compacted"} {
		for _, versions := range []int{1, 2, 3} {
			for _, f := range formats {
				b.Run(fmt.Sprintf("layout=%s/versions=%d/format=%s", layout, versions, f.name), func(b *testing.B) {
					opts := Options{Coprocessor: countCoprocessor{}, testingFormat: f.format}
					s, rc, keys := loadSpread(b, opts, versions)
					if layout == "compacted" {
						if err := s.db.Compact([]byte{0}, []byte{0xff}, false); err != nil {
							b.Fatal(err)
						}
					}
					benchWalk(b, s, rc, keys)
				})
			}
		}
	}
}

func benchScanSpread(b *testing.B, blockSize, versions int) {
	s, rc, keys := loadSpread(b, Options{Coprocessor: countCoprocessor{}, testingBlockSize: blockSize}, versions)
	benchWalk(b, s, rc, keys)
}

// benchWalk runs b.N full Coprocessor walks of keys and reports their
// thread CPU time.
func benchWalk(b *testing.B, s *Store, rc RegionCtx, keys [][]byte) {
	ctx := context.Background()
	n := len(keys)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		began := threadCPU(b)
		resp, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Start: keys[0], Version: 100000})
		cpu += threadCPU(b) - began
		if err != nil || string(resp.Data) != fmt.Sprint(n) {
			b.Fatal(resp, err)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
}

// loadSpread opens a store with opts (without automatic compactions),
// closed when b ends, and writes 20,000 keys of 130-byte values
// `versions` times: the first version compacted to the bottom level, each
// later one flushed to a level-0 file of its own.
func loadSpread(b *testing.B, opts Options, versions int) (*Store, RegionCtx, [][]byte) {
	opts.SyncWrites, opts.testingNoAutoCompactions = SyncNone, true
	s, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	rc := s.Regions()[0].Ctx()
	keys := make([][]byte, 20000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("t1_r%08d", i))
	}
	value := make([]byte, 130)
	for v := 1; v <= versions; v++ {
		writeVersion(b, s, rc, keys, value, uint64(100*v))
		if v == 1 {
			if err := s.db.Compact([]byte{0}, []byte{0xff}, false); err != nil {
				b.Fatal(err)
			}
		}
	}
	return s, rc, keys
}

// rowKeys returns n keys of rows of one table, in order.
func rowKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("t1_r%08d", i))
	}
	return keys
}

// writeVersion writes value to every key in transactions of 1,000 keys
// at startTS (committed 10 later) and flushes them to a level-0 file.
func writeVersion(b testing.TB, s *Store, rc RegionCtx, keys [][]byte, value []byte, startTS uint64) {
	commitVersion(b, s, rc, keys, value, startTS)
	if err := s.db.Flush(); err != nil {
		b.Fatal(err)
	}
}

// commitVersion is writeVersion without the flush: the versions stay in
// the memtable.
func commitVersion(b testing.TB, s *Store, rc RegionCtx, keys [][]byte, value []byte, startTS uint64) {
	ctx := context.Background()
	for lo := 0; lo < len(keys); lo += 1000 {
		batch := keys[lo:min(lo+1000, len(keys))]
		muts := make([]Mutation, len(batch))
		for i, k := range batch {
			muts[i] = Mutation{Op: OpPut, Key: k, Value: value}
		}
		if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: batch[0], StartTS: startTS, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
			b.Fatal(resp, err)
		}
		if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: batch, StartTS: startTS, CommitTS: startTS + 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanShadowedCopies measures what a layout that kept each key's
// newest record under one key of its own (rewritten in place at every
// commit, older versions elsewhere) would cost the walk of
// BenchmarkScanFormats (20,000 keys, 32 KiB blocks, Pebblev3) under
// updates: every record of the write space is written a second time
// under the same key and flushed to a level-0 file above the bottom
// level's, so that the walk meets one record a key, over a shadowed copy
// Pebble merges and drops itself until a compaction removes it (layout
// "spread"; "compacted" after that compaction: the fresh table). Compare
// with layout=spread/versions=2 there, where the second record is an
// older version the walk must step over (issue 16).
func BenchmarkScanShadowedCopies(b *testing.B) {
	for _, layout := range []string{"spread", "compacted"} {
		b.Run("layout="+layout, func(b *testing.B) {
			s, rc, keys := loadSpread(b, Options{Coprocessor: countCoprocessor{}}, 1)
			rewriteRecords(b, s, keys)
			if err := s.db.Flush(); err != nil {
				b.Fatal(err)
			}
			if layout == "compacted" {
				if err := s.db.Compact([]byte{0}, []byte{0xff}, false); err != nil {
					b.Fatal(err)
				}
			}
			benchWalk(b, s, rc, keys)
		})
	}
}

// BenchmarkScanChurnShare compares the two layouts a table under updates
// can have, with a share of its keys written since the bottom level was
// compacted, as a churned table has (issue 16): 20,000 keys of 130-byte
// rows compacted into the bottom level, then a share of them, chosen at
// random, written once more, and the walk of BenchmarkScanFormats over the
// whole table.
//
//   - kind=version: the write is a newer version (percdb's layout), which
//     the walk reads and then steps over the older one. Under churn the
//     share is that of the rows with a version younger than the GC safe
//     point, which no compaction lowers: 1 - e^(-updates·life/rows).
//   - kind=copy: the write rewrites the key's record in place (a layout
//     keeping each key's newest record under a key of its own, older
//     versions elsewhere), which Pebble merges and drops over the shadowed
//     copy. The share is that of the rows written since that space was
//     last compacted, which a compaction trigger bounds.
//
// where=memtable leaves the writes in the memtable, where=l0 flushes them
// to a level-0 file. Read its instructions with callgrind (docs/benchmarks.md).
func BenchmarkScanChurnShare(b *testing.B) {
	for _, kind := range []string{"version", "copy"} {
		for _, where := range []string{"memtable", "l0"} {
			for _, share := range []int{0, 10, 20, 50, 90} {
				b.Run(fmt.Sprintf("kind=%s/where=%s/share=%d", kind, where, share), func(b *testing.B) {
					s, rc, keys := loadSpread(b, Options{Coprocessor: countCoprocessor{}}, 1)
					rnd := rand.New(rand.NewSource(1))
					var some [][]byte
					for _, k := range keys {
						if rnd.Intn(100) < share {
							some = append(some, k)
						}
					}
					if kind == "version" && len(some) > 0 {
						commitVersion(b, s, rc, some, make([]byte, 130), 200)
					}
					if kind == "copy" && len(some) > 0 {
						rewriteRecords(b, s, some)
					}
					if where == "l0" {
						if err := s.db.Flush(); err != nil {
							b.Fatal(err)
						}
					}
					benchWalk(b, s, rc, keys)
				})
			}
		}
	}
}

// rewriteRecords writes every write-space record of keys a second time
// under the same Pebble key.
func rewriteRecords(b *testing.B, s *Store, keys [][]byte) {
	wb := s.db.NewBatch()
	for _, k := range keys {
		iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: keyspace.WritePrefix(k), UpperBound: keyspace.PrefixEnd(keyspace.WritePrefix(k))})
		if err != nil {
			b.Fatal(err)
		}
		for ok := iter.First(); ok; ok = iter.Next() {
			if err := wb.Set(iter.Key(), iter.Value(), nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := iter.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if err := wb.Commit(pebble.NoSync); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkScanLatestShadowed walks the latest space of a small table
// whose rows were each rewritten `copies` times since the last flush, as
// under sysbench oltp_read_write (10,000 rows, every copy rewritten in
// place within one memtable, gc7: about 6 points merged a record): the
// walk leaves each key's shadowed copies behind (visitLatest). It reports
// the Pebble points merged a key beside the time. It does not reproduce
// the six points: at copies=6 its walks merged 1.0-2.1 a key (the
// memtable flushes between the versions), and NextPrefix in place of
// Next in visitLatest changed neither the points nor the CPU beyond the
// noise (branch upidx8, docs/benchmarks.md).
func BenchmarkScanLatestShadowed(b *testing.B) {
	for _, copies := range []int{1, 6} {
		b.Run(fmt.Sprintf("copies=%d", copies), func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{SyncWrites: SyncNone, Latest: LatestAlways, Coprocessor: countCoprocessor{}, testingNoAutoCompactions: true})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			rc := s.Regions()[0].Ctx()
			keys := rowKeys(10000)
			value := make([]byte, 130)
			for v := 1; v <= copies; v++ {
				commitVersion(b, s, rc, keys, value, uint64(100*v))
			}
			before := s.ScanCost()
			benchWalk(b, s, rc, keys)
			after := s.ScanCost()
			if keys := after.Keys - before.Keys; keys > 0 {
				b.ReportMetric(float64(after.Points-before.Points)/float64(keys), "points/key")
			}
		})
	}
}
