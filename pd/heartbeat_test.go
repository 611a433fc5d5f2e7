package pd

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/pd/pdpb"
)

// TestPartialHeartbeats: a store's partial heartbeat (the changed
// regions only) leaves what pd keeps of the others as it was; pd answers
// a store's region list only when one of its regions changed since the
// revision the store holds; a report pd could not take (its record
// changed meanwhile) is named for the store to send again; and after pd
// restarts, a partial heartbeat is answered with a request for a full
// one, which the full heartbeat settles.
func TestPartialHeartbeats(t *testing.T) {
	ctx := context.Background()
	cfg, s, svc, stores := openWithStores(t)
	defer func() { s.Close() }()
	first, err := s.dir.regionOf(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := first.GetId()
	beat := func(req *pdpb.StoreHeartbeatRequest) *pdpb.StoreHeartbeatResponse {
		t.Helper()
		resp, err := svc.StoreHeartbeat(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	report := func(confVer uint64, size uint64) *pdpb.RegionReport {
		return &pdpb.RegionReport{RegionId: id, ConfVer: confVer, Voters: stores, Version: 1, ApproximateSize: size}
	}

	// A full heartbeat: the list, as of a revision.
	resp := beat(&pdpb.StoreHeartbeatRequest{StoreId: stores[0], Leading: []uint64{id}, Reports: []*pdpb.RegionReport{report(1, 7<<20)}})
	rev := resp.GetRegionsRevision()
	if resp.GetRegionsUnchanged() || len(resp.GetRegions()) != 1 || rev == 0 || resp.GetFullReportWanted() {
		t.Fatalf("full heartbeat answered %v", resp)
	}
	// Partial, nothing changed: no list, no request for a full one; pd
	// keeps the region's leader and size.
	resp = beat(&pdpb.StoreHeartbeatRequest{StoreId: stores[0], Partial: true, RegionsRevision: rev})
	if !resp.GetRegionsUnchanged() || len(resp.GetRegions()) != 0 || resp.GetRegionsRevision() != rev || resp.GetFullReportWanted() {
		t.Fatalf("partial heartbeat with nothing changed answered %v", resp)
	}
	got, err := svc.GetRegionByID(ctx, &pdpb.GetRegionByIDRequest{RegionId: id})
	if err != nil || got.GetRegion().GetStoreId() != stores[0] || got.GetApproximateSize() != 7<<20 {
		t.Fatalf("after a partial heartbeat without the region: %v, %v", got, err)
	}
	// Another store's report changes the region (a learner added): the
	// first store's next heartbeat gets the list again, at a later
	// revision; a store that never took a list gets it.
	withLearner := report(2, 7<<20)
	withLearner.Learners = []uint64{99}
	resp = beat(&pdpb.StoreHeartbeatRequest{StoreId: stores[1], Partial: true, Leading: []uint64{id}, Reports: []*pdpb.RegionReport{withLearner}})
	if resp.GetRegionsUnchanged() || len(resp.GetRegions()) != 1 {
		t.Fatalf("partial heartbeat of a store without a list answered %v", resp)
	}
	resp = beat(&pdpb.StoreHeartbeatRequest{StoreId: stores[0], Partial: true, RegionsRevision: rev})
	if resp.GetRegionsUnchanged() || len(resp.GetRegions()) != 1 || resp.GetRegionsRevision() <= rev ||
		!slices.Contains(resp.GetRegions()[0].GetLearners(), 99) {
		t.Fatalf("partial heartbeat after the region changed answered %v (revision was %d)", resp, rev)
	}
	rev = resp.GetRegionsRevision()

	// A report pd cannot take (the cache is wrong about the record, as
	// if a change were lost: its conditional write fails) is named for
	// the store to send again; sent again, it is taken.
	c := s.dir.cache.Load()
	c.mu.Lock()
	e := c.regions[string(first.GetStart())]
	wrong := proto.Clone(e.rec).(*pdpb.Region)
	wrong.StoreId = stores[2]
	c.tally(e.rec, -1, 1)
	c.tally(wrong, 1, 1)
	e.rec, e.rev = wrong, 1
	c.mu.Unlock()
	back := report(4, 7<<20)
	resp = beat(&pdpb.StoreHeartbeatRequest{StoreId: stores[0], Partial: true, RegionsRevision: rev, Leading: []uint64{id}, Reports: []*pdpb.RegionReport{back}})
	if !slices.Equal(resp.GetResend(), []uint64{id}) {
		t.Fatalf("a report whose record changed meanwhile: resend %v, want [%d]", resp.GetResend(), id)
	}
	resp = beat(&pdpb.StoreHeartbeatRequest{StoreId: stores[0], Partial: true, RegionsRevision: rev, Leading: []uint64{id}, Reports: []*pdpb.RegionReport{back}})
	if len(resp.GetResend()) != 0 {
		t.Fatalf("the report sent again: resend %v", resp.GetResend())
	}
	sameAsEtcd(t, s)
	if r, err := s.dir.regionByID(ctx, id); err != nil || r.GetConfVer() != 4 || r.GetStoreId() != stores[0] {
		t.Fatalf("region after the report sent again: %v, %v", r, err)
	}

	// pd restarts: a partial heartbeat is taken and answered with a
	// request for a full one (and no decision: pd's sizes are gone), and
	// the list (the term's cache starts over); the full heartbeat
	// settles it.
	rev = resp.GetRegionsRevision()
	s.Close()
	s = openLeader(t, cfg)
	svc = &pdService{s: s}
	resp = beat(&pdpb.StoreHeartbeatRequest{StoreId: stores[0], Partial: true, RegionsRevision: rev})
	if !resp.GetFullReportWanted() || len(resp.GetRegions()) != 1 {
		t.Fatalf("partial heartbeat to a restarted pd answered %v", resp)
	}
	resp = beat(&pdpb.StoreHeartbeatRequest{StoreId: stores[0], Leading: []uint64{id}, Reports: []*pdpb.RegionReport{back}})
	if resp.GetFullReportWanted() {
		t.Fatalf("full heartbeat answered %v", resp)
	}
	resp = beat(&pdpb.StoreHeartbeatRequest{StoreId: stores[0], Partial: true, RegionsRevision: resp.GetRegionsRevision()})
	if resp.GetFullReportWanted() || !resp.GetRegionsUnchanged() {
		t.Fatalf("partial heartbeat after the full one answered %v", resp)
	}
	if got, err := svc.GetRegionByID(ctx, &pdpb.GetRegionByIDRequest{RegionId: id}); err != nil || got.GetApproximateSize() != 7<<20 {
		t.Fatalf("region's size after the full report: %v, %v", got, err)
	}
}
