package console

import "time"

// Storage is the JSON of /api/storage: the node's store on disk, its LSM,
// the garbage collector and the largest tables.
type Storage struct {
	// Local is false on a node that keeps no data (a SQL node of a
	// cluster: its data is on the KV nodes, which report their own); the
	// other fields are then empty except GC's settings.
	Local bool   `json:"local"`
	Note  string `json:"note,omitempty"`
	Dir   string `json:"dir"`
	// DiskTotal and DiskAvailable describe the file system; DiskReserve
	// is the disk protection's reserve (0: off); DiskFull says the store
	// refuses writes that add data (MySQL error 1021).
	DiskTotal     uint64 `json:"disk_total"`
	DiskAvailable uint64 `json:"disk_available"`
	DiskReserve   uint64 `json:"disk_reserve"`
	DiskFull      bool   `json:"disk_full"`
	// StoreBytes is the store's own use of the disk (table files, log,
	// manifest).
	StoreBytes          uint64         `json:"store_bytes"`
	MemtableBytes       uint64         `json:"memtable_bytes"`
	CompactionDebtBytes uint64         `json:"compaction_debt_bytes"`
	Compactions         int64          `json:"compactions"`
	Flushes             int64          `json:"flushes"`
	ReadAmp             int            `json:"read_amp"`
	BlockCacheHits      int64          `json:"block_cache_hits"`
	BlockCacheMisses    int64          `json:"block_cache_misses"`
	Levels              []StorageLevel `json:"levels"`
	// Tables are the largest tables by estimated size on disk (rows and
	// indexes, every version), largest first.
	Tables []TableSize `json:"tables"`
	GC     StorageGC   `json:"gc"`
}

// StorageLevel is one level of the LSM tree.
type StorageLevel struct {
	Level int     `json:"level"`
	Files int64   `json:"files"`
	Bytes int64   `json:"bytes"`
	Score float64 `json:"score"`
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
