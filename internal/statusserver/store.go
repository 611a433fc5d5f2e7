package statusserver

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/percdb/percdb/kv"
)

// StoreCollectors are the families of a store (the single node's, or a
// KV node's): Pebble's own metrics and the disk protection's figures
// (kv/space.go) and counters (Store.DiskProtectionStats), all read at
// scrape time. An alert on percdb_disk_full, or on the free space nearing
// the reserve, comes before writes fail with 1021; a growing
// percdb_pebble_write_stall_seconds_total says writes wait for the disk.
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
	stats := func(f func(kv.DiskProtectionStats) float64) func() float64 {
		return func() float64 { return f(store.DiskProtectionStats()) }
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
			read(func(ds kv.DiskSpace) float64 { return oneIf(ds.Full) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "percdb_pebble_write_stalled", Help: "1 while Pebble holds writes in its write stall (its memtables wait for a flush), else 0."},
			stats(func(st kv.DiskProtectionStats) float64 { return oneIf(st.Stalled) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_pebble_write_stalls_total", Help: "Write stalls Pebble began (its memtables waited for a flush)."},
			stats(func(st kv.DiskProtectionStats) float64 { return float64(st.WriteStalls) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_pebble_write_stall_seconds_total", Help: "Time Pebble held writes in its write stall, the running stall's included."},
			stats(func(st kv.DiskProtectionStats) float64 { return st.StallTime.Seconds() })),
		newDiskRefusals(store),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_store_writes_in_doubt_total", Help: "Writes whose callers stopped waiting (KILL, the client gone) while the storage held them, as in a write stall; each is applied or fails later."},
			stats(func(st kv.DiskProtectionStats) float64 { return float64(st.WritesInDoubt) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "percdb_store_writes_in_doubt", Help: "Writes whose callers stopped waiting that the storage still holds (their keys stay latched until each is applied or fails)."},
			stats(func(st kv.DiskProtectionStats) float64 { return float64(st.WritesInDoubtPending) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_disk_compactions_waited_total", Help: "Compactions that waited for room on the disk before writing their output (the store counts as full meanwhile)."},
			stats(func(st kv.DiskProtectionStats) float64 { return float64(st.CompactionsWaited) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_disk_compactions_gave_up_total", Help: "Compactions that waited for room on the disk and gave up (Pebble picks them again)."},
			stats(func(st kv.DiskProtectionStats) float64 { return float64(st.CompactionsGaveUp) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_disk_compactions_never_fit_total", Help: "Compactions that needed more room than the disk could ever give the store: given up on, so writes go on while level 0 grows (see percdb_pebble_read_amplification)."},
			stats(func(st kv.DiskProtectionStats) float64 { return float64(st.CompactionsNeverFit) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "percdb_kv_latest_space_on", Help: "1 while the store's forward range reads read the latest space (a copy of each key's newest version, kv/latestswitch.go), else 0 (off, or being built)."},
			func() float64 { return oneIf(store.LatestSpaceStats().On) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "percdb_kv_latest_space_ranges_on", Help: "Ranges (a table's rows or its indexes) whose copies in the latest space the store's forward range reads read now, switched on by the automatic mode while the whole space is off (kv/latestranges.go)."},
			func() float64 { return float64(store.LatestSpaceStats().RangesOn) }),
		newLatestSwitches(store),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_kv_latest_space_compactions_total", Help: "Compactions of the store's latest space that its copies' churn asked for: the copies written since the last one made half the space's size (kv/latestcompact.go)."},
			func() float64 { return float64(store.LatestSpaceStats().Compactions) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_kv_scan_keys_total", Help: "User keys the store's range reads (Scan, Coprocessor) visited."},
			func() float64 { return float64(store.ScanCost().Keys) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_kv_scan_records_total", Help: "Records the store's range reads asked Pebble for (versions, or copies in the latest space)."},
			func() float64 { return float64(store.ScanCost().Records) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "percdb_kv_scan_points_total", Help: "Internal points Pebble merged to return the range reads' records: the excess over percdb_kv_scan_records_total is hidden work (tombstones, shadowed versions and copies not compacted yet), what a churned table's scan pays more than a fresh one's."},
			func() float64 { return float64(store.ScanCost().Points) }),
	}
}

// diskRefusals is percdb_disk_writes_refused_total, by reason: one
// family with a label needs a collector of its own (a CounterFunc has
// none).
type diskRefusals struct {
	store *kv.Store
	desc  *prometheus.Desc
}

func newDiskRefusals(store *kv.Store) *diskRefusals {
	return &diskRefusals{store: store, desc: prometheus.NewDesc("percdb_disk_writes_refused_total",
		"Writes the store refused with MySQL error 1021: reason full (free space below the reserve: writes that add data), stalled (the storage stalled on the full disk: every write).",
		[]string{"reason"}, nil)}
}

// Describe implements prometheus.Collector.
func (d *diskRefusals) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc }

// Collect implements prometheus.Collector.
func (d *diskRefusals) Collect(ch chan<- prometheus.Metric) {
	st := d.store.DiskProtectionStats()
	ch <- prometheus.MustNewConstMetric(d.desc, prometheus.CounterValue, float64(st.WritesRefusedFull), "full")
	ch <- prometheus.MustNewConstMetric(d.desc, prometheus.CounterValue, float64(st.WritesRefusedStalled), "stalled")
}

// oneIf is a gauge's value of a condition: 1 while it holds, else 0.
func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// latestSwitches is percdb_kv_latest_space_switches_total, by the state
// switched to (on, off): one family with a label needs a collector of
// its own.
type latestSwitches struct {
	store *kv.Store
	desc  *prometheus.Desc
}

func newLatestSwitches(store *kv.Store) *latestSwitches {
	return &latestSwitches{store: store, desc: prometheus.NewDesc("percdb_kv_latest_space_switches_total",
		"Switches of the store's latest space since it opened, by the state switched to: on (a build finished and range reads read it), off (cleared).",
		[]string{"to"}, nil)}
}

// Describe implements prometheus.Collector.
func (l *latestSwitches) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

// Collect implements prometheus.Collector.
func (l *latestSwitches) Collect(ch chan<- prometheus.Metric) {
	st := l.store.LatestSpaceStats()
	ch <- prometheus.MustNewConstMetric(l.desc, prometheus.CounterValue, float64(st.SwitchedOn), "on")
	ch <- prometheus.MustNewConstMetric(l.desc, prometheus.CounterValue, float64(st.SwitchedOff), "off")
}
