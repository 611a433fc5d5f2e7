// Package cluster tests percdb as a cluster of processes: pd, KV nodes and
// a SQL node, each a process of the percdb binary (built by the tests) on
// free ports of 127.0.0.1, the way an operator runs them (docs/cluster.md).
//
// TestBankSurvivesKills runs the crash suite's workload (package
// tests/crash: bank transfers, items, orders that commit in two phases)
// over the MySQL protocol while a prober reads the bank's sum, and SIGKILLs
// and restarts the KV node that holds the data, a KV node that holds
// nothing, and pd; the crash suite's Checker then compares the data with
// what the clients were told (nothing acknowledged lost, nothing failed
// present, the sum invariant, indexes consistent). How long after each
// kill reads came back is logged, not asserted.
//
// TestUnreachableNodesGiveClearErrors keeps a KV node, then pd, down past
// the SQL node's retry deadlines (--kv-timeout, --pd-timeout) and checks
// that statements fail with MySQL errors 9002 and 9001 instead of hanging,
// and work again once the node is back.
//
// Waits are bounded generously (a process that does not start, a workload
// that makes no progress) but nothing is timed.
package cluster
