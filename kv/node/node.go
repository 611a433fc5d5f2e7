package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/internal/durablefile"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/deadlock"
	"github.com/percdb/percdb/kv/kvrpc"
	"github.com/percdb/percdb/kv/raftstore"
	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/pd/pdpb"
)

// Config configures a KV node.
type Config struct {
	// DataDir holds the store (DataDir/kv), the raft engine
	// (DataDir/raft) and the node's state file (DataDir/store-state).
	DataDir string
	// Addr is the host:port to listen on and to register with pd.
	Addr string
	// StatusAddr is the host:port of the node's status port, which its
	// heartbeats register with pd (so that a SQL node's console finds
	// the node's /store); "" when it serves none.
	StatusAddr string
	// PD lists the pd members' addresses.
	PD []string
	// KV tunes the store. Its SyncWrites is ignored: the raft engine is
	// the durable record (its one sync per round), and the store's applies
	// are not synced (kv/raftstore's doc.go, "Storage").
	KV kv.Options
	// Raft tunes the raft groups: TickInterval, ElectionTicks,
	// HeartbeatTicks, LogCompactThreshold, LogCountLimit (the rest is the
	// node's own). Defaults are
	// raftstore's.
	Raft raftstore.Config
	// HeartbeatInterval is how often the node heartbeats pd and learns
	// its regions. Default 1 s.
	HeartbeatInterval time.Duration
	// FullReportInterval is how often a heartbeat reports every region,
	// not only the changed ones (report.go). Default
	// DefaultFullReportInterval.
	FullReportInterval time.Duration
	// PDTimeout bounds each pd call's retries. Default 15 s.
	PDTimeout time.Duration
	// SplitSize is the size above which a region this node leads is
	// split in two (split.go). Default DefaultSplitSize.
	SplitSize int64
	// Labels are the store's labels (zone, host, ...), registered with
	// pd, which keeps a region's replicas apart by them (pd.Config's
	// LocationLabels).
	Labels map[string]string
	// Capacity caps the disk space the store reports to pd (TiKV's
	// raftstore.capacity): pd counts the store low on space, places no
	// replica on it and moves replicas off it once its data directory
	// fills LowSpaceRatio of this (space.go). 0: the file system's size.
	Capacity int64
	// Logger logs the node's life. Default slog.Default().
	Logger *slog.Logger
}

// stateFile is the name of the node's state file (pdpb.StoreState) in its
// data directory.
const stateFile = "store-state"

// Node is a KV node: a store serving the regions pd gave it over kvrpc.
type Node struct {
	cfg       Config
	store     *kv.Store
	raft      *raftstore.Store
	transport *raftstore.GRPCTransport
	pd        *pd.Client
	// detector is the cluster's deadlock detector when this node leads
	// the first region; detectorClient sends the store's waits to
	// whichever node that is (package kv/deadlock).
	detector       *deadlock.Server
	detectorClient *deadlock.Client
	listener       net.Listener
	grpc           *grpc.Server
	// whole routes a command to the store's own region, the whole key
	// space: the node checks the region pd named, the store serves every
	// key it holds.
	whole kv.RegionCtx

	mu      sync.RWMutex
	storeID uint64
	regions map[uint64]*replica
	// addrs are the stores' addresses, from pd.
	addrs map[uint64]string

	// checked is, for each region, its replica's applied bytes at its
	// last split check (the split check's goroutine only); checking says
	// a split check runs, bg counts it.
	checked  map[uint64]uint64
	checking atomic.Bool
	bg       sync.WaitGroup
	// saveMu serializes the writers of the state file.
	saveMu sync.Mutex

	// load is the regions' reads and writes served here (load.go);
	// heartbeats counts the heartbeats to pd by result (ok, failed).
	load       loadTable
	heartbeats [2]atomic.Uint64
	// rep is what pd acknowledged of the heartbeats' reports (report.go).
	rep reporter

	// usedBytes is the disk space the store's engines hold as last
	// refreshed, at usedAt (unix ns); refreshing says a refresh runs
	// (space.go).
	usedBytes, usedAt atomic.Int64
	refreshing        atomic.Bool

	// kick asks the heartbeat loop to heartbeat now (a leadership began
	// or ended).
	kick chan struct{}
	stop context.CancelFunc
	done chan struct{}
}

// replica is one region's replica on this node: its descriptor as pd
// gave it and its raft group, which its commands go through.
type replica struct {
	info  kv.RegionInfo
	peers []uint64
	raft  *raftstore.Replica
}

// Open opens the store, registers with pd (or resumes the registration in
// the state file), raises the store's max_read_ts to a fresh timestamp
// (so that one-phase commits are calculated above every read served
// before a restart), and starts serving. It waits for pd as long as ctx
// allows.
func Open(ctx context.Context, cfg Config) (_ *Node, err error) {
	if cfg.DataDir == "" || cfg.Addr == "" || len(cfg.PD) == 0 {
		return nil, errors.New("kv node: DataDir, Addr and PD are required")
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SplitSize <= 0 {
		cfg.SplitSize = DefaultSplitSize
	}
	if cfg.FullReportInterval <= 0 {
		cfg.FullReportInterval = DefaultFullReportInterval
	}
	n := &Node{cfg: cfg, regions: map[uint64]*replica{}, addrs: map[uint64]string{}, checked: map[uint64]uint64{},
		kick: make(chan struct{}, 1), done: make(chan struct{})}
	defer func() {
		if err != nil {
			n.closeResources()
		}
	}()
	if n.pd, err = pd.NewClient(cfg.PD, pd.ClientOptions{Timeout: cfg.PDTimeout}); err != nil {
		return nil, err
	}
	n.detector = deadlock.NewServer(deadlock.ServerConfig{Leading: n.leadsFirstRegion})
	n.detectorClient = deadlock.NewClient(deadlock.ClientConfig{Self: cfg.Addr, Local: n.detector, Locate: n.locateDetector, Logger: cfg.Logger})
	kvOpts := cfg.KV
	kvOpts.SyncWrites = kv.SyncNone
	kvOpts.DeadlockDetector = n.detectorClient
	if n.store, err = kv.Open(filepath.Join(cfg.DataDir, "kv"), kvOpts); err != nil {
		return nil, fmt.Errorf("kv node: %w", err)
	}
	whole, err := n.store.LocateKey(nil)
	if err != nil {
		return nil, fmt.Errorf("kv node: %w", err)
	}
	if len(whole.Start) != 0 || len(whole.End) != 0 {
		return nil, fmt.Errorf("kv node: the store's region %d is not the whole key space", whole.ID)
	}
	n.whole = whole.Ctx()
	state, err := loadState(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	n.storeID = state.GetStoreId()

	// Listen first: pd hands out this address as soon as the store
	// registers.
	if n.listener, err = net.Listen("tcp", cfg.Addr); err != nil {
		return nil, fmt.Errorf("kv node: listen: %w", err)
	}
	if err := n.register(ctx); err != nil {
		return nil, err
	}
	n.transport = raftstore.NewGRPCTransport(n.storeID, n.resolve, cfg.Logger)
	rcfg := cfg.Raft
	rcfg.StoreID, rcfg.Dir, rcfg.InMemory = n.storeID, filepath.Join(cfg.DataDir, "raft"), false
	rcfg.Applier, rcfg.Transport, rcfg.Logger = n.store, n.transport, cfg.Logger
	rcfg.FreshTS = n.waitForTimestamp
	rcfg.OnLeaderChange = func() {
		n.detector.LeadershipChanged()
		n.heartbeatNow()
	}
	rcfg.OnSplit = n.splitDone
	if n.raft, err = raftstore.Open(rcfg); err != nil {
		return nil, fmt.Errorf("kv node: %w", err)
	}
	n.refreshUsed() // for the first heartbeat's space
	// The replicas kept in the state file serve (once elected) even
	// before pd answers again.
	if _, _, _, err := n.setRegions(state.GetRegions(), nil); err != nil {
		return nil, err
	}
	if err := n.heartbeat(ctx); err != nil {
		return nil, err
	}
	ts, err := n.waitForTimestamp(ctx)
	if err != nil {
		return nil, err
	}
	n.store.UpdateMaxReadTS(ts)

	n.grpc = grpc.NewServer()
	kvrpc.NewServer(n).Register(n.grpc)
	n.detector.Register(n.grpc)
	raftstore.RegisterServer(n.grpc, n.raft)
	go func() { _ = n.grpc.Serve(n.listener) }()
	n.raft.Start()
	bg, stop := context.WithCancel(context.Background())
	n.stop = stop
	go func() {
		defer close(n.done)
		n.heartbeatLoop(bg)
	}()
	cfg.Logger.Info("kv node serving", "addr", n.listener.Addr().String(), "store_id", n.storeID, "regions", len(n.regions))
	return n, nil
}

// leadsFirstRegion reports whether the node's replica of the region
// holding the first key leads and serves: the node is then the cluster's
// deadlock detector.
func (n *Node) leadsFirstRegion() bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	for _, r := range n.regions {
		if r.raft.Conf().Ver > 0 && len(r.raft.Region().Start) == 0 {
			_, err := r.raft.Leading()
			return err == nil
		}
	}
	return false
}

// locateDetector returns the address of the cluster's deadlock detector:
// the leader of the first region, as pd knows it.
func (n *Node) locateDetector(ctx context.Context) (string, error) {
	r, err := n.pd.GetRegion(ctx, nil)
	if err != nil {
		return "", err
	}
	if r.Addr == "" {
		return "", errors.New("pd knows no leader of the first region")
	}
	return r.Addr, nil
}

// waitForTimestamp gets a timestamp from the oracle, retrying while pd is
// unreachable until ctx ends.
func (n *Node) waitForTimestamp(ctx context.Context) (uint64, error) {
	for {
		ts, err := n.pd.GetTimestamps(ctx, 1)
		if err == nil {
			return ts, nil
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("kv node: get a timestamp from pd: %w", err)
		}
		n.cfg.Logger.Warn("kv node waiting for pd's oracle", "err", err)
	}
}

// register registers the store with pd (a new store gets an id) and
// saves the id, retrying while pd is unreachable until ctx ends.
func (n *Node) register(ctx context.Context) error {
	for {
		st := &pdpb.Store{Id: n.storeID, Addr: n.cfg.Addr}
		for _, k := range slices.Sorted(maps.Keys(n.cfg.Labels)) {
			st.Labels = append(st.Labels, &pdpb.StoreLabel{Key: k, Value: n.cfg.Labels[k]})
		}
		id, err := n.pd.RegisterStore(ctx, st)
		if err == nil {
			n.mu.Lock()
			n.storeID = id
			n.mu.Unlock()
			return n.saveState()
		}
		if ctx.Err() != nil {
			return fmt.Errorf("kv node: register with pd: %w", err)
		}
		n.cfg.Logger.Warn("kv node waiting for pd to register", "err", err)
	}
}

// heartbeat tells pd the store is alive, which regions it leads and
// their raft configurations (those that changed since pd last
// acknowledged them, or all: report.go), takes the regions pd says it
// holds when they changed (a change is saved in the state file), hands
// the replica repairs pd asks to the regions' leaders, and destroys the
// replicas pd no longer lists for this store once pd's record shows a
// newer configuration without it (the store was down and its replica was
// replaced: it must neither serve nor vote again).
func (n *Node) heartbeat(ctx context.Context) error {
	now := time.Now()
	states, held, stale := n.regionStates()
	full := n.rep.fullDue(now, n.cfg.FullReportInterval)
	if stale || full {
		// A replica the node serves was destroyed (a move off the store
		// and back onto it: the one pd added is to be created from the
		// list), or a full report: ask for the list whole.
		n.rep.tookRegions(0)
	}
	var leading []uint64
	for _, st := range states {
		if st.leading {
			leading = append(leading, st.id)
		}
	}
	out := n.rep.build(states, full, n.load.reportLoads(now, leading), n.measureSize)
	req := n.stamp(out.req)
	req.Space = n.space()
	resp, err := n.pd.StoreHeartbeat(ctx, req)
	if err != nil {
		return fmt.Errorf("kv node: heartbeat: %w", err)
	}
	n.rep.ack(out, resp, now)
	if resp.GetFullReportWanted() {
		n.heartbeatNow()
	}
	n.learnSafePoint(ctx, resp.GetGcSafePoint())
	var dropped []*replica
	if !resp.GetRegionsUnchanged() {
		changed, gone, skipped, err := n.setRegions(resp.GetRegions(), held)
		if err != nil {
			n.rep.tookRegions(0)
			return err
		}
		if skipped > 0 {
			n.rep.tookRegions(0)
		} else {
			n.rep.tookRegions(resp.GetRegionsRevision())
		}
		if changed {
			if err := n.saveState(); err != nil {
				return err
			}
		}
		dropped = gone
	}
	n.mu.RLock()
	for _, c := range resp.GetChanges() {
		if r, ok := n.regions[c.GetRegionId()]; ok {
			r.raft.ChangePeer(c.GetRemoveStore(), c.GetAddStore())
		}
	}
	for _, t := range resp.GetTransfers() {
		if r, ok := n.regions[t.GetRegionId()]; ok {
			r.raft.TransferLeader(t.GetToStore())
		}
	}
	n.mu.RUnlock()
	for _, r := range dropped {
		if err := n.maybeDestroy(ctx, r); err != nil {
			return err
		}
	}
	if out.full {
		return n.sweepStrays(ctx)
	}
	return nil
}

// sweepStrays destroys the raft store's replicas the node does not serve
// (pd did not list them) that pd's record shows removed, as maybeDestroy
// does for a region pd stops listing: a replica the raft store created
// for a snapshot that came before pd listed the region (raftstore's
// replicaForSnapshot), whose move pd gave up before it did, and one whose
// destruction a failed pd call left for later. Run with the full
// reports: such a replica is rare, and harmless meanwhile (it serves
// nothing).
func (n *Node) sweepStrays(ctx context.Context) error {
	for _, id := range n.raft.Regions() {
		n.mu.RLock()
		_, served := n.regions[id]
		n.mu.RUnlock()
		g := n.raft.Replica(id)
		if served || g == nil {
			continue
		}
		if err := n.maybeDestroy(ctx, &replica{info: kv.RegionInfo{ID: id}, raft: g}); err != nil {
			return err
		}
	}
	return nil
}

// measureSize returns the approximate size of region d's keys in the
// store, from the table files' metadata (no key is read).
func (n *Node) measureSize(d raftstore.Descriptor) (uint64, error) {
	return n.store.ApproximateSize(d.Start, d.End)
}

// regionStates reads each replica's region as a heartbeat reports it,
// names the regions the node has, and reports whether one of their
// replicas is no longer the raft store's (destroyed).
func (n *Node) regionStates() (states []regionState, held map[uint64]bool, stale bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	held = make(map[uint64]bool, len(n.regions))
	states = make([]regionState, 0, len(n.regions))
	for rid, r := range n.regions {
		held[rid] = true
		stale = stale || n.raft.Replica(rid) != r.raft
		_, err := r.raft.Leading()
		states = append(states, regionState{id: rid, leading: err == nil, conf: r.raft.Conf(), desc: r.raft.Region(), applied: r.raft.AppliedBytes()})
	}
	return states, held, stale
}

// stamp fills in req's store id and addresses.
func (n *Node) stamp(req *pdpb.StoreHeartbeatRequest) *pdpb.StoreHeartbeatRequest {
	req.StoreId, req.Addr, req.StatusAddr = n.StoreID(), n.cfg.Addr, n.cfg.StatusAddr
	return req
}

// report tells pd of the node's changed regions now, outside the
// heartbeat loop (after a split it served: the caller routes by pd next),
// and leaves pd's answer, and the acknowledgement of what it reported, to
// the loop's next heartbeat.
func (n *Node) report(ctx context.Context) error {
	states, _, _ := n.regionStates()
	out := n.rep.build(states, false, nil, n.measureSize)
	if _, err := n.pd.StoreHeartbeat(ctx, n.stamp(out.req)); err != nil {
		return fmt.Errorf("kv node: report regions: %w", err)
	}
	return nil
}

// maybeDestroy destroys this store's replica r of a region pd no longer
// lists for the store, if pd's record of the region has a configuration
// newer than the replica's and without this store: a conf change removed
// it. (A record that is behind, or a region pd does not know, leaves it:
// the replica does not serve, since the node routes only the regions pd
// lists, and raft goes on without it.)
func (n *Node) maybeDestroy(ctx context.Context, r *replica) error {
	rec, err := n.pd.RegionRecord(ctx, r.info.ID)
	if status.Code(err) == codes.NotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kv node: region %d: %w", r.info.ID, err)
	}
	reg := rec.GetRegion()
	if slices.Contains(reg.GetPeers(), n.StoreID()) || reg.GetConfVer() <= r.raft.Conf().Ver {
		return nil
	}
	n.cfg.Logger.Info("kv node: replica removed from its region's group; destroying it", "region", r.info.ID,
		"conf_ver", r.raft.Conf().Ver, "pd_conf_ver", reg.GetConfVer(), "peers", reg.GetPeers())
	n.raft.RemoveRegion(r.info.ID)
	return nil
}

// heartbeatNow asks the heartbeat loop for a heartbeat at once.
func (n *Node) heartbeatNow() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// resolve returns store id's address: from the node's book, or from pd
// (the book is refreshed then).
func (n *Node) resolve(ctx context.Context, id uint64) (string, error) {
	if a := n.storeAddr(id); a != "" {
		return a, nil
	}
	stores, err := n.pd.GetStores(ctx)
	if err != nil {
		return "", fmt.Errorf("kv node: resolve store %d: %w", id, err)
	}
	n.mu.Lock()
	for _, st := range stores {
		n.addrs[st.GetId()] = st.GetAddr()
	}
	a := n.addrs[id]
	n.mu.Unlock()
	if a == "" {
		return "", fmt.Errorf("kv node: store %d is not registered with pd", id)
	}
	return a, nil
}

// storeAddr returns store id's address as the node knows it, or "".
func (n *Node) storeAddr(id uint64) string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	if id == n.storeID {
		return n.cfg.Addr
	}
	return n.addrs[id]
}

func (n *Node) heartbeatLoop(ctx context.Context) {
	t := time.NewTicker(n.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-n.kick:
		}
		err := n.heartbeat(ctx)
		if err != nil && ctx.Err() == nil {
			// The node serves the regions it has; pd will be back.
			n.cfg.Logger.Warn("kv node heartbeat failed", "err", err)
		}
		n.countHeartbeat(err)
		n.load.roll(time.Now(), n.holds)
		n.startSplitCheck(ctx)
		n.startSpaceRefresh(ctx)
	}
}

// setRegions replaces the node's regions with pd's list and reports
// whether anything changed, the replicas of the regions dropped from
// the list (they stop being served; heartbeat decides whether to destroy
// them), and how many listed regions it could not create yet (pd is to
// list them again). held names the regions the node had when it asked pd (nil: all
// of them count): a region a split created on this store since is kept
// though pd did not list it yet. A region listed keeps its replica; a
// new one gets its raft group: after a restart from the raft engine,
// else from its initial state or, for a replica a conf change added or a
// region split off while this store's replica did not apply the split,
// uninitialized until its leader's snapshot. A region whose range
// overlaps a replica here at an older version is not created yet: that
// replica has still to apply the split that made it, which creates it
// (a snapshot of the new region installed first would be overwritten by
// the older replica's entries from before the split). A region whose
// replica was removed from this store (a tombstone) is skipped.
func (n *Node) setRegions(list []*pdpb.Region, held map[uint64]bool) (changed bool, dropped []*replica, skipped int, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	next := make(map[uint64]*replica, len(list))
	changed = len(list) != len(n.regions)
	for _, r := range list {
		info := pd.RegionInfo(r, n.cfg.Addr)
		peers := r.GetPeers()
		if len(peers) == 0 {
			peers = []uint64{r.GetStoreId()}
		}
		// A replica the store destroyed since (a conf change removed this
		// store from the region's group) is not kept: pd lists the region
		// here again when a conf change added this store back before a
		// heartbeat told pd of the removal (a move off a store and a move
		// back onto it within one heartbeat), and the new replica is
		// created below; kept, the node would route to and report a
		// replica that no longer runs, and the one pd added would never
		// be created.
		if old, ok := n.regions[info.ID]; ok && n.raft.Replica(info.ID) == old.raft {
			if !sameRegion(old.info, info) {
				changed = true
			}
			next[info.ID] = &replica{info: info, peers: peers, raft: old.raft}
			continue
		}
		desc := raftstore.Descriptor{Start: info.Start, End: info.End, Version: info.Epoch.Version}
		if n.raft.Replica(info.ID) == nil && n.olderOverlap(info.ID, desc) {
			skipped++
			continue
		}
		changed = true
		g, err := n.raft.AddRegion(info.ID, desc, peers, max(info.Epoch.ConfVer, 1))
		if errors.Is(err, raftstore.ErrTombstoned) {
			skipped++
			continue
		}
		if err != nil {
			return false, nil, 0, fmt.Errorf("kv node: %w", err)
		}
		next[info.ID] = &replica{info: info, peers: peers, raft: g}
	}
	for id, r := range n.regions {
		if _, ok := next[id]; ok {
			continue
		}
		if held != nil && !held[id] {
			next[id] = r // split off here since the heartbeat was sent
			continue
		}
		dropped = append(dropped, r)
	}
	n.regions = next
	return changed, dropped, skipped, nil
}

// olderOverlap reports whether a replica of another region than id here
// holds part of desc's range at an older version. (Region id's own
// replica, destroyed, is no older region: it is replaced.) Called with
// n.mu held.
func (n *Node) olderOverlap(id uint64, desc raftstore.Descriptor) bool {
	for rid, r := range n.regions {
		if rid == id {
			continue
		}
		d := r.raft.Region()
		if r.raft.Conf().Ver == 0 || d.Version >= desc.Version {
			continue
		}
		if (len(desc.End) == 0 || bytes.Compare(d.Start, desc.End) < 0) && (len(d.End) == 0 || bytes.Compare(desc.Start, d.End) < 0) {
			return true
		}
	}
	return false
}

// splitDone takes a region a split created on this store (raftstore's
// OnSplit): it is served at once (its replica leads once elected), saved
// in the state file, and reported to pd by a heartbeat now.
func (n *Node) splitDone(parent, child uint64) {
	g := n.raft.Replica(child)
	if g == nil {
		return
	}
	n.mu.Lock()
	if _, ok := n.regions[child]; !ok {
		d, c := g.Region(), g.Conf()
		n.regions[child] = &replica{info: kv.RegionInfo{ID: child, Start: d.Start, End: d.End, Epoch: kv.RegionEpoch{ConfVer: c.Ver, Version: d.Version}},
			peers: c.Voters, raft: g}
	}
	n.mu.Unlock()
	if err := n.saveState(); err != nil {
		n.cfg.Logger.Warn("kv node: save state after a split", "region", parent, "new_region", child, "err", err)
	}
	n.heartbeatNow()
}

func sameRegion(a, b kv.RegionInfo) bool {
	return a.ID == b.ID && a.Epoch == b.Epoch && bytes.Equal(a.Start, b.Start) && bytes.Equal(a.End, b.End)
}

// saveState writes the state file: a temporary file, synced, renamed over
// the old one, and the directory synced; one writer at a time (a split's
// and the heartbeat's).
func (n *Node) saveState() error {
	n.saveMu.Lock()
	defer n.saveMu.Unlock()
	n.mu.RLock()
	st := &pdpb.StoreState{StoreId: n.storeID, Addr: n.cfg.Addr}
	for _, r := range n.regions {
		d := r.raft.Region()
		st.Regions = append(st.Regions, &pdpb.Region{Id: r.info.ID, Start: d.Start, End: d.End,
			ConfVer: r.info.Epoch.ConfVer, Version: d.Version, StoreId: n.storeID, Peers: r.peers})
	}
	n.mu.RUnlock()
	b, err := proto.Marshal(st)
	if err != nil {
		return fmt.Errorf("kv node: save state: %w", err)
	}
	path := filepath.Join(n.cfg.DataDir, stateFile)
	if err := durablefile.Write(path, b, 0o644); err != nil {
		return fmt.Errorf("kv node: save state: %w", err)
	}
	return nil
}

// loadState reads the state file; a missing one is a new node.
func loadState(dir string) (*pdpb.StoreState, error) {
	st := &pdpb.StoreState{}
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err == nil {
		err = proto.Unmarshal(b, st)
	}
	if err != nil {
		return nil, fmt.Errorf("kv node: read %s: %w", filepath.Join(dir, stateFile), err)
	}
	return st, nil
}

// Addr is where the node listens.
func (n *Node) Addr() net.Addr { return n.listener.Addr() }

// StoreID is the node's store id in the cluster.
func (n *Node) StoreID() uint64 {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.storeID
}

// transferTimeout bounds how long a node being closed waits for its
// leaderships to move to other stores.
const transferTimeout = 5 * time.Second

// Close hands the node's leaderships to other stores (so that its regions
// have new leaders at once rather than after an election timeout), stops
// serving (commands in flight end with the store's ErrClosed, which
// clients retry elsewhere or later) and closes the store.
func (n *Node) Close() error {
	if n.stop != nil && n.raft != nil {
		ctx, cancel := context.WithTimeout(context.Background(), transferTimeout)
		if err := n.raft.TransferLeaders(ctx); err != nil {
			n.cfg.Logger.Warn("kv node: closing with leaderships not handed away", "err", err)
		}
		cancel()
	}
	if n.stop != nil {
		n.stop()
		<-n.done
	}
	err := n.closeResources()
	n.bg.Wait() // a split check fails once the stores are closed
	return err
}

func (n *Node) closeResources() error {
	var errs []error
	if n.grpc != nil {
		n.grpc.Stop()
	} else if n.listener != nil {
		errs = append(errs, n.listener.Close())
	}
	if n.transport != nil {
		n.transport.Close()
	}
	if n.raft != nil {
		errs = append(errs, n.raft.Close())
	}
	if n.store != nil {
		errs = append(errs, n.store.Close())
	}
	if n.detectorClient != nil {
		errs = append(errs, n.detectorClient.Close())
	}
	if n.pd != nil {
		errs = append(errs, n.pd.Close())
	}
	return errors.Join(errs...)
}
