package node_test

import (
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
)

// TestLockRangeInCluster: a locking range read sent to a region of three
// replicas through the KV protocol returns the rows of the range with
// their values, chooses the primary, and its locks reach every replica
// (they are written through the region's raft group like any lock).
func TestLockRangeInCluster(t *testing.T) {
	c := startCluster(t)
	c.put("r1", "v1")
	c.put("r2", "v2")
	c.put("s1", "w1")
	region, err := c.kc.LocateKey(c.ctx, []byte("r"))
	if err != nil {
		t.Fatal(err)
	}
	start, err := c.oracle.GetTimestamp(c.ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.kc.AcquirePessimisticLock(c.ctx, &kv.AcquirePessimisticLockRequest{Region: region.Ctx(),
		StartTS: start, ForUpdateTS: start, LockTTL: 60000, WaitTimeout: time.Second,
		Range: &kv.LockRange{Start: []byte("r"), End: []byte("s")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Pairs) != 2 || string(resp.Pairs[0].Key) != "r1" || string(resp.Pairs[0].Value) != "v1" ||
		string(resp.Pairs[1].Key) != "r2" || string(resp.Pairs[1].Value) != "v2" {
		t.Fatalf("pairs %q, want r1=v1 r2=v2", resp.Pairs)
	}
	deadline := time.Now().Add(time.Minute)
	for i, n := range c.nodes {
		for n.KVStore().LockSetStats().Locks != 2 {
			if time.Now().After(deadline) {
				t.Fatalf("node %d: lock set %+v, want the 2 locks of the range read", i, n.KVStore().LockSetStats())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
