package pd_test

import (
	"context"
	"slices"
	"testing"

	"github.com/percdb/percdb/pd/pdpb"
)

// TestRegionLoadTotals: a region's totals count each reported interval
// once, a heartbeat sent again included; and pd forgets the sizes and
// loads of a region that no longer exists (its record replaced by a
// newer region's).
func TestRegionLoadTotals(t *testing.T) {
	ctx := context.Background()
	cfg := pdConfig(t, t.TempDir())
	srv, c := openPDWithClient(t, &cfg)
	store, err := c.PutStore(ctx, 0, "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.GetRegion(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	right, err := c.AllocID(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	report := func(id uint64, start, end string, version uint64, load *pdpb.RegionLoad) *pdpb.RegionReport {
		rep := &pdpb.RegionReport{RegionId: id, ConfVer: 1, Voters: []uint64{store}, Start: []byte(start), Version: version,
			ApproximateSize: 1 << 20, Load: load}
		if end != "" {
			rep.End = []byte(end)
		}
		return rep
	}
	beat := func(req *pdpb.StoreHeartbeatRequest) {
		t.Helper()
		if _, err := c.StoreHeartbeat(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	total := func(id uint64) (keys, ms uint64) {
		t.Helper()
		recs, err := srv.Regions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.ID == id {
				return r.Total.WrittenKeys, r.Total.IntervalMS
			}
		}
		t.Fatalf("region %d not listed: %+v", id, recs)
		return 0, 0
	}
	// The first region splits at m; its leader reports 5 keys written
	// over the second before 1000 ms.
	req := &pdpb.StoreHeartbeatRequest{StoreId: store, Leading: []uint64{first.ID, right}, Reports: []*pdpb.RegionReport{
		report(first.ID, "", "m", 2, &pdpb.RegionLoad{WrittenKeys: 5, IntervalMs: 1000, EndUnixMs: 1000}),
		report(right, "m", "", 2, nil),
	}}
	beat(req)
	beat(req) // sent again: its first attempt timed out after pd took it
	if keys, ms := total(first.ID); keys != 5 || ms != 1000 {
		t.Fatalf("after one heartbeat sent twice: total %d keys over %d ms, want 5 over 1000", keys, ms)
	}
	req.Reports[0].Load = &pdpb.RegionLoad{WrittenKeys: 3, IntervalMs: 1000, EndUnixMs: 2000}
	beat(req)
	if keys, ms := total(first.ID); keys != 8 || ms != 2000 {
		t.Fatalf("after the next heartbeat: total %d keys over %d ms, want 8 over 2000", keys, ms)
	}

	// A newer region takes the first one's place: the first is gone.
	newer, err := c.AllocID(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	beat(&pdpb.StoreHeartbeatRequest{StoreId: store, Leading: []uint64{newer, right}, Reports: []*pdpb.RegionReport{
		report(newer, "", "m", 3, &pdpb.RegionLoad{WrittenKeys: 1, IntervalMs: 1000, EndUnixMs: 3000}),
		report(right, "m", "", 2, nil),
	}})
	if err := srv.PruneRegionStats(ctx); err != nil {
		t.Fatal(err)
	}
	want := []uint64{right, newer}
	slices.Sort(want)
	if got := srv.RegionStatsKept(); !slices.Equal(got, want) {
		t.Fatalf("regions with sizes or loads kept: %v, want %v (region %d is gone)", got, want, first.ID)
	}
}
