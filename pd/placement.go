package pd

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
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
//  3. balance: a replica moves from a store to one that weighs less
//     when the move narrows the difference between them by at least
//     minReplicaWeight (balanceGain), the move that narrows it most
//     first, so that each live store holds about its share of the data
//     (a store joining a cluster fills up). A replica weighs its
//     region's approximate size as its leader reports it, at least
//     minReplicaWeight (PD's size of an empty region), so that regions
//     too small to tell apart balance by count (two stores whose counts
//     differ by two or more), and a few large regions and many small
//     ones by bytes (PD's balance-region by region size). A move never
//     undoes the last one: moving the replica back would widen the
//     difference again.
//
// A target is live (heartbeated within placementLiveWindow), UP, not low
// on space, has heartbeated since it last registered (a node that
// restarted has not told pd its space yet: balance moved a replica onto
// a node restarting with a smaller capacity, and moved it off again 40
// ms later), holds no replica of the region, and weighs the least
// (counting the moves under way); a store a move took the region's
// replica off within moveBackWindow is the last resort. A store that
// was low on space is not a balance target again until it has
// balanceSpaceMargin of its capacity free above the low-space line
// (hysteresis: a store that just left the low-space state does not fill
// up again at once); a store that was never low is one up to the line. (A margin required of every balance target
// stopped balance whenever the stores' free space was within it of the
// line: test clusters share one file system, on the CI machine 6-7% free,
// within 1% of the line then, and under the whole suite's load balance
// stopped half way with no word in any log.) A source needs no liveness
// for a drain: an operator's drain replaces the replicas of a store that
// went silent too, as PD replaces an offline store's peers. When a
// replica must move and no store can take it, pd says so in its log. The
// leader never removes itself, so a
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
// Config.MoveTimeout (a target that went down, a leader that cannot reach it); a
// new pd leader starts with none and decides again. A learner a move left
// (abandoned, or begun by another pd leader) is taken up again as a move
// to it (resumeLocked): otherwise its region, skipped by every decision
// while it has a learner, would never move again.

// DefaultMoveTimeout is Config.MoveTimeout's default: how long pd keeps
// asking for a move before abandoning it.
const DefaultMoveTimeout = 2 * time.Minute

// balanceSpaceMargin is how much of a store's capacity must be free above
// the low-space line for balance (not drain or repair) to move a replica
// onto it again once it was low on space.
const balanceSpaceMargin = 0.05

// placementLiveWindow is how recently a store must have heartbeated to
// receive a replica or a leadership a move hands off: ten of its
// heartbeats (PD counts a store disconnected after 20 s). liveWindow's 3 s
// is for routing, where a silent leader's store must be passed over at
// once; on two loaded cores a KV node's heartbeat is sometimes seconds
// late, and a store that is merely slow makes a fine target.
const placementLiveWindow = 10 * time.Second

// moveBackWindow is how long after a move took a region's replica off a
// store that store is the region's target only when no other store can
// take the replica: a move and its reverse within moments of each other
// (after a report that changed the weights or the space) cost two
// snapshots for nothing.
const moveBackWindow = 5 * time.Minute

// regionStore names a region's replica on a store.
type regionStore struct{ region, store uint64 }

// noTargetLogEvery is how often pd repeats that a replica must move and
// no store can take it.
const noTargetLogEvery = 30 * time.Second

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
	now time.Time
	// dir is the directory the decision reads regions from (the
	// leader's cache; its records are shared, not to be modified).
	dir    *dirCache
	stores map[uint64]*pdpb.Store
	// count is each store's replicas, weight their weights (balance by
	// size), with the moves under way counted as done.
	count  map[uint64]int
	weight map[uint64]int64
	// leaders is the leaderships, for hand-offs (balance.go).
	leaders *leaderView
	// targets are the stores that can take a replica, lightest first,
	// for balance ([1]) and the other reasons ([0]); made by the first
	// targetLocked of the decision, which then looks at a region's peers
	// only, not at every store for every region.
	targets [2][]uint64
	sorted  [2]bool
}

// region returns region id's record (shared), nil when there is none.
func (v *placementView) region(id uint64) *pdpb.Region {
	r, _, _ := v.dir.record(id)
	return r
}

// canHoldLocked reports whether store id may receive a replica:
// registered, UP, live, not low on space, and for balance, not refilling
// (it was low on space and has not got balanceSpaceMargin above the line
// since). hbMu held.
func (s *Server) canHoldLocked(v *placementView, id uint64, balance bool) bool {
	st := v.stores[id]
	return st != nil && st.GetStatus() == pdpb.StoreStatus_UP && s.placeableLocked(id, v.now) && !s.unreported[id] &&
		!s.lowSpace(s.space[id], 0) && !(balance && s.refilling[id])
}

// placeableLocked reports whether store id heartbeated within
// placementLiveWindow (and the max store down time, when shorter). hbMu
// held.
func (s *Server) placeableLocked(id uint64, now time.Time) bool {
	ms := s.heartbeats[id]
	return ms != 0 && now.Sub(time.UnixMilli(ms)) <= min(placementLiveWindow, s.cfg.MaxStoreDownTime)
}

// noteSpaceLocked follows each store's low-space state for the
// hysteresis of balance targets: a store low on space is refilling until
// it has balanceSpaceMargin above the line. hbMu held.
func (s *Server) noteSpaceLocked(v *placementView) {
	for id := range v.stores {
		sp := s.space[id]
		switch {
		case s.lowSpace(sp, 0):
			s.refilling[id] = true
		case s.refilling[id] && !s.lowSpace(sp, balanceSpaceMargin):
			delete(s.refilling, id)
		}
	}
}

// target returns the store to move r's replica on from to (the eligible
// store without a replica of r of the highest isolation score against
// r's other replicas (labels.go), then weighing the least, then holding
// the fewest, the lowest id among equals), or 0, and whether it is a move
// back: a store a move took r's replica off within moveBackWindow is the
// target only when no other store can take the replica as well
// isolated. hbMu held.
func (s *Server) targetLocked(v *placementView, r *pdpb.Region, balance bool, from uint64) (uint64, bool) {
	mode := 0
	if balance {
		mode = 1
	}
	if !v.sorted[mode] {
		for id := range v.stores {
			if s.canHoldLocked(v, id, balance) {
				v.targets[mode] = append(v.targets[mode], id)
			}
		}
		slices.SortFunc(v.targets[mode], func(a, b uint64) int {
			return cmp.Or(cmp.Compare(v.weight[a], v.weight[b]), cmp.Compare(v.count[a], v.count[b]), cmp.Compare(a, b))
		})
		v.sorted[mode] = true
	}
	var best, back uint64
	bestScore, backScore := -1, -1
	for _, id := range v.targets[mode] { // lightest first
		if hasPeer(r, id) {
			continue
		}
		score := s.isolation(v, r, id, from)
		if s.movedOffLocked(r.GetId(), id, v.now) {
			if score > backScore {
				back, backScore = id, score
			}
		} else if score > bestScore {
			best, bestScore = id, score
		}
	}
	if best == 0 && back != 0 || back != 0 && backScore > bestScore {
		return back, true
	}
	return best, false
}

// movedOffLocked reports whether a move took region's replica off store
// within moveBackWindow of now. hbMu held.
func (s *Server) movedOffLocked(region, store uint64, now time.Time) bool {
	at, ok := s.movedOff[regionStore{region, store}]
	return ok && now.Sub(at) <= moveBackWindow
}

// placements returns the moves to ask of store leader, which leads the
// regions leading (skipping the regions in repaired, which have a repair
// under way): the ChangePeers of the moves under way whose region it
// leads, a leader transfer for a move whose source is itself, and at most
// one new move. It also retires finished moves and marks drained stores
// as tombstones.
func (s *Server) placements(ctx context.Context, t *term, leader uint64, leading *leadSet, repaired map[uint64]bool) ([]*pdpb.ChangePeer, []*pdpb.TransferLeader, error) {
	c, err := s.dir.view(ctx)
	if err != nil {
		return nil, nil, err
	}
	// The counts the directory keeps (no walk over every region: a
	// heartbeat's cost follows the regions its store reports, not the
	// cluster's).
	storeList := c.storeList()
	replicas, leaders := c.counts()
	v := &placementView{now: s.now(), dir: c, stores: map[uint64]*pdpb.Store{}, count: replicas, weight: c.storeWeights()}
	for _, st := range storeList {
		v.stores[st.GetId()] = st
	}
	if err := s.markTombstones(ctx, t, v); err != nil {
		return nil, nil, err
	}

	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	v.leaders = s.leaderViewLocked(c, leaders, storeList, v.now)
	s.noteSpaceLocked(v)
	s.retireMovesLocked(v)
	for _, m := range s.moves {
		r, w := v.region(m.region), c.weight(m.region)
		if !hasPeer(r, m.to) {
			v.count[m.to]++
			v.weight[m.to] += w
		}
		if hasPeer(r, m.from) {
			v.count[m.from]--
			v.weight[m.from] -= w
		}
	}
	var changes []*pdpb.ChangePeer
	var transfers []*pdpb.TransferLeader
	// The moves under way and the learners no move stands for are all
	// a heartbeat carries on: the regions with neither are left alone
	// here, whatever their number.
	var carried []uint64
	for id := range s.moves {
		carried = append(carried, id)
	}
	carried = append(carried, c.learners()...)
	slices.Sort(carried)
	for _, id := range slices.Compact(carried) {
		m, r := s.moves[id], v.region(id)
		if !leading.has(id, r) {
			continue
		}
		if m == nil && r != nil && r.GetStoreId() == leader && !repaired[id] && len(s.moves) < s.cfg.MaxMoves {
			if m = s.resumeLocked(v, r); m != nil {
				s.moves[id] = m
			}
		}
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
	if !s.moveWantedLocked(v) {
		s.noteNoTargetLocked(v, nil)
		return changes, transfers, nil
	}
	ids, err := leading.list()
	if err != nil {
		return nil, nil, err
	}
	led := make(map[uint64]bool, len(ids))
	for _, id := range ids {
		led[id] = true
	}
	if m := s.pickMoveLocked(v, leader, led, repaired); m != nil {
		s.moves[m.region] = m
		s.cfg.Logger.Info("pd: moving a replica", "region", m.region, "from", m.from, "to", m.to, "reason", m.reason,
			"from_replicas", v.count[m.from], "to_replicas", v.count[m.to])
		if m.from == leader {
			if to := s.handOffLocked(v, v.region(m.region), leader); to != 0 {
				s.noteTransferLocked(v.leaders, m.region, leader, to)
				transfers = append(transfers, &pdpb.TransferLeader{RegionId: m.region, ToStore: to})
			}
		} else {
			changes = append(changes, &pdpb.ChangePeer{RegionId: m.region, RemoveStore: m.from, AddStore: m.to})
		}
	}
	return changes, transfers, nil
}

// moveWantedLocked reports whether a new move may be wanted: a replica
// is on a store being drained or low on space, or a store a balance move
// could take from weighs at least minReplicaWeight more than the
// lightest balance target (a balance move narrows the difference
// between its stores by no more than the difference itself, and
// pickMoveLocked wants it narrowed by minReplicaWeight). hbMu held.
func (s *Server) moveWantedLocked(v *placementView) bool {
	if len(s.cfg.LocationLabels) > 0 {
		return true // a replica may be better isolated: not known without a look at the regions
	}
	var heaviest, lightest int64
	sources, targets := false, false
	for id, st := range v.stores {
		if v.count[id] > 0 {
			switch {
			case st.GetStatus() == pdpb.StoreStatus_OFFLINE:
				return true
			case !s.placeableLocked(id, v.now):
			case s.lowSpace(s.space[id], 0):
				return true
			case !sources || v.weight[id] > heaviest:
				heaviest, sources = v.weight[id], true
			}
		}
		if s.canHoldLocked(v, id, true) && (!targets || v.weight[id] < lightest) {
			lightest, targets = v.weight[id], true
		}
	}
	return sources && targets && heaviest-lightest >= minReplicaWeight
}

// handOffLocked returns the voter of r, other than leader, to hand r's
// leadership to before leader's replica moves away: a live UP store,
// the one leading the fewest (counting the transfers under way, so that
// hand-offs do not unbalance the leaderships), the lowest id among
// equals, or 0. hbMu held.
func (s *Server) handOffLocked(v *placementView, r *pdpb.Region, leader uint64) uint64 {
	var best uint64
	for _, p := range slices.Sorted(slices.Values(r.GetPeers())) {
		if p == leader || slices.Contains(r.GetLearners(), p) || !s.placeableLocked(p, v.now) ||
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
// the target a voter and the source gone) and those past
// Config.MoveTimeout or
// whose region is gone. hbMu held.
func (s *Server) retireMovesLocked(v *placementView) {
	for id, m := range s.moves {
		r := v.region(id)
		switch {
		case r != nil && hasPeer(r, m.to) && !slices.Contains(r.GetLearners(), m.to) && !hasPeer(r, m.from):
			s.movedOff[regionStore{id, m.from}] = v.now
			s.cfg.Logger.Info("pd: replica moved", "region", id, "from", m.from, "to", m.to, "reason", m.reason, "took", v.now.Sub(m.since).Round(time.Millisecond))
		case r == nil || v.now.Sub(m.since) > s.cfg.MoveTimeout:
			// A learner it left is taken up again (resumeLocked) while its
			// store can take it, or replaced by repair once it is down.
			s.cfg.Logger.Warn("pd: replica move abandoned", "region", id, "from", m.from, "to", m.to, "reason", m.reason,
				"after", v.now.Sub(m.since).Round(time.Second), "stage", moveStage(r, m))
		default:
			continue
		}
		delete(s.moves, id)
	}
	for k, at := range s.movedOff {
		if v.now.Sub(at) > moveBackWindow {
			delete(s.movedOff, k)
		}
	}
}

// moveStage says how far move m of region r got, for the log.
func moveStage(r *pdpb.Region, m *move) string {
	switch {
	case r == nil:
		return "region gone"
	case slices.Contains(r.GetLearners(), m.to):
		return "target a learner, not promoted (snapshot or catching up)"
	case hasPeer(r, m.to):
		return "target a voter, source not removed"
	}
	return "target not added"
}

// resumeLocked takes up the move a learner of r stands for when pd has
// none under way for r: a move pd abandoned after Config.MoveTimeout, or one a
// previous pd leader began. Placement, leader balance and new moves leave
// a region with a learner alone (a change is under way), so a learner
// nobody promotes would hold its region still for good. The learner is
// the target if its store can take a replica (else repair replaces it
// once its store is down); the source is the voter a move would pick
// first: on a store being drained, then low on space, then the one
// weighing the most. hbMu held.
func (s *Server) resumeLocked(v *placementView, r *pdpb.Region) *move {
	id := r.GetId()
	if len(r.GetLearners()) == 0 || s.repairing[id] != nil {
		return nil
	}
	to := r.GetLearners()[0]
	if !s.canHoldLocked(v, to, false) {
		return nil
	}
	var from uint64
	var reason string
	rank := func(p uint64) (int, string) {
		switch {
		case v.stores[p].GetStatus() == pdpb.StoreStatus_OFFLINE:
			return 0, "drain"
		case s.lowSpace(s.space[p], 0):
			return 1, "low space"
		}
		return 2, "balance"
	}
	for _, p := range r.GetPeers() {
		if slices.Contains(r.GetLearners(), p) {
			continue
		}
		rp, why := rank(p)
		rf, _ := rank(from)
		if from == 0 || rp < rf || (rp == rf && (v.weight[p] > v.weight[from] || v.weight[p] == v.weight[from] && p < from)) {
			from, reason = p, why
		}
	}
	if from == 0 {
		return nil
	}
	v.count[from]--
	v.weight[from] -= v.dir.weight(id)
	s.cfg.Logger.Info("pd: resuming a replica move (a learner no move stands for)", "region", id, "from", from, "to", to, "reason", reason)
	return &move{region: id, from: from, to: to, reason: reason, since: v.now}
}

// pickMoveLocked chooses a new move among the regions store leader leads
// (led), by the reasons' order, or nil. hbMu held.
func (s *Server) pickMoveLocked(v *placementView, leader uint64, led, repaired map[uint64]bool) *move {
	var best *move
	var bestBack bool
	var stuck []string
	rank := func(reason string) int {
		return map[string]int{"drain": 0, "low space": 1, "isolation": 2, "balance": 3}[reason]
	}
	// better orders candidate moves: by reason, then a move that puts
	// no replica back where a move took it off lately, then the one
	// that narrows the difference between its stores most (balanceGain:
	// a large region before small ones), then the one from the heaviest
	// source (no store emptied below its share while another stays
	// above it: the leader's store, first among its regions' peers, gave
	// four replicas to a new store while its peers kept theirs, and got
	// them back from its peers later), then one whose source does not
	// lead (no hand-off), then the first found.
	better := func(m *move, back bool) bool { // m: not kept
		if best == nil {
			return true
		}
		if rank(m.reason) != rank(best.reason) {
			return rank(m.reason) < rank(best.reason)
		}
		if back != bestBack {
			return !back
		}
		if g, bg := balanceGain(v, m), balanceGain(v, best); g != bg {
			return g > bg
		}
		if d, bd := v.weight[m.from]-v.weight[m.to], v.weight[best.from]-v.weight[best.to]; d != bd {
			return d > bd
		}
		return m.from != leader && best.from == leader
	}
	for _, id := range slices.Sorted(maps.Keys(led)) {
		r := v.region(id)
		if r == nil || r.GetStoreId() != leader || repaired[id] || s.moves[id] != nil || len(r.GetLearners()) > 0 {
			continue
		}
		if s.repairing[id] != nil {
			continue
		}
		for _, p := range r.GetPeers() {
			var reason string
			st := v.stores[p]
			switch {
			case st == nil:
				continue
			case st.GetStatus() == pdpb.StoreStatus_OFFLINE:
				reason = "drain"
			case !s.placeableLocked(p, v.now):
				continue // a down store's replicas are repaired (repair.go)
			case s.lowSpace(s.space[p], 0):
				reason = "low space"
			default:
				reason = "balance"
			}
			var to uint64
			var back bool
			if reason == "balance" && len(s.cfg.LocationLabels) > 0 {
				// A store that can take the replica better isolated:
				// a move for isolation, whatever the weights.
				if t, b := s.targetLocked(v, r, true, p); t != 0 && s.isolation(v, r, t, p) > s.isolation(v, r, p, 0) {
					reason, to, back = "isolation", t, b
				}
			}
			if best != nil && rank(reason) > rank(best.reason) {
				continue
			}
			if to == 0 {
				to, back = s.targetLocked(v, r, reason == "balance", p)
			}
			if to != 0 && reason == "balance" && s.isolation(v, r, to, p) < s.isolation(v, r, p, 0) {
				continue // a balance move never lowers the replica's isolation
			}
			if to == 0 && reason != "balance" {
				stuck = append(stuck, fmt.Sprintf("region %d's replica on store %d (%s)", id, p, reason))
			}
			// A candidate, copied to the heap only once it is the best.
			m := move{region: id, from: p, to: to, reason: reason, since: v.now}
			if to == 0 || (reason == "balance" && balanceGain(v, &m) < minReplicaWeight) {
				continue
			}
			if !better(&m, back) {
				continue
			}
			if p == leader && s.handOffLocked(v, r, leader) == 0 {
				continue // no voter to take the leadership first
			}
			chosen := m
			best, bestBack = &chosen, back
		}
	}
	if best == nil {
		s.noteNoTargetLocked(v, stuck)
	}
	return best
}

// balanceGain is how much move m narrows the difference between the
// weights of its stores: the difference d less what it is after moving
// a replica of weight w, |d - 2w|; negative when it widens it.
func balanceGain(v *placementView, m *move) int64 {
	d, w := v.weight[m.from]-v.weight[m.to], v.dir.weight(m.region)
	after := d - 2*w
	return d - max(after, -after)
}

// noteNoTargetLocked logs, at most every noTargetLogEvery, that replicas
// must move (drain, low space: stuck) or balance is off by two or more
// while no store can take a replica, with each store's state, so that a
// placement that stopped says why. hbMu held.
func (s *Server) noteNoTargetLocked(v *placementView, stuck []string) {
	lo, hi := -1, -1
	for id, st := range v.stores {
		if st.GetStatus() != pdpb.StoreStatus_UP {
			continue
		}
		if n := v.count[id]; lo < 0 || n < lo {
			lo = n
		}
		if n := v.count[id]; n > hi {
			hi = n
		}
	}
	if len(stuck) == 0 && hi-lo < 2 || v.now.Sub(s.noTargetLogged) < noTargetLogEvery {
		return
	}
	if len(stuck) == 0 {
		for id := range v.stores {
			if s.canHoldLocked(v, id, true) {
				return // a target exists: balance waits for a region whose leader heartbeats
			}
		}
	}
	s.noTargetLogged = v.now
	var states []string
	for _, id := range slices.Sorted(maps.Keys(v.stores)) {
		states = append(states, fmt.Sprintf("store %d: %s, %d replicas, %s", id, s.placementStateLocked(v, id), v.count[id], spaceString(s.space[id])))
	}
	s.cfg.Logger.Warn("pd: replicas to move and no store can take them", "waiting", strings.Join(stuck, "; "), "stores", strings.Join(states, "; "))
}

// placementStateLocked says why store id can or cannot take a replica.
// hbMu held.
func (s *Server) placementStateLocked(v *placementView, id uint64) string {
	switch {
	case v.stores[id].GetStatus() != pdpb.StoreStatus_UP:
		return v.stores[id].GetStatus().String()
	case !s.placeableLocked(id, v.now):
		return "silent"
	case s.unreported[id]:
		return "restarted, no heartbeat since"
	case s.lowSpace(s.space[id], 0):
		return "low on space"
	case s.refilling[id]:
		return "refilling (no balance target)"
	}
	return "can take replicas"
}

// spaceString renders a store's disk as its heartbeat reported it.
func spaceString(sp *pdpb.StoreSpace) string {
	if sp == nil {
		return "space unknown"
	}
	pct := 0.0
	if c := sp.GetCapacity(); c > 0 {
		pct = 100 * float64(sp.GetAvailable()) / float64(c)
	}
	return fmt.Sprintf("%.1f%% of %d MiB available", pct, sp.GetCapacity()>>20)
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
		now, left := s.now(), 0
		s.hbMu.Lock()
		for _, st := range stores {
			if st.GetId() != id && st.GetStatus() == pdpb.StoreStatus_UP && s.placeableLocked(st.GetId(), now) {
				left++
			}
		}
		s.hbMu.Unlock()
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
