package pd

import (
	"context"
	"slices"
	"time"

	"github.com/percdb/percdb/pd/pdpb"
)

// Leader balance, after PD's balance-leader scheduler: every live store
// should lead about its share of the regions, so that a cluster with
// many regions serves from all its nodes (reads and writes go to
// leaders). With each heartbeat of a store that leads more regions than
// a live peer store of one of them by two or more, pd asks it to hand
// that region's leadership to the peer leading the fewest (raft's leader
// transfer, pdpb.TransferLeader), one region per heartbeat, and not the
// same region again within transferCooldown. Counts come from the
// directory's leaders as the stores reported them, so a transfer under
// way is counted once its new leader reports in. A store's count never
// goes below another's by moving one leadership, so moves stop once the
// counts differ by at most one. No leadership goes to a store that is
// not UP (being drained), nor moves in a region whose replica is being
// moved (placement.go).

// transferCooldown is how long pd waits before asking a region's leader
// to move again: a transfer takes an election round and a report.
const transferCooldown = 10 * time.Second

// balanceLeaders returns the leader transfer to ask of store, which
// leads the regions leading, if any.
func (s *Server) balanceLeaders(ctx context.Context, store uint64, leading []uint64) ([]*pdpb.TransferLeader, error) {
	if len(leading) == 0 {
		return nil, nil
	}
	all, err := s.dir.regions(ctx)
	if err != nil {
		return nil, err
	}
	stores, err := s.dir.stores(ctx)
	if err != nil {
		return nil, err
	}
	up := map[uint64]pdpb.StoreStatus{}
	for _, st := range stores {
		up[st.GetId()] = st.GetStatus()
	}
	now := time.Now()
	count := map[uint64]int{}
	for _, r := range all {
		count[r.GetStoreId()]++
	}
	ids := slices.Clone(leading)
	slices.Sort(ids)
	byID := make(map[uint64]*pdpb.Region, len(all))
	for _, r := range all {
		byID[r.GetId()] = r
	}
	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	for _, id := range ids {
		r := byID[id]
		if r == nil || r.GetStoreId() != store || len(r.GetLearners()) > 0 || now.Sub(s.transferred[id]) < transferCooldown || s.moves[id] != nil {
			continue
		}
		var to uint64
		for _, p := range r.GetPeers() {
			if p == store || !s.storeLiveLocked(p, now) || up[p] != pdpb.StoreStatus_UP {
				continue
			}
			if to == 0 || count[p] < count[to] || (count[p] == count[to] && p < to) {
				to = p
			}
		}
		if to == 0 || count[store]-count[to] < 2 {
			continue
		}
		s.transferred[id] = now
		s.cfg.Logger.Info("pd: balancing leaders", "region", id, "from", store, "to", to, "from_leads", count[store], "to_leads", count[to])
		return []*pdpb.TransferLeader{{RegionId: id, ToStore: to}}, nil
	}
	return nil, nil
}
