package sql

import (
	"context"
	"sync/atomic"

	"github.com/percdb/percdb/sql/fastpath"
)

// nodeCounter is one of the node's counters (or gauges) as both of its
// views show it: SHOW STATUS under status, /metrics on the status port as
// the Prometheus family metric, with label=labelValue when label is set.
// Both views read the same list (nodeCounters), so a counter is added in
// one place and cannot mean different things in the two.
type nodeCounter struct {
	status     string
	metric     string
	help       string
	label      string
	labelValue string
	// gauge marks a value that goes down as well as up.
	gauge bool
	value uint64
	// metricScale, when not 0, multiplies value for /metrics: a time
	// SHOW STATUS gives in milliseconds, as MySQL does, is in seconds
	// there, as Prometheus' conventions ask.
	metricScale float64
}

// Help texts of the counter families, one per family.
const (
	helpFastHits                 = "Statements the fast path ran without go-mysql-server."
	helpFastFall                 = "Statements the fast path left to go-mysql-server, by reason."
	helpFastAvoided              = "Oracle calls the fast path saved (autocommit point reads at the newest version)."
	helpFastPlans                = "Plans in the fast path's plan cache."
	helpPlanCache                = "Executions of prepared statements on the go-mysql-server path, by what the plan cache did: hit (ran a cached plan), miss (analysed and cached the plan), uncacheable (analysed, the plan cannot be cached), recheck (new values changed a cached plan's ranges, analysed afresh)."
	helpGroupedSubqueries        = "Correlated scalar subqueries run once per statement, grouped by their correlated columns, instead of once per outer row."
	helpLookupBatches            = "Batch reads of lookup joins: the inner rows of many outer rows read at once by primary key."
	helpLookupKeys               = "Primary keys the batch reads of lookup joins looked up (repeats within a batch counted once)."
	helpOracleCalls              = "Timestamps fetched from the oracle by the transaction layer."
	helpTxns                     = "Transaction outcomes: committed (read-only ones included), rolled_back, conflicted (a write conflict at commit, MySQL 1213), failed (any other commit error)."
	helpCommitPhases             = "Committed transactions that wrote, by protocol: 1pc (prewrite and commit in one request) or 2pc."
	helpLocks                    = "Locks of other transactions met by reads and writes and settled by the lock resolver, by outcome: gone (committed or rolled back), read_past (read the version below it), alive (waited for)."
	helpSnapshotMoves            = "Statements of pessimistic transactions that met a commit newer than their snapshot, by outcome: moved (the transaction's earlier reads were unchanged, its snapshot moved and the statement ran again), refused (an earlier read changed: 1213)."
	helpLockWaitTimeouts         = "Pessimistic lock requests that gave up after innodb_lock_wait_timeout (MySQL error 1205)."
	helpDeadlocks                = "Pessimistic lock requests refused as the victim of a deadlock (MySQL error 1213; the transaction was rolled back)."
	helpLockWaiting              = "Lock requests waiting in the stores' queues now (on a SQL node of a cluster, every KV node's that answered)."
	helpLockWaits                = "Lock requests queued behind another transaction's lock in the stores (a wait longer than a store's wait slice, 1 s, counts once per slice)."
	helpLockWaitTime             = "Time lock requests spent waiting in the stores' queues."
	helpGCCompactions            = "Compactions of the key ranges GC cleaned, run once GC has deleted enough versions there, so that reads stop stepping over their tombstones."
	helpGCCompactionTime         = "Time spent in compactions of the key ranges GC cleaned."
	helpSnapshotMovesPastChanges = "Snapshot moves (of percdb_snapshot_moves_total{outcome=\"moved\"}) made although an earlier read had changed, because the change left what the transaction read of it (its columns) equal."
)

// nodeCounters returns the node's counters with their current values.
// On a SQL node of a cluster some come from the KV nodes, asked within
// ctx.
func (p *DatabaseProvider) nodeCounters(ctx context.Context) []nodeCounter {
	out := make([]nodeCounter, 0, fastpath.NumReasons+16)
	out = append(out, nodeCounter{status: statusOracleCalls, metric: "percdb_oracle_calls_total", help: helpOracleCalls, value: p.store.OracleCalls()})
	if fp := p.fast; fp != nil {
		out = append(out,
			nodeCounter{status: statusFastHits, metric: "percdb_fastpath_hits_total", help: helpFastHits, value: fp.hits.Load()},
			nodeCounter{status: statusOracleAvoided, metric: "percdb_oracle_calls_avoided_total", help: helpFastAvoided, value: fp.avoided.Load()},
			nodeCounter{status: statusFastPlansCache, metric: "percdb_fastpath_plans_cached", help: helpFastPlans, gauge: true, value: uint64(fp.plans.Len())},
		)
		for r := fastpath.Reason(0); r < fastpath.NumReasons; r++ {
			out = append(out, nodeCounter{status: statusFallPrefix + fastpath.ReasonNames[r], metric: "percdb_fastpath_fallthroughs_total",
				help: helpFastFall, label: "reason", labelValue: fastpath.ReasonNames[r], value: fp.fallthroughs[r].Load()})
		}
	}
	for _, c := range []struct {
		outcome string
		n       *atomic.Uint64
	}{{"hit", &p.plans.hits}, {"miss", &p.plans.misses}, {"uncacheable", &p.plans.uncacheable}, {"recheck", &p.plans.rechecks}} {
		out = append(out, nodeCounter{status: "Percdb_plan_cache_" + c.outcome, metric: "percdb_plan_cache_executions_total",
			help: helpPlanCache, label: "outcome", labelValue: c.outcome, value: c.n.Load()})
	}
	out = append(out,
		nodeCounter{status: "Percdb_lookup_join_batches", metric: "percdb_lookup_join_batches_total", help: helpLookupBatches, value: p.lookups.batches.Load()},
		nodeCounter{status: "Percdb_lookup_join_keys", metric: "percdb_lookup_join_keys_total", help: helpLookupKeys, value: p.lookups.keys.Load()},
		nodeCounter{status: "Percdb_grouped_subqueries", metric: "percdb_grouped_subqueries_total", help: helpGroupedSubqueries, value: p.groupedRuns.Load()},
	)
	st := p.store.Stats()
	for _, c := range []struct {
		status, metric, help, label, value string
		v                                  uint64
	}{
		{"Percdb_transactions_committed", "percdb_transactions_total", helpTxns, "result", "committed", st.Committed},
		{"Percdb_transactions_rolled_back", "percdb_transactions_total", helpTxns, "result", "rolled_back", st.RolledBack},
		{"Percdb_transactions_conflicted", "percdb_transactions_total", helpTxns, "result", "conflicted", st.Conflicted},
		{"Percdb_transactions_failed", "percdb_transactions_total", helpTxns, "result", "failed", st.Failed},
		{"Percdb_commits_1pc", "percdb_commits_total", helpCommitPhases, "protocol", "1pc", st.OnePC},
		{"Percdb_commits_2pc", "percdb_commits_total", helpCommitPhases, "protocol", "2pc", st.TwoPC},
		{"Percdb_locks_resolved_gone", "percdb_lock_resolutions_total", helpLocks, "outcome", "gone", st.LocksGone},
		{"Percdb_locks_resolved_read_past", "percdb_lock_resolutions_total", helpLocks, "outcome", "read_past", st.LocksReadPast},
		{"Percdb_locks_resolved_alive", "percdb_lock_resolutions_total", helpLocks, "outcome", "alive", st.LocksAlive},
		{"Percdb_snapshot_moves", "percdb_snapshot_moves_total", helpSnapshotMoves, "outcome", "moved", st.SnapshotsMoved},
		{"Percdb_snapshot_moves_refused", "percdb_snapshot_moves_total", helpSnapshotMoves, "outcome", "refused", st.SnapshotMovesRefused},
		{"Percdb_snapshot_moves_past_changes", "percdb_snapshot_moves_past_changes_total", helpSnapshotMovesPastChanges, "", "", st.SnapshotMovesPastChanges},
		{"Percdb_lock_wait_timeouts", "percdb_lock_wait_timeouts_total", helpLockWaitTimeouts, "", "", st.LockWaitTimeouts},
		{"Innodb_deadlocks", "percdb_deadlocks_total", helpDeadlocks, "", "", st.Deadlocks},
	} {
		out = append(out, nodeCounter{status: c.status, metric: c.metric, help: c.help, label: c.label, labelValue: c.value, value: c.v})
	}
	if lw, ok := p.lockWaits.counts(ctx); ok {
		// The stores' lock queues, under InnoDB's names, which MySQL
		// monitoring reads: the node's own store's, or on a SQL node of
		// a cluster the KV nodes' summed.
		out = append(out,
			nodeCounter{status: "Innodb_row_lock_current_waits", metric: "percdb_kv_lock_waiting", help: helpLockWaiting, gauge: true, value: uint64(max(lw.Waiting, 0))},
			nodeCounter{status: "Innodb_row_lock_waits", metric: "percdb_kv_lock_waits_total", help: helpLockWaits, value: lw.Waits},
			nodeCounter{status: "Innodb_row_lock_time", metric: "percdb_kv_lock_wait_seconds_total", help: helpLockWaitTime, value: uint64(lw.WaitTime.Milliseconds()), metricScale: 1e-3},
		)
	}
	if ks := p.lockWaits.store; ks != nil {
		gcc := ks.GCCompactionStats()
		out = append(out,
			nodeCounter{status: "Percdb_gc_compactions", metric: "percdb_kv_gc_compactions_total", help: helpGCCompactions, value: gcc.Compactions},
			nodeCounter{status: "Percdb_gc_compaction_time", metric: "percdb_kv_gc_compaction_seconds_total", help: helpGCCompactionTime, value: uint64(gcc.Time.Milliseconds()), metricScale: 1e-3},
		)
	}
	if p.gc != nil {
		out = append(out, p.gc.counters()...)
	}
	return out
}
