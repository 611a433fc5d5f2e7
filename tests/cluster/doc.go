// Package cluster tests percdb as a cluster of processes: pd, KV nodes and
// a SQL node, each a process of the percdb binary (built by the tests) on
// free ports of 127.0.0.1, the way an operator runs them (docs/cluster.md).
//
// TestBankSurvivesKills runs the crash suite's workload (package
// tests/crash: bank transfers, items, orders that commit in two phases)
// over the MySQL protocol against three KV nodes holding the region's
// three raft replicas, while a prober reads the bank's sum, and SIGKILLs
// the KV node that leads the region (restarted once the other two serve
// without it), then the next leader's (restarted after 0.5 s, so the first
// one, caught up from the log, is half of the quorum), then pd; the crash
// suite's Checker then compares the data with
// what the clients were told (nothing acknowledged lost, nothing failed
// present, the sum invariant, indexes consistent). How long after each
// kill reads came back is logged, not asserted.
//
// TestFollowerCatchesUpBySnapshot runs the same workload on KV nodes that
// truncate the raft log after 8 applied entries (--raft-log-compact 8),
// keeps a follower's node SIGKILLed while the leader truncates past it,
// restarts it and waits until it logs that it installed a snapshot, then
// SIGKILLs the leader's node, so that the workload goes on only if the
// restarted node caught up; the Checker then checks the data.
//
// TestUnreachableNodesGiveClearErrors (one KV node, one replica) keeps a
// KV node, then pd, down past
// the SQL node's retry deadlines (--kv-timeout, --pd-timeout) and checks
// that statements fail with MySQL errors 9002 and 9001 instead of hanging,
// and work again once the node is back.
//
// TestSplitUnderBank splits the bank's tables into several regions with
// SPLIT TABLE under the workload, waits until pd has spread their
// leaders over the three KV nodes, SIGKILLs the node leading the first
// region and restarts it; the Checker then checks the data.
//
// TestDeadlockAcrossStores makes sessions on two SQL nodes deadlock over
// rows whose regions are led by different KV nodes (two sessions, then
// three, then two again after the KV node holding the cluster's deadlock
// detector was stopped and the detector moved, then two whose first wait
// is in progress while the detector's node is stopped): exactly one
// session of each cycle gets 1213, the others commit, none gets 1205,
// though their innodb_lock_wait_timeout is 120 s.
//
// TestRegistersLinearizable has clients do autocommit single-key reads,
// writes and compare-and-sets (UPDATE ... WHERE v = old) on five rows, a
// region each, while pd balances the regions' leaderships, the KV node
// leading most of them is SIGKILLed, another is stopped with SIGTERM (it
// transfers its leaderships first) and a third is SIGKILLed; every
// operation is recorded with its call and return times and its outcome
// (unknown when the connection broke or the statement timed out
// mid-commit), and github.com/anishathalye/porcupine checks the history
// against a register per key (TestRegisterModel feeds the same check
// doctored histories it must reject). A history that is not linearizable
// fails the test, with porcupine's HTML visualization written to
// PERCDB_TEST_LOGDIR (or a temporary directory left in place).
//
// TestElleUnderKills runs the Elle list-append workload (package
// tests/elle) while the region's leader's KV node, the next leader's and
// pd are SIGKILLed and restarted; Elle's checker finds no anomaly that
// strong snapshot isolation forbids.
//
// TestReadAfterRewriteOnOtherNode and TestSQLNodeCutOffFromPD run two SQL
// nodes: reads on one never return a table's rows from before the
// other's TRUNCATE or ALTER TABLE rewrite once it committed, also while
// the reading node is cut off from pd (through a TCP proxy the test cuts),
// when they may fail with 9001 instead. TestReadAfterDropOnOtherNode does
// the same for DROP TABLE and DROP DATABASE (reads fail with 1146 once the
// drop committed). The TestMeasure tests measure and log, and run only
// with PERCDB_MEASURE=1.
//
// TestPDRestartWithinPDTimeout restarts pd within the SQL node's
// --pd-timeout while an insert waits for a timestamp, which it gets.
// TestKVNodeDiskFull (root only: a tmpfs) fills a KV node's disk: writes
// fail with 1021, reads, DELETE and DROP go on, and writes come back once
// space does.
//
// Waits are bounded generously (a process that does not start, a workload
// that makes no progress) but nothing is timed.
package cluster
