package node

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/percdb/percdb/internal/statusserver"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/raftstore"
)

// The node's operator view, served on its status port (cmd/percdb wires
// it): the Prometheus families of the store and its raft groups
// (Collector), and JSON of its regions (Handler: /regions, /regions/hot,
// /store), as TiKV's status port serves its own.

// HotRegions is how many regions /metrics and /regions/hot report by
// name: the hottest, by keys read and written per second, so that the
// number of series stays bounded whatever the number of regions.
const HotRegions = 10

// RegionStatus is one of this node's replicas as the status port reports
// it.
type RegionStatus struct {
	ID uint64 `json:"id"`
	// Start and End are the region's range as this replica applied it
	// (raw keys; JSON encodes them in base64; End empty: the key space's
	// end).
	Start []byte `json:"start"`
	End   []byte `json:"end"`
	// Version and ConfVer are the region's epoch: splits and conf
	// changes applied.
	Version uint64 `json:"version"`
	ConfVer uint64 `json:"conf_ver"`
	// Voters and Learners are the stores of the raft group.
	Voters   []uint64 `json:"voters"`
	Learners []uint64 `json:"learners,omitempty"`
	// Leader is the store this replica knows to lead (0: none);
	// Leading says this replica leads and serves.
	Leader  uint64 `json:"leader"`
	Leading bool   `json:"leading"`
	// Commit and Applied are the replica's place in its log.
	Commit  uint64 `json:"commit_index"`
	Applied uint64 `json:"applied_index"`
	// ApproximateSize is the store's estimate of the range's bytes on
	// disk (table files' metadata only, no key read).
	ApproximateSize uint64 `json:"approximate_size"`
	// ReadKeys and the others are the counts served here since the node
	// started; Rates are over the last heartbeat interval.
	ReadKeys   uint64 `json:"read_keys"`
	ReadBytes  uint64 `json:"read_bytes"`
	WriteKeys  uint64 `json:"write_keys"`
	WriteBytes uint64 `json:"write_bytes"`
	Rates
}

// StoreStatus is the node's store as /store reports it: its place in
// the cluster, its figures (the disk, the LSM tree, GC: the same
// document as the single node's Storage page, which a SQL node's console
// shows for each KV node) and raft's counts.
type StoreStatus struct {
	StoreID uint64 `json:"store_id"`
	Addr    string `json:"addr"`
	Regions int    `json:"regions"`
	Leaders int    `json:"leaders"`
	statusserver.StoreFigures
	// Raft is the raft store's counts since the node started.
	Raft             raftstore.Stats `json:"raft"`
	HeartbeatsOK     uint64          `json:"heartbeats_ok"`
	HeartbeatsFailed uint64          `json:"heartbeats_failed"`
}

// countHeartbeat counts a heartbeat's result.
func (n *Node) countHeartbeat(err error) {
	i := 0
	if err != nil {
		i = 1
	}
	n.heartbeats[i].Add(1)
}

// holds reports whether the node has region id.
func (n *Node) holds(id uint64) bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	_, ok := n.regions[id]
	return ok
}

// Store returns the node's store, for its Pebble and disk metrics.
func (n *Node) Store() *kv.Store { return n.store }

// Regions returns the node's replicas, by start key.
func (n *Node) Regions() []RegionStatus {
	n.mu.RLock()
	rs := make([]*replica, 0, len(n.regions))
	for _, r := range n.regions {
		rs = append(rs, r)
	}
	self := n.storeID
	n.mu.RUnlock()
	out := make([]RegionStatus, 0, len(rs))
	for _, r := range rs {
		d, c, p := r.raft.Region(), r.raft.Conf(), r.raft.Progress()
		_, leadErr := r.raft.Leading()
		st := RegionStatus{ID: r.info.ID, Start: d.Start, End: d.End, Version: d.Version, ConfVer: c.Ver,
			Voters: c.Voters, Learners: c.Learners, Leader: r.raft.Leader(), Leading: leadErr == nil,
			Commit: p.Commit, Applied: p.Applied}
		if st.Leading {
			st.Leader = self
		}
		if size, err := n.store.ApproximateSize(d.Start, d.End); err == nil {
			st.ApproximateSize = size
		}
		s, rates := n.load.get(r.info.ID)
		st.ReadKeys, st.ReadBytes, st.WriteKeys, st.WriteBytes, st.Rates = s.readKeys, s.readBytes, s.writeKeys, s.writeBytes, rates
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b RegionStatus) int { return cmp.Compare(string(a.Start), string(b.Start)) })
	return out
}

// Hot returns up to k of the node's regions with the most keys read and
// written per second over the last interval (those with none left out),
// hottest first.
func (n *Node) Hot(k int) []RegionStatus {
	all := slices.DeleteFunc(n.Regions(), func(r RegionStatus) bool { return r.Rates.total() == 0 })
	slices.SortStableFunc(all, func(a, b RegionStatus) int { return cmp.Compare(b.Rates.total(), a.Rates.total()) })
	return all[:min(k, len(all))]
}

// StoreStatus returns the node's store as /store reports it.
func (n *Node) StoreStatus() StoreStatus {
	st := StoreStatus{StoreID: n.StoreID(), Addr: n.cfg.Addr, Raft: n.raft.Stats(),
		HeartbeatsOK: n.heartbeats[0].Load(), HeartbeatsFailed: n.heartbeats[1].Load()}
	n.mu.RLock()
	st.Regions = len(n.regions)
	for _, r := range n.regions {
		if _, err := r.raft.Leading(); err == nil {
			st.Leaders++
		}
	}
	n.mu.RUnlock()
	// A closed store (the node closing) leaves the figures empty.
	st.StoreFigures, _ = statusserver.ReadStoreFigures(n.store)
	return st
}

// Handler serves the node's JSON on the status port: /store,
// /store/sizes (statusserver.SizesHandler), /regions (every replica) and /regions/hot (the HotRegions hottest; ?n=
// asks for another number, up to 1000).
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /store", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, n.StoreStatus()) })
	mux.HandleFunc("POST "+statusserver.StoreSizesPath, statusserver.SizesHandler(n.store))
	mux.HandleFunc("GET /regions", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, n.Regions()) })
	mux.HandleFunc("GET /regions/hot", func(w http.ResponseWriter, r *http.Request) {
		k := HotRegions
		if s := r.URL.Query().Get("n"); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 || v > 1000 {
				http.Error(w, "n: want a number from 1 to 1000", http.StatusBadRequest)
				return
			}
			k = v
		}
		writeJSON(w, n.Hot(k))
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

// Collector returns the node's Prometheus families, read at scrape time:
// the store's regions and leaders, heartbeats, raft's work and applied
// lag, and the hottest regions' rates. (Pebble's own and the disk's are
// the store's: statusserver.StoreCollectors.)
func (n *Node) Collector() prometheus.Collector { return nodeCollector{n} }

type nodeCollector struct{ n *Node }

var (
	descStoreInfo    = prometheus.NewDesc("percdb_store_info", "The KV node's store: 1, labelled with its id and address.", []string{"store_id", "addr"}, nil)
	descRegions      = prometheus.NewDesc("percdb_store_regions", "Replicas of regions this store holds.", nil, nil)
	descLeaders      = prometheus.NewDesc("percdb_store_leaders", "Regions whose replica on this store leads and serves.", nil, nil)
	descHeartbeats   = prometheus.NewDesc("percdb_store_heartbeats_total", "Heartbeats this store sent pd, by result (ok or failed).", []string{"result"}, nil)
	descProposals    = prometheus.NewDesc("percdb_raft_proposals_total", "Command batches this store's leaders proposed to raft, by result (ok or refused: the replica no longer led).", []string{"result"}, nil)
	descSnapSent     = prometheus.NewDesc("percdb_raft_snapshots_sent_total", "Snapshots this store's leaders sent to followers behind their truncated logs, by result (ok or failed).", []string{"result"}, nil)
	descSnapIn       = prometheus.NewDesc("percdb_raft_snapshots_installed_total", "Snapshots received and installed on this store.", nil, nil)
	descTransfers    = prometheus.NewDesc("percdb_raft_leader_transfers_total", "Leader transfers begun by this store's leaders (pd's balance, or the node closing).", nil, nil)
	descApplyLag     = prometheus.NewDesc("percdb_raft_apply_lag_entries", "Entries committed but not yet applied, summed over this store's replicas.", nil, nil)
	descApplyLagMax  = prometheus.NewDesc("percdb_raft_apply_lag_max_entries", "The largest number of entries committed but not yet applied of one replica of this store.", nil, nil)
	descHotReadKeys  = prometheus.NewDesc("percdb_hot_region_read_keys_per_second", "Keys read per second over the last heartbeat interval, for the regions this store leads with the most keys read and written (at most 10).", []string{"region"}, nil)
	descHotWriteKeys = prometheus.NewDesc("percdb_hot_region_write_keys_per_second", "Keys written (prewritten) per second over the last heartbeat interval, for the same hottest regions.", []string{"region"}, nil)
)

// Describe implements prometheus.Collector.
func (c nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descStoreInfo, descRegions, descLeaders, descHeartbeats, descProposals, descSnapSent,
		descSnapIn, descTransfers, descApplyLag, descApplyLagMax, descHotReadKeys, descHotWriteKeys} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c nodeCollector) Collect(ch chan<- prometheus.Metric) {
	n := c.n
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge(descStoreInfo, 1, strconv.FormatUint(n.StoreID(), 10), n.cfg.Addr)
	var regions, leaders int
	var lag, lagMax uint64
	n.mu.RLock()
	for _, r := range n.regions {
		regions++
		if _, err := r.raft.Leading(); err == nil {
			leaders++
		}
		if p := r.raft.Progress(); p.Commit > p.Applied {
			lag += p.Commit - p.Applied
			lagMax = max(lagMax, p.Commit-p.Applied)
		}
	}
	n.mu.RUnlock()
	gauge(descRegions, float64(regions))
	gauge(descLeaders, float64(leaders))
	gauge(descApplyLag, float64(lag))
	gauge(descApplyLagMax, float64(lagMax))
	counter(descHeartbeats, n.heartbeats[0].Load(), "ok")
	counter(descHeartbeats, n.heartbeats[1].Load(), "failed")
	st := n.raft.Stats()
	counter(descProposals, st.Proposals-st.ProposalsRefused, "ok")
	counter(descProposals, st.ProposalsRefused, "refused")
	counter(descSnapSent, st.SnapshotsSent, "ok")
	counter(descSnapSent, st.SnapshotSendFailures, "failed")
	counter(descSnapIn, st.SnapshotsInstalled)
	counter(descTransfers, st.LeaderTransfers)
	for _, r := range n.hotRates(HotRegions) {
		id := strconv.FormatUint(r.id, 10)
		gauge(descHotReadKeys, r.ReadKeys, id)
		gauge(descHotWriteKeys, r.WriteKeys, id)
	}
}

// regionRates is a region's id and rates.
type regionRates struct {
	id uint64
	Rates
}

// hotRates returns up to k regions with the highest rates of the last
// interval (none with no load), hottest first, without reading sizes.
func (n *Node) hotRates(k int) []regionRates {
	n.load.mu.Lock()
	out := make([]regionRates, 0, len(n.load.rates))
	for id, r := range n.load.rates {
		if r.total() > 0 {
			out = append(out, regionRates{id, r})
		}
	}
	n.load.mu.Unlock()
	slices.SortFunc(out, func(a, b regionRates) int {
		if c := cmp.Compare(b.total(), a.total()); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return out[:min(k, len(out))]
}
