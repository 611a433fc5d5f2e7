package sql

import (
	"context"
	"sync/atomic"

	"github.com/percdb/percdb/sql/fastpath"
	"github.com/percdb/percdb/sql/nodemetrics"
)

// Help texts of the counter families, one per family.
const (
	helpFastHits                 = "Statements the fast path ran without go-mysql-server."
	helpFastFall                 = "Statements the fast path left to go-mysql-server, by reason."
	helpFastAvoided              = "Oracle calls the fast path saved (autocommit point reads at the newest version)."
	helpFastPlans                = "Plans in the fast path's plan cache."
	helpFastTextPlans            = "Text statements the fast path took with a cached template's shape instead of parsing them (percdb_text_plan_cache)."
	helpTextPlanCache            = "Text SELECTs on the go-mysql-server path, by what the text plan cache did (textplancache.go): hit, miss, uncacheable, recheck, as for prepared statements."
	helpPlanCache                = "Executions of prepared statements on the go-mysql-server path, by what the plan cache did: hit (ran a cached plan), miss (analysed and cached the plan), uncacheable (analysed, the plan cannot be cached), recheck (new values changed a cached plan's ranges, analysed afresh)."
	helpGroupedSubqueries        = "Correlated scalar subqueries run once per statement, grouped by their correlated columns, instead of once per outer row."
	helpLookupAggs               = "Coprocessor programs that aggregated the inner rows of a batch of a lookup join per join key (partial aggregates under the join)."
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
	helpGCCompactedBytes         = "Bytes of sstables in the key ranges compacted after GC (Pebble's estimate before each compaction: what the compactions rewrote)."
	helpSnapshotMovesPastChanges = "Snapshot moves (of percdb_snapshot_moves_total{outcome=\"moved\"}) made although an earlier read had changed, because the change left what the transaction read of it (its columns) equal."
)

// nodeCounters returns the node's counters with their current values.
// On a SQL node of a cluster some come from the KV nodes, asked within
// ctx.
func (p *DatabaseProvider) nodeCounters(ctx context.Context) []nodemetrics.Counter {
	out := make([]nodemetrics.Counter, 0, fastpath.NumReasons+16)
	out = append(out, nodemetrics.Counter{Status: statusOracleCalls, Metric: "percdb_oracle_calls_total", Help: helpOracleCalls, Value: p.store.OracleCalls()})
	if fp := p.fast; fp != nil {
		out = append(out,
			nodemetrics.Counter{Status: statusFastHits, Metric: "percdb_fastpath_hits_total", Help: helpFastHits, Value: fp.hits.Load()},
			nodemetrics.Counter{Status: statusOracleAvoided, Metric: "percdb_oracle_calls_avoided_total", Help: helpFastAvoided, Value: fp.avoided.Load()},
			nodemetrics.Counter{Status: statusFastTextPlans, Metric: "percdb_fastpath_text_plan_hits_total", Help: helpFastTextPlans, Value: fp.textHits.Load()},
			nodemetrics.Counter{Status: statusFastPlansCache, Metric: "percdb_fastpath_plans_cached", Help: helpFastPlans, Gauge: true, Value: uint64(fp.plans.Len())},
		)
		for r := fastpath.Reason(0); r < fastpath.NumReasons; r++ {
			out = append(out, nodemetrics.Counter{Status: statusFallPrefix + fastpath.ReasonNames[r], Metric: "percdb_fastpath_fallthroughs_total",
				Help: helpFastFall, Label: "reason", LabelValue: fastpath.ReasonNames[r], Value: fp.fallthroughs[r].Load()})
		}
	}
	for _, pc := range []struct {
		status, metric, help string
		st                   *planCacheStats
	}{
		{"Percdb_plan_cache_", "percdb_plan_cache_executions_total", helpPlanCache, &p.plans},
		{"Percdb_text_plan_cache_", "percdb_text_plan_cache_executions_total", helpTextPlanCache, &p.textPlans},
	} {
		for _, c := range []struct {
			outcome string
			n       *atomic.Uint64
		}{{"hit", &pc.st.hits}, {"miss", &pc.st.misses}, {"uncacheable", &pc.st.uncacheable}, {"recheck", &pc.st.rechecks}} {
			out = append(out, nodemetrics.Counter{Status: pc.status + c.outcome, Metric: pc.metric,
				Help: pc.help, Label: "outcome", LabelValue: c.outcome, Value: c.n.Load()})
		}
	}
	out = append(out,
		nodemetrics.Counter{Status: "Percdb_lookup_join_batches", Metric: "percdb_lookup_join_batches_total", Help: helpLookupBatches, Value: p.lookups.batches.Load()},
		nodemetrics.Counter{Status: "Percdb_lookup_join_keys", Metric: "percdb_lookup_join_keys_total", Help: helpLookupKeys, Value: p.lookups.keys.Load()},
		nodemetrics.Counter{Status: "Percdb_grouped_subqueries", Metric: "percdb_grouped_subqueries_total", Help: helpGroupedSubqueries, Value: p.groupedRuns.Load()},
		nodemetrics.Counter{Status: "Percdb_lookup_aggregates", Metric: "percdb_lookup_aggregates_total", Help: helpLookupAggs, Value: p.lookupAggs.Load()},
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
		out = append(out, nodemetrics.Counter{Status: c.status, Metric: c.metric, Help: c.help, Label: c.label, LabelValue: c.value, Value: c.v})
	}
	if lw, ok := p.lockWaits.counts(ctx); ok {
		// The stores' lock queues, under InnoDB's names, which MySQL
		// monitoring reads: the node's own store's, or on a SQL node of
		// a cluster the KV nodes' summed.
		out = append(out,
			nodemetrics.Counter{Status: "Innodb_row_lock_current_waits", Metric: "percdb_kv_lock_waiting", Help: helpLockWaiting, Gauge: true, Value: uint64(max(lw.Waiting, 0))},
			nodemetrics.Counter{Status: "Innodb_row_lock_waits", Metric: "percdb_kv_lock_waits_total", Help: helpLockWaits, Value: lw.Waits},
			nodemetrics.Counter{Status: "Innodb_row_lock_time", Metric: "percdb_kv_lock_wait_seconds_total", Help: helpLockWaitTime, Value: uint64(lw.WaitTime.Milliseconds()), MetricScale: 1e-3},
		)
	}
	if ks := p.lockWaits.store; ks != nil {
		gcc := ks.GCCompactionStats()
		out = append(out,
			nodemetrics.Counter{Status: "Percdb_gc_compactions", Metric: "percdb_kv_gc_compactions_total", Help: helpGCCompactions, Value: gcc.Compactions},
			nodemetrics.Counter{Status: "Percdb_gc_compaction_time", Metric: "percdb_kv_gc_compaction_seconds_total", Help: helpGCCompactionTime, Value: uint64(gcc.Time.Milliseconds()), MetricScale: 1e-3},
			nodemetrics.Counter{Status: "Percdb_gc_compacted_bytes", Metric: "percdb_kv_gc_compacted_bytes_total", Help: helpGCCompactedBytes, Value: gcc.Bytes},
		)
	}
	if p.gc != nil {
		out = append(out, p.gc.counters()...)
	}
	return out
}
