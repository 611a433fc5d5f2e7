package pd

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/percdb/percdb/pd/pdpb"
)

// Store heartbeats, after PD's split of region heartbeats from store
// heartbeats: a KV node reports each region when something of it changed,
// and pd keeps the rest. A heartbeat is full (every region the store
// holds, every one it leads: a node's first, one after pd asked for it,
// and one every node.Config.FullReportInterval) or partial
// (StoreHeartbeatRequest.partial: only the regions whose report changed
// since the last heartbeat pd acknowledged). Either way pd takes each
// report as before (directory.go's updateRange and setLeader, the
// region's size and load); a report it could not take because the
// record changed meanwhile is named in the answer's resend, and the node
// sends it again.
//
// What pd answers costs what changed too:
//
//   - the store's region list only when a record with a replica on the
//     store changed after the revision of the list the node last took
//     (the directory cache's per-store revision; a new term's cache
//     starts every store at its load's revision, so that each node takes
//     the list anew once);
//   - the decisions (repair.go, placement.go, balance.go) look at the
//     regions the store leads only when there may be something to do:
//     a store holding replicas is down, a replica is on a store being
//     drained or low on space, two stores' weights differ by a replica's
//     least weight, two stores' leaderships by the balance band; the
//     regions it leads come from the request (full) or from the
//     directory's index of leaders (partial);
//   - a partial heartbeat from a store pd has had no full report from in
//     its term (pd restarted, or another member took over) is taken, and
//     answered full_report_wanted, without decisions: pd's sizes and
//     loads, kept in memory, are refilled by the store's next heartbeat,
//     which the node sends at once, and decided on then.

// slowHeartbeat is how long pd may take to answer a store's heartbeat
// before it logs it: a KV node heartbeats every second, its pd client
// gives an attempt 3 s, and placement counts a store live while it
// heartbeated within liveWindow.
const slowHeartbeat = time.Second

// noteSlowHeartbeat logs a heartbeat of req's store that pd took longer
// than slowHeartbeat to handle (begun at start).
func (s *Server) noteSlowHeartbeat(req *pdpb.StoreHeartbeatRequest, start time.Time) {
	if took := time.Since(start); took > slowHeartbeat {
		s.cfg.Logger.Warn("pd: slow store heartbeat", "store", req.GetStoreId(), "took", took.Round(time.Millisecond),
			"leading", len(req.GetLeading()), "reports", len(req.GetReports()), "partial", req.GetPartial())
	}
}

// heartbeat handles store's heartbeat req in term t (the store is
// registered and its beat recorded).
func (s *Server) heartbeat(ctx context.Context, t *term, store uint64, req *pdpb.StoreHeartbeatRequest) (*pdpb.StoreHeartbeatResponse, error) {
	resp := &pdpb.StoreHeartbeatResponse{}
	s.hbMu.Lock()
	delete(s.unreported, store)
	if sp := req.GetSpace(); sp != nil {
		s.space[store] = sp
	}
	if req.GetPartial() {
		resp.FullReportWanted = !t.reported[store]
	} else {
		t.reported[store] = true
	}
	s.hbMu.Unlock()

	reports := make(map[uint64]*pdpb.RegionReport, len(req.GetReports()))
	for _, rep := range req.GetReports() {
		reports[rep.GetRegionId()] = rep
	}
	resend := map[uint64]bool{}
	// Ranges first, by start key descending: a split's right half is
	// recorded before its left half's record shrinks, so that no key is
	// left without a region for a moment.
	byStart := slices.Clone(req.GetReports())
	slices.SortFunc(byStart, func(a, b *pdpb.RegionReport) int { return bytes.Compare(b.GetStart(), a.GetStart()) })
	for _, rep := range byStart {
		retry, err := s.dir.updateRange(ctx, t.guard, store, rep)
		if err != nil {
			return nil, toStatus(err)
		}
		resend[rep.GetRegionId()] = resend[rep.GetRegionId()] || retry
	}
	for _, id := range req.GetLeading() {
		retry, err := s.dir.setLeader(ctx, t.guard, id, store, reports[id])
		if err != nil {
			return nil, toStatus(err)
		}
		resend[id] = resend[id] || retry
	}
	for id, again := range resend {
		if again {
			resp.Resend = append(resp.Resend, id)
		}
	}
	slices.Sort(resp.Resend)
	s.hbMu.Lock()
	for _, id := range req.GetLeading() {
		if rep := reports[id]; rep != nil {
			s.sizes[id] = rep.GetApproximateSize()
			s.dir.noteSize(id, rep.GetApproximateSize())
			if l := rep.GetLoad(); l != nil {
				s.loads[id] = l
				s.addLoad(id, store, l)
			}
		}
	}
	prune := time.Since(s.prunedAt) >= regionStatsPruneInterval
	s.hbMu.Unlock()
	if prune {
		if err := s.pruneRegionStats(ctx); err != nil {
			return nil, toStatus(err)
		}
	}

	if err := s.answerRegions(ctx, store, req.GetRegionsRevision(), resp); err != nil {
		return nil, toStatus(err)
	}

	sp, _, err := s.dir.gcSafePoint(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	resp.GcSafePoint = sp
	if resp.FullReportWanted {
		// What pd keeps in memory of the store's regions (sizes, by
		// which balance weighs) is gone: the decisions wait for the
		// full report, the store's next heartbeat.
		return resp, nil
	}
	leading := s.leadingOf(ctx, store, req)
	changes, err := s.repairs(ctx, t, store, leading)
	if err != nil {
		return nil, toStatus(err)
	}
	repaired := map[uint64]bool{}
	for _, c := range changes {
		repaired[c.GetRegionId()] = true
	}
	moves, handOffs, err := s.placements(ctx, t, store, leading, repaired)
	if err != nil {
		return nil, toStatus(err)
	}
	changes = append(changes, moves...)
	transfers := handOffs
	if len(transfers) == 0 {
		if transfers, err = s.balanceLeaders(ctx, store, leading); err != nil {
			return nil, toStatus(err)
		}
	}
	resp.Changes, resp.Transfers = changes, transfers
	return resp, nil
}

// answerRegions puts store's region list in resp, or says it is
// unchanged since revision known (0: the node has none).
func (s *Server) answerRegions(ctx context.Context, store uint64, known uint64, resp *pdpb.StoreHeartbeatResponse) error {
	if c := s.dir.cache.Load(); c != nil && known != 0 && c.storeRevision(store) <= int64(known) {
		resp.RegionsUnchanged = true
		resp.RegionsRevision = known
		return nil
	}
	regions, rev, err := s.dir.regionsOf(ctx, store)
	if err != nil {
		return err
	}
	resp.Regions, resp.RegionsRevision = regions, uint64(rev)
	return nil
}

// leadSet is the regions a heartbeat's store leads, as its decisions
// read them: those a full heartbeat lists, or, for a partial one (which
// lists the changed ones only), those the directory's records say the
// store leads, read once and only when a decision needs them all.
type leadSet struct {
	// list returns them, sorted.
	list func() ([]uint64, error)
	// listed is the full heartbeat's (nil: partial).
	listed map[uint64]bool
	store  uint64
}

// has reports whether the store leads region id, whose record is r.
func (l *leadSet) has(id uint64, r *pdpb.Region) bool {
	if l.listed != nil {
		return l.listed[id]
	}
	return r != nil && r.GetStoreId() == l.store
}

// leadingOf returns the regions store leads for the decisions of its
// heartbeat req.
func (s *Server) leadingOf(ctx context.Context, store uint64, req *pdpb.StoreHeartbeatRequest) *leadSet {
	l := &leadSet{store: store}
	if !req.GetPartial() {
		ids := slices.Clone(req.GetLeading())
		slices.Sort(ids)
		ids = slices.Compact(ids)
		l.listed = make(map[uint64]bool, len(ids))
		for _, id := range ids {
			l.listed[id] = true
		}
		l.list = func() ([]uint64, error) { return ids, nil }
		return l
	}
	l.list = sync.OnceValues(func() ([]uint64, error) {
		c, err := s.dir.view(ctx)
		if err != nil {
			return nil, err
		}
		return c.ledBy(store), nil
	})
	return l
}
