package nodemetrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/keyviz"
)

// KV counts and times the node's requests to the KV layer by command,
// and keeps the key-space heatmap of them (package keyviz; kv.Instrument
// wraps the transaction layer's kv.Client with it): on a single node the in-process store's commands, on a SQL node
// of a cluster the gRPC calls to its KV nodes, as the client saw them
// (queueing, network and retries of a region error included in a call's
// time only where the kv.Client does them: the txn layer's retries are
// separate requests).
type KV struct {
	duration [kv.CommandCount]prometheus.Observer
	requests [kv.CommandCount][2]prometheus.Counter // by result: ok, error
	keys     [kv.CommandCount]prometheus.Counter
	bytes    [kv.CommandCount]prometheus.Counter
	// collectors are the families to register.
	collectors []prometheus.Collector
	// heat is the key-space heatmap, told of every request too.
	heat *keyviz.Recorder
}

// kvDurationBuckets go from 10 us (an in-process point read) to 10 s (a
// lock wait or a long scan).
var kvDurationBuckets = prometheus.ExponentialBuckets(10e-6, 4, 9)

// NewKV makes the metrics; byRegion splits the heatmap's parts by region
// (a SQL node of a cluster: keyviz.Options.ByRegion).
func NewKV(byRegion bool) *KV {
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "percdb_kv_request_duration_seconds",
		Help:    "Time of the node's requests to the KV layer, by command, as the transaction layer saw them.",
		Buckets: kvDurationBuckets,
	}, []string{"command"})
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "percdb_kv_requests_total",
		Help: "The node's requests to the KV layer, by command and result (ok or error: a lock met, a conflict and a region error are errors too).",
	}, []string{"command", "result"})
	keys := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "percdb_kv_request_keys_total",
		Help: "Keys read or written by the node's KV requests, by command.",
	}, []string{"command"})
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "percdb_kv_request_bytes_total",
		Help: "Bytes of keys and values read or written by the node's KV requests, by command.",
	}, []string{"command"})
	m := &KV{collectors: []prometheus.Collector{duration, requests, keys, bytes}, heat: keyviz.New(keyviz.Options{ByRegion: byRegion})}
	for c := kv.Command(0); c < kv.CommandCount; c++ {
		name := c.String()
		m.duration[c] = duration.WithLabelValues(name)
		m.requests[c][resultOK] = requests.WithLabelValues(name, "ok")
		m.requests[c][resultError] = requests.WithLabelValues(name, "error")
		m.keys[c] = keys.WithLabelValues(name)
		m.bytes[c] = bytes.WithLabelValues(name)
	}
	return m
}

// ObserveRequest implements kv.RequestObserver.
func (m *KV) ObserveRequest(r kv.RequestStats) {
	if r.Command >= kv.CommandCount {
		return
	}
	result := resultOK
	if r.Err != nil {
		result = resultError
	}
	m.requests[r.Command][result].Inc()
	m.duration[r.Command].Observe(r.Duration.Seconds())
	m.keys[r.Command].Add(float64(r.Keys))
	m.bytes[r.Command].Add(float64(r.Bytes))
	m.heat.ObserveRequest(r)
}

// Heat returns the key-space heatmap of the requests.
func (m *KV) Heat() *keyviz.Recorder { return m.heat }
