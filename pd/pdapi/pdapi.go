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
	// LastHeartbeat is when the leader last heard from the store (zero:
	// not in this leader's term).
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// Replicas and Leaders count the regions with a peer on the store
	// and those it leads, by the directory.
	Replicas int `json:"replicas"`
	Leaders  int `json:"leaders"`
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
