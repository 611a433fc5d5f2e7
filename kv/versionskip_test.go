package kv

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble"
)

// TestScansMatchGets is differential: random histories of Put, Delete,
// Lock and Rollback records over keys with 0 to 12 versions, long values
// among them, spread over the memtable and several sstables, read at
// every timestamp of the history by forward and reverse scans, whole and
// in pages (walks that leave keys with NextPrefix where they keep older
// versions, decideForward), and key by key with Get (SeekPrefixGE): the
// two must agree, and with a model of the history; then again once every
// version is compacted into one level.
func TestScansMatchGets(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			ctx := context.Background()
			rnd := rand.New(rand.NewSource(seed))
			s, rc := memStore(t)
			h := newModelHistory(rnd, 120, 12)
			ts := uint64(10)
			for round := 0; round < 40; round++ {
				startTS := ts
				muts := h.randomMutations(rnd, startTS)
				keysOf := mutationKeys(muts)
				if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: muts[0].Key, StartTS: startTS, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
					t.Fatal(resp, err)
				}
				if rnd.Intn(6) == 0 {
					// Rolled back: Rollback records, no versions.
					if err := s.BatchRollback(ctx, rc, keysOf, startTS); err != nil {
						t.Fatal(err)
					}
				} else {
					if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keysOf, StartTS: startTS, CommitTS: startTS + 5}); err != nil {
						t.Fatal(err)
					}
					h.committed(muts, startTS+5)
				}
				ts += 10
				if rnd.Intn(5) == 0 {
					if err := s.db.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			// Read as written, then with every version compacted into
			// one level, where a key's older versions sit behind it in
			// one sstable (prefix bits, value blocks: comparer.go).
			for _, compact := range []bool{false, true} {
				if compact {
					if err := s.db.Compact([]byte{0}, []byte{0xff}, false); err != nil {
						t.Fatal(err)
					}
					if n := valuesInValueBlocks(t, s); n == 0 {
						t.Fatal("no older version's value in a value block after the compaction")
					}
				}
				for at := uint64(1); at <= ts; at += 5 {
					h.checkReads(ctx, t, s, rc, at, rnd, fmt.Sprintf("compacted %t", compact))
				}
			}
		})
	}
}

// modelHistory is a model of random transactions' Puts and Deletes over a
// set of keys, for differential tests of the store's reads.
type modelHistory struct {
	keys   [][]byte // in the order made
	sorted [][]byte // keys in order
	hot    [][]byte // the keys most writes go to
	// versions[k] lists (commit_ts, value) of k's Puts and Deletes
	// (value nil) in commit order.
	versions map[string][]modelVersion
}

type modelVersion struct {
	ts    uint64
	value []byte
}

// newModelHistory makes n keys of up to maxDigits digits (so that some
// are prefixes of others in the memcomparable encoding's groups), the
// first few of them hot in this seed, so that some keep many versions
// and others one or none.
func newModelHistory(rnd *rand.Rand, n, maxDigits int) *modelHistory {
	h := &modelHistory{keys: make([][]byte, n), versions: map[string][]modelVersion{}}
	for i := range h.keys {
		h.keys[i] = []byte(fmt.Sprintf("t1_r%0*d", 1+rnd.Intn(maxDigits), i))
	}
	h.hot = h.keys[:1+rnd.Intn(n)]
	h.sorted = slices.Clone(h.keys)
	slices.SortFunc(h.sorted, bytes.Compare)
	return h
}

// randomMutations returns the mutations of a transaction started at
// startTS: 1 to 30 distinct keys, mostly hot ones, Puts (values naming
// the key and startTS, some past the short-value limit), Deletes and
// Locks.
func (h *modelHistory) randomMutations(rnd *rand.Rand, startTS uint64) []Mutation {
	batch := map[string]bool{}
	var muts []Mutation
	for n := 1 + rnd.Intn(30); n > 0; n-- {
		k := h.hot[rnd.Intn(len(h.hot))]
		if rnd.Intn(4) == 0 {
			k = h.keys[rnd.Intn(len(h.keys))]
		}
		if batch[string(k)] {
			continue
		}
		batch[string(k)] = true
		m := Mutation{Key: k}
		switch r := rnd.Intn(10); {
		case r < 6:
			m.Op = OpPut
			m.Value = []byte(fmt.Sprintf("%s@%d", k, startTS))
			if r == 0 {
				m.Value = bytes.Repeat(m.Value, 40) // past the short-value limit
			}
		case r < 8:
			m.Op = OpDelete
		default:
			m.Op = OpLock
		}
		muts = append(muts, m)
	}
	return muts
}

// mutationKeys returns the keys of muts.
func mutationKeys(muts []Mutation) [][]byte {
	keys := make([][]byte, len(muts))
	for i, m := range muts {
		keys[i] = m.Key
	}
	return keys
}

// committed records muts committed at commitTS.
func (h *modelHistory) committed(muts []Mutation, commitTS uint64) {
	for _, m := range muts {
		switch m.Op {
		case OpPut:
			h.versions[string(m.Key)] = append(h.versions[string(m.Key)], modelVersion{commitTS, m.Value})
		case OpDelete:
			h.versions[string(m.Key)] = append(h.versions[string(m.Key)], modelVersion{commitTS, nil})
		}
	}
}

// valueAt is k's value for a reader at ts, nil when it has none.
func (h *modelHistory) valueAt(k []byte, ts uint64) []byte {
	var v []byte
	for _, ver := range h.versions[string(k)] {
		if ver.ts <= ts {
			v = ver.value
		}
	}
	return v
}

// checkReads reads s at ts key by key with Get (SeekPrefixGE) and whole
// with forward and reverse scans, in one page and in pages of a random
// size (walks that leave keys with NextPrefix where they keep older
// versions, decideForward), and fails t where one differs from the
// model; what says where the test stood.
func (h *modelHistory) checkReads(ctx context.Context, t *testing.T, s *Store, rc RegionCtx, ts uint64, rnd *rand.Rand, what string) {
	t.Helper()
	var want []KvPair
	for _, k := range h.sorted {
		v := h.valueAt(k, ts)
		got, err := s.Get(ctx, rc, k, ts)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("%s: get %s at %d: %q, %v; want %q", what, k, ts, got, err, v)
		}
		if v != nil {
			want = append(want, KvPair{Key: k, Value: v})
		}
	}
	for _, reverse := range []bool{false, true} {
		for _, limit := range []int{0, 1 + rnd.Intn(7)} {
			got := scanAll(ctx, t, s, rc, ts, reverse, limit)
			if reverse {
				slices.Reverse(got)
			}
			if !slices.EqualFunc(got, want, func(a, b KvPair) bool { return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value) }) {
				t.Fatalf("%s: scan at %d (reverse %t, limit %d): %d pairs\n%swant %d\n%s", what, ts, reverse, limit, len(got), fmtPairs(got), len(want), fmtPairs(want))
			}
		}
	}
}

// scanAll reads the whole region at ts in pages of limit (0: one page).
func scanAll(ctx context.Context, t *testing.T, s *Store, rc RegionCtx, ts uint64, reverse bool, limit int) []KvPair {
	t.Helper()
	var out []KvPair
	start, end := []byte{}, []byte(nil)
	for {
		pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: start, End: end, Version: ts, Limit: limit, Reverse: reverse})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pairs...)
		if limit == 0 || len(pairs) < limit {
			return out
		}
		last := pairs[len(pairs)-1].Key
		if reverse {
			end = bytes.Clone(last)
		} else {
			start = append(bytes.Clone(last), 0)
		}
	}
}

// valuesInValueBlocks is how many values s's sstables keep in value
// blocks.
func valuesInValueBlocks(t *testing.T, s *Store) uint64 {
	t.Helper()
	levels, err := s.db.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, level := range levels {
		for _, f := range level {
			n += f.Properties.NumValuesInValueBlocks
		}
	}
	return n
}
