package console

import (
	"time"

	"github.com/percdb/percdb/pd/pdapi"
)

// Cluster is the cluster a SQL node belongs to, as pd's read-only API
// (package pdapi) reports it: the Cluster page. (Its oracle's timestamps
// are strings, past 2^53.)
type Cluster struct {
	// InCluster is false on the single node (the page says so).
	InCluster bool `json:"in_cluster"`
	// Error says why pd could not be read ("" when it was).
	Error   string            `json:"error,omitempty"`
	PD      []pdapi.Member    `json:"pd"`
	Oracle  ClusterOracle     `json:"oracle"`
	Stores  []pdapi.StoreInfo `json:"stores"`
	Regions []ClusterRegion   `json:"regions"`
}

// ClusterOracle is the timestamp oracle as its pd leader reports it.
type ClusterOracle struct {
	Timestamp   uint64    `json:"timestamp,string"`
	Physical    time.Time `json:"physical"`
	WindowBound uint64    `json:"window_bound,string"`
}

// ClusterRegion is a region as pd's directory records it, its range
// decoded.
type ClusterRegion struct {
	ID uint64 `json:"id"`
	// Start and End are the range's keys as TiDB writes them
	// (t_<table>_r_<handle>, t_<table>_i_<index>_<hex>; "" for the key
	// space's ends); Table names what the range starts in ("db.table
	// rows", "db.table index k", "meta", ...).
	Start    string   `json:"start"`
	End      string   `json:"end"`
	Table    string   `json:"table"`
	Version  uint64   `json:"version"`
	ConfVer  uint64   `json:"conf_ver"`
	Peers    []uint64 `json:"peers"`
	Learners []uint64 `json:"learners"`
	Leader   uint64   `json:"leader"`
	// ApproximateSize is the region's size in bytes as its leader last
	// reported it.
	ApproximateSize uint64 `json:"approximate_size"`
	// ReadKeysPS and the others are the region's keys and bytes read and
	// written per second over its leader's last reported interval (about
	// a second): every SQL node's traffic to the region.
	ReadKeysPS   float64 `json:"read_keys_per_s"`
	ReadBytesPS  float64 `json:"read_bytes_per_s"`
	WriteKeysPS  float64 `json:"write_keys_per_s"`
	WriteBytesPS float64 `json:"write_bytes_per_s"`
}
