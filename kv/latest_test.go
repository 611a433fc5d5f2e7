package kv

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// TestLatestWalkMatchesVersions: a forward walk reads the latest space
// (latest.go), a reverse one the write space's versions; under random
// transactions (Puts, Deletes, long values), flushes, compactions and GC
// passes, the two agree at every timestamp from the safe point up, and
// the latest space holds a copy for exactly the keys whose newest record
// is a Put or a Delete not collected. A store whose latest space is lost
// (a store of before it) gets it back at Open.
func TestLatestWalkMatchesVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{SyncWrites: SyncNone, Latest: LatestAlways})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	rc := s.Regions()[0].Ctx()
	rnd := rand.New(rand.NewSource(1))
	keys := make([][]byte, 40)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%03d", i))
	}
	ts, safePoint := uint64(100), uint64(0)
	commit := func() {
		t.Helper()
		var muts []Mutation
		for _, i := range rnd.Perm(len(keys))[:1+rnd.Intn(5)] {
			m := Mutation{Op: OpPut, Key: keys[i], Value: []byte(fmt.Sprintf("v%d-%d", ts, i))}
			switch rnd.Intn(5) {
			case 0:
				m = Mutation{Op: OpDelete, Key: keys[i]}
			case 1:
				m.Value = bytes.Repeat(m.Value, 40) // past the short-value limit
			}
			muts = append(muts, m)
		}
		ts += 10
		startTS := ts
		resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: muts[0].Key, StartTS: startTS, LockTTL: 1000})
		if err != nil || len(resp.Errors) > 0 {
			t.Fatal(resp, err)
		}
		ts += 5
		keys := make([][]byte, len(muts))
		for i, m := range muts {
			keys[i] = m.Key
		}
		if rnd.Intn(4) == 0 {
			// Some are rolled back: their records decide nothing.
			if err := s.BatchRollback(ctx, rc, keys, startTS); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: startTS, CommitTS: ts}); err != nil {
			t.Fatal(err)
		}
	}
	scan := func(at uint64, reverse bool) []KvPair {
		t.Helper()
		pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: keys[0], Version: at, Reverse: reverse})
		if err != nil {
			t.Fatal(err)
		}
		if reverse {
			slices.Reverse(pairs)
		}
		return pairs
	}
	check := func(when string) {
		t.Helper()
		for _, at := range []uint64{safePoint + 1, safePoint + (ts-safePoint)/2, ts - 3, ts + 100} {
			if at <= safePoint {
				continue
			}
			fwd, rev := scan(at, false), scan(at, true)
			if len(fwd) != len(rev) {
				t.Fatalf("%s, at %d: the forward walk found %d pairs, the reverse one %d", when, at, len(fwd), len(rev))
			}
			for i := range fwd {
				if !bytes.Equal(fwd[i].Key, rev[i].Key) || !bytes.Equal(fwd[i].Value, rev[i].Value) {
					t.Fatalf("%s, at %d: pair %d forward %q=%q, reverse %q=%q", when, at, i, fwd[i].Key, fwd[i].Value, rev[i].Key, rev[i].Value)
				}
			}
		}
		// A copy for exactly the keys with a Put or Delete record.
		r := newMVCCReader(s.db)
		defer r.close()
		for _, k := range keys {
			var commitTS uint64
			var w *txntypes.Write
			err := r.writes(k, math.MaxUint64, func(at uint64, rec *txntypes.Write) bool {
				if rec.Type == txntypes.WritePut || rec.Type == txntypes.WriteDelete {
					commitTS, w = at, rec
					return false
				}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			v, err := r.exact(keyspace.LatestKey(k))
			if err != nil {
				t.Fatal(err)
			}
			if w == nil {
				if v != nil {
					t.Fatalf("%s: key %q has no Put or Delete but a copy", when, k)
				}
				continue
			}
			if v == nil {
				t.Fatalf("%s: key %q has a %v at %d but no copy", when, k, w.Type, commitTS)
			}
			got, cw, err := parseLatest(v)
			if err != nil || got != commitTS || cw.Type != w.Type || cw.StartTS != w.StartTS {
				t.Fatalf("%s: key %q: copy %v at %d (%v), newest %v at %d", when, k, cw.Type, got, err, w.Type, commitTS)
			}
		}
	}
	for round := range 300 {
		commit()
		switch rnd.Intn(10) {
		case 0:
			if err := s.db.Flush(); err != nil {
				t.Fatal(err)
			}
		case 1:
			if err := s.db.Compact([]byte{0}, []byte{0xff}, false); err != nil {
				t.Fatal(err)
			}
		case 2, 3:
			safePoint = max(safePoint, ts-uint64(rnd.Intn(100)))
			collectAll(ctx, t, s, rc, safePoint)
		}
		if round%10 == 0 {
			check(fmt.Sprintf("round %d", round))
		}
	}
	safePoint = ts
	collectAll(ctx, t, s, rc, safePoint)
	check("after GC at the newest commit")
	want := scan(ts, false)

	// A store that lost its latest space (as one written before it).
	if err := s.db.DeleteRange(keyspace.SpaceStart(keyspace.Latest), keyspace.SpaceEnd(keyspace.Latest), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Delete(keyspace.LatestBuiltKey(), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(dir, Options{SyncWrites: SyncNone, Latest: LatestAlways}); err != nil {
		t.Fatal(err)
	}
	rc = s.Regions()[0].Ctx()
	check("reopened")
	if got := scan(ts, false); len(got) != len(want) {
		t.Fatalf("reopened: %d pairs, want %d", len(got), len(want))
	}
}

// TestLatestWalkLeavesCompactionToPebble: a forward walk over copies
// shadowed by newer ones counts them as hidden points (ScanCost) but
// reports no span to the compactor, and no compaction follows however
// often it walks: the next update of a row shadows its copy again, so
// compacting them does not pay (latest.go, visitLatest).
func TestLatestWalkLeavesCompactionToPebble(t *testing.T) {
	ctx := context.Background()
	// A threshold the walks below reach many times over if reported.
	s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone, Latest: LatestAlways, GCCompactTombstones: 1000, testingNoAutoCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	rc := s.Regions()[0].Ctx()
	keys := latestTestKeys(2000)
	for v := 1; v <= 3; v++ {
		rewriteKeys(t, s, keys, uint64(10*v), []byte(fmt.Sprintf("v%d", v)))
		// Each rewrite's copies in a table of their own, over the older.
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	before := s.ScanCost()
	for range 10 {
		pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: keys[0], Version: 1000})
		if err != nil || len(pairs) != len(keys) || string(pairs[0].Value) != "v3" {
			t.Fatalf("scan: %d pairs, err %v", len(pairs), err)
		}
	}
	after := s.ScanCost()
	records, hidden := after.Records-before.Records, (after.Points-before.Points)-(after.Records-before.Records)
	t.Logf("10 walks: %d records, %d hidden points, %d reported", records, hidden, after.Reported-before.Reported)
	if after.Reported != before.Reported {
		t.Fatalf("the walks reported %d hidden points to the compactor; want none", after.Reported-before.Reported)
	}
	if hidden < uint64(10*len(keys)) {
		t.Fatalf("the walks stepped over %d hidden points; want at least %d counted (a shadowed copy a row a walk)", hidden, 10*len(keys))
	}
	for deadline := time.Now().Add(time.Minute); !s.compactor.idle(); {
		if time.Now().After(deadline) {
			t.Fatal("the compactor is still busy after a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.GCCompactionStats().Compactions; n != 0 {
		t.Fatalf("%d compactions after the walks; want none", n)
	}
}

// TestLatestChurnCompacts: rewrites of a store's rows shadow their
// copies, and once the copies derived make half the space's size the
// store compacts the space, so that a walk after it steps over no
// shadowed copy; rewrites below the minimum of copies ask for none
// (latestcompact.go). Without it, the walk steps over a shadowed copy a
// row a rewrite.
func TestLatestChurnCompacts(t *testing.T) {
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone, Latest: LatestAlways, testingNoAutoCompactions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	rc := s.Regions()[0].Ctx()
	keys := latestTestKeys(2000)
	value := bytes.Repeat([]byte("v"), 100)
	rewrite := func(v int) {
		t.Helper()
		rewriteKeys(t, s, keys, uint64(10*v), append([]byte{byte(v)}, value...))
	}
	settle := func() {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !s.compactor.idle(); {
			if time.Now().After(deadline) {
				t.Fatal("the compactor is still busy after a minute")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	hidden := func(v int) uint64 {
		t.Helper()
		settle()
		before := s.ScanCost()
		pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: keys[0], Version: 1 << 40})
		if err != nil || len(pairs) != len(keys) || pairs[0].Value[0] != byte(v) {
			t.Fatalf("scan: %d pairs, err %v", len(pairs), err)
		}
		after := s.ScanCost()
		return (after.Points - before.Points) - (after.Records - before.Records)
	}
	// Two rewrites: about 0.5 MiB of copies, under the minimum.
	for v := 1; v <= 2; v++ {
		rewrite(v)
		// Each rewrite's copies in a table of their own.
		if err := s.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if h := hidden(2); h < uint64(len(keys)) || s.LatestSpaceStats().Compactions != 0 {
		t.Fatalf("after two rewrites: %d hidden points, %d compactions of the space; want a shadowed copy a row and none", h, s.LatestSpaceStats().Compactions)
	}
	// Rewrites past the minimum and half the space.
	v := 2
	for s.LatestSpaceStats().Compactions == 0 && v < 20 {
		v++
		rewrite(v)
		settle()
	}
	if h := hidden(v); h != 0 {
		t.Fatalf("after %d rewrites and %d compactions of the space: %d hidden points; want none", v, s.LatestSpaceStats().Compactions, h)
	}
	t.Logf("the space was compacted after %d rewrites of %d rows", v, len(keys))
}

// latestTestKeys returns n keys k0000, k0001, ...
func latestTestKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%04d", i))
	}
	return keys
}

// rewriteKeys writes value to every key of keys in one transaction of
// start_ts startTS, committed at startTS+5.
func rewriteKeys(t *testing.T, s *Store, keys [][]byte, startTS uint64, value []byte) {
	t.Helper()
	ctx := context.Background()
	rc := s.Regions()[0].Ctx()
	muts := make([]Mutation, len(keys))
	for i, k := range keys {
		muts[i] = Mutation{Op: OpPut, Key: k, Value: value}
	}
	if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: keys[0], StartTS: startTS, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
		t.Fatal(resp, err)
	}
	if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: startTS, CommitTS: startTS + 5}); err != nil {
		t.Fatal(err)
	}
}
