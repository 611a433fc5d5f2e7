package kv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// writeSpacePoints counts the internal points (records and tombstones) a
// walk of the whole write space meets.
func writeSpacePoints(t *testing.T, s *Store) int {
	t.Helper()
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: keyspace.WritePrefix(nil), UpperBound: keyspace.SpaceEnd(keyspace.Write)})
	if err != nil {
		t.Fatal(err)
	}
	defer iter.Close()
	for ok := iter.First(); ok; ok = iter.Next() {
	}
	return int(iter.Stats().InternalStats.PointCount)
}

// putVersions commits versions 1 to n of every key ("v1", "v2", …), version
// v with start_ts 10v and commit_ts 10v+5.
func putVersions(ctx context.Context, t *testing.T, s *Store, rc RegionCtx, keys [][]byte, n uint64) {
	t.Helper()
	for v := uint64(1); v <= n; v++ {
		muts := make([]Mutation, len(keys))
		for i, k := range keys {
			muts[i] = Mutation{Op: OpPut, Key: k, Value: []byte(fmt.Sprintf("v%d", v))}
		}
		if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: keys[0], StartTS: 10 * v, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
			t.Fatal(resp, err)
		}
		if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: 10 * v, CommitTS: 10*v + 5}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGCCompactsCollectedRanges: once GC has deleted GCCompactTombstones
// versions, the store compacts the ranges they were in, and the
// tombstones leave the sstables; below the threshold, nothing is compacted.
func TestGCCompactsCollectedRanges(t *testing.T) {
	for _, tc := range []struct {
		name      string
		threshold int
		compacted bool
	}{
		// GC deletes 900 versions: the compaction comes once all are in.
		{"at the threshold", 900, true},
		{"under the threshold", 901, false},
		{"off", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone, GCCompactTombstones: tc.threshold, testingNoAutoCompactions: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rc := s.Regions()[0].Ctx()
			keys := make([][]byte, 300)
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("k%04d", i))
			}
			// Four versions of every key, flushed once, so that the
			// deleted versions lie in an sstable below the tombstones (and
			// two files in level 0 leave Pebble no compaction of its own
			// to do).
			putVersions(ctx, t, s, rc, keys, 4)
			if err := s.db.Flush(); err != nil {
				t.Fatal(err)
			}
			deleted := collectAll(ctx, t, s, rc, 100)
			if deleted != 3*len(keys) {
				t.Fatalf("GC deleted %d versions, want %d", deleted, 3*len(keys))
			}
			if err := s.db.Flush(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(time.Minute); !s.compactor.idle(); {
				if time.Now().After(deadline) {
					t.Fatal("the compactor is still busy after a minute")
				}
				time.Sleep(10 * time.Millisecond)
			}
			// What a read of the write space steps over: Pebble's
			// internal points, tombstones and the records they delete
			// included.
			points := writeSpacePoints(t, s)
			stats := s.GCCompactionStats()
			if tc.compacted {
				if stats.Compactions == 0 || points != len(keys) {
					t.Fatalf("after GC of %d versions: %d compactions, a read steps over %d points; want the range compacted and %d points", deleted, stats.Compactions, points, len(keys))
				}
				if stats.Bytes == 0 {
					t.Fatalf("after GC of %d versions: %d compactions of 0 bytes; want the bytes of the range counted", deleted, stats.Compactions)
				}
			} else if stats.Compactions != 0 || stats.Bytes != 0 || points != len(keys)+2*deleted {
				t.Fatalf("after GC of %d versions: %d compactions, a read steps over %d points; want no compaction and %d points", deleted, stats.Compactions, points, len(keys)+2*deleted)
			}
			// Every key still reads its newest version.
			pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: keys[0], Version: 200})
			if err != nil || len(pairs) != len(keys) || string(pairs[0].Value) != "v4" {
				t.Fatalf("scan after GC: %d pairs, err %v", len(pairs), err)
			}
		})
	}
}

// TestGCCompactionPlan: spans close together merge, spans far apart or in
// other key spaces do not, and a merged span is compacted only with enough
// deletions, densely enough (usage is a fake: 1 MiB of sstables per key
// step of 1,000 between the keys' numbers).
func TestGCCompactionPlan(t *testing.T) {
	key := func(space byte, n int) []byte { return []byte(fmt.Sprintf("%c%06d", space, n)) }
	num := func(k []byte) int {
		var n int
		fmt.Sscanf(string(k[1:]), "%d", &n)
		return n
	}
	c := newGCCompactor(nil, 1000, nil)
	c.usage = func(lo, hi []byte) uint64 {
		if lo[0] != hi[0] {
			return 1 << 40
		}
		return uint64(max(num(hi)-num(lo), 0)) * (1 << 20) / 1000
	}
	span := func(space byte, lo, hi, count int) deletedSpan {
		return deletedSpan{lo: key(space, lo), hi: key(space, hi), count: count}
	}
	compact, keep := c.plan([]deletedSpan{
		span('w', 1000, 1100, 600), // merges with the next (gap: 0.1 MiB)
		span('w', 1200, 1300, 600),
		span('w', 500000, 500100, 2000), // far from them: its own span
		span('d', 1000, 1100, 300),      // another space, too few
		span('w', 900000, 990000, 5000), // enough deletions, 90 MiB: too sparse
	})
	got := func(spans []deletedSpan) []string {
		var out []string
		for _, sp := range spans {
			out = append(out, fmt.Sprintf("%s-%s:%d", sp.lo, sp.hi, sp.count))
		}
		return out
	}
	wantCompact := []string{"w001000-w001300:1200", "w500000-w500100:2000"}
	wantKeep := []string{"d001000-d001100:300", "w900000-w990000:5000"}
	if g := got(compact); fmt.Sprint(g) != fmt.Sprint(wantCompact) {
		t.Errorf("compact %v, want %v", g, wantCompact)
	}
	if g := got(keep); fmt.Sprint(g) != fmt.Sprint(wantKeep) {
		t.Errorf("keep %v, want %v", g, wantKeep)
	}
}
