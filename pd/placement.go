package pd

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/percdb/percdb/pd/pdpb"
)

// Replica placement, after PD's balance-region scheduler and its store
// states: pd moves replicas between live stores, each move a ChangePeer
// asked of the region's leader (add the target as a learner, initialized
// by snapshot, then promote it and remove the source in one joint conf
// change: kv/raftstore's Replica.ChangePeer, the repair's mechanism), for
// three reasons, in this order:
//
//  1. drain: every replica on an OFFLINE store (SetStoreStatus) moves to
//     another store; once the directory lists none there, pd marks the
//     store TOMBSTONE and the node may be stopped;
//  2. low space: a replica on a store low on space (its heartbeat's
//     StoreSpace: disk_full, or less than 1 - Config.LowSpaceRatio of its
//     capacity available) moves to a store with room, while there is one;
//  3. balance: a replica moves from the store holding the most replicas
//     to the one holding the fewest when they differ by two or more, so
//     that each live store holds about its share (a store joining a
//     cluster fills up).
//
// A target is live, UP, not low on space, holds no replica of the region,
// and holds the fewest replicas (counting the moves under way); a balance
// target must moreover have balanceSpaceMargin of its capacity free above
// the low-space line, so that a store that just left the low-space state
// does not fill up again at once. The leader never removes itself, so a
// move whose source leads the region first asks that leader to hand its
// leadership to another voter; the new leader is asked the ChangePeer
// with its next heartbeat.
//
// Moves are rate limited: at most Config.MaxMoves at once in the whole
// cluster, one new move per heartbeat, never two of one region, none on a
// region with a learner (a change under way) or a repair to make (a down
// peer: repair.go has precedence), and a region is never left with fewer
// replicas than it has (the joint change adds before it removes). Unlike
// repairs, moves are pd state (Server.moves), in memory: a move is asked
// again with every heartbeat of the region's leader until the directory
// shows the target a voter and the source gone, or it is abandoned after
// moveTimeout (a target that went down, a leader that cannot reach it); a
// new pd leader starts with none and decides again.

// moveTimeout is how long pd keeps asking for a move before abandoning
// it: a snapshot of a large region and two conf changes fit well inside.
const moveTimeout = 2 * time.Minute

// balanceSpaceMargin is how much of a store's capacity must be free above
// the low-space line for balance (not drain or repair) to move a replica
// onto it.
const balanceSpaceMargin = 0.05

// move is a replica move under way: region's replica on from goes to to.
type move struct {
	region, from, to uint64
	reason           string
	since            time.Time
}

// lowSpace reports whether a store whose heartbeat reported sp is low on
// space: pd places nothing on it and moves replicas off it. margin raises
// the line by that fraction of the capacity.
func (s *Server) lowSpace(sp *pdpb.StoreSpace, margin float64) bool {
	if sp == nil {
		return false
	}
	if sp.GetDiskFull() {
		return true
	}
	c := float64(sp.GetCapacity())
	return c > 0 && float64(sp.GetAvailable()) < c*(1-s.cfg.LowSpaceRatio+margin)
}

// placementView is the cluster as one placement decision sees it.
type placementView struct {
	now     time.Time
	regions []*pdpb.Region
	stores  map[uint64]*pdpb.Store
	// count is each store's replicas, with the moves under way counted
	// as done.
	count map[uint64]int
	// leaders is the leaderships, for hand-offs (balance.go).
	leaders *leaderView
}

// canHold reports whether store id may receive a replica: registered,
// UP, live, not low on space (with margin). hbMu held.
func (s *Server) canHoldLocked(v *placementView, id uint64, margin float64) bool {
	st := v.stores[id]
	return st != nil && st.GetStatus() == pdpb.StoreStatus_UP && s.storeLiveLocked(id, v.now) && !s.lowSpace(s.space[id], margin)
}

// target returns the store to move r's replica to (the eligible store
// without a replica of r holding the fewest, the lowest id among equals),
// or 0. hbMu held.
func (s *Server) targetLocked(v *placementView, r *pdpb.Region, margin float64) uint64 {
	var best uint64
	for id := range v.stores {
		if hasPeer(r, id) || !s.canHoldLocked(v, id, margin) {
			continue
		}
		if best == 0 || v.count[id] < v.count[best] || (v.count[id] == v.count[best] && id < best) {
			best = id
		}
	}
	return best
}

// placements returns the moves to ask of store leader, which leads the
// regions leading (skipping the regions in repaired, which have a repair
// under way): the ChangePeers of the moves under way whose region it
// leads, a leader transfer for a move whose source is itself, and at most
// one new move. It also retires finished moves and marks drained stores
// as tombstones.
func (s *Server) placements(ctx context.Context, t *term, leader uint64, leading []uint64, repaired map[uint64]bool) ([]*pdpb.ChangePeer, []*pdpb.TransferLeader, error) {
	regions, err := s.dir.regions(ctx)
	if err != nil {
		return nil, nil, err
	}
	storeList, err := s.dir.stores(ctx)
	if err != nil {
		return nil, nil, err
	}
	v := &placementView{now: time.Now(), regions: regions, stores: map[uint64]*pdpb.Store{}, count: map[uint64]int{}}
	for _, st := range storeList {
		v.stores[st.GetId()] = st
	}
	byID := make(map[uint64]*pdpb.Region, len(regions))
	for _, r := range regions {
		byID[r.GetId()] = r
		for _, p := range r.GetPeers() {
			v.count[p]++
		}
	}
	if err := s.markTombstones(ctx, t, v); err != nil {
		return nil, nil, err
	}

	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	v.leaders = s.leaderViewLocked(regions, storeList, v.now)
	s.retireMovesLocked(v, byID)
	for _, m := range s.moves {
		r := byID[m.region]
		if !hasPeer(r, m.to) {
			v.count[m.to]++
		}
		if hasPeer(r, m.from) {
			v.count[m.from]--
		}
	}
	var changes []*pdpb.ChangePeer
	var transfers []*pdpb.TransferLeader
	led := map[uint64]bool{}
	for _, id := range leading {
		led[id] = true
		m, r := s.moves[id], byID[id]
		if m == nil || r == nil || r.GetStoreId() != leader || repaired[id] {
			continue
		}
		if m.from != leader {
			changes = append(changes, &pdpb.ChangePeer{RegionId: id, RemoveStore: m.from, AddStore: m.to})
			continue
		}
		if to := s.handOffLocked(v, r, leader); to != 0 {
			s.noteTransferLocked(v.leaders, id, leader, to)
			transfers = append(transfers, &pdpb.TransferLeader{RegionId: id, ToStore: to})
		}
	}
	if len(s.moves) >= s.cfg.MaxMoves {
		return changes, transfers, nil
	}
	if m := s.pickMoveLocked(v, leader, led, repaired); m != nil {
		s.moves[m.region] = m
		s.cfg.Logger.Info("pd: moving a replica", "region", m.region, "from", m.from, "to", m.to, "reason", m.reason,
			"from_replicas", v.count[m.from], "to_replicas", v.count[m.to])
		if m.from == leader {
			if to := s.handOffLocked(v, byID[m.region], leader); to != 0 {
				s.noteTransferLocked(v.leaders, m.region, leader, to)
				transfers = append(transfers, &pdpb.TransferLeader{RegionId: m.region, ToStore: to})
			}
		} else {
			changes = append(changes, &pdpb.ChangePeer{RegionId: m.region, RemoveStore: m.from, AddStore: m.to})
		}
	}
	return changes, transfers, nil
}

// handOffLocked returns the voter of r, other than leader, to hand r's
// leadership to before leader's replica moves away: a live UP store,
// the one leading the fewest (counting the transfers under way, so that
// hand-offs do not unbalance the leaderships), the lowest id among
// equals, or 0. hbMu held.
func (s *Server) handOffLocked(v *placementView, r *pdpb.Region, leader uint64) uint64 {
	var best uint64
	for _, p := range slices.Sorted(slices.Values(r.GetPeers())) {
		if p == leader || slices.Contains(r.GetLearners(), p) || !s.storeLiveLocked(p, v.now) ||
			v.stores[p].GetStatus() != pdpb.StoreStatus_UP {
			continue
		}
		if best == 0 || v.leaders.count[p] < v.leaders.count[best] {
			best = p
		}
	}
	return best
}

// retireMovesLocked drops the moves that finished (the directory shows
// the target a voter and the source gone) and those past moveTimeout or
// whose region is gone. hbMu held.
func (s *Server) retireMovesLocked(v *placementView, byID map[uint64]*pdpb.Region) {
	for id, m := range s.moves {
		r := byID[id]
		switch {
		case r != nil && hasPeer(r, m.to) && !slices.Contains(r.GetLearners(), m.to) && !hasPeer(r, m.from):
			s.cfg.Logger.Info("pd: replica moved", "region", id, "from", m.from, "to", m.to, "reason", m.reason, "took", v.now.Sub(m.since).Round(time.Millisecond))
		case r == nil || v.now.Sub(m.since) > moveTimeout:
			s.cfg.Logger.Warn("pd: replica move abandoned", "region", id, "from", m.from, "to", m.to, "reason", m.reason, "after", v.now.Sub(m.since).Round(time.Second))
		default:
			continue
		}
		delete(s.moves, id)
	}
}

// pickMoveLocked chooses a new move among the regions store leader leads
// (led), by the reasons' order, or nil. hbMu held.
func (s *Server) pickMoveLocked(v *placementView, leader uint64, led, repaired map[uint64]bool) *move {
	var best *move
	rank := func(reason string) int {
		return map[string]int{"drain": 0, "low space": 1, "balance": 2}[reason]
	}
	for _, r := range v.regions {
		id := r.GetId()
		if !led[id] || r.GetStoreId() != leader || repaired[id] || s.moves[id] != nil || len(r.GetLearners()) > 0 {
			continue
		}
		if s.repairing[id] != nil {
			continue
		}
		for _, p := range r.GetPeers() {
			var reason string
			margin := 0.0
			st := v.stores[p]
			switch {
			case st == nil || !s.storeLiveLocked(p, v.now):
				continue // a down store's replicas are repaired (repair.go)
			case st.GetStatus() == pdpb.StoreStatus_OFFLINE:
				reason = "drain"
			case s.lowSpace(s.space[p], 0):
				reason = "low space"
			default:
				reason, margin = "balance", balanceSpaceMargin
			}
			if best != nil && rank(reason) >= rank(best.reason) {
				continue
			}
			to := s.targetLocked(v, r, margin)
			if to == 0 || (reason == "balance" && v.count[p]-v.count[to] < 2) {
				continue
			}
			if p == leader && s.handOffLocked(v, r, leader) == 0 {
				continue // no voter to take the leadership first
			}
			best = &move{region: id, from: p, to: to, reason: reason, since: v.now}
		}
	}
	return best
}

// markTombstones marks TOMBSTONE each OFFLINE store that holds no
// replica in the directory: its drain is done.
func (s *Server) markTombstones(ctx context.Context, t *term, v *placementView) error {
	for id, st := range v.stores {
		if st.GetStatus() != pdpb.StoreStatus_OFFLINE || v.count[id] > 0 {
			continue
		}
		rec, err := s.dir.setStoreStatus(ctx, t.guard, id, pdpb.StoreStatus_TOMBSTONE)
		if err != nil {
			return err
		}
		v.stores[id] = rec
		s.cfg.Logger.Info("pd: store drained and removed (tombstone): its node can be stopped", "store", id)
	}
	return nil
}

// drain records store id OFFLINE (drain true) or UP. A drain is refused
// when the stores left (UP, live, other than id) are fewer than a region
// has replicas: the drain could never finish.
func (s *Server) drain(ctx context.Context, t *term, id uint64, drain bool) (*pdpb.Store, error) {
	status := pdpb.StoreStatus_UP
	if drain {
		status = pdpb.StoreStatus_OFFLINE
		stores, err := s.dir.stores(ctx)
		if err != nil {
			return nil, err
		}
		now, left := time.Now(), 0
		for _, st := range stores {
			if st.GetId() != id && st.GetStatus() == pdpb.StoreStatus_UP && s.storeLive(st.GetId(), now) {
				left++
			}
		}
		if left < s.cfg.Replicas {
			return nil, fmt.Errorf("%w: draining store %d would leave %d live stores for %d replicas a region: add a store first",
				errFailedPrecondition, id, left, s.cfg.Replicas)
		}
	}
	st, err := s.dir.setStoreStatus(ctx, t.guard, id, status)
	if err != nil {
		return nil, err
	}
	s.cfg.Logger.Info("pd: store status set", "store", id, "status", st.GetStatus().String())
	return st, nil
}
