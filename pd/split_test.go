package pd_test

import (
	"context"
	"testing"

	"github.com/percdb/percdb/pd/pdpb"
)

// TestSplitReportsAndLeaderBalance: pd's directory follows the stores'
// reports of split regions (the newer version wins; a stale report
// changes nothing; the new region's record starts with the reporting
// store), and pd asks a store that leads every region to hand
// leaderships to live peers, one a heartbeat, until each leads its share.
func TestSplitReportsAndLeaderBalance(t *testing.T) {
	ctx := context.Background()
	c, ids, first := threeStores(t)
	report := func(id uint64, start, end string, version uint64) *pdpb.RegionReport {
		rep := &pdpb.RegionReport{RegionId: id, ConfVer: 1, Voters: ids, Start: []byte(start), Version: version}
		if end != "" {
			rep.End = []byte(end)
		}
		return rep
	}
	beat := func(store uint64, leading []uint64, reps ...*pdpb.RegionReport) *pdpb.StoreHeartbeatResponse {
		t.Helper()
		resp, err := c.StoreHeartbeat(ctx, &pdpb.StoreHeartbeatRequest{StoreId: store, Leading: leading, Reports: reps})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Five splits at b, d, f, h, j: six regions, all led by ids[0].
	all := []uint64{first.ID}
	reps := []*pdpb.RegionReport{}
	bounds := []string{"", "b", "d", "f", "h", "j", ""}
	for i := 1; i < 6; i++ {
		id, err := c.AllocID(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, id)
	}
	for i, id := range all {
		reps = append(reps, report(id, bounds[i], bounds[i+1], 6))
	}
	first0 := beat(ids[0], all, reps...)
	for i, id := range all {
		r, err := c.GetRegion(ctx, []byte(bounds[i]+"0"))
		if err != nil {
			t.Fatal(err)
		}
		if r.ID != id || string(r.Start) != bounds[i] || string(r.End) != bounds[i+1] || r.Epoch.Version != 6 {
			t.Fatalf("key %q routed to %+v, want region %d [%q, %q) at version 6", bounds[i]+"0", r, id, bounds[i], bounds[i+1])
		}
	}
	// A stale report (the first region before the splits) changes nothing.
	beat(ids[1], nil, report(first.ID, "", "", 1))
	if r, err := c.GetRegion(ctx, []byte("z")); err != nil || r.ID != all[5] {
		t.Fatalf("after a stale report, z is routed to %+v (%v), want region %d", r, err, all[5])
	}

	// Balance: ids[0] leads all six; each heartbeat of it (the others
	// live) asks one transfer to the peer leading the fewest, which then
	// reports leading it. (The first heartbeat, above, asked one.)
	leads := map[uint64][]uint64{ids[0]: all}
	transfer := func(resp *pdpb.StoreHeartbeatResponse) bool {
		if len(resp.GetTransfers()) == 0 {
			return false
		}
		tr := resp.GetTransfers()[0]
		var kept []uint64
		for _, id := range leads[ids[0]] {
			if id != tr.GetRegionId() {
				kept = append(kept, id)
			}
		}
		leads[ids[0]] = kept
		leads[tr.GetToStore()] = append(leads[tr.GetToStore()], tr.GetRegionId())
		beat(tr.GetToStore(), leads[tr.GetToStore()])
		return true
	}
	transfer(first0)
	for range 10 {
		beat(ids[1], leads[ids[1]])
		beat(ids[2], leads[ids[2]])
		if !transfer(beat(ids[0], leads[ids[0]])) {
			break
		}
	}
	for _, id := range ids {
		if n := len(leads[id]); n != 2 {
			t.Fatalf("leaders after balancing: %v, want two regions each", leads)
		}
	}
}
