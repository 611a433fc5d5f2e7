package console

import (
	"time"

	"github.com/percdb/percdb/internal/statusserver"
)

// Storage is the JSON of /api/storage: the node's store on disk, its LSM,
// the garbage collector and the largest tables; on a SQL node of a
// cluster, each KV node's store instead.
type Storage struct {
	// Local is false on a node that keeps no data (a SQL node of a
	// cluster: its data is on the KV nodes, in Stores); the store's
	// figures are then empty.
	Local bool   `json:"local"`
	Note  string `json:"note,omitempty"`
	statusserver.StoreFigures
	// Stores are the KV nodes' stores, on a SQL node of a cluster, by
	// store id.
	Stores []StoreStorage `json:"stores,omitempty"`
	// Tables are the largest tables by estimated size on disk (rows and
	// indexes, every version), largest first; on a SQL node of a
	// cluster, summed over the stores that answered (every replica).
	Tables []TableSize `json:"tables"`
	GC     StorageGC   `json:"gc"`
}

// StoreStorage is one KV node's store as its status port's /store
// reports it (the document is kv/node's StoreStatus; this is the part the
// page shows).
type StoreStorage struct {
	ID         uint64 `json:"store_id"`
	Addr       string `json:"addr"`
	StatusAddr string `json:"status_addr"`
	// Error says why the store's figures could not be read (its status
	// port unknown to pd, or not answering); the rest is then empty.
	Error   string `json:"error,omitempty"`
	Regions int    `json:"regions"`
	Leaders int    `json:"leaders"`
	statusserver.StoreFigures
	// Tables are the largest tables on this store (its replicas'
	// share), largest first; TablesError says why the store could not
	// tell.
	Tables      []TableSize `json:"tables,omitempty"`
	TablesError string      `json:"tables_error,omitempty"`
}

// TableSize is a table's estimated size on disk.
type TableSize struct {
	Table string `json:"table"`
	Bytes uint64 `json:"bytes"`
}

// StorageGC is the garbage collector's state.
type StorageGC struct {
	LifeTime    string `json:"life_time"`
	RunInterval string `json:"run_interval"`
	// SafePoint is the safe point of the last complete run and
	// SafePointTime its wall-clock time; versions older than it that a
	// newer version hides are gone.
	SafePoint       uint64    `json:"safe_point,string"`
	SafePointTime   time.Time `json:"safe_point_time"`
	LastRun         time.Time `json:"last_run"`
	Runs            uint64    `json:"runs"`
	FailedRuns      uint64    `json:"failed_runs"`
	VersionsDeleted uint64    `json:"versions_deleted"`
	BytesReclaimed  uint64    `json:"bytes_reclaimed"`
	RangesDestroyed uint64    `json:"ranges_destroyed"`
	// PendingRanges are dropped tables' and indexes' ranges waiting for
	// the safe point to pass their drop.
	PendingRanges []PendingRange `json:"pending_ranges"`
	// ServiceSafePoints hold the safe point back for services that read
	// old versions (change feeds).
	ServiceSafePoints []ServiceSafePoint `json:"service_safe_points"`
}

// PendingRange is a range of a dropped table or index not yet destroyed.
type PendingRange struct {
	What string `json:"what"`
	// NotBefore is the timestamp the safe point must pass (0: not yet
	// stamped).
	NotBefore uint64 `json:"not_before,string"`
	Bytes     uint64 `json:"bytes"`
}

// ServiceSafePoint is a service's hold on the GC safe point.
type ServiceSafePoint struct {
	ID      string    `json:"id"`
	What    string    `json:"what"`
	TS      uint64    `json:"ts,string"`
	Time    time.Time `json:"time"`
	Expires time.Time `json:"expires"`
	Expired bool      `json:"expired"`
}
