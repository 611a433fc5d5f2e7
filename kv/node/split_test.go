package node_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/kv"
)

// TestSplitInCluster: a region replicated on three nodes is split on
// request through raft: both halves are served (the new one by the
// leader its replica elected), pd's directory follows, a request routed
// by the old descriptor is refused and routed again, a transaction
// begun before the split whose keys end up in both regions commits
// atomically, and every replica holds the same keys.
func TestSplitInCluster(t *testing.T) {
	c := startCluster(t)
	for i := range 40 {
		c.put(fmt.Sprintf("k%02d", i), fmt.Sprint(i))
	}
	before, err := c.kc.LocateKey(c.ctx, []byte("k30"))
	if err != nil {
		t.Fatal(err)
	}
	// A transaction whose keys the split puts in two regions.
	tx, err := c.s.Begin(c.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k05", "k30"} {
		if err := tx.Set([]byte(k), []byte("both")); err != nil {
			t.Fatal(err)
		}
	}

	left, right, err := c.kc.SplitRegion(c.ctx, []byte("k20"))
	if err != nil {
		t.Fatal(err)
	}
	if left.ID != before.ID || right.ID == before.ID || !bytes.Equal(left.End, []byte("k20")) || !bytes.Equal(right.Start, []byte("k20")) ||
		left.Epoch.Version != before.Epoch.Version+1 || right.Epoch.Version != left.Epoch.Version {
		t.Fatalf("split of %+v at k20: left %+v, right %+v", before, left, right)
	}
	// Splitting at a region's start is refused.
	if _, _, err := c.kc.SplitRegion(c.ctx, []byte("k20")); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("split at a region's start: %v, want refused", err)
	}
	// pd routes both halves.
	for key, want := range map[string]uint64{"k05": left.ID, "k30": right.ID, "z": right.ID, "": left.ID} {
		r, err := c.pd.GetRegion(c.ctx, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		if r.ID != want || r.Epoch.Version != left.Epoch.Version {
			t.Fatalf("pd routes %q to %+v, want region %d at version %d", key, r, want, left.Epoch.Version)
		}
	}
	// The old descriptor is refused.
	var re *kv.RegionError
	if _, err := c.kc.Get(c.ctx, before.Ctx(), []byte("k30"), kv.MaxTS); !errors.As(err, &re) {
		t.Fatalf("get routed by the descriptor before the split: %v, want a region error", err)
	}

	if err := tx.Commit(c.ctx); err != nil {
		t.Fatalf("commit across the split: %v", err)
	}
	for _, k := range []string{"k05", "k30"} {
		if got := c.get(k); got != "both" {
			t.Fatalf("%s = %q after the commit across the split", k, got)
		}
	}
	for i := range 40 {
		k := fmt.Sprintf("k%02d", i)
		if k == "k05" || k == "k30" {
			continue
		}
		if got := c.get(k); got != fmt.Sprint(i) {
			t.Fatalf("%s = %q after the split", k, got)
		}
		c.put(k, "new")
	}
	waitUntil(t, "every replica holds the same keys", func() bool {
		ex := c.exports()
		return bytes.Equal(ex[0], ex[1]) && bytes.Equal(ex[1], ex[2])
	})
}

// TestSplitBySizeAndBalance: nodes split the regions that grow past a
// small split size, and pd moves leaderships until every node leads some
// of them.
func TestSplitBySizeAndBalance(t *testing.T) {
	c := startClusterSplitting(t, 16<<10)
	value := strings.Repeat("v", 512)
	for i := range 400 {
		c.put(fmt.Sprintf("k%04d", i), value)
	}
	regions := func() map[uint64]kv.RegionInfo {
		out := map[uint64]kv.RegionInfo{}
		for key := []byte{}; ; {
			r, err := c.pd.GetRegion(c.ctx, key)
			if err != nil {
				return nil // a split's halves being recorded: ask again
			}
			out[r.ID] = r
			if len(r.End) == 0 {
				return out
			}
			key = r.End
		}
	}
	waitUntil(t, "regions split by size", func() bool { return len(regions()) >= 6 })
	waitUntil(t, "every node leads some region", func() bool {
		addrs := map[string]int{}
		for _, r := range regions() {
			addrs[r.Addr]++
		}
		return len(addrs) == 3
	})
	for i := range 400 {
		if got := c.get(fmt.Sprintf("k%04d", i)); got != value {
			t.Fatalf("k%04d = %q after the splits", i, got)
		}
	}
}
