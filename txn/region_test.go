package txn

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/percdb/percdb/kv"
)

// cachingClient routes from a cache of region descriptors, as a remote
// client does, so that a split makes its routes stale: requests then get a
// *kv.RegionError until the route is invalidated and reloaded.
type cachingClient struct {
	kv.Client
	mu            sync.Mutex
	cache         []kv.RegionInfo
	invalidations int
}

func (c *cachingClient) LocateKey(ctx context.Context, key []byte) (kv.RegionInfo, error) {
	c.mu.Lock()
	for _, r := range c.cache {
		if r.Contains(key) {
			c.mu.Unlock()
			return r, nil
		}
	}
	c.mu.Unlock()
	r, err := c.Client.LocateKey(ctx, key)
	if err != nil {
		return r, err
	}
	c.mu.Lock()
	c.cache = append(c.cache, r)
	c.mu.Unlock()
	return r, nil
}

func (c *cachingClient) InvalidateRegion(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.invalidations++
	c.cache = slices.DeleteFunc(c.cache, func(r kv.RegionInfo) bool { return r.ID == id })
}

// TestStaleRoutesAreRefreshed splits regions behind a caching client's
// back, including in the middle of a scan, and checks that reads and both
// kinds of commit re-route and succeed.
func TestStaleRoutesAreRefreshed(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	cc := &cachingClient{Client: e.client}
	s := NewStore(cc, e.oracle, Options{ScanPageSize: 2})
	defer s.Close()
	split := func(key string) {
		if _, _, err := e.kv.SplitRegion(ctx, []byte(key)); err != nil {
			t.Fatal(err)
		}
	}

	mustCommit(t, s, "a", "1", "c", "1", "e", "1", "g", "1") // cached: one region
	split("d")
	mustCommit(t, s, "a", "2", "g", "2") // 2PC over a stale route
	split("b")
	if v := pointGet(t, s, "a"); v != "2" {
		t.Fatalf("a = %q", v)
	}
	split("f")
	tx, _ := s.Begin(ctx)
	got, err := tx.BatchGet(ctx, [][]byte{[]byte("a"), []byte("c"), []byte("e"), []byte("g")})
	if err != nil || len(got) != 4 {
		t.Fatalf("batch get = %v, %v", got, err)
	}

	// Split in the middle of both scans.
	for _, reverse := range []bool{false, true} {
		r, _ := s.Begin(ctx)
		var it Iterator
		if reverse {
			it, err = r.IterReverse(ctx, []byte("a"), nil)
		} else {
			it, err = r.Iter(ctx, []byte("a"), nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for i := 0; it.Valid(); i++ {
			keys = append(keys, string(it.Key()))
			if i == 1 {
				split(string(bytes.Repeat(it.Key(), 2))) // between this key and the next
			}
			if err := it.Next(ctx); err != nil {
				t.Fatal(err)
			}
		}
		it.Close()
		if reverse {
			slices.Reverse(keys)
		}
		if strings.Join(keys, "") != "aceg" {
			t.Fatalf("scan reverse=%v over splits = %v", reverse, keys)
		}
	}
	// Secondaries commit in the background and may still invalidate
	// routes: read the count under the client's lock.
	cc.mu.Lock()
	invalidations := cc.invalidations
	cc.mu.Unlock()
	if invalidations == 0 {
		t.Fatal("no route was ever invalidated: the test did not exercise stale routes")
	}
	t.Logf("%d routes invalidated", invalidations)
}
