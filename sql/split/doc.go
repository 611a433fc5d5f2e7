// Package split runs TiDB's region statements, which GMS does not parse:
// SPLIT TABLE t ... BETWEEN ... AND ... REGIONS n, SPLIT TABLE t ... BY
// ..., and SHOW TABLE t REGIONS (Parse, then Run). A split cuts regions
// through the key-value client's kv.Splitter (on the single node the
// store's region map, in a cluster the region's leader through raft);
// KeyString writes a region boundary as TiDB does, for SHOW TABLE ...
// REGIONS, the region status table and the console.
//
// It depends on the catalog, tablemeta, the executor's key codec and
// kv.Client; what it needs of the SQL node (the newest catalog, a table's
// metadata, the client, the mapping of errors to MySQL's) it sees
// through Node, which package sql implements (split_exec.go, which also
// runs a statement for the handler).
package split
