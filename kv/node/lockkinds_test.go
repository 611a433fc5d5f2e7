package node_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
)

// TestReplicasKnowLockKinds: a pessimistic lock taken on a region of
// three replicas is, on every replica's store, a lock that does not
// block range reads: a range read on the leader does not read the lock
// space, nor, once the leader's node is closed, on the new leader;
// prewritten, the lock blocks on every replica (a range read reads the
// lock space), and committed it is gone from all.
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
			for n != nil {
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
	// scan reads the whole key space at version on the region's leader
	// and returns how many range reads there read the lock space.
	scan := func(version uint64) uint64 {
		t.Helper()
		l := c.leader("k")
		before := c.nodes[l].KVStore().LockSetStats().LockedRangeReads
		if _, err := c.kc.Scan(c.ctx, &kv.ScanRequest{Region: region.Ctx(), Version: version}); err != nil {
			t.Fatal(err)
		}
		return c.nodes[l].KVStore().LockSetStats().LockedRangeReads - before
	}
	if n := scan(ts()); n != 0 {
		t.Errorf("a range read on the leader read the lock space past a pessimistic lock (%d)", n)
	}
	first := c.leader("k")
	if err := c.nodes[first].Close(); err != nil {
		t.Fatal(err)
	}
	c.nodes[first] = nil
	if n := scan(ts()); n != 0 {
		t.Errorf("a range read on the new leader read the lock space past a pessimistic lock (%d)", n)
	}
	if _, err := c.kc.Prewrite(c.ctx, &kv.PrewriteRequest{Region: region.Ctx(), Mutations: []kv.Mutation{{Op: kv.OpPut, Key: k, Value: []byte("v1"), Pessimistic: true}},
		Primary: k, StartTS: start, ForUpdateTS: start, LockTTL: 60000}); err != nil {
		t.Fatal(err)
	}
	every("the prewritten lock, blocking", func(st kv.LockSetStats) bool { return st.Locks == 1 && st.Blocking == 1 })
	if n := scan(start - 1); n == 0 {
		t.Error("a range read past a prewritten lock did not read the lock space")
	}
	if err := c.kc.Commit(c.ctx, &kv.CommitRequest{Region: region.Ctx(), Keys: [][]byte{k}, StartTS: start, CommitTS: ts()}); err != nil {
		t.Fatal(err)
	}
	every("no lock", func(st kv.LockSetStats) bool { return st.Locks == 0 && st.Blocking == 0 })
	if got := c.get("k"); got != "v1" {
		t.Fatal(fmt.Sprintf("k = %q after the commit", got))
	}
}
