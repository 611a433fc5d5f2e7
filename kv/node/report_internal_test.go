package node

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/percdb/percdb/kv/raftstore"
	"github.com/percdb/percdb/pd/pdpb"
)

// reportedIDs returns the regions o reports, sorted.
func reportedIDs(o *outgoing) []uint64 {
	var ids []uint64
	for _, rep := range o.req.GetReports() {
		ids = append(ids, rep.GetRegionId())
	}
	slices.Sort(ids)
	return ids
}

// TestReportsOnlyWhatChanged: after a full report pd acknowledged, a
// heartbeat reports a region only when what pd keeps of it changed: its
// leadership, its configuration, its range, its size by more than the
// step, its load (and once more when the load stops); a report pd did
// not take, or one whose heartbeat failed, goes again; an idle led
// region is not measured again; a full report is due again when pd asks
// or after the interval.
func TestReportsOnlyWhatChanged(t *testing.T) {
	var r reporter
	sizes := map[string]uint64{"": 1 << 20, "b": 1 << 20, "c": 1 << 20}
	measures := 0
	measure := func(d raftstore.Descriptor) (uint64, error) {
		measures++
		return sizes[string(d.Start)], nil
	}
	states := []regionState{
		{id: 1, leading: true, conf: raftstore.Conf{Ver: 1, Voters: []uint64{1, 2, 3}}, desc: raftstore.Descriptor{End: []byte("b"), Version: 2}},
		{id: 2, leading: true, conf: raftstore.Conf{Ver: 1, Voters: []uint64{1, 2, 3}}, desc: raftstore.Descriptor{Start: []byte("b"), End: []byte("c"), Version: 2}},
		{id: 3, conf: raftstore.Conf{Ver: 1, Voters: []uint64{1, 2, 3}}, desc: raftstore.Descriptor{Start: []byte("c"), Version: 2}},
		{id: 4}, // uninitialized: never reported
	}
	now := time.Unix(1000, 0)
	beat := func(loads map[uint64]*pdpb.RegionLoad, resp *pdpb.StoreHeartbeatResponse) *outgoing {
		t.Helper()
		o := r.build(states, r.fullDue(now, time.Minute), loads, measure)
		if resp == nil {
			resp = &pdpb.StoreHeartbeatResponse{}
		}
		r.ack(o, resp, now)
		return o
	}
	expect := func(o *outgoing, partial bool, ids ...uint64) {
		t.Helper()
		if got := reportedIDs(o); o.req.GetPartial() != partial || !slices.Equal(got, ids) {
			t.Fatalf("heartbeat (partial %v) reports %v, want partial %v and %v", o.req.GetPartial(), got, partial, ids)
		}
	}

	expect(beat(nil, nil), false, 1, 2, 3)
	if measures != 2 {
		t.Fatalf("the first report measured %d regions, want the 2 led", measures)
	}
	expect(beat(nil, nil), true)
	if measures != 2 {
		t.Fatalf("idle led regions measured again: %d measures", measures)
	}
	// Region 1 is written a little (below the step), region 2 a lot.
	states[0].applied, states[1].applied = 10, 10
	sizes[""] += sizeReportStep / 2
	sizes["b"] += 4 << 20
	expect(beat(nil, nil), true, 2)
	// Leadership lost, a configuration changed, a split: reported.
	states[0].leading = false
	states[2].conf = raftstore.Conf{Ver: 2, Voters: []uint64{1, 2, 3}, Learners: []uint64{4}}
	expect(beat(nil, nil), true, 1, 3)
	states[1].desc = raftstore.Descriptor{Start: []byte("b"), End: []byte("bb"), Version: 3}
	expect(beat(nil, nil), true, 2)
	// A load: reported, and once more when it stops.
	o := beat(map[uint64]*pdpb.RegionLoad{2: {WrittenKeys: 5, IntervalMs: 1000}}, nil)
	expect(o, true, 2)
	if o.req.GetReports()[0].GetLoad().GetWrittenKeys() != 5 || !slices.Equal(o.req.GetLeading(), []uint64{2}) {
		t.Fatalf("report of a loaded region: %v, leading %v", o.req.GetReports(), o.req.GetLeading())
	}
	expect(beat(map[uint64]*pdpb.RegionLoad{2: {IntervalMs: 1000}}, nil), true, 2)
	expect(beat(map[uint64]*pdpb.RegionLoad{2: {IntervalMs: 1000}}, nil), true)
	// A report pd did not take goes again; a heartbeat that failed
	// acknowledged nothing.
	states[0].leading = true
	expect(beat(nil, &pdpb.StoreHeartbeatResponse{Resend: []uint64{1}}), true, 1)
	expect(beat(nil, nil), true, 1)
	states[2].conf.Ver = 3
	if o := r.build(states, false, nil, measure); !slices.Equal(reportedIDs(o), []uint64{3}) {
		t.Fatalf("after a configuration change: %v", reportedIDs(o))
	}
	expect(beat(nil, nil), true, 3)
	// pd asks for a full report; later the interval brings one.
	beat(nil, &pdpb.StoreHeartbeatResponse{FullReportWanted: true})
	expect(beat(nil, nil), false, 1, 2, 3)
	expect(beat(nil, nil), true)
	now = now.Add(time.Minute)
	expect(beat(nil, nil), false, 1, 2, 3)
}

// BenchmarkBuildReports measures building a heartbeat's reports of
// 10,000 regions, a third of them led (with a size and a load each), as
// a full report and as a partial one in which nothing changed (what a KV
// node sends between full reports).
func BenchmarkBuildReports(b *testing.B) {
	const n = 10000
	states := make([]regionState, n)
	loads := map[uint64]*pdpb.RegionLoad{}
	for i := range states {
		id := uint64(i + 1)
		states[i] = regionState{id: id, leading: i%3 == 0, conf: raftstore.Conf{Ver: 1, Voters: []uint64{1, 2, 3}},
			desc: raftstore.Descriptor{Start: fmt.Appendf(nil, "r%08d", i), End: fmt.Appendf(nil, "r%08d", i+1), Version: 2}}
		if states[i].leading {
			loads[id] = &pdpb.RegionLoad{IntervalMs: 1000}
		}
	}
	measure := func(raftstore.Descriptor) (uint64, error) { return 1 << 20, nil }
	for _, full := range []bool{true, false} {
		b.Run(map[bool]string{true: "report=full", false: "report=partial"}[full], func(b *testing.B) {
			var r reporter
			r.ack(r.build(states, true, loads, measure), &pdpb.StoreHeartbeatResponse{}, time.Now())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o := r.build(states, full, loads, measure)
				if want := map[bool]int{true: n, false: 0}[full]; len(o.req.GetReports()) != want {
					b.Fatalf("%d reports, want %d", len(o.req.GetReports()), want)
				}
			}
		})
	}
}
