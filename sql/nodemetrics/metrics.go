package nodemetrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/percdb/percdb/internal/statusserver"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/tso"
)

// durationBuckets are the upper bounds of the query duration histogram,
// in seconds: from a fast-path point read (tens of microseconds) to the
// default long_query_time and beyond.
var durationBuckets = []float64{
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
}

// Metrics are a node's Prometheus metrics, in a registry of the node's
// own (never prometheus.DefaultRegisterer: two nodes in one process keep
// their own counts). The statement metrics are counted as statements end;
// everything else is read at scrape time from where it is kept.
type Metrics struct {
	reg *prometheus.Registry
	// queries and duration are the children of their vectors for every
	// type (and result), resolved once so that a statement costs no label
	// lookup.
	queries     [lexical.NumKinds][2]prometheus.Counter
	duration    [lexical.NumKinds]prometheus.Observer
	connections prometheus.Gauge
	accepted    prometheus.Counter
	slow        prometheus.Counter
}

// Values of the result label of percdb_queries_total.
const (
	resultOK    = 0
	resultError = 1
)

// New makes the metrics of a node whose counters are counters, whose
// store is store (nil on a SQL node of a cluster), whose KV requests kvm
// counts and whose timestamps oracle fetches (nil: none).
func New(counters Counters, store *kv.Store, kvm *KV, oracle *tso.BatchClient) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	queries := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "percdb_queries_total",
		Help: "Statements run, by type (the statement's first word) and result (ok or error).",
	}, []string{"type", "result"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "percdb_query_duration_seconds",
		Help:    "Time from a statement's arrival to its last result packet, by type.",
		Buckets: durationBuckets,
	}, []string{"type"})
	for t := lexical.Kind(0); t < lexical.NumKinds; t++ {
		m.queries[t][resultOK] = queries.WithLabelValues(t.String(), "ok")
		m.queries[t][resultError] = queries.WithLabelValues(t.String(), "error")
		m.duration[t] = duration.WithLabelValues(t.String())
	}
	m.connections = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "percdb_connections",
		Help: "Open client connections.",
	})
	m.accepted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "percdb_connections_total",
		Help: "Client connections accepted since the node started.",
	})
	m.slow = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "percdb_slow_queries_total",
		Help: "Statements that took at least their session's long_query_time (written to the slow query log when slow_query_log is ON).",
	})
	m.reg.MustRegister(queries, duration, m.connections, m.accepted, m.slow,
		counterCollector{counters: counters},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.reg.MustRegister(kvm.collectors...)
	if oracle != nil {
		m.reg.MustRegister(oracleCounters(oracle)...)
	}
	if store != nil {
		// A SQL node of a cluster has no store; its KV nodes do.
		m.reg.MustRegister(statusserver.StoreCollectors(store)...)
	}
	return m
}

// Registry is the node's registry, which /metrics and the console's
// history gather.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Connected counts a client connection accepted and open.
func (m *Metrics) Connected() {
	m.connections.Inc()
	m.accepted.Inc()
}

// Disconnected counts a client connection closed.
func (m *Metrics) Disconnected() { m.connections.Dec() }

// SlowQuery counts a statement that took at least its session's
// long_query_time.
func (m *Metrics) SlowQuery() { m.slow.Inc() }

// SlowQueries returns how many statements SlowQuery counted.
func (m *Metrics) SlowQueries() uint64 {
	var d dto.Metric
	if m.slow.Write(&d) != nil {
		return 0
	}
	return uint64(d.GetCounter().GetValue())
}

// Queries returns the counter of statements of kind tp that failed
// (failed) or not; tests read it.
func (m *Metrics) Queries(tp lexical.Kind, failed bool) prometheus.Counter {
	if failed {
		return m.queries[tp][resultError]
	}
	return m.queries[tp][resultOK]
}

// Statement counts one statement of kind tp that took d and failed when
// failed.
func (m *Metrics) Statement(tp lexical.Kind, d time.Duration, failed bool) {
	r := resultOK
	if failed {
		r = resultError
	}
	m.queries[tp][r].Inc()
	m.duration[tp].Observe(d.Seconds())
}

// counterCollector serves the node's counters (Counters, which SHOW
// STATUS shows too) to Prometheus, reading them at scrape time. It
// describes nothing up front (an unchecked collector): the fast path's
// families follow its list of reasons.
type counterCollector struct{ counters Counters }

// Describe implements prometheus.Collector.
func (counterCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c counterCollector) Collect(ch chan<- prometheus.Metric) {
	descs := make(map[string]*prometheus.Desc)
	// A scrape has no context of its own; the counters bound what they
	// ask the KV nodes.
	for _, nc := range c.counters(context.Background()) {
		d, ok := descs[nc.Metric]
		if !ok {
			var labels []string
			if nc.Label != "" {
				labels = []string{nc.Label}
			}
			d = prometheus.NewDesc(nc.Metric, nc.Help, labels, nil)
			descs[nc.Metric] = d
		}
		vt := prometheus.CounterValue
		if nc.Gauge {
			vt = prometheus.GaugeValue
		}
		var lv []string
		if nc.Label != "" {
			lv = []string{nc.LabelValue}
		}
		v := float64(nc.Value)
		if nc.MetricScale != 0 {
			v *= nc.MetricScale
		}
		ch <- prometheus.MustNewConstMetric(d, vt, v, lv...)
	}
}

// oracleCounters are the oracle client's batching (tso.BatchStats) as
// counters read at scrape time: rate(timestamps) / rate(requests) is the
// mean batch, how many transactions one request to the oracle served, and
// rate(seconds) / rate(requests) its mean latency.
func oracleCounters(c *tso.BatchClient) []prometheus.Collector {
	counter := func(name, help string, f func(tso.BatchStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return f(c.Stats()) })
	}
	return []prometheus.Collector{
		counter("percdb_tso_requests_total", "Requests to the timestamp oracle (one serves every transaction waiting for a timestamp at that moment).",
			func(st tso.BatchStats) float64 { return float64(st.Calls) }),
		counter("percdb_tso_request_failures_total", "Requests to the timestamp oracle that failed.",
			func(st tso.BatchStats) float64 { return float64(st.Failures) }),
		counter("percdb_tso_timestamps_total", "Timestamps the oracle's requests served.",
			func(st tso.BatchStats) float64 { return float64(st.Timestamps) }),
		counter("percdb_tso_request_seconds_total", "Time spent in requests to the timestamp oracle.",
			func(st tso.BatchStats) float64 { return st.CallTime.Seconds() }),
	}
}
