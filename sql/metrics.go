package sql

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/percdb/percdb/internal/statusserver"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/tso"
)

// stmtType is the kind of a statement, by its first word, for the
// queries and duration metrics.
type stmtType uint8

const (
	stmtOther stmtType = iota
	stmtSelect
	stmtInsert
	stmtUpdate
	stmtDelete
	stmtReplace
	stmtBegin
	stmtCommit
	stmtRollback
	stmtSet
	stmtShow
	stmtUse
	stmtDDL
	numStmtTypes
)

// stmtTypeNames are the values of the type label.
var stmtTypeNames = [numStmtTypes]string{
	stmtOther: "other", stmtSelect: "select", stmtInsert: "insert", stmtUpdate: "update",
	stmtDelete: "delete", stmtReplace: "replace", stmtBegin: "begin", stmtCommit: "commit",
	stmtRollback: "rollback", stmtSet: "set", stmtShow: "show", stmtUse: "use", stmtDDL: "ddl",
}

// classifyStmt returns the type of query by its first word, after blanks,
// opening parentheses and comments. Every statement is classified as it
// ends, so it compares the text only with the words of its first
// letter, and does not look for the word's end first.
func classifyStmt(query string) stmtType {
	q := lexical.TrimLeading(query, " \t\r\n(")
	if q == "" {
		return stmtOther
	}
	// is reports whether q's first word is word, a lower-case one.
	is := func(word string) bool {
		return len(q) >= len(word) && equalFoldASCII(q[:len(word)], word) &&
			(len(q) == len(word) || !lexical.IsWordByte(q[len(word)]))
	}
	switch q[0] | 0x20 {
	case 's':
		switch {
		case is("select"):
			return stmtSelect
		case is("set"):
			return stmtSet
		case is("show"):
			return stmtShow
		case is("start"):
			return stmtBegin
		}
	case 'i':
		if is("insert") {
			return stmtInsert
		}
	case 'u':
		switch {
		case is("update"):
			return stmtUpdate
		case is("use"):
			return stmtUse
		}
	case 'd':
		switch {
		case is("delete"):
			return stmtDelete
		case is("drop"):
			return stmtDDL
		}
	case 'r':
		switch {
		case is("replace"):
			return stmtReplace
		case is("rollback"):
			return stmtRollback
		case is("rename"):
			return stmtDDL
		}
	case 'b':
		if is("begin") {
			return stmtBegin
		}
	case 'c':
		switch {
		case is("commit"):
			return stmtCommit
		case is("create"):
			return stmtDDL
		}
	case 'w':
		if is("with") {
			return stmtSelect
		}
	case 'a':
		if is("alter") {
			return stmtDDL
		}
	case 't':
		if is("truncate") {
			return stmtDDL
		}
	}
	return stmtOther
}

// equalFoldASCII is strings.EqualFold for ASCII words of equal length.
func equalFoldASCII(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if a[i]|0x20 != b[i] {
			return false
		}
	}
	return true
}

// durationBuckets are the upper bounds of the query duration histogram,
// in seconds: from a fast-path point read (tens of microseconds) to the
// default long_query_time and beyond.
var durationBuckets = []float64{
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
}

// nodeMetrics are a node's Prometheus metrics, in a registry of the node's
// own (never prometheus.DefaultRegisterer: two nodes in one process keep
// their own counts). The statement metrics are counted as statements end;
// everything else is read at scrape time from where it is kept.
type nodeMetrics struct {
	reg *prometheus.Registry
	// queries and duration are the children of their vectors for every
	// type (and result), resolved once so that a statement costs no label
	// lookup.
	queries     [numStmtTypes][2]prometheus.Counter
	duration    [numStmtTypes]prometheus.Observer
	connections prometheus.Gauge
	accepted    prometheus.Counter
	slow        prometheus.Counter
}

// Values of the result label of percdb_queries_total.
const (
	resultOK    = 0
	resultError = 1
)

// newNodeMetrics makes the metrics of a node whose provider is p, whose
// store is store (nil on a SQL node of a cluster), whose KV requests kvm
// counts and whose timestamps oracle fetches.
func newNodeMetrics(p *DatabaseProvider, store *kv.Store, kvm *kvMetrics, oracle *tso.BatchClient) *nodeMetrics {
	m := &nodeMetrics{reg: prometheus.NewRegistry()}
	queries := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "percdb_queries_total",
		Help: "Statements run, by type (the statement's first word) and result (ok or error).",
	}, []string{"type", "result"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "percdb_query_duration_seconds",
		Help:    "Time from a statement's arrival to its last result packet, by type.",
		Buckets: durationBuckets,
	}, []string{"type"})
	for t := stmtType(0); t < numStmtTypes; t++ {
		m.queries[t][resultOK] = queries.WithLabelValues(stmtTypeNames[t], "ok")
		m.queries[t][resultError] = queries.WithLabelValues(stmtTypeNames[t], "error")
		m.duration[t] = duration.WithLabelValues(stmtTypeNames[t])
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
		counterCollector{p: p},
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

// statement counts one statement of type tp that took d and failed when
// failed.
func (m *nodeMetrics) statement(tp stmtType, d time.Duration, failed bool) {
	r := resultOK
	if failed {
		r = resultError
	}
	m.queries[tp][r].Inc()
	m.duration[tp].Observe(d.Seconds())
}

// counterCollector serves the node's counters (nodeCounters, which SHOW
// STATUS shows too) to Prometheus, reading them at scrape time. It
// describes nothing up front (an unchecked collector): the fast path's
// families follow its list of reasons.
type counterCollector struct{ p *DatabaseProvider }

// Describe implements prometheus.Collector.
func (counterCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c counterCollector) Collect(ch chan<- prometheus.Metric) {
	descs := make(map[string]*prometheus.Desc)
	// A scrape has no context of its own; nodeCounters bounds what it
	// asks the KV nodes.
	for _, nc := range c.p.nodeCounters(context.Background()) {
		d, ok := descs[nc.metric]
		if !ok {
			var labels []string
			if nc.label != "" {
				labels = []string{nc.label}
			}
			d = prometheus.NewDesc(nc.metric, nc.help, labels, nil)
			descs[nc.metric] = d
		}
		vt := prometheus.CounterValue
		if nc.gauge {
			vt = prometheus.GaugeValue
		}
		var lv []string
		if nc.label != "" {
			lv = []string{nc.labelValue}
		}
		v := float64(nc.value)
		if nc.metricScale != 0 {
			v *= nc.metricScale
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
