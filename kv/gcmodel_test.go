package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"testing"
	"time"

	"github.com/percdb/percdb/kv/internal/keyspace"
)

// TestReadsAfterGCMatchModel is differential, as TestScansMatchGets, over
// the layouts a table under update churn and GC goes through: random
// transactions (Put, Delete, Lock; two-phase, one-phase, rolled back) on
// hot and cold keys, flushes and compactions of parts of the key space
// between them, and every few rounds a GC pass at a safe point some way
// behind, in small batches that cut inside keys, followed by the store's
// own compaction of what it collected. After each pass every read the
// safe point still allows, at timestamps from it to now 1 to 6 apart
// (transactions start 10 apart), must give
// what the model of the whole history gives: forward and reverse scans,
// whole and in pages (walks that leave keys with NextPrefix, and GC's
// tombstones under them), Coprocessor walks and Gets; a read below the
// safe point must fail with *GCTooOldError, never answer. A scan that
// skipped a version GC had to keep, or returned one it deleted, fails it.
func TestReadsAfterGCMatchModel(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			ctx := context.Background()
			rnd := rand.New(rand.NewSource(seed))
			// A small compaction threshold, so that the store compacts
			// what GC collected (gccompact.go) within the test.
			s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone, Coprocessor: countCoprocessor{}, GCCompactTombstones: 16})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rc := s.Regions()[0].Ctx()
			h := newModelHistory(rnd, 100, 10)
			ts, safePoint := uint64(10), uint64(0)
			var deleted uint64
			for round := 1; round <= 120; round++ {
				startTS := ts
				muts := h.randomMutations(rnd, startTS)
				keysOf := mutationKeys(muts)
				onePC := rnd.Intn(3) == 0
				req := &PrewriteRequest{Region: rc, Mutations: muts, Primary: muts[0].Key, StartTS: startTS, LockTTL: 1000}
				if onePC {
					req.TryOnePC, req.MaxCommitTS = true, startTS+5
				}
				resp, err := s.Prewrite(ctx, req)
				if err != nil || len(resp.Errors) > 0 {
					t.Fatal(resp, err)
				}
				commitTS := resp.OnePCCommitTS
				switch {
				case commitTS != 0:
				case rnd.Intn(6) == 0:
					// Rolled back: Rollback records, no versions.
					if err := s.BatchRollback(ctx, rc, keysOf, startTS); err != nil {
						t.Fatal(err)
					}
				default:
					commitTS = startTS + 5
					if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keysOf, StartTS: startTS, CommitTS: commitTS}); err != nil {
						t.Fatal(err)
					}
				}
				if commitTS != 0 {
					h.committed(muts, commitTS)
				}
				ts = max(ts, commitTS) + 10
				switch rnd.Intn(8) {
				case 0, 1:
					if err := s.db.Flush(); err != nil {
						t.Fatal(err)
					}
				case 2:
					// Compact part of the write space: some of a key's
					// versions in the bottom level, others above.
					a, b := h.sorted[rnd.Intn(len(h.sorted))], h.sorted[rnd.Intn(len(h.sorted))]
					if bytes.Compare(a, b) > 0 {
						a, b = b, a
					}
					if err := s.db.Compact(keyspace.WritePrefix(a), keyspace.PrefixEnd(keyspace.WritePrefix(b)), false); err != nil {
						t.Fatal(err)
					}
				}
				if round%10 != 0 {
					continue
				}
				// A GC pass at a safe point 0 to 30 rounds behind.
				safePoint = max(safePoint, ts-min(ts-1, uint64(rnd.Intn(300))))
				gc := &GCRequest{Region: rc, SafePoint: safePoint, Limit: 1 + rnd.Intn(8)}
				for {
					resp, err := s.GC(ctx, gc)
					if err != nil {
						t.Fatal(err)
					}
					deleted += resp.VersionsDeleted
					if resp.Next == nil {
						break
					}
					gc.Start = resp.Next
				}
				if rnd.Intn(2) == 0 {
					// Read once the compaction of what GC deleted has
					// dropped its tombstones; otherwise while it runs or
					// before it, over them.
					for deadline := time.Now().Add(time.Minute); !s.compactor.idle(); {
						if time.Now().After(deadline) {
							t.Fatal("the compaction after GC did not end within a minute")
						}
						time.Sleep(time.Millisecond)
					}
				}
				for at := safePoint; at <= ts; at += 1 + uint64(rnd.Intn(6)) {
					h.checkReads(ctx, t, s, rc, at, rnd, fmt.Sprintf("round %d, safe point %d", round, safePoint))
					want := 0
					for _, k := range h.sorted {
						if h.valueAt(k, at) != nil {
							want++
						}
					}
					cr, err := s.Coprocessor(ctx, &CoprocessorRequest{Region: rc, Start: []byte{}, Version: at})
					if err != nil || string(cr.Data) != strconv.Itoa(want) {
						t.Fatalf("round %d: coprocessor walk at %d: %v rows, %v; want %d", round, at, cr, err, want)
					}
				}
				if safePoint > 1 {
					var tooOld *GCTooOldError
					if _, err := s.Get(ctx, rc, h.hot[0], safePoint-1); !errors.As(err, &tooOld) {
						t.Fatalf("get below the safe point %d: %v, want *GCTooOldError", safePoint, err)
					}
					if _, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: []byte{}, Version: safePoint - 1}); !errors.As(err, &tooOld) {
						t.Fatalf("scan below the safe point %d: %v, want *GCTooOldError", safePoint, err)
					}
				}
			}
			// What the test is for happened: GC deleted versions and
			// the store compacted them away.
			if deleted == 0 || s.GCCompactionStats().Compactions == 0 {
				t.Fatalf("GC deleted %d versions, the store ran %d compactions after it: the test covers nothing",
					deleted, s.GCCompactionStats().Compactions)
			}
			t.Logf("GC deleted %d versions, %d compactions after it", deleted, s.GCCompactionStats().Compactions)
		})
	}
}
