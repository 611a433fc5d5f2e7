package statusserver

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/percdb/percdb/kv"
)

// StoreCollectors are the families of a store (the single node's, or a
// KV node's): Pebble's own metrics and the disk protection's figures
// (kv/space.go) as gauges, all read at scrape time. An alert on
// percdb_disk_full, or on the free space nearing the reserve, comes
// before writes fail with 1021.
func StoreCollectors(store *kv.Store) []prometheus.Collector {
	read := func(f func(kv.DiskSpace) float64) func() float64 {
		return func() float64 {
			ds, err := store.DiskSpace()
			if err != nil {
				return 0
			}
			return f(ds)
		}
	}
	return []prometheus.Collector{
		NewPebbleCollector(store.Metrics),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "percdb_disk_available_bytes", Help: "Free bytes of the store's file system."},
			read(func(ds kv.DiskSpace) float64 { return float64(ds.Available) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "percdb_disk_size_bytes", Help: "Size of the store's file system."},
			read(func(ds kv.DiskSpace) float64 { return float64(ds.Total) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "percdb_disk_reserve_bytes", Help: "The disk protection's reserve (--reserve-space): below this much free space, writes that add data are refused (0: protection off)."},
			read(func(ds kv.DiskSpace) float64 { return float64(ds.Reserve) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "percdb_disk_full", Help: "1 while the store refuses writes that add data because its disk is full (MySQL error 1021), else 0."},
			read(func(ds kv.DiskSpace) float64 {
				if ds.Full {
					return 1
				}
				return 0
			})),
	}
}
