// Package pdapi is the contract of pd's read-only JSON API on its status
// port (pd/status.go serves it; the SQL nodes' console reads it): the
// paths and the documents each answers. It holds types only, so that a
// reader does not link pd's embedded etcd.
//
// Each path is a GET answered by the pd leader; a follower answers 503
// and names the leader in the X-PD-Leader header. Keys are raw bytes
// (base64 in JSON); an empty End is the key space's end.
package pdapi

import "time"

// The API's paths.
const (
	// PathStores answers []StoreInfo, by store id.
	PathStores = "/pd/api/v1/stores"
	// PathRegions answers []RegionRecord, by start key.
	PathRegions = "/pd/api/v1/regions"
	// PathMembers answers []Member, the leader first.
	PathMembers = "/pd/api/v1/members"
	// PathTSO answers TSOInfo.
	PathTSO = "/pd/api/v1/tso"
)

// Store states as the API and metrics report them: up (heartbeated
// within a few seconds), disconnected (silent longer, replicas left
// where they are), down (silent past the max store down time: its
// replicas are being replaced).
const (
	StoreUp           = "up"
	StoreDisconnected = "disconnected"
	StoreDown         = "down"
)

// StoreInfo is a store as the API reports it.
type StoreInfo struct {
	ID    uint64 `json:"id"`
	Addr  string `json:"addr"`
	State string `json:"state"`
	// StatusAddr is the KV node's status port (host:port: /store,
	// /regions, /metrics) as it last registered it; "" when it serves
	// none.
	StatusAddr string `json:"status_addr"`
	// LastHeartbeat is when the leader last heard from the store (zero:
	// not in this leader's term).
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// Replicas and Leaders count the regions with a peer on the store
	// and those it leads, by the directory.
	Replicas int `json:"replicas"`
	Leaders  int `json:"leaders"`
	// RegionSize and LeaderSize sum the approximate sizes (bytes) of the
	// regions with a peer on the store and of those it leads, as their
	// leaders last reported them; RegionWeight is what balance by size
	// weighs the store at (each replica its region's size, at least 1
	// MiB).
	RegionSize   uint64 `json:"region_size"`
	LeaderSize   uint64 `json:"leader_size"`
	RegionWeight uint64 `json:"region_weight"`
	// Labels are the store's labels as its node registered them
	// (percdb kv --labels; none: empty).
	Labels map[string]string `json:"labels"`
	// Placement is the store's place in the cluster, which an operator
	// sets (percdb ctl store drain): PlacementUp, PlacementDraining or
	// PlacementRemoved.
	Placement string `json:"placement"`
	// Capacity, Available and Used are the store's disk in bytes as its
	// last heartbeat reported it (all 0: not reported since this pd
	// leader began); DiskFull says its disk protection refuses writes,
	// LowSpace that pd places no replica on it and moves replicas off it.
	Capacity  uint64 `json:"capacity"`
	Available uint64 `json:"available"`
	Used      uint64 `json:"used"`
	DiskFull  bool   `json:"disk_full"`
	LowSpace  bool   `json:"low_space"`
}

// Placements of a store (StoreInfo.Placement): serving, being drained of
// its replicas, or removed once drained (a tombstone: final).
const (
	PlacementUp       = "up"
	PlacementDraining = "draining"
	PlacementRemoved  = "removed"
)

// RegionRecord is a region as the API reports it: the directory's record.
type RegionRecord struct {
	ID uint64 `json:"id"`
	// Start and End are raw keys (base64 in JSON); End empty: the key
	// space's end.
	Start    []byte   `json:"start"`
	End      []byte   `json:"end"`
	Version  uint64   `json:"version"`
	ConfVer  uint64   `json:"conf_ver"`
	Peers    []uint64 `json:"peers"`
	Learners []uint64 `json:"learners,omitempty"`
	// Leader is the store that last reported leading it.
	Leader uint64 `json:"leader"`
	// ApproximateSize is the region's size in bytes as its leader last
	// reported it (0: not since this pd leader began).
	ApproximateSize uint64 `json:"approximate_size"`
	// Load is what the region's leader served over its last reported
	// interval: the whole cluster's traffic to the region (zero: none
	// reported since this pd leader began).
	Load RegionLoad `json:"load"`
	// Total is every interval its leaders reported since this pd leader
	// began, summed (IntervalMS: their lengths): two reads' difference is
	// the traffic in between, whatever the reader's period.
	Total RegionLoad `json:"total"`
}

// RegionLoad is a region's reads and writes over an interval as its
// leader served them (TiKV's region heartbeat's read_bytes, read_keys,
// written_bytes, written_keys): keys and bytes returned to readers (a
// coprocessor request's visited pairs), keys and bytes prewritten.
type RegionLoad struct {
	ReadKeys     uint64 `json:"read_keys"`
	ReadBytes    uint64 `json:"read_bytes"`
	WrittenKeys  uint64 `json:"written_keys"`
	WrittenBytes uint64 `json:"written_bytes"`
	// IntervalMS is the interval's length in milliseconds (0: no
	// report).
	IntervalMS uint64 `json:"interval_ms"`
}

// PerSecond returns n counted over the load's interval as a rate per
// second (0 without an interval).
func (l RegionLoad) PerSecond(n uint64) float64 {
	if l.IntervalMS == 0 {
		return 0
	}
	return float64(n) * 1000 / float64(l.IntervalMS)
}

// Member is a pd member as the API reports it.
type Member struct {
	Addr   string `json:"addr"`
	Leader bool   `json:"leader"`
}

// TSOInfo is the oracle as the API reports it.
type TSOInfo struct {
	Timestamp uint64    `json:"timestamp"`
	Physical  time.Time `json:"physical"`
	// WindowBound is the saved bound under which the oracle issues
	// timestamps (a new leader starts above it).
	WindowBound uint64 `json:"window_bound"`
}
