// Package nodemetrics is a SQL node's Prometheus metrics, in a registry of
// the node's own (never prometheus.DefaultRegisterer: two nodes in one
// process keep their own counts): the statements by kind and result and
// their durations (counted as statements end, by package sql's observed
// handler), the client connections, the slow queries, the node's requests
// to the KV layer by command (KV, which kv.Instrument wraps the
// transaction layer's kv.Client with, and which keeps the key-space
// heatmap), the oracle client's batching, the store's own collectors
// where the node has a store, and the node's counters.
//
// Its contract with package sql: the counters are sql's (its provider's
// nodeCounters, which SHOW STATUS reads too, so that a counter is defined
// once for both views); this package reads them at scrape time through
// Counters and serves them as an unchecked collector, whose families
// follow the list it is given.
package nodemetrics
