package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/pd/pdpb"
	"github.com/percdb/percdb/tests/testproc"
)

// maxStoreDownTime is pd's --max-store-down-time in the repair test:
// long enough that a loaded machine's late heartbeat does not count as a
// store down, short enough for a test.
const maxStoreDownTime = 5 * time.Second

// TestReplicaRepair: three KV nodes hold the region's replicas and a
// fourth is spare. Under the bank workload the leader's node is
// SIGKILLed and stays down; past pd's max store down time the region
// gets back to three live replicas, the spare's among them (added as a
// raft learner, initialized by snapshot, promoted while the dead one is
// removed in one joint conf change). Then a second original node is
// SIGKILLed: the workload goes on (two of three live replicas; without
// the repair, one of three would be left). The first node, restarted,
// finds its replica removed and destroys it (tombstone). The Checker
// finds nothing acknowledged lost and the sum holds. The times from the
// first kill to reads back and to the repair are logged, not asserted.
func TestReplicaRepair(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startClusterWith(t, bin, 4, []string{"--max-store-down-time", maxStoreDownTime.String()}, nil)
	b := startBank(t, c)
	h, p := b.h, b.p
	pdc, err := pd.NewClient([]string{c.pd.addr}, pd.ClientOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer pdc.Close()
	ctx := context.Background()
	storeOf := c.storeIDs(t, pdc)
	region := func() *pdpb.Region {
		r, err := pdc.GetRegion(ctx, nil)
		if err != nil {
			t.Fatalf("locate the region: %v\n%s", err, c.logs())
		}
		rec, err := pdc.RegionRecord(ctx, r.ID)
		if err != nil {
			t.Fatalf("region record: %v\n%s", err, c.logs())
		}
		return rec.GetRegion()
	}
	spare := c.kvs[3]
	if slices.Contains(region().GetPeers(), storeOf[spare]) {
		t.Fatalf("the fourth kv node holds a replica from the start: %v", region())
	}

	first := c.leader(t)
	waitFor(t, "a commit in flight", func() bool { return h.InFlight() > 0 }, c.logs)
	first.kill()
	killed := p.setMark()
	back := p.waitBack(t, "service without "+first.name, c.logs)
	want := []uint64{}
	for _, m := range c.kvs {
		if m != first {
			want = append(want, storeOf[m])
		}
	}
	slices.Sort(want)
	var last *pdpb.Region
	waitFor(t, "three live replicas", func() bool {
		last = region()
		return slices.Equal(last.GetPeers(), want) && len(last.GetLearners()) == 0
	}, func() string { return fmt.Sprintf("region %v, want peers %v\n%s", last, want, c.logs()) })
	repaired := time.Since(killed)
	if !strings.Contains(spare.log.String(), "raftstore: snapshot installed") {
		t.Errorf("%s did not log installing a snapshot\n%s", spare.name, spare.log)
	}
	b.progress(h.Len() + 30)

	// A second original node goes: two of the three replicas are left.
	second := c.leader(t)
	if second == spare {
		for _, m := range c.kvs {
			if m != first && m != spare {
				second = m
				break
			}
		}
	}
	second.kill()
	b.progress(h.Len() + 30)
	second.start()

	// The first node comes back: pd lists no region for it and records a
	// newer configuration without it, so it destroys its replica.
	first.start()
	waitFor(t, first.name+" destroys its removed replica", func() bool {
		return strings.Contains(first.log.String(), "raftstore: replica removed")
	}, c.logs)
	b.progress(h.Len() + 30)
	rep := b.finish()
	t.Logf("%s; reads back %v after %s (the leader's kv node) was killed; region back to three live replicas (%v, conf_ver %d) %v after the kill (max store down time %v); %s killed next, the workload went on; check: %s",
		h.Summary(), back.Round(time.Millisecond), first.name, last.GetPeers(), last.GetConfVer(), repaired.Round(time.Millisecond),
		maxStoreDownTime, second.name, rep)
	c.stop()
}

// storeIDs maps each KV node to its store id, by address.
func (c *cluster) storeIDs(t *testing.T, pdc *pd.Client) map[*member]uint64 {
	t.Helper()
	stores, err := pdc.GetStores(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[*member]uint64{}
	for _, m := range c.kvs {
		for _, st := range stores {
			if st.GetAddr() == m.addr {
				out[m] = st.GetId()
			}
		}
		if out[m] == 0 {
			t.Fatalf("%s (%s) is not registered with pd", m.name, m.addr)
		}
	}
	return out
}
