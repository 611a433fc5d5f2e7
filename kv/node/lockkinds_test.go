package node_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
)

// TestReplicasKnowLockKinds: a pessimistic lock taken on a region of
// three replicas is, on every replica's store, a lock that does not
// block range reads, so that a follower that becomes the leader keeps
// them on the fast path; prewritten, it blocks on every replica, and
// committed it is gone from all.
func TestReplicasKnowLockKinds(t *testing.T) {
	c := startCluster(t)
	c.put("k", "v0")
	k := []byte("k")
	region, err := c.kc.LocateKey(c.ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	ts := func() uint64 {
		v, err := c.oracle.GetTimestamp(c.ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	start := ts()
	if _, err := c.kc.AcquirePessimisticLock(c.ctx, &kv.AcquirePessimisticLockRequest{Region: region.Ctx(),
		Keys: []kv.PessimisticKey{{Key: k}}, Primary: k, StartTS: start, ForUpdateTS: start, LockTTL: 60000}); err != nil {
		t.Fatal(err)
	}
	// every waits until each replica applied the batch that changed the
	// lock set to want (replicas apply in the background), and returns
	// the stats.
	every := func(what string, want func(kv.LockSetStats) bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for i, n := range c.nodes {
			for {
				st := n.KVStore().LockSetStats()
				if want(st) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("node %d: %s: lock set %+v", i, what, st)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	every("the pessimistic lock, not blocking", func(st kv.LockSetStats) bool { return st.Locks == 1 && st.Blocking == 0 })
	if _, err := c.kc.Prewrite(c.ctx, &kv.PrewriteRequest{Region: region.Ctx(), Mutations: []kv.Mutation{{Op: kv.OpPut, Key: k, Value: []byte("v1"), Pessimistic: true}},
		Primary: k, StartTS: start, ForUpdateTS: start, LockTTL: 60000}); err != nil {
		t.Fatal(err)
	}
	every("the prewritten lock, blocking", func(st kv.LockSetStats) bool { return st.Locks == 1 && st.Blocking == 1 })
	if err := c.kc.Commit(c.ctx, &kv.CommitRequest{Region: region.Ctx(), Keys: [][]byte{k}, StartTS: start, CommitTS: ts()}); err != nil {
		t.Fatal(err)
	}
	every("no lock", func(st kv.LockSetStats) bool { return st.Locks == 0 && st.Blocking == 0 })
	if got := c.get("k"); got != "v1" {
		t.Fatal(fmt.Sprintf("k = %q after the commit", got))
	}
}
