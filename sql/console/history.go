package console

import (
	"context"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Sample is one point of the overview's charts: rates over the interval
// that ends at T, and gauges at T.
type Sample struct {
	// T is in Unix milliseconds.
	T            int64   `json:"t"`
	QPS          float64 `json:"qps"`
	ErrorsPS     float64 `json:"errors_ps"`
	P50Ms        float64 `json:"p50_ms"`
	P99Ms        float64 `json:"p99_ms"`
	Connections  float64 `json:"connections"`
	CommitsPS    float64 `json:"commits_ps"`
	RollbacksPS  float64 `json:"rollbacks_ps"`
	ConflictsPS  float64 `json:"conflicts_ps"`
	OnePCPS      float64 `json:"one_pc_ps"`
	TwoPCPS      float64 `json:"two_pc_ps"`
	SlowPS       float64 `json:"slow_ps"`
	DiskBytes    float64 `json:"disk_bytes"`
	MemtableSize float64 `json:"memtable_bytes"`
}

// Overview is the JSON of /api/overview.
type Overview struct {
	Now     int64    `json:"now"`
	Samples []Sample `json:"samples"`
	// Totals are the counters since the node started.
	Totals map[string]float64 `json:"totals"`
}

// counters are the cumulative values a sample is the difference of.
type counters struct {
	at        time.Time
	queries   float64
	errors    float64
	committed float64
	rolled    float64
	conflicts float64
	onePC     float64
	twoPC     float64
	slow      float64
	// buckets are the latency histogram's cumulative counts by upper
	// bound, summed over the statement types.
	buckets map[float64]float64
	// gauges
	connections, disk, memtable float64
}

// History samples a Prometheus registry at a fixed interval and keeps
// the last samples for the overview. It is safe for concurrent use.
type History struct {
	g        prometheus.Gatherer
	interval time.Duration
	size     int

	mu      sync.Mutex
	last    *counters
	samples []Sample
}

// NewHistory returns a history of g's samples every interval, keeping
// size of them.
func NewHistory(g prometheus.Gatherer, interval time.Duration, size int) *History {
	return &History{g: g, interval: interval, size: size}
}

// Run samples until ctx ends.
func (h *History) Run(ctx context.Context) {
	h.sample(time.Now())
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h.sample(now)
		}
	}
}

// sample takes a sample at now.
func (h *History) sample(now time.Time) {
	cur, err := h.read(now)
	if err != nil {
		return // a registry that fails is shown as a gap
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if prev := h.last; prev != nil {
		h.samples = append(h.samples, diff(prev, cur))
		if len(h.samples) > h.size {
			h.samples = append(h.samples[:0], h.samples[len(h.samples)-h.size:]...)
		}
	}
	h.last = cur
}

// Overview returns the samples and the totals.
func (h *History) Overview(now time.Time) Overview {
	o := Overview{Now: now.UnixMilli(), Samples: []Sample{}, Totals: map[string]float64{}}
	if h == nil {
		return o
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	o.Samples = append(o.Samples, h.samples...)
	if c := h.last; c != nil {
		o.Totals = map[string]float64{
			"queries": c.queries, "errors": c.errors, "committed": c.committed, "rolled_back": c.rolled,
			"conflicted": c.conflicts, "one_pc": c.onePC, "two_pc": c.twoPC, "slow": c.slow,
			"connections": c.connections, "disk_bytes": c.disk,
		}
	}
	return o
}

// read gathers the registry's values.
func (h *History) read(now time.Time) (*counters, error) {
	fams, err := h.g.Gather()
	if err != nil && len(fams) == 0 {
		return nil, err
	}
	c := &counters{at: now, buckets: map[float64]float64{}}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			v := value(m)
			switch f.GetName() {
			case "percdb_queries_total":
				c.queries += v
				if label(m, "result") == "error" {
					c.errors += v
				}
			case "percdb_query_duration_seconds":
				for _, b := range m.GetHistogram().GetBucket() {
					c.buckets[b.GetUpperBound()] += float64(b.GetCumulativeCount())
				}
			case "percdb_transactions_total", "percdb_commits_total":
				if into := c.byLabel(f.GetName(), m); into != nil {
					*into += v
				}
			case "percdb_slow_queries_total":
				c.slow += v
			case "percdb_connections":
				c.connections = v
			case "percdb_pebble_disk_usage_bytes":
				c.disk = v
			case "percdb_pebble_memtable_size_bytes":
				c.memtable = v
			}
		}
	}
	return c, nil
}

// byLabel returns the field that counts sample m of family name, a
// family whose samples differ by one label; nil for a value not shown.
func (c *counters) byLabel(name string, m *dto.Metric) *float64 {
	if name == "percdb_commits_total" {
		return map[string]*float64{"1pc": &c.onePC, "2pc": &c.twoPC}[label(m, "protocol")]
	}
	return map[string]*float64{"committed": &c.committed, "rolled_back": &c.rolled, "conflicted": &c.conflicts}[label(m, "result")]
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// diff returns the sample of the interval from a to b.
func diff(a, b *counters) Sample {
	secs := b.at.Sub(a.at).Seconds()
	if secs <= 0 {
		secs = math.SmallestNonzeroFloat64
	}
	rate := func(x, y float64) float64 { return math.Max(0, y-x) / secs }
	bounds := make([]float64, 0, len(b.buckets))
	for ub := range b.buckets {
		bounds = append(bounds, ub)
	}
	sort.Float64s(bounds)
	counts := make([]float64, len(bounds))
	for i, ub := range bounds {
		counts[i] = math.Max(0, b.buckets[ub]-a.buckets[ub])
	}
	return Sample{
		T:   b.at.UnixMilli(),
		QPS: rate(a.queries, b.queries), ErrorsPS: rate(a.errors, b.errors),
		P50Ms: 1000 * quantile(0.5, bounds, counts), P99Ms: 1000 * quantile(0.99, bounds, counts),
		Connections: b.connections,
		CommitsPS:   rate(a.committed, b.committed), RollbacksPS: rate(a.rolled, b.rolled), ConflictsPS: rate(a.conflicts, b.conflicts),
		OnePCPS: rate(a.onePC, b.onePC), TwoPCPS: rate(a.twoPC, b.twoPC), SlowPS: rate(a.slow, b.slow),
		DiskBytes: b.disk, MemtableSize: b.memtable,
	}
}

// quantile estimates quantile q of a histogram of cumulative counts by
// upper bound, interpolating linearly inside the bucket it falls in (as
// Prometheus' histogram_quantile does); 0 without observations. A
// quantile in the open last bucket is the last finite bound.
func quantile(q float64, bounds, cumulative []float64) float64 {
	if len(bounds) == 0 {
		return 0
	}
	total := cumulative[len(cumulative)-1]
	if total == 0 {
		return 0
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for i, ub := range bounds {
		if cumulative[i] >= rank {
			if math.IsInf(ub, 1) {
				return lower
			}
			in := cumulative[i] - below
			if in <= 0 {
				return ub
			}
			return lower + (ub-lower)*(rank-below)/in
		}
		lower, below = ub, cumulative[i]
	}
	return lower
}
