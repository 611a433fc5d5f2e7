package pd_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/pd/pdpb"
)

// simRegion is a region as the simulated stores of placementSim hold it.
type simRegion struct {
	id, leader, confVer uint64
	// size is the approximate size its leader reports.
	size             uint64
	voters, learners []uint64
	start, end       string
}

// placementSim plays the KV stores against a pd: each round every store
// heartbeats (the leaders with their regions' reports), and the
// ChangePeers and leader transfers pd answers are carried out at once, as
// a leader's conf changes would (the learner step is skipped: the change
// lands as its joint change does, conf_ver + 2).
type placementSim struct {
	t       *testing.T
	c       *pd.Client
	stores  []uint64
	regions []*simRegion
	space   map[uint64]*pdpb.StoreSpace
	moves   int
	// movedOff is the stores a move took each region's replica off;
	// movedBack lists the moves that put one back ("region r: store s")
	// while another store could have taken it.
	movedOff  map[uint64][]uint64
	movedBack []string
	// partial: after a store's first (full) heartbeat, it reports only
	// the regions whose report changed since pd acknowledged it, as KV
	// nodes do; sent is what pd acknowledged of each region's report (by
	// region), fullSent the stores that sent a full heartbeat and were
	// not asked for another.
	partial  bool
	sent     map[uint64]string
	fullSent map[uint64]bool
	// stall: the sim carries out no ChangePeer (every move's target
	// never catches up); changes lists the ChangePeers pd asked in the
	// last heartbeat ("region: from -> to").
	stall   bool
	changes []string
}

// reportModes runs f with the sim's stores sending full heartbeats, then
// partial ones: pd decides alike.
func reportModes(t *testing.T, f func(t *testing.T, partial bool)) {
	for _, partial := range []bool{false, true} {
		t.Run(map[bool]string{false: "full", true: "partial"}[partial], func(t *testing.T) { f(t, partial) })
	}
}

// round runs one heartbeat of every store and reports whether pd asked
// anything.
func (s *placementSim) round() bool {
	s.t.Helper()
	asked := false
	for _, st := range s.stores {
		asked = s.beat(st) || asked
	}
	return asked
}

// beat runs one heartbeat of store st, carries out what pd answers, and
// reports whether pd asked anything.
func (s *placementSim) beat(st uint64) bool {
	s.t.Helper()
	ctx := context.Background()
	asked := false
	partial := s.partial && s.fullSent[st]
	req := &pdpb.StoreHeartbeatRequest{StoreId: st, Space: s.space[st], Partial: partial}
	says := map[uint64]string{}
	for _, r := range s.regions {
		if r.leader == st {
			fp := fmt.Sprint(st, r.confVer, r.voters, r.learners, r.size, r.start, r.end)
			if partial && s.sent[r.id] == fp {
				continue
			}
			says[r.id] = fp
			req.Leading = append(req.Leading, r.id)
			rep := &pdpb.RegionReport{RegionId: r.id, ConfVer: r.confVer, Voters: slices.Clone(r.voters), Learners: slices.Clone(r.learners),
				Start: []byte(r.start), Version: 2, ApproximateSize: r.size}
			if r.end != "" {
				rep.End = []byte(r.end)
			}
			req.Reports = append(req.Reports, rep)
		}
	}
	resp, err := s.c.StoreHeartbeat(ctx, req)
	if err != nil {
		s.t.Fatal(err)
	}
	if s.partial {
		for id, fp := range says {
			if !slices.Contains(resp.GetResend(), id) {
				s.sent[id] = fp
			}
		}
		s.fullSent[st] = !resp.GetFullReportWanted()
	}
	s.changes = nil
	for _, c := range resp.GetChanges() {
		s.changes = append(s.changes, fmt.Sprintf("%d: %d -> %d", c.GetRegionId(), c.GetRemoveStore(), c.GetAddStore()))
		if s.stall {
			asked = true
			continue
		}
		r := s.region(c.GetRegionId())
		if r.leader != st || c.GetRemoveStore() == st || slices.Contains(r.voters, c.GetAddStore()) {
			s.t.Fatalf("store %d asked %v of region %+v", st, c, r)
		}
		if slices.Contains(s.movedOff[r.id], c.GetAddStore()) && s.otherTarget(r) {
			s.movedBack = append(s.movedBack, fmt.Sprintf("region %d: store %d", r.id, c.GetAddStore()))
		}
		s.movedOff[r.id] = append(s.movedOff[r.id], c.GetRemoveStore())
		r.voters = append(slices.DeleteFunc(r.voters, func(v uint64) bool { return v == c.GetRemoveStore() }), c.GetAddStore())
		r.learners = slices.DeleteFunc(r.learners, func(v uint64) bool { return v == c.GetAddStore() })
		slices.Sort(r.voters)
		r.confVer += 2
		s.moves++
		asked = true
	}
	for _, tr := range resp.GetTransfers() {
		r := s.region(tr.GetRegionId())
		if r.leader != st || !slices.Contains(r.voters, tr.GetToStore()) {
			s.t.Fatalf("store %d asked to transfer %v of region %+v", st, tr, r)
		}
		r.leader = tr.GetToStore()
		asked = true
	}
	return asked
}

// otherTarget reports whether a store with room (pd's default low-space
// line: 20% available) holds no replica of r and was never left by one.
func (s *placementSim) otherTarget(r *simRegion) bool {
	for _, st := range s.stores {
		sp := s.space[st]
		room := sp == nil || sp.GetAvailable()*5 >= sp.GetCapacity()
		if room && !slices.Contains(r.voters, st) && !slices.Contains(s.movedOff[r.id], st) {
			return true
		}
	}
	return false
}

func (s *placementSim) region(id uint64) *simRegion {
	for _, r := range s.regions {
		if r.id == id {
			return r
		}
	}
	s.t.Fatalf("pd asked a change of region %d, which does not exist", id)
	return nil
}

// newPlacementSim opens a pd (three replicas a region, the default
// low-space ratio, then what opts set) and registers stores stores with
// it.
func newPlacementSim(t *testing.T, stores int, opts ...func(*pd.Config)) *placementSim {
	t.Helper()
	cfg := pdConfig(t, t.TempDir())
	cfg.Replicas = 3
	for _, o := range opts {
		o(&cfg)
	}
	sim := &placementSim{t: t, c: openPDClient(t, &cfg), space: map[uint64]*pdpb.StoreSpace{}, movedOff: map[uint64][]uint64{},
		sent: map[uint64]string{}, fullSent: map[uint64]bool{}}
	for i := range stores {
		id, err := sim.c.PutStore(context.Background(), 0, fmt.Sprintf("127.0.0.1:%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		sim.stores = append(sim.stores, id)
	}
	return sim
}

// sixRegions gives the sim six regions, the first one's and five split
// off it (at b, d, f, h and j), on voters, all led by the first of them.
func (s *placementSim) sixRegions(voters []uint64) {
	s.t.Helper()
	ctx := context.Background()
	first, err := s.c.GetRegion(ctx, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	bounds := []string{"", "b", "d", "f", "h", "j", ""}
	for i := range 6 {
		id := first.ID
		if i > 0 {
			if id, err = s.c.AllocID(ctx, 1); err != nil {
				s.t.Fatal(err)
			}
		}
		s.regions = append(s.regions, &simRegion{id: id, leader: voters[0], confVer: 1, voters: slices.Clone(voters), start: bounds[i], end: bounds[i+1]})
	}
}

// settle runs rounds until pd asks nothing in three in a row.
func (s *placementSim) settle() {
	s.t.Helper()
	quiet := 0
	for i := 0; quiet < 3; i++ {
		if i > 500 {
			s.t.Fatalf("placement did not settle: %s", s.layout())
		}
		if s.round() {
			quiet = 0
		} else {
			quiet++
		}
	}
}

// replicas counts the replicas on each store.
func (s *placementSim) replicas() map[uint64]int {
	out := map[uint64]int{}
	for _, st := range s.stores {
		out[st] = 0
	}
	for _, r := range s.regions {
		for _, v := range r.voters {
			out[v]++
		}
	}
	return out
}

func (s *placementSim) layout() string {
	var b strings.Builder
	for _, r := range s.regions {
		fmt.Fprintf(&b, "region %d voters %v leader %d; ", r.id, r.voters, r.leader)
	}
	return b.String()
}

// spaceAt is a disk of 100 MiB with availablePct of it available.
func spaceAt(availablePct uint64) *pdpb.StoreSpace {
	return &pdpb.StoreSpace{Capacity: 100 << 20, Available: availablePct << 20, Used: (100 - availablePct) << 20}
}

// storeStatus returns store id as pd lists it.
func (s *placementSim) store(id uint64) *pdpb.Store {
	s.t.Helper()
	stores, err := s.c.GetStores(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	for _, st := range stores {
		if st.GetId() == id {
			return st
		}
	}
	s.t.Fatalf("store %d not listed", id)
	return nil
}

// TestReplicaPlacement: pd moves replicas so that a store joining a
// three-store cluster gets its share (6 regions x 3 replicas over 4
// stores: 4 or 5 each), never below 3 replicas a region; an operator's
// drain moves every replica and leadership off a store and then marks it a
// tombstone; a drain that would leave fewer stores than replicas is
// refused; a store low on space gets no replica and has its replicas
// moved to a store with room.
func TestReplicaPlacement(t *testing.T) { reportModes(t, testReplicaPlacement) }

func testReplicaPlacement(t *testing.T, partial bool) {
	ctx := context.Background()
	sim := newPlacementSim(t, 3)
	sim.partial = partial
	c := sim.c
	// Six regions (five splits), all led by the first store.
	sim.sixRegions(sim.stores)
	sim.settle()
	if sim.moves != 0 {
		t.Fatalf("%d replica moves among three stores holding every region", sim.moves)
	}

	// A fourth store joins: it gets its share.
	fourth, err := c.PutStore(ctx, 0, "127.0.0.1:4")
	if err != nil {
		t.Fatal(err)
	}
	sim.stores = append(sim.stores, fourth)
	sim.settle()
	for st, n := range sim.replicas() {
		if n < 4 || n > 5 {
			t.Fatalf("after a fourth store joined: store %d holds %d replicas, want 4 or 5 (%s)", st, n, sim.layout())
		}
	}
	// Every move went to the new store: none took a store below its
	// share for another to refill it.
	if n := sim.replicas()[fourth]; sim.moves != n {
		t.Fatalf("%d moves to give the fourth store %d replicas (%s)", sim.moves, n, sim.layout())
	}
	for _, r := range sim.regions {
		if len(r.voters) != 3 {
			t.Fatalf("region %d has %d replicas", r.id, len(r.voters))
		}
	}

	// Drain the first store (it leads most regions): every replica and
	// leadership moves off it, then it is a tombstone.
	drained := sim.stores[0]
	st, err := c.SetStoreStatus(ctx, drained, pdpb.StoreStatus_OFFLINE)
	if err != nil || st.GetStatus() != pdpb.StoreStatus_OFFLINE {
		t.Fatalf("drain: %v, %v", st, err)
	}
	sim.settle()
	if n := sim.replicas()[drained]; n != 0 {
		t.Fatalf("drained store still holds %d replicas: %s", n, sim.layout())
	}
	for _, r := range sim.regions {
		if r.leader == drained || len(r.voters) != 3 {
			t.Fatalf("after the drain: %s", sim.layout())
		}
	}
	if got := sim.store(drained).GetStatus(); got != pdpb.StoreStatus_TOMBSTONE {
		t.Fatalf("drained store's status %s, want TOMBSTONE", got)
	}
	if _, err := c.SetStoreStatus(ctx, drained, pdpb.StoreStatus_UP); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("bringing a tombstone up: %v, want FailedPrecondition", err)
	}
	live := slices.DeleteFunc(slices.Clone(sim.stores), func(id uint64) bool { return id == drained })
	sim.stores = live
	// Three stores left for three replicas: a drain could never finish.
	if _, err := c.SetStoreStatus(ctx, live[0], pdpb.StoreStatus_OFFLINE); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("draining one of the last three stores: %v, want FailedPrecondition", err)
	}

	// A fifth store joins while live[0] is low on space: replicas move
	// from live[0] to it, none onto live[0], and balance does not bring
	// them back.
	fifth, err := c.PutStore(ctx, 0, "127.0.0.1:5")
	if err != nil {
		t.Fatal(err)
	}
	sim.stores = append(sim.stores, fifth)
	sim.space[live[0]] = &pdpb.StoreSpace{Capacity: 100 << 20, Available: 10 << 20, Used: 90 << 20}
	sim.settle()
	if n := sim.replicas()[live[0]]; n != 0 {
		t.Fatalf("the store low on space still holds %d replicas: %s", n, sim.layout())
	}
	if !sim.store(live[0]).GetLowSpace() {
		t.Fatalf("store %d is not listed low on space", live[0])
	}
	// Space comes back: balance fills it again.
	sim.space[live[0]] = &pdpb.StoreSpace{Capacity: 100 << 20, Available: 90 << 20, Used: 10 << 20}
	sim.settle()
	counts := sim.replicas()
	if n := counts[live[0]]; n < 4 {
		t.Fatalf("after space came back the store holds %d replicas: %v", n, counts)
	}
	if got := slices.Sorted(maps.Values(counts)); got[len(got)-1]-got[0] > 1 {
		t.Fatalf("replicas per store %v after balance", counts)
	}
}

// TestBalanceNearTheLowSpaceLine: stores whose free space is above the
// low-space line but within balanceSpaceMargin of it (every store of a
// cluster sharing one nearly full file system) are balance targets as
// long as none of them was low on space: a fourth store joining gets its
// share (balance refused every such target before, and stopped). A store
// that was low on space is emptied, and is no balance target again until
// it has the margin above the line (hysteresis), then fills up.
func TestBalanceNearTheLowSpaceLine(t *testing.T) {
	sim := newPlacementSim(t, 4) // low on space below 20% available (pd's default ratio)
	for _, id := range sim.stores {
		sim.space[id] = spaceAt(22)
	}
	// Six regions on the first three stores, the fourth empty.
	sim.sixRegions(sim.stores[:3])
	sim.settle()
	fourth := sim.stores[3]
	if n := sim.replicas()[fourth]; n < 4 {
		t.Fatalf("stores at 22%% available (line 20%%): the fourth holds %d replicas, want 4 or 5 (%s)", n, sim.layout())
	}

	// The fourth goes low on space: emptied. Back at 22%, above the line
	// but not the margin, it gets nothing back; at 30% it fills up.
	sim.space[fourth] = spaceAt(10)
	sim.settle()
	if n := sim.replicas()[fourth]; n != 0 {
		t.Fatalf("the store low on space holds %d replicas (%s)", n, sim.layout())
	}
	sim.space[fourth] = spaceAt(22)
	sim.settle()
	if n := sim.replicas()[fourth]; n != 0 {
		t.Fatalf("the store that was low on space, now within the margin above the line, got %d replicas back (%s)", n, sim.layout())
	}
	sim.space[fourth] = spaceAt(30)
	sim.settle()
	if n := sim.replicas()[fourth]; n < 4 {
		t.Fatalf("with room again the fourth store holds %d replicas, want 4 or 5 (%s)", n, sim.layout())
	}
}

// TestLearnerLeftByAMoveIsPromoted: a region holding a learner that no
// move of pd's stands for (a move pd abandoned, or one a previous pd
// leader began) gets its move resumed: the learner is promoted and a
// voter removed, and the region is balanced as others are. (Placement,
// leader balance and new moves skip a region with a learner, so such a
// region stayed still for good.)
func TestLearnerLeftByAMoveIsPromoted(t *testing.T) { reportModes(t, testLearnerLeftByAMoveIsPromoted) }

func testLearnerLeftByAMoveIsPromoted(t *testing.T, partial bool) {
	sim := newPlacementSim(t, 4)
	sim.partial = partial
	sim.sixRegions(sim.stores[:3])
	left := sim.regions[0]
	left.learners, left.confVer = []uint64{sim.stores[3]}, 2
	sim.settle()
	if len(left.learners) != 0 || !slices.Contains(left.voters, sim.stores[3]) || len(left.voters) != 3 {
		t.Fatalf("region %d with a learner no move stood for: voters %v, learners %v", left.id, left.voters, left.learners)
	}
	for st, n := range sim.replicas() {
		if n < 4 || n > 5 {
			t.Fatalf("store %d holds %d replicas, want 4 or 5 (%s)", st, n, sim.layout())
		}
	}
}

// TestRestartedStoreIsNoTargetUntilItReports: a store that registers
// again (its node restarted) receives no replica until it heartbeats:
// the space pd knows of it is the previous process's. Here the fourth
// store, empty, reported room, then restarted with its disk nearly
// full: the leader's heartbeat before the fourth's first one moved a
// replica onto it (balance), and low space moved it off again.
func TestRestartedStoreIsNoTargetUntilItReports(t *testing.T) {
	ctx := context.Background()
	sim := newPlacementSim(t, 4)
	for _, id := range sim.stores {
		sim.space[id] = spaceAt(90)
	}
	sim.sixRegions(sim.stores[:3])
	fourth := sim.stores[3]
	sim.beat(fourth)
	if _, err := sim.c.PutStore(ctx, fourth, "127.0.0.1:4"); err != nil {
		t.Fatal(err)
	}
	sim.space[fourth] = spaceAt(5)
	sim.beat(sim.stores[0]) // the leader of every region
	if n := sim.replicas()[fourth]; n != 0 {
		t.Fatalf("a store that registered again and did not heartbeat since received %d replicas (%s)", n, sim.layout())
	}
	sim.settle()
	if n := sim.replicas()[fourth]; n != 0 || sim.moves != 0 {
		t.Fatalf("the restarted store, low on space, holds %d replicas after %d moves (%s)", n, sim.moves, sim.layout())
	}
	sim.space[fourth] = spaceAt(90)
	sim.settle()
	if n := sim.replicas()[fourth]; n < 4 {
		t.Fatalf("with room the fourth store holds %d replicas, want 4 or 5 (%s)", n, sim.layout())
	}
}

// TestNoMoveBackOntoAStoreJustLeft: replicas moved onto a fifth store
// that then goes low on space move on to a store other than the ones
// they left moments ago whenever one can take them (each move and its
// reverse cost a snapshot for nothing), and balance too prefers a
// store a region did not just leave.
func TestNoMoveBackOntoAStoreJustLeft(t *testing.T) {
	sim := newPlacementSim(t, 5)
	for _, id := range sim.stores {
		sim.space[id] = spaceAt(90)
	}
	sim.sixRegions(sim.stores[:3])
	sim.settle()
	fifth := sim.stores[4]
	if n := sim.replicas()[fifth]; n < 3 {
		t.Fatalf("the fifth store holds %d replicas after balance, want 3 or 4 (%s)", n, sim.layout())
	}
	sim.space[fifth] = spaceAt(5)
	sim.settle()
	if n := sim.replicas()[fifth]; n != 0 {
		t.Fatalf("the store low on space holds %d replicas (%s)", n, sim.layout())
	}
	if len(sim.movedBack) != 0 {
		t.Fatalf("replicas moved back onto the store a move took them off: %v (%s)", sim.movedBack, sim.layout())
	}
}

// TestBalanceBySize: three large regions and twelve small ones on three
// stores, a fourth store empty: balance gives each store about its share
// of the bytes (a replica weighs its region's size), not of the replicas
// alone; by count the fourth store took eleven small replicas, 11 MiB
// against the others' 900 MiB.
func TestBalanceBySize(t *testing.T) { reportModes(t, testBalanceBySize) }

func testBalanceBySize(t *testing.T, partial bool) {
	ctx := context.Background()
	sim := newPlacementSim(t, 4)
	sim.partial = partial
	first, err := sim.c.GetRegion(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n, large = 15, 300 << 20
	for i := range n {
		id := first.ID
		if i > 0 {
			if id, err = sim.c.AllocID(ctx, 1); err != nil {
				t.Fatal(err)
			}
		}
		r := &simRegion{id: id, leader: sim.stores[0], confVer: 1, voters: slices.Clone(sim.stores[:3])}
		if i > 0 {
			r.start = fmt.Sprintf("r%02d", i)
		}
		if i < n-1 {
			r.end = fmt.Sprintf("r%02d", i+1)
		}
		if i >= n-3 { // the last ids: balance by count would move small ones first
			r.size = large
		}
		sim.regions = append(sim.regions, r)
	}
	sim.settle()
	bytes := map[uint64]uint64{}
	for _, r := range sim.regions {
		for _, v := range r.voters {
			bytes[v] += max(r.size, 1<<20)
		}
	}
	lo, hi := slices.Min(slices.Collect(maps.Values(bytes))), slices.Max(slices.Collect(maps.Values(bytes)))
	if len(bytes) != 4 || hi-lo > large {
		t.Fatalf("bytes per store %v (MiB: spread %d, want at most one large region's %d): %s", bytes, (hi-lo)>>20, large>>20, sim.layout())
	}
	for _, r := range sim.regions {
		if len(r.voters) != 3 {
			t.Fatalf("region %d has %d replicas", r.id, len(r.voters))
		}
	}
	// GetStores lists each store's weight as balance weighed it, and
	// the sizes of its regions and of those it leads.
	sizes, leaderSizes := map[uint64]uint64{}, map[uint64]uint64{}
	for _, r := range sim.regions {
		leaderSizes[r.leader] += r.size
		for _, v := range r.voters {
			sizes[v] += r.size
		}
	}
	stores, err := sim.c.GetStores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stores {
		id := st.GetId()
		if st.GetRegionWeight() != bytes[id] || st.GetRegionSize() != sizes[id] || st.GetLeaderSize() != leaderSizes[id] {
			t.Errorf("store %d listed with weight %d, region size %d, leader size %d; want %d, %d, %d",
				id, st.GetRegionWeight(), st.GetRegionSize(), st.GetLeaderSize(), bytes[id], sizes[id], leaderSizes[id])
		}
	}
	mib := map[uint64]uint64{}
	for st, b := range bytes {
		mib[st] = b >> 20
	}
	t.Logf("MiB per store %v after %d moves", mib, sim.moves)
}

// fakeClock is pd's clock in a test (pd.Config.Now): it moves only when
// the test moves it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// syncBuffer is a log's destination that pd's goroutines write to while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestMoveTimeout: a replica move whose target never catches up is asked
// again with each heartbeat of its region's leader until
// pd.Config.MoveTimeout has passed on pd's clock, then given up (pd
// decides again): after 2 minutes by default, after 10 when configured
// so, not after 3.
func TestMoveTimeout(t *testing.T) {
	for _, c := range []struct {
		timeout     time.Duration
		still, past time.Duration
	}{{0, time.Minute, 3 * time.Minute}, {10 * time.Minute, 3 * time.Minute, 11 * time.Minute}} {
		t.Run(fmt.Sprintf("timeout=%v", c.timeout), func(t *testing.T) {
			clock := &fakeClock{now: time.Now()}
			logs := &syncBuffer{}
			sim := newPlacementSim(t, 4, func(cfg *pd.Config) {
				cfg.MoveTimeout, cfg.Now, cfg.MaxMoves = c.timeout, clock.Now, 1
				cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
			})
			sim.sixRegions(sim.stores[:3])
			sim.stall = true
			sim.beat(sim.stores[3])
			sim.beat(sim.stores[0]) // the leader of every region: a move to the empty fourth store
			if len(sim.changes) != 1 {
				t.Fatalf("pd asked %v, want one move", sim.changes)
			}
			asked := sim.changes[0]
			// Every store heartbeats, the leader last.
			round := func() {
				for _, st := range slices.Backward(sim.stores) {
					sim.beat(st)
				}
			}
			clock.advance(c.still)
			round()
			if strings.Contains(logs.String(), "replica move abandoned") || !slices.Equal(sim.changes, []string{asked}) {
				t.Fatalf("%v after the move began: pd asked %v (want %s again); log:\n%s", c.still, sim.changes, asked, logs.String())
			}
			clock.advance(c.past - c.still)
			round()
			if !strings.Contains(logs.String(), "replica move abandoned") {
				t.Fatalf("%v after the move began it was not given up; log:\n%s", c.past, logs.String())
			}
		})
	}
}

// TestPlacementByLabels: with location labels (zone, host), pd moves
// the replicas of regions placed on two stores of one zone and one of
// another (six regions on z1/h1, z1/h2, z2/h3) until each region has one
// replica in each of the three zones, and balance spreads them over the
// six stores without putting two replicas of a region in one zone again;
// a store lost for good is replaced by one in the zone it leaves
// without a replica. Without the labels (the same stores), balance alone
// leaves regions with two replicas in one zone.
func TestPlacementByLabels(t *testing.T) {
	for _, labelled := range []bool{true, false} {
		t.Run(fmt.Sprintf("location-labels=%v", labelled), func(t *testing.T) {
			ctx := context.Background()
			clock := &fakeClock{now: time.Now()}
			sim := newPlacementSim(t, 6, func(cfg *pd.Config) {
				if labelled {
					cfg.LocationLabels = []string{"zone", "host"}
				}
				cfg.Now, cfg.MaxStoreDownTime = clock.Now, time.Minute
			})
			zone := map[uint64]string{}
			for i, id := range sim.stores {
				zone[id] = fmt.Sprintf("z%d", i/2+1)
				st := &pdpb.Store{Id: id, Addr: fmt.Sprintf("127.0.0.1:%d", i+1), Labels: []*pdpb.StoreLabel{
					{Key: "zone", Value: zone[id]}, {Key: "host", Value: fmt.Sprintf("h%d", i+1)}}}
				if _, err := sim.c.RegisterStore(ctx, st); err != nil {
					t.Fatal(err)
				}
			}
			sim.sixRegions(sim.stores[:3])
			sim.settle()
			shared := 0
			for _, r := range sim.regions {
				zones := map[string]bool{}
				for _, v := range r.voters {
					zones[zone[v]] = true
				}
				if len(r.voters) != 3 {
					t.Fatalf("region %d has %d replicas (%s)", r.id, len(r.voters), sim.layout())
				}
				if len(zones) != 3 {
					shared++
				}
			}
			for st, n := range sim.replicas() {
				if n < 2 || n > 4 {
					t.Errorf("store %d holds %d replicas, want about 3 (%s)", st, n, sim.layout())
				}
			}
			if labelled && shared > 0 {
				t.Fatalf("%d regions with two replicas in one zone (%s)", shared, sim.layout())
			}
			if !labelled && shared == 0 {
				t.Fatalf("without location labels every region ended in three zones (%s): the test shows nothing", sim.layout())
			}
			if stores, err := sim.c.GetStores(ctx); err != nil || len(stores[0].GetLabels()) != 2 {
				t.Fatalf("stores listed without their labels: %v, %v", stores, err)
			}
			if !labelled {
				return
			}
			// The second store of z3 goes silent past the max store down
			// time: its replicas are re-created in z3, on the store left
			// there.
			lost := sim.stores[5]
			sim.stores = sim.stores[:5]
			clock.advance(2 * time.Minute)
			sim.settle()
			for _, r := range sim.regions {
				zones := map[string]bool{}
				for _, v := range r.voters {
					zones[zone[v]] = true
				}
				if len(zones) != 3 || len(r.voters) != 3 || slices.Contains(r.voters, lost) {
					t.Fatalf("after store %d was lost: region %d on %v (%s)", lost, r.id, r.voters, sim.layout())
				}
			}
		})
	}
}
