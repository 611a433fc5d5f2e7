package pd

import (
	"context"
	"time"

	"github.com/percdb/percdb/pd/pdpb"
)

// Leader balance, after PD's balance-leader scheduler: every live store
// should lead about its share of the regions, so that a cluster with
// many regions serves from all its nodes (reads and writes go to
// leaders). With each heartbeat of a store, pd may ask it to hand the
// leadership of one region it leads to a live UP peer of the region
// leading fewer (raft's leader transfer, pdpb.TransferLeader).
//
// Counts are the directory's leaders as the stores reported them, with
// the transfers pd asked and that have not shown in the directory yet
// counted as done (PD's operator influence): a transfer takes an
// election round and a report, and deciding on the reports alone asked a
// store for a second and third leadership before the first one's new
// leader reported, overshooting, and the next heartbeats moved
// leaderships back (leaders flip-flopped between two stores). A transfer
// counts until the directory shows its region led by the target, by
// another store than its source (something else happened), or for
// transferTimeout (it did not happen: raft gives a transfer up after an
// election timeout).
//
// A transfer is asked when the source, counting the transfers under way,
// leads more than the target by 2 + 2 x the tolerance: moving one
// leadership changes the difference by two, so counts within that band
// stay, and a move never makes the target lead more than the source did.
// The tolerance, PD's tolerant resource for leaders by count (5), is
// scaled down for small clusters (a twentieth of a store's share of the
// leaderships, at most 5): with a few regions a store, counts that
// differ by two are an imbalance worth a transfer; with thousands, a
// difference of a few is noise not worth an election. The source's
// region is the one of the lowest id not asked within transferTimeout,
// and the target its peer leading the fewest. No leadership goes to a
// store that is not UP (being drained), nor moves in a region whose
// replica is being moved (placement.go, whose hand-offs count as
// transfers under way too).

// transferTimeout is how long a leader transfer pd asked counts as under
// way, and how long pd waits before asking a region's leader to move
// again: a transfer takes an election round and a report.
const transferTimeout = 10 * time.Second

// maxLeaderTolerance is PD's leaderTolerantSizeRatio: the most
// leaderships a store may lead above (and its peer below) the balance
// before a transfer is asked.
const maxLeaderTolerance = 5

// leaderTransfer is a leader transfer pd asked: region's leadership from
// store from to store to, asked at asked; done once the directory showed
// it (it is kept until transferTimeout to hold the region back).
type leaderTransfer struct {
	from, to uint64
	asked    time.Time
	done     bool
}

// leaderView is the leaderships as one balance decision sees them.
type leaderView struct {
	now time.Time
	// count is each store's leaderships, with the transfers under way
	// counted as done.
	count map[uint64]int
	// up is each store's placement status.
	up map[uint64]pdpb.StoreStatus
}

// leaderViewLocked takes the leaderships the directory c counts
// (leaders, a copy it may change), and settles the transfers under way
// against c: those it shows done, or overtaken, or past transferTimeout,
// stop counting. hbMu held.
func (s *Server) leaderViewLocked(c *dirCache, leaders map[uint64]int, stores []*pdpb.Store, now time.Time) *leaderView {
	v := &leaderView{now: now, count: leaders, up: map[uint64]pdpb.StoreStatus{}}
	for _, st := range stores {
		v.up[st.GetId()] = st.GetStatus()
	}
	leader := func(id uint64) uint64 {
		r, _, _ := c.record(id)
		return r.GetStoreId()
	}
	for id, tr := range s.transfers {
		if now.Sub(tr.asked) > transferTimeout {
			delete(s.transfers, id)
			continue
		}
		if tr.done {
			continue
		}
		switch leader(id) {
		case tr.from:
			v.count[tr.from]--
			v.count[tr.to]++
		default: // done (led by to), overtaken, or the region is gone
			tr.done = true
		}
	}
	return v
}

// noteTransferLocked records a leader transfer asked of region's leader
// from to store to, counting it in v. hbMu held.
func (s *Server) noteTransferLocked(v *leaderView, region, from, to uint64) {
	if tr := s.transfers[region]; tr != nil && !tr.done && tr.from == from && tr.to == to {
		return // asked again (a hand-off): counted already
	}
	s.transfers[region] = &leaderTransfer{from: from, to: to, asked: v.now}
	v.count[from]--
	v.count[to]++
}

// leaderTolerance is the tolerance of the balance of v's leaderships
// over the UP stores: a twentieth of a store's share, at most
// maxLeaderTolerance.
func leaderTolerance(v *leaderView) int {
	total, stores := 0, 0
	for id, status := range v.up {
		if status == pdpb.StoreStatus_UP {
			total += v.count[id]
			stores++
		}
	}
	if stores == 0 {
		return 0
	}
	return min(maxLeaderTolerance, total/stores/20)
}

// balanceLeaders returns the leader transfer to ask of store, which
// leads the regions leadingOf returns, if any. The regions are looked at
// only when a live UP store leads fewer than store by the band.
func (s *Server) balanceLeaders(ctx context.Context, store uint64, leading *leadSet) ([]*pdpb.TransferLeader, error) {
	c, err := s.dir.view(ctx)
	if err != nil {
		return nil, err
	}
	_, leaders := c.counts()
	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	v := s.leaderViewLocked(c, leaders, c.storeList(), s.now())
	band := 2 + 2*leaderTolerance(v)
	if v.count[store] < band {
		return nil, nil
	}
	fewest := -1
	for p, status := range v.up {
		if p != store && status == pdpb.StoreStatus_UP && s.storeLiveLocked(p, v.now) && (fewest < 0 || v.count[p] < fewest) {
			fewest = v.count[p]
		}
	}
	if fewest < 0 || v.count[store]-fewest < band {
		return nil, nil
	}
	ids, err := leading.list()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		r, _, _ := c.record(id)
		if r == nil || r.GetStoreId() != store || len(r.GetLearners()) > 0 || s.transfers[id] != nil || s.moves[id] != nil {
			continue
		}
		var to uint64
		for _, p := range r.GetPeers() {
			if p == store || !s.storeLiveLocked(p, v.now) || v.up[p] != pdpb.StoreStatus_UP {
				continue
			}
			if to == 0 || v.count[p] < v.count[to] || (v.count[p] == v.count[to] && p < to) {
				to = p
			}
		}
		if to == 0 || v.count[store]-v.count[to] < band {
			continue
		}
		s.cfg.Logger.Info("pd: balancing leaders", "region", id, "from", store, "to", to, "from_leads", v.count[store], "to_leads", v.count[to])
		s.noteTransferLocked(v, id, store, to)
		return []*pdpb.TransferLeader{{RegionId: id, ToStore: to}}, nil
	}
	return nil, nil
}
