package kv

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestScansCompactCrossedRanges: GC's deletions alone stay under the
// compaction threshold, but scans that step over the tombstones, of
// deleted keys or of the older versions of live ones, report what they
// crossed, and once that and the deletions reach the threshold the range
// is compacted: a scan then steps over its records and nothing hidden.
// Scans over few tombstones, or with the reports off, leave the range as
// it is, and so do scans over older versions not collected, which they
// leave with NextPrefix (decideForward) and count as records. The walks
// here are the write space's (reverse ones, and all before the latest
// space).
func TestScansCompactCrossedRanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		// keys each get versions versions; then all but every
		// liveEvery-th key are deleted (liveEvery 1: none). GC keeps
		// the newest version of a live key unless noGC.
		keys, versions, liveEvery  int
		noGC, noReports, compacted bool
	}{
		// 270 keys deleted, 1,350 records, and 90 versions of live
		// keys: 2,880 hidden points a scan.
		{name: "crossed often", keys: 300, versions: 4, liveEvery: 10, compacted: true},
		{name: "reports off", keys: 300, versions: 4, liveEvery: 10, noReports: true},
		// 112 records deleted: 224 hidden points a scan, under
		// scanReportHidden.
		{name: "few tombstones", keys: 40, versions: 2, liveEvery: 10},
		// 900 versions collected under live keys: 1,800 hidden points.
		{name: "collected versions", keys: 300, versions: 4, liveEvery: 1, compacted: true},
		// 900 versions not collected: records, not hidden points.
		{name: "live versions", keys: 300, versions: 4, liveEvery: 1, noGC: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			// The threshold is above GC's deletions: only scans can
			// bring a range to it.
			s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone, GCCompactTombstones: 2000,
				testingNoAutoCompactions: true, testingNoScanReports: tc.noReports, testingWriteSpaceWalks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rc := s.Regions()[0].Ctx()
			keys := make([][]byte, tc.keys)
			var live, dead [][]byte
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("k%04d", i))
				if i%tc.liveEvery == 0 {
					live = append(live, keys[i])
				} else {
					dead = append(dead, keys[i])
				}
			}
			commit := func(keys [][]byte, op Op, v int) {
				t.Helper()
				if len(keys) == 0 {
					return
				}
				muts := make([]Mutation, len(keys))
				for i, k := range keys {
					muts[i] = Mutation{Op: op, Key: k}
					if op == OpPut {
						muts[i].Value = []byte(fmt.Sprintf("v%d", v))
					}
				}
				startTS := uint64(10 * v)
				if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: keys[0], StartTS: startTS, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
					t.Fatal(resp, err)
				}
				if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: startTS, CommitTS: startTS + 5}); err != nil {
					t.Fatal(err)
				}
			}
			for v := 1; v <= tc.versions; v++ {
				commit(keys, OpPut, v)
			}
			commit(dead, OpDelete, tc.versions+1)
			// The versions go to an sstable, the tombstones stay above it.
			if err := s.db.Flush(); err != nil {
				t.Fatal(err)
			}
			// A deleted key loses its Puts and its Delete; a live one
			// all but its newest version.
			deleted := 0
			if !tc.noGC {
				deleted = collectAll(ctx, t, s, rc, 1000)
				if want := len(dead)*(tc.versions+1) + len(live)*(tc.versions-1); deleted != want {
					t.Fatalf("GC deleted %d versions, want %d", deleted, want)
				}
			}
			waitIdle := func() {
				t.Helper()
				for deadline := time.Now().Add(time.Minute); !s.compactor.idle(); {
					if time.Now().After(deadline) {
						t.Fatal("the compactor is still busy after a minute")
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			waitIdle()
			if n := s.GCCompactionStats().Compactions; n != 0 {
				t.Fatalf("%d compactions after GC alone; want none (under the threshold)", n)
			}
			// scan reads every key and returns what it stepped over.
			scan := func() ScanCost {
				t.Helper()
				before := s.ScanCost()
				pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: keys[0], Version: 2000})
				if err != nil || len(pairs) != len(live) || string(pairs[0].Value) != fmt.Sprintf("v%d", tc.versions) {
					t.Fatalf("scan: %d pairs, err %v", len(pairs), err)
				}
				after := s.ScanCost()
				return ScanCost{Keys: after.Keys - before.Keys, Records: after.Records - before.Records, Points: after.Points - before.Points}
			}
			// Each record GC deleted is two hidden points, its record
			// and its tombstone.
			wantHidden := uint64(2 * deleted)
			first := scan()
			if first.Keys != uint64(len(live)) || first.Points-first.Records != wantHidden {
				t.Fatalf("first scan stepped over %+v; want %d keys and %d hidden points", first, len(live), wantHidden)
			}
			for range 3 {
				scan()
				waitIdle()
			}
			c := scan()
			hidden := c.Points - c.Records
			compactions := s.GCCompactionStats().Compactions
			if tc.compacted {
				if compactions == 0 || hidden != 0 {
					t.Fatalf("after five scans: %d compactions, a scan steps over %d hidden points; want the range compacted and none", compactions, hidden)
				}
				return
			}
			if compactions != 0 || hidden != wantHidden {
				t.Fatalf("after five scans: %d compactions, a scan steps over %d hidden points; want no compaction and %d", compactions, hidden, wantHidden)
			}
		})
	}
}

// TestReadsWaitForGC: a range read's report counts only when GC deleted
// nothing since the report before it (a pass under way compacts on its
// own deletions), and the reports go with the spans the goroutine takes.
func TestReadsWaitForGC(t *testing.T) {
	c := newGCCompactor(nil, 1000, nil)
	span := func(lo, hi string, count int) deletedSpan {
		return deletedSpan{lo: []byte(lo), hi: []byte(hi), count: count}
	}
	took := func() string {
		var out []string
		spans, _ := c.take()
		for _, sp := range spans {
			out = append(out, fmt.Sprintf("%s-%s:%d", sp.lo, sp.hi, sp.count))
		}
		return fmt.Sprint(out)
	}
	c.add(span("w1", "w2", 100))  // GC deletes
	c.read(span("w0", "w9", 400)) // during the pass: dropped
	c.read(span("w0", "w9", 200)) // GC quiet since the last report: counts
	c.add(span("w3", "w4", 10))   // GC again
	c.read(span("w0", "w9", 500)) // dropped
	if got, want := took(), "[w1-w2:100 w3-w4:10 w0-w9:200]"; got != want {
		t.Fatalf("took %s, want %s", got, want)
	}
	if len(c.kick) != 0 {
		t.Fatal("kicked with 200 points read and 110 deletions, under a quarter of the threshold")
	}
	c.read(span("w0", "w9", 250)) // quiet since the last report
	if len(c.kick) == 0 {
		t.Fatal("not kicked with 250 points read, a quarter of the threshold")
	}
	if got, want := took(), "[w0-w9:250]"; got != want {
		t.Fatalf("took %s, want %s", got, want)
	}
}

// collectAll runs GC over the whole region at safePoint and returns the
// versions it deleted.
func collectAll(ctx context.Context, t *testing.T, s *Store, rc RegionCtx, safePoint uint64) int {
	t.Helper()
	deleted := 0
	req := &GCRequest{Region: rc, SafePoint: safePoint}
	for {
		resp, err := s.GC(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		deleted += int(resp.VersionsDeleted)
		if resp.Next == nil {
			return deleted
		}
		req.Start = resp.Next
	}
}
