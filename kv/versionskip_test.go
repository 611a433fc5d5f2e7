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
			s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rc := s.Regions()[0].Ctx()
			keys := make([][]byte, 120)
			for i := range keys {
				keys[i] = []byte(fmt.Sprintf("t1_r%0*d", 1+rnd.Intn(12), i))
			}
			// model[k] lists (commit_ts, value) of k's Puts and Deletes
			// (value nil) in commit order.
			type version struct {
				ts    uint64
				value []byte
			}
			model := map[string][]version{}
			ts := uint64(10)
			// Keys hot in this seed get most of the writes, so that some
			// keep many versions and others one or none.
			hot := keys[:1+rnd.Intn(len(keys))]
			for round := 0; round < 40; round++ {
				batch := map[string]bool{}
				var muts []Mutation
				for n := 1 + rnd.Intn(30); n > 0; n-- {
					k := hot[rnd.Intn(len(hot))]
					if rnd.Intn(4) == 0 {
						k = keys[rnd.Intn(len(keys))]
					}
					if batch[string(k)] {
						continue
					}
					batch[string(k)] = true
					m := Mutation{Key: k}
					switch r := rnd.Intn(10); {
					case r < 6:
						m.Op = OpPut
						m.Value = []byte(fmt.Sprintf("%s@%d", k, ts))
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
				startTS := ts
				keysOf := make([][]byte, len(muts))
				for i, m := range muts {
					keysOf[i] = m.Key
				}
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
					for _, m := range muts {
						switch m.Op {
						case OpPut:
							model[string(m.Key)] = append(model[string(m.Key)], version{startTS + 5, m.Value})
						case OpDelete:
							model[string(m.Key)] = append(model[string(m.Key)], version{startTS + 5, nil})
						}
					}
				}
				ts += 10
				if rnd.Intn(5) == 0 {
					if err := s.db.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			valueAt := func(k []byte, at uint64) []byte {
				var v []byte
				for _, ver := range model[string(k)] {
					if ver.ts <= at {
						v = ver.value
					}
				}
				return v
			}
			sorted := append([][]byte(nil), keys...)
			slices.SortFunc(sorted, bytes.Compare)
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
					var want []KvPair
					for _, k := range sorted {
						v := valueAt(k, at)
						got, err := s.Get(ctx, rc, k, at)
						if err != nil || !bytes.Equal(got, v) {
							t.Fatalf("get %s at %d: %q, %v; want %q", k, at, got, err, v)
						}
						if v != nil {
							want = append(want, KvPair{Key: k, Value: v})
						}
					}
					for _, reverse := range []bool{false, true} {
						for _, limit := range []int{0, 1 + rnd.Intn(7)} {
							got := scanAll(ctx, t, s, rc, at, reverse, limit)
							if reverse {
								for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
									got[i], got[j] = got[j], got[i]
								}
							}
							if len(got) != len(want) {
								t.Fatalf("scan at %d (reverse %t, limit %d): %d pairs, want %d", at, reverse, limit, len(got), len(want))
							}
							for i := range got {
								if !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Value, want[i].Value) {
									t.Fatalf("scan at %d (reverse %t, limit %d, compacted %t): pair %d is %s=%q, want %s=%q", at, reverse, limit, compact, i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
								}
							}
						}
					}
				}
			}
		})
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
