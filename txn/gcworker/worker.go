package gcworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/percdb/percdb/internal/ctxtime"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/txn"
)

// Settings are the knobs a run reads when it starts.
type Settings struct {
	// LifeTime is how long versions stay readable after they are
	// overwritten (percdb_gc_life_time).
	LifeTime time.Duration
	// RunInterval is the time between runs (percdb_gc_run_interval).
	RunInterval time.Duration
	// MaxTxnWait bounds how long one running transaction holds the safe
	// point back; 0 means DefaultMaxTxnWait.
	MaxTxnWait time.Duration
}

// Defaults of Settings, TiDB's.
const (
	DefaultLifeTime    = 10 * time.Minute
	DefaultRunInterval = 10 * time.Minute
	DefaultMaxTxnWait  = 24 * time.Hour
)

// DefaultKeysPerSecond is Config.KeysPerSecond when left zero: enough to
// collect a table of ten million keys in a minute, little enough that the
// scan takes a fraction of one core.
const DefaultKeysPerSecond = 200_000

// SafePointSource decides and keeps the safe point in force (doc.go).
type SafePointSource interface {
	// SafePoint returns the safe point in force, 0 when there is none.
	SafePoint(ctx context.Context) (uint64, error)
	// Advance proposes candidate and returns the safe point in force
	// afterwards: never lower than before, and persisted before it is
	// returned.
	Advance(ctx context.Context, candidate uint64) (uint64, error)
}

// ActiveTxnSource reports the running transactions whose start_ts the
// safe point must not pass (txn.Store.ActiveTxns on a single node).
type ActiveTxnSource interface {
	ActiveTxns() []txn.ActiveTxn
}

// ServiceSafePoint is a timestamp a service outside the transactions
// needs to read from, such as a change feed's position (TiDB's service
// GC safe points, CockroachDB's protected timestamps): the safe point
// does not pass it until it expires.
type ServiceSafePoint struct {
	// ID names the service's entry.
	ID string
	// TS is the timestamp the service still reads at or after: the
	// safe point stays at or below it.
	TS uint64
	// Expires is when the entry stops holding GC back if its service
	// has not renewed it (the service died or went away).
	Expires time.Time
}

// ServiceSafePointSource lists the services' safe points in force.
type ServiceSafePointSource interface {
	// ServiceSafePoints returns the entries that have not expired at
	// now (a source may forget the expired ones).
	ServiceSafePoints(ctx context.Context, now time.Time) ([]ServiceSafePoint, error)
}

// DeleteRange is a key range a DDL left for physical deletion.
type DeleteRange struct {
	// ID names the range to its source (for Done).
	ID         []byte
	Start, End []byte
	// NotBefore is a timestamp at or after the DDL's commit: the range
	// is destroyed once the safe point is above it.
	NotBefore uint64
	// What says which DDL left it, for the log.
	What string
}

// DeleteRangeSource lists the ranges DDL left behind.
type DeleteRangeSource interface {
	// Due returns the ranges whose NotBefore is below safePoint.
	Due(ctx context.Context, safePoint uint64) ([]DeleteRange, error)
	// Done forgets a range that was destroyed.
	Done(ctx context.Context, r DeleteRange) error
}

// Config is what a Worker works with.
type Config struct {
	Client kv.GCClient
	// Txns is the transaction layer; its LockResolver settles old locks.
	Txns   *txn.Store
	Oracle txn.Oracle
	// SafePoints decides the safe point; Active reports this node's
	// running transactions; Ranges (optional) the DDL's delete ranges.
	SafePoints SafePointSource
	Active     ActiveTxnSource
	Ranges     DeleteRangeSource
	// Services (optional) holds the safe point at or below the
	// services' safe points, such as change feeds' positions.
	Services ServiceSafePointSource
	// Settings returns the settings in force; read at each run.
	Settings func() Settings
	// Sweep (optional) removes what the layers above keep that the safe
	// point made useless and the version pass cannot tell (package
	// observe's acknowledgements of deleted rows). It runs after the
	// delete ranges, before the version pass; its failure is logged and
	// does not stop the run (the next run sweeps again).
	Sweep func(ctx context.Context, safePoint uint64) error
	// IsLeader (optional) says whether this node runs the collector now:
	// of a cluster's SQL nodes only the GC leader does (ReportActive); Run
	// skips its runs while it is not (RunOnce runs regardless).
	IsLeader func() bool
	// KeysPerSecond bounds the keys the GC requests examine per second;
	// 0 means DefaultKeysPerSecond, negative no bound.
	KeysPerSecond int
	// BatchKeys is the keys one GC request examines; 0 means the
	// store's default.
	BatchKeys int
	Logger    *slog.Logger
}

// Stats are the counters of a Worker since it started (and the persisted
// safe point).
type Stats struct {
	Runs, FailedRuns uint64
	// LastRun is when the last complete run ended; zero before one.
	LastRun time.Time
	// SafePoint is the safe point of the last complete run.
	SafePoint uint64
	// LocksResolved, VersionsDeleted, BytesDeleted, RangesDestroyed and
	// RangeBytesReclaimed add up over runs; RegionsScanned and
	// RegionsSkipped count region passes.
	LocksResolved, VersionsDeleted, BytesDeleted uint64
	RangesDestroyed, RangeBytesReclaimed         uint64
	KeysScanned, RegionsScanned, RegionsSkipped  uint64
}

// Worker runs garbage collection: Run every RunInterval, or RunOnce. It
// is safe for concurrent use; runs never overlap.
type Worker struct {
	cfg Config
	run sync.Mutex // held by a run
	// wake asks Run for a run now.
	wake chan struct{}

	mu        sync.Mutex
	lastRun   time.Time
	safePoint uint64

	runs, failedRuns                            atomic.Uint64
	locks, versions, bytes, ranges, rangeBytes  atomic.Uint64
	keysScanned, regionsScanned, regionsSkipped atomic.Uint64
}

// New returns a Worker over cfg.
func New(cfg Config) (*Worker, error) {
	if cfg.Client == nil || cfg.Txns == nil || cfg.Oracle == nil || cfg.SafePoints == nil || cfg.Active == nil || cfg.Settings == nil {
		return nil, errors.New("gcworker: Config needs Client, Txns, Oracle, SafePoints, Active and Settings")
	}
	if cfg.KeysPerSecond == 0 {
		cfg.KeysPerSecond = DefaultKeysPerSecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Worker{cfg: cfg, wake: make(chan struct{}, 1)}, nil
}

// Stats returns the worker's counters.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	st := Stats{LastRun: w.lastRun, SafePoint: w.safePoint}
	w.mu.Unlock()
	st.Runs, st.FailedRuns = w.runs.Load(), w.failedRuns.Load()
	st.LocksResolved, st.VersionsDeleted, st.BytesDeleted = w.locks.Load(), w.versions.Load(), w.bytes.Load()
	st.RangesDestroyed, st.RangeBytesReclaimed = w.ranges.Load(), w.rangeBytes.Load()
	st.KeysScanned, st.RegionsScanned, st.RegionsSkipped = w.keysScanned.Load(), w.regionsScanned.Load(), w.regionsSkipped.Load()
	return st
}

// Kick asks Run for a run soon (a setting changed).
func (w *Worker) Kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run runs GC every RunInterval (read again after each run) until ctx
// ends. A failed run is logged and tried again at the next interval.
func (w *Worker) Run(ctx context.Context) {
	for {
		interval := w.cfg.Settings().RunInterval
		if interval <= 0 {
			interval = DefaultRunInterval
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-w.wake:
			t.Stop()
		case <-t.C:
		}
		if w.cfg.IsLeader != nil && !w.cfg.IsLeader() {
			continue
		}
		if _, err := w.RunOnce(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			w.cfg.Logger.Warn("gc: a run failed; it runs again at the next interval", "err", err)
		}
	}
}

// RunOnce runs the three phases once (doc.go) and returns the safe point
// it ran at.
func (w *Worker) RunOnce(ctx context.Context) (uint64, error) {
	w.run.Lock()
	defer w.run.Unlock()
	sp, err := w.runOnce(ctx)
	if err != nil {
		w.failedRuns.Add(1)
		return sp, err
	}
	w.runs.Add(1)
	w.mu.Lock()
	w.lastRun, w.safePoint = time.Now(), sp
	w.mu.Unlock()
	return sp, nil
}

func (w *Worker) runOnce(ctx context.Context) (uint64, error) {
	candidate, err := w.Candidate(ctx)
	if err != nil {
		return 0, err
	}
	sp, err := w.cfg.SafePoints.SafePoint(ctx)
	if err != nil {
		return 0, fmt.Errorf("gc: read the safe point: %w", err)
	}
	// The locks below the candidate are resolved before the candidate
	// is in force: from then on the stores refuse their prewrites.
	if candidate > sp {
		if err := w.resolveLocks(ctx, candidate); err != nil {
			return 0, err
		}
		if sp, err = w.cfg.SafePoints.Advance(ctx, candidate); err != nil {
			return 0, fmt.Errorf("gc: advance the safe point to %d: %w", candidate, err)
		}
	}
	if sp == 0 {
		return 0, nil
	}
	// At a safe point already in force, locks may still be left from a
	// run cut short after it was saved.
	if candidate <= sp {
		if err := w.resolveLocks(ctx, sp); err != nil {
			return 0, err
		}
	}
	// Dropped tables first: destroying their ranges is cheap, and the
	// version pass then need not walk them (tikv#11902).
	if err := w.destroyRanges(ctx, sp); err != nil {
		return 0, err
	}
	if w.cfg.Sweep != nil {
		if err := w.cfg.Sweep(ctx, sp); err != nil {
			if ctx.Err() != nil {
				return 0, err
			}
			w.cfg.Logger.Warn("gc: a sweep failed; it runs again with the next run", "safe_point", sp, "err", err)
		}
	}
	if err := w.collect(ctx, sp); err != nil {
		return 0, err
	}
	return sp, nil
}

// Candidate computes this node's candidate safe point: min(now - life
// time, the oldest running start_ts - 1, every service safe point), the
// transactions running longer than MaxTxnWait and the expired service
// safe points left out.
func (w *Worker) Candidate(ctx context.Context) (uint64, error) {
	st := w.cfg.Settings()
	if st.MaxTxnWait <= 0 {
		st.MaxTxnWait = DefaultMaxTxnWait
	}
	now, err := w.cfg.Oracle.GetTimestamp(ctx)
	if err != nil {
		return 0, fmt.Errorf("gc: timestamp: %w", err)
	}
	phys := tso.Physical(now) - st.LifeTime.Milliseconds()
	if phys <= 0 {
		return 0, nil
	}
	candidate := tso.Compose(phys, tso.Logical(now))
	cutoff := time.Now().Add(-st.MaxTxnWait)
	for _, a := range w.cfg.Active.ActiveTxns() {
		if a.Since.Before(cutoff) {
			continue
		}
		if a.StartTS == 0 {
			return 0, nil
		}
		candidate = min(candidate, a.StartTS-1)
	}
	if w.cfg.Services != nil {
		svcs, err := w.cfg.Services.ServiceSafePoints(ctx, time.Now())
		if err != nil {
			return 0, fmt.Errorf("gc: service safe points: %w", err)
		}
		for _, svc := range svcs {
			if svc.TS < candidate {
				w.cfg.Logger.Debug("gc: a service holds the safe point back", "service", svc.ID, "ts", svc.TS, "expires", svc.Expires)
				candidate = svc.TS
			}
		}
	}
	return candidate, nil
}

// regions calls fn with each region of the key space in order, locating
// them as it goes; fn returns the key to continue from inside the region
// after a *kv.RegionError (the region changed: it is located again), or
// nil when it is done with the region.
func (w *Worker) regions(ctx context.Context, fn func(ctx context.Context, r kv.RegionInfo, from []byte) (retryFrom []byte, err error)) error {
	var key []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := w.cfg.Client.LocateKey(ctx, key)
		if err != nil {
			return fmt.Errorf("locate %q: %w", key, err)
		}
		retry, err := fn(ctx, r, key)
		var re *kv.RegionError
		if errors.As(err, &re) {
			w.cfg.Client.InvalidateRegion(r.ID)
			if retry != nil {
				key = retry
			}
			continue
		}
		if err != nil {
			return err
		}
		if len(r.End) == 0 {
			return nil
		}
		key = r.End
	}
}

// resolveLocks settles every lock with start_ts <= sp (phase 1).
func (w *Worker) resolveLocks(ctx context.Context, sp uint64) error {
	resolver := w.cfg.Txns.LockResolver()
	err := w.regions(ctx, func(ctx context.Context, r kv.RegionInfo, from []byte) ([]byte, error) {
		for {
			resp, err := w.cfg.Client.ScanLock(ctx, &kv.ScanLockRequest{Region: r.Ctx(), Start: from, MaxTS: sp, Limit: w.cfg.BatchKeys})
			if err != nil {
				return from, err
			}
			for _, l := range resp.Locks {
				if err := w.resolveLock(ctx, resolver, l); err != nil {
					return from, err
				}
			}
			w.locks.Add(uint64(len(resp.Locks)))
			if resp.Next == nil {
				return nil, nil
			}
			from = resp.Next
		}
	})
	if err != nil {
		return fmt.Errorf("gc: resolve locks below %d: %w", sp, err)
	}
	return nil
}

// resolveLock settles one lock below the safe point. A lock whose
// transaction is still alive belongs to one beyond MaxTxnWait, or to a
// node that does not report: its primary is rolled back (CheckTxnStatus
// at the end of time: its TTL has run out), and the lock after it.
func (w *Worker) resolveLock(ctx context.Context, resolver *txn.LockResolver, l kv.LockInfo) error {
	out, err := resolver.Resolve(ctx, l, 0)
	if err != nil || out == txn.LockGone {
		return err
	}
	pr, err := w.cfg.Client.LocateKey(ctx, l.Primary)
	if err != nil {
		return fmt.Errorf("locate primary %q: %w", l.Primary, err)
	}
	_, err = w.cfg.Client.CheckTxnStatus(ctx, &kv.CheckTxnStatusRequest{
		Region: pr.Ctx(), PrimaryKey: l.Primary, LockTS: l.StartTS,
		CurrentTS: kv.MaxTS, RollbackIfNotExist: true,
	})
	if err != nil {
		return fmt.Errorf("roll back txn %d, alive below the safe point: %w", l.StartTS, err)
	}
	w.cfg.Logger.Warn("gc: rolled back a transaction alive below the safe point", "start_ts", l.StartTS, "primary", l.Primary)
	if out, err = resolver.Resolve(ctx, l, 0); err != nil {
		return err
	}
	if out != txn.LockGone {
		return fmt.Errorf("lock of txn %d on %q is still %v after its primary was rolled back", l.StartTS, l.Key, out)
	}
	return nil
}

// collect sends GC requests at sp to every region (phase 2).
func (w *Worker) collect(ctx context.Context, sp uint64) error {
	err := w.regions(ctx, func(ctx context.Context, r kv.RegionInfo, from []byte) ([]byte, error) {
		for {
			resp, err := w.cfg.Client.GC(ctx, &kv.GCRequest{Region: r.Ctx(), Start: from, SafePoint: sp, Limit: w.cfg.BatchKeys})
			if err != nil {
				return from, err
			}
			if resp.Skipped {
				w.regionsSkipped.Add(1)
				return nil, nil
			}
			w.keysScanned.Add(resp.KeysScanned)
			w.versions.Add(resp.VersionsDeleted)
			w.bytes.Add(resp.BytesDeleted)
			if resp.Next == nil {
				w.regionsScanned.Add(1)
				return nil, nil
			}
			from = resp.Next
			if err := w.pace(ctx, resp.KeysScanned); err != nil {
				return from, err
			}
		}
	})
	if err != nil {
		return fmt.Errorf("gc: collect at %d: %w", sp, err)
	}
	return nil
}

// pace sleeps as long as scanning keys may take at KeysPerSecond.
func (w *Worker) pace(ctx context.Context, keys uint64) error {
	if w.cfg.KeysPerSecond < 0 || keys == 0 {
		return ctx.Err()
	}
	return ctxtime.Sleep(ctx, time.Duration(keys)*time.Second/time.Duration(w.cfg.KeysPerSecond))
}

// destroyRanges destroys the delete ranges due at sp (phase 3).
func (w *Worker) destroyRanges(ctx context.Context, sp uint64) error {
	if w.cfg.Ranges == nil {
		return nil
	}
	due, err := w.cfg.Ranges.Due(ctx, sp)
	if err != nil {
		return fmt.Errorf("gc: list delete ranges: %w", err)
	}
	for _, r := range due {
		resp, err := w.cfg.Client.UnsafeDestroyRange(ctx, r.Start, r.End)
		if err != nil {
			return fmt.Errorf("gc: destroy the range of %s: %w", r.What, err)
		}
		if err := w.cfg.Ranges.Done(ctx, r); err != nil {
			return fmt.Errorf("gc: forget the range of %s: %w", r.What, err)
		}
		w.ranges.Add(1)
		if resp.BytesBefore > resp.BytesAfter {
			w.rangeBytes.Add(resp.BytesBefore - resp.BytesAfter)
		}
		w.cfg.Logger.Debug("gc: destroyed a delete range", "what", r.What, "bytes_before", resp.BytesBefore, "bytes_after", resp.BytesAfter)
	}
	return nil
}
