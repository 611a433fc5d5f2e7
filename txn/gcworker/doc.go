// Package gcworker is percdb's MVCC garbage collector: it decides the GC
// safe point and drives the stores' collection of what no reader can need
// any more, region by region, through kv.GCClient, so that it works the
// same whether the regions live in this process or on other KV nodes.
//
// # The safe point
//
// A run first computes a candidate:
//
//	candidate = min(now - life time, oldest running start_ts - 1,
//	                every service safe point)
//
// where now is a timestamp from the oracle, the life time is
// percdb_gc_life_time (Settings) and the running start_ts are reported by
// an ActiveTxnSource (txn.Store.ActiveTxns on a single node, which enters
// a transaction before it fetches its start_ts, so that one on its way is
// counted too). A transaction that has been running longer than
// Settings.MaxTxnWait no longer holds the safe point back (TiDB's
// tidb_gc_max_wait_time): past it, its reads fail with MySQL error 9006
// and its locks are rolled back, rather than letting garbage pile up
// without bound. A service safe point (ServiceSafePointSource) is a
// timestamp a service outside the transactions still reads from, such as
// a change feed's position: the safe point stays at or below it (the
// version visible at it is kept, and every newer one) until the entry
// expires, which it does when its service stops renewing it.
//
// The candidate goes to a SafePointSource, which returns the safe point in
// force: never lower than before, persisted. On a single node it is
// LocalSafePoint, a key in the store written in a transaction. In a
// cluster it is pd (pd.GCSafePoints): every SQL node reports the oldest
// start_ts of its running transactions to pd under a lease
// (ReportActive), and pd lowers each candidate proposed to it to every
// report minus one before it raises the safe point (kept in etcd), so
// that no node's collector passes another node's transaction.
//
// # A run
//
// A run at safe point sp has three phases, each restartable, in this
// order (the safe point is advanced between the first and the second):
//
//  1. Resolve locks: every lock with start_ts <= sp, region by region
//     (kv ScanLock), is settled through the transaction layer's
//     LockResolver: a committed primary rolls its secondaries forward, a
//     dead one is rolled back. A lock still alive belongs to a
//     transaction beyond MaxTxnWait (or to a node that does not report);
//     its primary is rolled back. The stores refuse prewrites at or below
//     the safe point once they have it, so no new lock appears below it.
//  2. Delete ranges: the ranges a DDL left behind (a dropped table or
//     index, a truncated or rewritten table; DeleteRangeSource) whose DDL
//     committed below sp are destroyed physically (kv
//     UnsafeDestroyRange: Pebble range deletions over the data, lock and
//     write spaces, then a compaction of the range), and their records
//     removed. No reader can see them (readers below sp are refused,
//     readers above see the DDL) and no writer can write them (every
//     transaction that started before the DDL committed has ended, or sp
//     could not have passed it). They go before the version pass, which
//     then does not walk them (tikv#11902: dropping a large table took
//     hours over its tombstones).
//     Then Config.Sweep, when set, removes what the layers above keep
//     that the safe point made useless (package observe's acks of rows
//     deleted and observed below it).
//  3. Old versions: each region gets GC requests at sp (kv.GCRequest),
//     each examining a bounded batch of keys and resuming at the key the
//     last one named, with a pause between batches that holds the scan to
//     Config.KeysPerSecond. A region with nothing written since a pass
//     that left no version above its safe point answers at once (quiet
//     regions are not rescanned).
//
// The stores must know sp before anything is destroyed, so that they
// refuse the reads below it (error 9006) and the prewrites at or below
// it: a single node's LocalSafePoint is the store's own safe point, and in
// a cluster every KV node learns pd's with each heartbeat, as TiKV reads
// PD's; every GC request carries it too (its raise is replicated through
// the region's raft group), and a KV node raises its store's to pd's
// before it destroys a range.
//
// A run cut short (its context cancelled, the process killed) leaves
// everything it did correct, and the next run does the rest: each phase
// is idempotent at a given safe point, and the safe point only grows.
package gcworker
