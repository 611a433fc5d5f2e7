package pd

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/percdb/percdb/pd/pdapi"
	"github.com/percdb/percdb/pd/pdpb"
	"github.com/percdb/percdb/tso"
)

// pd's operator view, served on its status port (cmd/percdb wires it): a
// read-only JSON API of the cluster as the leader sees it (Handler; its
// paths and documents are package pdapi's), which the SQL nodes' console
// reads, and the Prometheus families of the cluster (Collector). Nothing
// here writes: placement decisions stay in the heartbeat's answers.

// storeState returns store id's state at now.
func (s *Server) storeState(t *term, id uint64, now time.Time) string {
	switch {
	case s.storeLive(id, now):
		return pdapi.StoreUp
	case s.storeDown(t, id, now):
		return pdapi.StoreDown
	}
	return pdapi.StoreDisconnected
}

// Stores lists the stores with their states and counts. Only the leader
// answers.
func (s *Server) Stores(ctx context.Context) ([]pdapi.StoreInfo, error) {
	t, err := s.leader()
	if err != nil {
		return nil, err
	}
	stores, err := s.dir.stores(ctx)
	if err != nil {
		return nil, err
	}
	regions, err := s.dir.regions(ctx)
	if err != nil {
		return nil, err
	}
	replicas, leaders := map[uint64]int{}, map[uint64]int{}
	for _, r := range regions {
		for _, id := range r.GetPeers() {
			replicas[id]++
		}
		leaders[r.GetStoreId()]++
	}
	c, err := s.dir.view(ctx)
	if err != nil {
		return nil, err
	}
	sizes, leaderSizes := c.storeSizes()
	weights := c.storeWeights()
	now := s.now()
	out := make([]pdapi.StoreInfo, 0, len(stores))
	for _, st := range stores {
		id := st.GetId()
		info := pdapi.StoreInfo{ID: id, Addr: st.GetAddr(), StatusAddr: st.GetStatusAddr(), State: s.storeState(t, id, now),
			Replicas: replicas[id], Leaders: leaders[id],
			RegionSize: uint64(max(sizes[id], 0)), LeaderSize: uint64(max(leaderSizes[id], 0)), RegionWeight: uint64(max(weights[id], 0)),
			Labels: map[string]string{}}
		for _, l := range st.GetLabels() {
			info.Labels[l.GetKey()] = l.GetValue()
		}
		switch st.GetStatus() {
		case pdpb.StoreStatus_OFFLINE:
			info.Placement = pdapi.PlacementDraining
		case pdpb.StoreStatus_TOMBSTONE:
			info.Placement = pdapi.PlacementRemoved
		default:
			info.Placement = pdapi.PlacementUp
		}
		s.hbMu.Lock()
		if ms := s.heartbeats[st.GetId()]; ms != 0 {
			info.LastHeartbeat = time.UnixMilli(ms).UTC()
		}
		if sp := s.space[st.GetId()]; sp != nil {
			info.Capacity, info.Available, info.Used = sp.GetCapacity(), sp.GetAvailable(), sp.GetUsed()
			info.DiskFull, info.LowSpace = sp.GetDiskFull(), s.lowSpace(sp, 0)
		}
		s.hbMu.Unlock()
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b pdapi.StoreInfo) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Regions lists the directory's regions by start key. Only the leader
// answers.
func (s *Server) Regions(ctx context.Context) ([]pdapi.RegionRecord, error) {
	if _, err := s.leader(); err != nil {
		return nil, err
	}
	regions, err := s.dir.regions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]pdapi.RegionRecord, 0, len(regions))
	s.hbMu.Lock()
	for _, r := range regions {
		rec := regionRecord(r)
		rec.ApproximateSize = s.sizes[r.GetId()]
		rec.Load, rec.Total = APILoad(s.loads[r.GetId()]), APILoad(s.totals[r.GetId()])
		out = append(out, rec)
	}
	s.hbMu.Unlock()
	slices.SortFunc(out, func(a, b pdapi.RegionRecord) int { return cmp.Compare(string(a.Start), string(b.Start)) })
	return out, nil
}

// loadMark identifies a load added to a region's totals: the store that
// reported it and the end of its interval.
type loadMark struct{ store, endMs uint64 }

// addLoad adds a load that store, region id's leader, reported to the
// region's totals, unless it is the load last added (the same heartbeat
// sent again: its first attempt timed out after pd took it). Called with
// hbMu held.
func (s *Server) addLoad(id, store uint64, l *pdpb.RegionLoad) {
	if end := l.GetEndUnixMs(); end != 0 {
		m := loadMark{store, end}
		if s.counted[id] == m {
			return
		}
		s.counted[id] = m
	}
	t := s.totals[id]
	if t == nil {
		t = &pdpb.RegionLoad{}
		s.totals[id] = t
	}
	t.ReadKeys += l.GetReadKeys()
	t.ReadBytes += l.GetReadBytes()
	t.WrittenKeys += l.GetWrittenKeys()
	t.WrittenBytes += l.GetWrittenBytes()
	t.IntervalMs += l.GetIntervalMs()
}

// regionStatsPruneInterval is how often the heartbeats rid pd's region
// sizes and loads of the regions that no longer exist.
const regionStatsPruneInterval = time.Minute

// pruneRegionStats forgets the sizes and loads of the regions the
// directory no longer lists (a record replaced by a newer region's at
// its start key): they would otherwise stay in memory for good.
func (s *Server) pruneRegionStats(ctx context.Context) error {
	regions, err := s.dir.regions(ctx)
	if err != nil {
		return err
	}
	live := make(map[uint64]bool, len(regions))
	for _, r := range regions {
		live[r.GetId()] = true
	}
	s.hbMu.Lock()
	defer s.hbMu.Unlock()
	s.prunedAt = time.Now()
	for _, m := range []map[uint64]*pdpb.RegionLoad{s.loads, s.totals} {
		for id := range m {
			if !live[id] {
				delete(m, id)
			}
		}
	}
	for id := range s.sizes {
		if !live[id] {
			delete(s.sizes, id)
		}
	}
	for id := range s.counted {
		if !live[id] {
			delete(s.counted, id)
		}
	}
	return nil
}

// APILoad returns a region's load as the API reports it (nil: the zero
// RegionLoad, none reported).
func APILoad(l *pdpb.RegionLoad) pdapi.RegionLoad {
	return pdapi.RegionLoad{ReadKeys: l.GetReadKeys(), ReadBytes: l.GetReadBytes(), WrittenKeys: l.GetWrittenKeys(),
		WrittenBytes: l.GetWrittenBytes(), IntervalMS: l.GetIntervalMs()}
}

func regionRecord(r *pdpb.Region) pdapi.RegionRecord {
	return pdapi.RegionRecord{ID: r.GetId(), Start: r.GetStart(), End: r.GetEnd(), Version: r.GetVersion(), ConfVer: r.GetConfVer(),
		Peers: r.GetPeers(), Learners: r.GetLearners(), Leader: r.GetStoreId()}
}

// Members lists the pd members campaigning for leadership (every member
// serving), the leader first.
func (s *Server) Members(ctx context.Context) ([]pdapi.Member, error) {
	// The candidate with the lowest create revision holds the election
	// (etcd's concurrency.Election).
	all, err := s.cli.Get(ctx, keyElection+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("pd: read the election: %w", err)
	}
	var out []pdapi.Member
	seen := map[string]bool{}
	for i, kv := range all.Kvs {
		a := string(kv.Value)
		if seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, pdapi.Member{Addr: a, Leader: i == 0})
	}
	return out, nil
}

// TSO returns a fresh timestamp and the saved window bound. Only the
// leader answers.
func (s *Server) TSO(ctx context.Context) (pdapi.TSOInfo, error) {
	t, err := s.leader()
	if err != nil {
		return pdapi.TSOInfo{}, err
	}
	ts, err := t.oracle.GetTimestamps(ctx, 1)
	if err != nil {
		return pdapi.TSOInfo{}, err
	}
	bound, err := windowStore{cli: s.cli, guard: t.guard}.Load(ctx)
	if err != nil {
		return pdapi.TSOInfo{}, err
	}
	return pdapi.TSOInfo{Timestamp: ts, Physical: tso.Time(ts).UTC(), WindowBound: bound}, nil
}

// apiTimeout bounds one API request's reads of etcd.
const apiTimeout = 10 * time.Second

// Handler serves the read-only API (the paths above).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	serve := func(f func(ctx context.Context) (any, error)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), apiTimeout)
			defer cancel()
			v, err := f(ctx)
			if err != nil {
				code := http.StatusInternalServerError
				if !s.IsLeader() {
					code = http.StatusServiceUnavailable
					if ms, err := s.Members(ctx); err == nil {
						for _, m := range ms {
							if m.Leader {
								w.Header().Set("X-PD-Leader", m.Addr)
							}
						}
					}
				}
				http.Error(w, err.Error(), code)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			_ = json.NewEncoder(w).Encode(v)
		}
	}
	mux.HandleFunc("GET "+pdapi.PathStores, serve(func(ctx context.Context) (any, error) { return s.Stores(ctx) }))
	mux.HandleFunc("GET "+pdapi.PathRegions, serve(func(ctx context.Context) (any, error) { return s.Regions(ctx) }))
	mux.HandleFunc("GET "+pdapi.PathMembers, serve(func(ctx context.Context) (any, error) { return s.Members(ctx) }))
	mux.HandleFunc("GET "+pdapi.PathTSO, serve(func(ctx context.Context) (any, error) { return s.TSO(ctx) }))
	return mux
}

// Collector returns pd's Prometheus families, read at scrape time: this
// member's leadership, and on the leader the stores by state, the
// regions, each store's replicas and leaders, and the heartbeats
// received.
func (s *Server) Collector() prometheus.Collector { return pdCollector{s} }

type pdCollector struct{ s *Server }

var (
	descIsLeader      = prometheus.NewDesc("percdb_pd_is_leader", "1 while this pd member leads, else 0.", nil, nil)
	descStores        = prometheus.NewDesc("percdb_pd_stores", "Stores registered, by state (up, disconnected, down); on the leader only.", []string{"state"}, nil)
	descRegionCount   = prometheus.NewDesc("percdb_pd_regions", "Regions in the directory; on the leader only.", nil, nil)
	descStoreReplicas = prometheus.NewDesc("percdb_pd_store_replicas", "Replicas on each store, by the directory; on the leader only.", []string{"store"}, nil)
	descStoreLeaders  = prometheus.NewDesc("percdb_pd_store_leaders", "Regions each store leads, as last reported; on the leader only.", []string{"store"}, nil)
	descBeats         = prometheus.NewDesc("percdb_pd_store_heartbeats_total", "Store heartbeats this member received while leading.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c pdCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descIsLeader, descStores, descRegionCount, descStoreReplicas, descStoreLeaders, descBeats} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c pdCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	leading := 0.0
	if s.IsLeader() {
		leading = 1
	}
	ch <- prometheus.MustNewConstMetric(descIsLeader, prometheus.GaugeValue, leading)
	ch <- prometheus.MustNewConstMetric(descBeats, prometheus.CounterValue, float64(s.beats.Load()))
	if leading == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	stores, err := s.Stores(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descStores, err)
		return
	}
	byState := map[string]int{pdapi.StoreUp: 0, pdapi.StoreDisconnected: 0, pdapi.StoreDown: 0}
	for _, st := range stores {
		byState[st.State]++
		id := strconv.FormatUint(st.ID, 10)
		ch <- prometheus.MustNewConstMetric(descStoreReplicas, prometheus.GaugeValue, float64(st.Replicas), id)
		ch <- prometheus.MustNewConstMetric(descStoreLeaders, prometheus.GaugeValue, float64(st.Leaders), id)
	}
	for state, n := range byState {
		ch <- prometheus.MustNewConstMetric(descStores, prometheus.GaugeValue, float64(n), state)
	}
	regions, err := s.dir.regions(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descRegionCount, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(descRegionCount, prometheus.GaugeValue, float64(len(regions)))
}
