package pd

import (
	"context"
	"maps"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/pd/pdpb"
)

// Replica repair, after PD's replica checker: a store that has not
// heartbeated for Config.MaxStoreDownTime is down, and each region with
// a replica on it gets, through its leader, a replica on a live store in
// its place (pdpb.ChangePeer: the leader adds the new replica as a raft
// learner, which its snapshot initializes, then promotes it and removes
// the dead one in one joint conf change; kv/raftstore's
// Replica.ChangePeer). pd keeps no operator state of its own: it asks
// again with each heartbeat of the region's leader, deriving the request
// from the directory, which follows the leader's reports of its applied
// configuration; once a report without the dead store is in, it stops.

// lastBeat returns when store id was last heard from: its last heartbeat
// in this term, or the term's start.
func (s *Server) lastBeat(t *term, id uint64) time.Time {
	s.hbMu.Lock()
	ms := s.heartbeats[id]
	s.hbMu.Unlock()
	if last := time.UnixMilli(ms); ms != 0 && last.After(t.since) {
		return last
	}
	return t.since
}

// storeDown reports whether store id has been silent longer than the max
// store down time.
func (s *Server) storeDown(t *term, id uint64, now time.Time) bool {
	return now.Sub(s.lastBeat(t, id)) > s.cfg.MaxStoreDownTime
}

// liveWindow is how recently a store must have heartbeated to receive a
// new replica: a few of its heartbeats (a second apart by default).
const liveWindow = 3 * time.Second

// storeLive reports whether store id heartbeated within liveWindow (and
// the max store down time, when that is shorter).
func (s *Server) storeLive(id uint64, now time.Time) bool {
	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	return s.storeLiveLocked(id, now)
}

// storeLiveLocked is storeLive with s.hbMu held.
func (s *Server) storeLiveLocked(id uint64, now time.Time) bool {
	ms := s.heartbeats[id]
	return ms != 0 && now.Sub(time.UnixMilli(ms)) <= min(liveWindow, s.cfg.MaxStoreDownTime)
}

// repairs returns the replica repairs to ask of store leader, which
// leads the regions leading: for each of them with a peer on a down
// store, replace it by the region's learner if it has one on a live
// store (a repair under way), else by a replica on the live store with
// no peer of the region that holds the fewest replicas. The regions are
// looked at only while a store holding replicas is down or a repair is
// under way (noted): otherwise there is nothing to repair.
func (s *Server) repairs(ctx context.Context, t *term, leader uint64, leading *leadSet) ([]*pdpb.ChangePeer, error) {
	now := s.now()
	if need, err := s.repairWanted(ctx, t, now); err != nil || !need {
		return nil, err
	}
	ids, err := leading.list()
	if err != nil {
		return nil, err
	}
	var out []*pdpb.ChangePeer
	for _, id := range ids {
		// The record, shared: read, not modified.
		r, _, _, err := s.dir.recordByID(ctx, id)
		if err != nil {
			return nil, err
		}
		if r == nil || r.GetStoreId() != leader {
			continue
		}
		var dead uint64
		for _, p := range r.GetPeers() {
			if p != leader && s.storeDown(t, p, now) {
				dead = p
				break
			}
		}
		if dead == 0 {
			s.noteRepair(id, nil)
			continue
		}
		var add uint64
		for _, l := range r.GetLearners() {
			if l != dead && s.storeLive(l, now) {
				add = l
				break
			}
		}
		if add == 0 {
			c, err := s.dir.view(ctx)
			if err != nil {
				return nil, err
			}
			add = s.spareStore(r, c, now, dead)
		}
		if add == 0 {
			s.noteRepair(id, &pdpb.ChangePeer{RegionId: id, RemoveStore: dead})
			continue
		}
		c := &pdpb.ChangePeer{RegionId: id, RemoveStore: dead, AddStore: add}
		s.noteRepair(id, c)
		out = append(out, c)
	}
	return out, nil
}

// repairWanted reports whether a store holding replicas is down or a
// repair pd asked has not been seen done.
func (s *Server) repairWanted(ctx context.Context, t *term, now time.Time) (bool, error) {
	s.hbMu.Lock()
	pending := len(s.repairing) > 0
	s.hbMu.Unlock()
	if pending {
		return true, nil
	}
	c, err := s.dir.view(ctx)
	if err != nil {
		return false, err
	}
	count, _ := c.counts()
	for id, n := range count {
		if n > 0 && s.storeDown(t, id, now) {
			return true, nil
		}
	}
	return false, nil
}

// spareStore returns the live UP store with room (not low on space,
// placement.go) without a peer of r that is best isolated from r's
// replicas but dead's (labels.go), then holds the fewest replicas (the
// lowest id among equals), or 0.
func (s *Server) spareStore(r *pdpb.Region, c *dirCache, now time.Time, dead uint64) uint64 {
	count, _ := c.counts()
	v := &placementView{stores: map[uint64]*pdpb.Store{}}
	for _, st := range c.storeList() {
		v.stores[st.GetId()] = st
	}
	var best uint64
	bestScore := -1
	for _, id := range slices.Sorted(maps.Keys(v.stores)) {
		st := v.stores[id]
		if hasPeer(r, id) || st.GetStatus() != pdpb.StoreStatus_UP || !s.storeLive(id, now) || s.lowSpaceStore(id) || s.unreportedStore(id) {
			continue
		}
		score := s.isolation(v, r, id, dead)
		if best == 0 || score > bestScore || (score == bestScore && count[id] < count[best]) {
			best, bestScore = id, score
		}
	}
	return best
}

// noteRepair logs a repair the first time pd asks it (c nil: none for
// the region; AddStore 0: a down peer and no live store to replace it).
func (s *Server) noteRepair(region uint64, c *pdpb.ChangePeer) {
	s.hbMu.Lock()
	last := s.repairing[region]
	if c == nil {
		delete(s.repairing, region)
	} else {
		s.repairing[region] = c
	}
	s.hbMu.Unlock()
	switch {
	case c == nil && last != nil:
		s.cfg.Logger.Info("pd: region repaired", "region", region, "removed_store", last.GetRemoveStore(), "added_store", last.GetAddStore())
	case c != nil && !proto.Equal(c, last):
		if c.GetAddStore() == 0 {
			s.cfg.Logger.Warn("pd: region has a down peer and no live store to replace it", "region", region, "down_store", c.GetRemoveStore())
		} else {
			s.cfg.Logger.Info("pd: replacing a down store's replica", "region", region, "down_store", c.GetRemoveStore(), "add_store", c.GetAddStore())
		}
	}
}

// liveRoute returns the store to send region r's requests to: its
// recorded leader, unless that store has not heartbeated within
// liveWindow (in this term, or since it began) and a voter on a store that
// has does.
func (s *Server) liveRoute(t *term, r *pdpb.Region, now time.Time) uint64 {
	leader := r.GetStoreId()
	if now.Sub(s.lastBeat(t, leader)) <= liveWindow {
		return leader
	}
	for _, p := range r.GetPeers() {
		if p != leader && !slices.Contains(r.GetLearners(), p) && s.storeLive(p, now) {
			return p
		}
	}
	return leader
}

// unreportedStore reports whether store id registered and has not
// heartbeated since (placement.go).
func (s *Server) unreportedStore(id uint64) bool {
	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	return s.unreported[id]
}

// lowSpaceStore reports whether store id's last heartbeat said it is low
// on space (placement.go).
func (s *Server) lowSpaceStore(id uint64) bool {
	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	return s.lowSpace(s.space[id], 0)
}
