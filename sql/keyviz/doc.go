// Package keyviz keeps the key-space heatmap of a node: how many keys and
// bytes its requests read and wrote in each part of the key space (a
// table's rows, each of its indexes, the rest) over the last minutes, in
// fixed time columns, as TiDB's key visualizer and CockroachDB's hot
// ranges show it.
//
// A Recorder is a kv.RequestObserver: the node wraps its transaction
// layer's kv.Client with kv.Instrument, so every request it sends is
// counted where it went (its first key; a request's keys rarely span two
// tables) whether the regions live in this process or on KV nodes. Parts
// are told apart by the key layout of executor/tablecodec
// (t{table}_r..., t{table}_i{index}...); naming them (db.table, the
// index's name) is the caller's, from its catalog.
//
// With Options.ByRegion (a SQL node of a cluster), each part is split by
// the region the requests were sent to, so that the rows follow the
// regions' boundaries: "db.t rows" becomes one row per region holding
// them.
//
// Memory is bounded: Options.Columns columns of Options.Interval each,
// and in each at most Options.MaxSpans parts (the rest is counted under
// one overflow part).
package keyviz
