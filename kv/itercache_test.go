package kv

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestIdleIterCacheFreesCompactedTables: a read caches its iterator, which
// pins the sstables it reads; a compaction then replaces them. With no
// read coming back to the cache, the compaction's inputs must still be
// let go (they stayed "zombie" tables, on disk, until the store closed:
// a store refusing writes on a full disk never got its space back).
func TestIdleIterCacheFreesCompactedTables(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	c := NewLocalClient(s)
	rc := s.Regions()[0].Ctx()
	// Four overlapping tables in level 0, so that the compaction below
	// rewrites them (a move would keep them).
	for i := range 4 {
		ts := uint64(10 + 10*i)
		var muts []Mutation
		for k := range 4 {
			muts = append(muts, Mutation{Op: OpPut, Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte("v")})
		}
		if resp, err := c.Prewrite(ctx, &PrewriteRequest{Region: rc, Primary: muts[0].Key, StartTS: ts, MaxCommitTS: ts + 5, TryOnePC: true,
			Mutations: muts}); err != nil || resp.OnePCCommitTS == 0 {
			t.Fatalf("prewrite at %d: %v %v", ts, resp, err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := c.Get(ctx, rc, []byte("k0"), 100); err != nil || string(v) != "v" {
		t.Fatalf("get k0: %q %v", v, err)
	}
	if err := s.db.Compact([]byte{0}, []byte{0xff, 0xff}, true); err != nil {
		t.Fatal(err)
	}
	// Wait (bounded) for the tables the read pinned to go.
	var zombies int64
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if zombies = s.db.Metrics().Table.ZombieCount; zombies == 0 {
			break
		}
	}
	if zombies != 0 {
		t.Fatalf("%d compacted tables still held by the idle iterator cache", zombies)
	}
	if v, err := c.Get(ctx, rc, []byte("k3"), 100); err != nil || string(v) != "v" {
		t.Fatalf("get k3 after the compaction: %q %v", v, err)
	}
}
