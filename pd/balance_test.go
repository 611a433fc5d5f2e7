package pd_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/pd/pdpb"
)

// TestLeaderBalanceCountsTransfersUnderWay: three stores, twelve regions
// all led by the first. A transfer pd asks takes a few rounds of
// heartbeats to land (the old leader stops leading at once, the new one
// reports leading after its election), as under load. pd counts the
// transfers it asked as done, so it asks exactly the eight transfers that
// make four leaderships each, and no store that received a leadership
// hands one away (deciding on the reports alone, pd asked the first store
// for more transfers to the second before the first one landed, the
// second then led more than its share, and leaderships went back and
// forth).
func TestLeaderBalanceCountsTransfersUnderWay(t *testing.T) {
	ctx := context.Background()
	c, stores, first := threeStores(t)
	const regions, lag = 12, 3
	type region struct {
		id, leader uint64
		start, end string
		// to and due: a transfer under way lands on to at round due.
		to  uint64
		due int
	}
	var rs []*region
	for i := range regions {
		id := first.ID
		if i > 0 {
			var err error
			if id, err = c.AllocID(ctx, 1); err != nil {
				t.Fatal(err)
			}
		}
		r := &region{id: id, leader: stores[0]}
		if i > 0 {
			r.start = fmt.Sprintf("k%02d", i)
		}
		if i < regions-1 {
			r.end = fmt.Sprintf("k%02d", i+1)
		}
		rs = append(rs, r)
	}
	asked := 0
	gave, got := map[uint64]bool{}, map[uint64]bool{}
	for round := 0; round < 20*lag; round++ {
		for _, r := range rs {
			if r.to != 0 && round >= r.due {
				r.leader, r.to = r.to, 0
			}
		}
		for _, st := range stores {
			req := &pdpb.StoreHeartbeatRequest{StoreId: st}
			for _, r := range rs {
				if r.leader != st || r.to != 0 {
					continue // a leader handing its leadership away does not serve
				}
				req.Leading = append(req.Leading, r.id)
				rep := &pdpb.RegionReport{RegionId: r.id, ConfVer: 1, Voters: slices.Clone(stores), Start: []byte(r.start), Version: 2}
				if r.end != "" {
					rep.End = []byte(r.end)
				}
				req.Reports = append(req.Reports, rep)
			}
			resp, err := c.StoreHeartbeat(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range resp.GetTransfers() {
				i := slices.IndexFunc(rs, func(r *region) bool { return r.id == tr.GetRegionId() })
				if i < 0 || rs[i].leader != st || rs[i].to != 0 || tr.GetToStore() == st {
					t.Fatalf("round %d: store %d asked to transfer %v", round, st, tr)
				}
				rs[i].to, rs[i].due = tr.GetToStore(), round+lag
				asked++
				gave[st], got[tr.GetToStore()] = true, true
				if got[st] {
					t.Fatalf("round %d: store %d, which received leaderships, asked to hand region %d to store %d (after %d transfers)",
						round, st, tr.GetRegionId(), tr.GetToStore(), asked)
				}
				if gave[tr.GetToStore()] {
					t.Fatalf("round %d: store %d, which handed leaderships away, receives region %d", round, tr.GetToStore(), tr.GetRegionId())
				}
			}
		}
	}
	count := map[uint64]int{}
	for _, r := range rs {
		if r.to != 0 {
			t.Fatalf("region %d still moving to store %d", r.id, r.to)
		}
		count[r.leader]++
	}
	for _, st := range stores {
		if count[st] != regions/len(stores) {
			t.Fatalf("leaders by store %v after %d transfers, want %d each", count, asked, regions/len(stores))
		}
	}
	if asked != regions-regions/len(stores) {
		t.Fatalf("%d transfers asked, want %d", asked, regions-regions/len(stores))
	}
}

// threeStores opens a pd (three replicas a region) and a client of it,
// and registers three stores, which bootstraps the first region; it
// returns the client, the stores' ids and the first region.
func threeStores(t *testing.T) (*pd.Client, []uint64, kv.RegionInfo) {
	t.Helper()
	cfg := pdConfig(t, t.TempDir())
	cfg.Replicas = 3
	c := openPDClient(t, &cfg)
	var stores []uint64
	for i := range 3 {
		id, err := c.PutStore(context.Background(), 0, fmt.Sprintf("127.0.0.1:%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, id)
	}
	first, err := c.GetRegion(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, stores, first
}
