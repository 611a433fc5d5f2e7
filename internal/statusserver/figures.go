package statusserver

import (
	"fmt"

	"github.com/percdb/percdb/kv"
)

// StoreFigures are a store's disk, LSM tree and garbage collection as the
// status ports report them in JSON: the single node's console (its
// Storage page) and each KV node's /store, which a SQL node of a cluster
// reads for its own console's Storage page. One type for both, so that
// the page reads a KV node's figures as it reads its own.
type StoreFigures struct {
	// Dir is the store's directory.
	Dir string `json:"dir"`
	// DiskTotal and DiskAvailable describe the file system; DiskReserve
	// is the disk protection's reserve (0: off); DiskFull says the store
	// refuses writes that add data (MySQL error 1021).
	DiskTotal     uint64 `json:"disk_total"`
	DiskAvailable uint64 `json:"disk_available"`
	DiskReserve   uint64 `json:"disk_reserve"`
	DiskFull      bool   `json:"disk_full"`
	// WriteStalled says Pebble holds writes in its write stall now;
	// WriteStallSeconds is the time it held them since the store opened;
	// WritesRefused counts the writes refused with 1021 (disk full or
	// stalled on it); CompactionsWaitedForRoom counts the compactions that
	// waited for room on the disk (kv.DiskProtectionStats).
	WriteStalled             bool    `json:"write_stalled"`
	WriteStallSeconds        float64 `json:"write_stall_seconds"`
	WritesRefused            uint64  `json:"writes_refused"`
	CompactionsWaitedForRoom uint64  `json:"compactions_waited_for_room"`
	// StoreBytes is the store's own use of the disk (table files, log,
	// manifest).
	StoreBytes          uint64       `json:"store_bytes"`
	MemtableBytes       uint64       `json:"memtable_bytes"`
	CompactionDebtBytes uint64       `json:"compaction_debt_bytes"`
	Compactions         int64        `json:"compactions"`
	Flushes             int64        `json:"flushes"`
	ReadAmp             int          `json:"read_amp"`
	BlockCacheHits      int64        `json:"block_cache_hits"`
	BlockCacheMisses    int64        `json:"block_cache_misses"`
	Levels              []StoreLevel `json:"levels"`
	// GCSafePoint is the store's GC safe point (it refuses reads below
	// it; 0: none yet); GCCompactions and GCCompactionSeconds count the
	// compactions it ran after garbage collection to return the space,
	// GCCompactedBytes the sstable bytes of the ranges they rewrote.
	GCSafePoint         uint64  `json:"gc_safe_point,string"`
	GCCompactions       uint64  `json:"gc_compactions"`
	GCCompactionSeconds float64 `json:"gc_compaction_seconds"`
	GCCompactedBytes    uint64  `json:"gc_compacted_bytes"`
}

// StoreLevel is one level of a store's LSM tree.
type StoreLevel struct {
	Level int     `json:"level"`
	Files int64   `json:"files"`
	Bytes int64   `json:"bytes"`
	Score float64 `json:"score"`
}

// ReadStoreFigures reads store's figures now: from Pebble's metrics and
// the file system, no key read. It fails only when the store is closed.
func ReadStoreFigures(store *kv.Store) (StoreFigures, error) {
	var f StoreFigures
	ds, err := store.DiskSpace()
	if err != nil {
		return f, fmt.Errorf("store figures: %w", err)
	}
	f.Dir, f.DiskTotal, f.DiskAvailable, f.DiskReserve, f.DiskFull = ds.Dir, ds.Total, ds.Available, ds.Reserve, ds.Full
	dp := store.DiskProtectionStats()
	f.WriteStalled, f.WriteStallSeconds = dp.Stalled, dp.StallTime.Seconds()
	f.WritesRefused, f.CompactionsWaitedForRoom = dp.WritesRefusedFull+dp.WritesRefusedStalled, dp.CompactionsWaited
	m, err := store.Metrics()
	if err != nil {
		return f, fmt.Errorf("store figures: %w", err)
	}
	f.StoreBytes = m.DiskSpaceUsage()
	f.MemtableBytes = m.MemTable.Size
	f.CompactionDebtBytes = m.Compact.EstimatedDebt
	f.Compactions, f.Flushes = m.Compact.Count, m.Flush.Count
	f.ReadAmp = m.ReadAmp()
	f.BlockCacheHits, f.BlockCacheMisses = m.BlockCache.Hits, m.BlockCache.Misses
	for i, l := range m.Levels {
		f.Levels = append(f.Levels, StoreLevel{Level: i, Files: l.NumFiles, Bytes: l.Size, Score: l.Score})
	}
	f.GCSafePoint = store.GCSafePoint()
	gcc := store.GCCompactionStats()
	f.GCCompactions, f.GCCompactionSeconds, f.GCCompactedBytes = gcc.Compactions, gcc.Time.Seconds(), gcc.Bytes
	return f, nil
}
