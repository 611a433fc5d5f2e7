// Package statusserver is percdb's status port: an HTTP server, apart
// from the MySQL port, for operators and their tools (TiDB's 10080 is
// the model). It serves
//
//   - /status: JSON with the version, the git revision the binary was
//     built from (runtime/debug.ReadBuildInfo), the uptime and the open
//     connections; 200 while the node serves, 503 once it is shutting
//     down, so that a load balancer can use it as a health check;
//   - /metrics: the Prometheus text format of a registry the caller owns
//     (never the process-wide default registry, so that two nodes in one
//     process keep their own counts);
//   - /debug/pprof/: Go's profiler (net/http/pprof's handlers, mounted on
//     this server's own mux rather than http.DefaultServeMux);
//   - every other path, when Config.Console is set: the web console
//     (package console).
//
// It also has the Prometheus collector of Pebble's own metrics
// (PebbleCollector), which reads them at scrape time, and the KV nodes'
// answer to the sizes of key ranges (SizesHandler, sizes.go).
//
// Every role serves one: the SQL node (package sql starts it), pd and
// the KV nodes (cmd/percdb). The package depends downward only (on kv,
// for a store's figures): each role hands it what to report, and
// nothing here knows of sessions, SQL, regions or pd.
package statusserver
