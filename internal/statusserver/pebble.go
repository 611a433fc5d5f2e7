package statusserver

import (
	"github.com/cockroachdb/pebble"
	"github.com/prometheus/client_golang/prometheus"
)

// PebbleCollector is a prometheus.Collector of Pebble's own metrics. It
// reads them from the store at scrape time, so nothing polls and the
// figures are as fresh as the scrape; Pebble computes them under its
// mutex in microseconds.
type PebbleCollector struct {
	metrics func() (*pebble.Metrics, error)
	descs   pebbleDescs
}

type pebbleDescs struct {
	compactions, compactionDebt, compactionsInProgress, flushes,
	readAmp, cacheHits, cacheMisses, cacheSize, diskUsage,
	memtableSize, walBytes, tableCacheHits, tableCacheMisses *prometheus.Desc
}

// NewPebbleCollector returns a collector of the metrics metrics returns
// (kv.Store.Metrics). A scrape while metrics fails (the store is closed)
// reports the error for these families only.
func NewPebbleCollector(metrics func() (*pebble.Metrics, error)) *PebbleCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("percdb_pebble_"+name, help, nil, nil)
	}
	return &PebbleCollector{metrics: metrics, descs: pebbleDescs{
		compactions:           d("compactions_total", "Compactions Pebble has run since the store was opened."),
		compactionDebt:        d("compaction_debt_bytes", "Pebble's estimate of the bytes to compact before the LSM is in a stable shape."),
		compactionsInProgress: d("compactions_in_progress", "Compactions running now."),
		flushes:               d("flushes_total", "Memtable flushes since the store was opened."),
		readAmp:               d("read_amplification", "Read amplification: the sublevels of L0 plus the non-empty levels below, which a read may have to consult."),
		cacheHits:             d("block_cache_hits_total", "Block cache hits."),
		cacheMisses:           d("block_cache_misses_total", "Block cache misses (blocks read from disk or the OS page cache)."),
		cacheSize:             d("block_cache_size_bytes", "Bytes held by the block cache."),
		diskUsage:             d("disk_usage_bytes", "Disk space used by the store: sstables, WAL, manifest and files not yet deleted."),
		memtableSize:          d("memtable_size_bytes", "Bytes allocated by memtables, flushed or not."),
		walBytes:              d("wal_bytes_written_total", "Bytes written to the write-ahead log."),
		tableCacheHits:        d("table_cache_hits_total", "Table cache (open sstable readers) hits."),
		tableCacheMisses:      d("table_cache_misses_total", "Table cache misses (sstables opened)."),
	}}
}

// Describe implements prometheus.Collector.
func (c *PebbleCollector) Describe(ch chan<- *prometheus.Desc) {
	d := &c.descs
	for _, desc := range []*prometheus.Desc{d.compactions, d.compactionDebt, d.compactionsInProgress, d.flushes,
		d.readAmp, d.cacheHits, d.cacheMisses, d.cacheSize, d.diskUsage, d.memtableSize, d.walBytes,
		d.tableCacheHits, d.tableCacheMisses} {
		ch <- desc
	}
}

// Collect implements prometheus.Collector.
func (c *PebbleCollector) Collect(ch chan<- prometheus.Metric) {
	m, err := c.metrics()
	d := &c.descs
	if err != nil {
		ch <- prometheus.NewInvalidMetric(d.diskUsage, err)
		return
	}
	counter := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v)
	}
	gauge := func(desc *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v)
	}
	counter(d.compactions, float64(m.Compact.Count))
	gauge(d.compactionDebt, float64(m.Compact.EstimatedDebt))
	gauge(d.compactionsInProgress, float64(m.Compact.NumInProgress))
	counter(d.flushes, float64(m.Flush.Count))
	gauge(d.readAmp, float64(m.ReadAmp()))
	counter(d.cacheHits, float64(m.BlockCache.Hits))
	counter(d.cacheMisses, float64(m.BlockCache.Misses))
	gauge(d.cacheSize, float64(m.BlockCache.Size))
	gauge(d.diskUsage, float64(m.DiskSpaceUsage()))
	gauge(d.memtableSize, float64(m.MemTable.Size))
	counter(d.walBytes, float64(m.WAL.BytesWritten))
	counter(d.tableCacheHits, float64(m.TableCache.Hits))
	counter(d.tableCacheMisses, float64(m.TableCache.Misses))
}
