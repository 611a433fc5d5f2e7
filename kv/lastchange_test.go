package kv

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// TestLastChangeReads is differential: random histories over a few keys,
// most transactions only locking them (long runs of Lock records, with
// Puts, Deletes and rollbacks between, some committed in one phase),
// some Lock records written without a pointer as before the pointer
// existed, protective Rollback records landing later below records that
// already point past them, keys locked but never written. It checks
// that each committed Lock record points at the key's newest Put or
// Delete below it, then reads the store at every timestamp with Get,
// BatchGet and forward and reverse scans against a model: with the
// pointers, after a GC pass (above its safe point), and again with every
// pointer stripped from the records.
func TestLastChangeReads(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			ctx := context.Background()
			rnd := rand.New(rand.NewSource(seed))
			s, rc := memStore(t)
			h := newModelHistory(rnd, 10, 3)
			ts := lastChangeHistory(ctx, t, s, rc, h, rnd, 160)

			pointers := checkLastChangePointers(t, s, h)
			if pointers == 0 {
				t.Fatal("no Lock record carries a pointer")
			}
			// Point reads at every timestamp follow pointers both
			// ways (the walks' are checked by the reads below, and
			// fail where a seek lands wrong).
			r := newMVCCReader(s.db)
			for at := uint64(1); at <= ts; at++ {
				for _, k := range h.sorted {
					if _, err := r.valueWrite(k, at); err != nil {
						t.Fatal(err)
					}
				}
			}
			seeks, noValues := r.seekJumps, r.noValueJumps
			r.close()
			if seeks == 0 || noValues == 0 {
				t.Fatalf("reads followed %d pointers with a seek and %d to no value; want some of each", seeks, noValues)
			}
			for at := uint64(1); at <= ts; at++ {
				checkLastChangeReads(ctx, t, s, rc, h, at, rnd, "with pointers")
			}

			sp := ts / 2
			runGC(ctx, t, s, rc, sp)
			for at := sp; at <= ts; at++ {
				checkLastChangeReads(ctx, t, s, rc, h, at, rnd, "after GC")
			}

			stripLastChange(t, s)
			if n := checkLastChangePointers(t, s, nil); n != 0 {
				t.Fatalf("%d pointers left after stripping", n)
			}
			for at := sp; at <= ts; at++ {
				checkLastChangeReads(ctx, t, s, rc, h, at, rnd, "without pointers")
			}
		})
	}
}

// lastChangeHistory writes rounds random transactions over h's keys into
// s and returns the timestamp after the last. Timestamps: round i starts
// at 10i; a two-phase commit is at 10i+5, a one-phase one at 10i+1, a
// Lock record written without a pointer at 10i+7, a protective rollback
// of an earlier round at 10j+3.
func lastChangeHistory(ctx context.Context, t *testing.T, s *Store, rc RegionCtx, h *modelHistory, rnd *rand.Rand, rounds int) uint64 {
	t.Helper()
	ts := uint64(10)
	for round := 0; round < rounds; round++ {
		startTS := ts
		batch := map[string]bool{}
		var muts []Mutation
		for n := 1 + rnd.Intn(3); n > 0; n-- {
			k := h.keys[rnd.Intn(len(h.keys))]
			if batch[string(k)] {
				continue
			}
			batch[string(k)] = true
			m := Mutation{Key: k, Op: OpLock}
			switch r := rnd.Intn(40); {
			case r < 3:
				m.Op, m.Value = OpPut, []byte(fmt.Sprintf("%s@%d", k, startTS))
				if r == 0 {
					m.Value = bytes.Repeat(m.Value, 40) // past the short-value limit
				}
			case r < 5:
				m.Op = OpDelete
			}
			muts = append(muts, m)
		}
		keys := mutationKeys(muts)
		onePC := rnd.Intn(4) == 0
		req := &PrewriteRequest{Region: rc, Mutations: muts, Primary: muts[0].Key, StartTS: startTS, LockTTL: 1000}
		if onePC {
			req.TryOnePC, req.MaxCommitTS = true, startTS+1
		}
		resp, err := s.Prewrite(ctx, req)
		if err != nil || len(resp.Errors) > 0 {
			t.Fatal(resp, err)
		}
		switch {
		case onePC && resp.OnePCCommitTS != 0:
			h.committed(muts, resp.OnePCCommitTS)
		case rnd.Intn(8) == 0:
			if err := s.BatchRollback(ctx, rc, keys, startTS); err != nil {
				t.Fatal(err)
			}
		default:
			if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: startTS, CommitTS: startTS + 5}); err != nil {
				t.Fatal(err)
			}
			h.committed(muts, startTS+5)
		}
		if rnd.Intn(8) == 0 {
			// A Lock record as written before pointers existed.
			k := h.keys[rnd.Intn(len(h.keys))]
			old := (&txntypes.Write{Type: txntypes.WriteLock, StartTS: startTS + 6}).Encode()
			if err := s.db.Set(keyspace.WriteKey(k, startTS+7), old, nil); err != nil {
				t.Fatal(err)
			}
		}
		if round > 0 && rnd.Intn(6) == 0 {
			// A transaction of an earlier round, never seen on this key,
			// is rolled back on it: a Rollback record lands below Lock
			// records already pointing past it.
			k := h.keys[rnd.Intn(len(h.keys))]
			if err := s.BatchRollback(ctx, rc, [][]byte{k}, 10*uint64(1+rnd.Intn(round))+3); err != nil {
				t.Fatal(err)
			}
		}
		if rnd.Intn(10) == 0 {
			if err := s.db.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		ts += 10
	}
	return ts
}

// checkLastChangePointers checks that every Lock record with a pointer in
// s points at the newest Put or Delete below it in h (h nil: only counts
// them), and returns their number.
func checkLastChangePointers(t *testing.T, s *Store, h *modelHistory) int {
	t.Helper()
	n := 0
	eachWriteRecord(t, s, func(key []byte, cts uint64, w *txntypes.Write) {
		if !w.HasLastChange() {
			return
		}
		n++
		if h == nil {
			return
		}
		want := uint64(0)
		for _, v := range h.versions[string(key)] {
			if v.ts < cts {
				want = v.ts
			}
		}
		if w.LastChangeTS != want {
			t.Fatalf("Lock record of %s at %d points at %d (%d versions), want %d", key, cts, w.LastChangeTS, w.VersionsToLastChange, want)
		}
	})
	return n
}

// eachWriteRecord calls fn with each record of s's write space.
func eachWriteRecord(t testing.TB, s *Store, fn func(key []byte, commitTS uint64, w *txntypes.Write)) {
	t.Helper()
	iter, err := s.db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer iter.Close()
	for ok := iter.SeekGE(keyspace.SpaceStart(keyspace.Write)); ok && bytes.Compare(iter.Key(), keyspace.SpaceEnd(keyspace.Write)) < 0; ok = iter.Next() {
		key, cts, err := keyspace.DecodeWriteKey(iter.Key())
		if err != nil {
			t.Fatal(err)
		}
		w, err := txntypes.DecodeWrite(iter.Value())
		if err != nil {
			t.Fatal(err)
		}
		fn(key, cts, w)
	}
}

// stripLastChange rewrites every Lock record of s without its pointer.
func stripLastChange(t testing.TB, s *Store) {
	t.Helper()
	b := s.db.NewBatch()
	eachWriteRecord(t, s, func(key []byte, cts uint64, w *txntypes.Write) {
		if w.HasLastChange() {
			w.LastChangeTS, w.VersionsToLastChange = 0, 0
			if err := b.Set(keyspace.WriteKey(key, cts), w.Encode(), nil); err != nil {
				t.Fatal(err)
			}
		}
	})
	if err := b.Commit(nil); err != nil {
		t.Fatal(err)
	}
}

// memStore opens a store in memory, closed when t ends, and returns it
// with its one region.
func memStore(t testing.TB) (*Store, RegionCtx) {
	t.Helper()
	s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, s.Regions()[0].Ctx()
}

// runGC runs a whole GC pass over rc at safe point sp.
func runGC(ctx context.Context, t testing.TB, s *Store, rc RegionCtx, sp uint64) {
	t.Helper()
	req := &GCRequest{Region: rc, SafePoint: sp}
	for {
		resp, err := s.GC(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Next == nil {
			return
		}
		req.Start = resp.Next
	}
}

// checkLastChangeReads is h.checkReads plus one BatchGet of every key.
func checkLastChangeReads(ctx context.Context, t *testing.T, s *Store, rc RegionCtx, h *modelHistory, ts uint64, rnd *rand.Rand, what string) {
	t.Helper()
	h.checkReads(ctx, t, s, rc, ts, rnd, what)
	pairs, err := s.BatchGet(ctx, rc, h.sorted, ts)
	if err != nil {
		t.Fatal(err)
	}
	var want []KvPair
	for _, k := range h.sorted {
		if v := h.valueAt(k, ts); v != nil {
			want = append(want, KvPair{Key: k, Value: v})
		}
	}
	slices.SortFunc(pairs, func(a, b KvPair) int { return bytes.Compare(a.Key, b.Key) })
	if !slices.EqualFunc(pairs, want, func(a, b KvPair) bool { return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) }) {
		t.Fatalf("%s: batch get at %d: %d pairs\n%swant %d\n%s", what, ts, len(pairs), fmtPairs(pairs), len(want), fmtPairs(want))
	}
}
