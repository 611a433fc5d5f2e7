package gcworker

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/percdb/percdb/txn"
)

// ReportInterval is how often a SQL node of a cluster reports its oldest
// running start_ts (ReportActive), and ReportTTL how long a report holds
// the safe point back unless renewed: a node that dies stops holding GC
// back after it. A transaction starts above now minus the GC life time
// (at least a second), so one that began since the last report cannot be
// passed by a safe point computed meanwhile.
const (
	ReportInterval = 500 * time.Millisecond
	ReportTTL      = 10 * time.Second
)

// OldestStartTS returns the oldest start_ts of active that the safe point
// must not pass (0: none): a transaction running since before cutoff
// (longer than Settings.MaxTxnWait) no longer counts, nor one still
// fetching its start_ts, which will be above every safe point computed
// now.
func OldestStartTS(active []txn.ActiveTxn, cutoff time.Time) uint64 {
	var out uint64
	for _, a := range active {
		if a.StartTS == 0 || a.Since.Before(cutoff) {
			continue
		}
		if out == 0 || a.StartTS < out {
			out = a.StartTS
		}
	}
	return out
}

// ReportActive reports, every ReportInterval until ctx ends, the oldest
// start_ts of the node's running transactions (OldestStartTS, with
// settings' MaxTxnWait) through report: in a cluster the safe point is
// decided where every SQL node's report is (pd), so that no node's
// collector passes another node's transaction. report answers whether
// the node is the GC leader, which ReportActive stores in leader (a
// failed report clears it: the leadership may lapse). A failed report is
// logged; the next one tries again.
func ReportActive(ctx context.Context, active ActiveTxnSource, settings func() Settings, report func(ctx context.Context, ts uint64) (bool, error),
	leader *atomic.Bool, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	t := time.NewTicker(ReportInterval)
	defer t.Stop()
	for {
		wait := settings().MaxTxnWait
		if wait <= 0 {
			wait = DefaultMaxTxnWait
		}
		ts := OldestStartTS(active.ActiveTxns(), time.Now().Add(-wait))
		lead, err := report(ctx, ts)
		if err != nil && ctx.Err() == nil {
			logger.Warn("gc: report the oldest running start_ts", "start_ts", ts, "err", err)
		}
		if leader.Swap(lead && err == nil) != (lead && err == nil) {
			logger.Info("gc: leadership of the cluster's garbage collection", "leader", lead && err == nil)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
