package schemalease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// ErrLeaseExpired fails a commit on a SQL node that has not renewed its
// schema lease in time: schema changes elsewhere may have stopped waiting
// for it, so its transactions may be using a schema two versions behind
// (TiDB's error 8027).
var ErrLeaseExpired = errors.New("schema failed to update in 1 lease")

// DefaultLeaseTTL is a schema lease's default length (TiDB's is 45 s): a
// schema change waits at most about this long, plus the DDL wait, for a
// SQL node that stopped answering.
const DefaultLeaseTTL = 10 * time.Second

// PD is what a Lease needs of the placement driver (pd.Client has it).
type PD interface {
	// ReportSchemaVersion keeps node's lease for ttl with the version it
	// has loaded, and returns the newest published version and whether
	// the lease was renewed without a gap.
	ReportSchemaVersion(ctx context.Context, node string, version uint64, ttl time.Duration) (latest uint64, renewed bool, err error)
	// PublishSchemaVersion raises the published version to v.
	PublishSchemaVersion(ctx context.Context, v uint64) (uint64, error)
	// WatchSchema returns the published version and the live nodes'
	// versions once the published version is above newerThan, or every
	// node reports at least syncedAt (0: not asked), or after wait.
	WatchSchema(ctx context.Context, newerThan, syncedAt uint64, wait time.Duration) (uint64, map[string]uint64, error)
}

// Loader loads the newest schema into the node's caches and returns its
// version and the IDs of the tables whose definitions differ from the
// schema it loaded before (nil: every table, as on the first load).
type Loader func(ctx context.Context) (version uint64, tables []int64, err error)

// LeaseConfig configures a Lease.
type LeaseConfig struct {
	// Node names the SQL node in pd, unique among the cluster's nodes.
	Node string
	// TTL is the lease's length; it is renewed every TTL/2. Default
	// DefaultLeaseTTL.
	TTL time.Duration
	PD  PD
	// Tracker is the node's tracker of the versions its transactions use.
	Tracker *Tracker
	Load    Loader
	// Wait and Grace are Tracker.WaitOlder's timeout and grace for the
	// node's transactions of an older schema when another node's change
	// is learnt (the node's DDL wait and its grace).
	Wait, Grace time.Duration
	// Now is the clock; default time.Now. Tests set it.
	Now    func() time.Time
	Logger *slog.Logger
}

// Lease is a SQL node's schema lease: the cross-node half of F1's rule
// (see the package comment). Start it, then Run it; its Check and Token
// are the transaction layer's txn.CommitGuard. Safe for concurrent use.
type Lease struct {
	cfg LeaseConfig

	// reportMu orders the reports to pd: a renewal carrying an older
	// version must not land after one carrying a newer.
	reportMu sync.Mutex

	mu sync.Mutex
	// reported is the version the node reports: loaded, and no
	// transaction of an older version can commit any more.
	reported uint64
	// latest is the newest published version the node knows of.
	latest uint64
	// validUntil is when the lease may have ended in pd, by this node's
	// clock: the send time of the last renewal that succeeded plus TTL,
	// less a margin for the clocks' rates.
	validUntil time.Time
	// epoch counts the renewals that found the lease had ended: a
	// transaction that began in an earlier epoch may have outlived a
	// schema change that stopped waiting for the node.
	epoch uint64
	// behindSince is when the node learnt of a version it has not loaded
	// yet (zero: it is not behind).
	behindSince time.Time
	// lapsed: the last renewal was skipped or failed (logged once).
	lapsed bool
	// left: Leave was called; nothing commits any more.
	left bool

	// currentUntil is the moment, in Unix nanoseconds by Now, until
	// which the node's loaded schema is known current enough to read
	// with unchecked (Current): validUntil while the node knows of no
	// published version it has not reported and has not left, else 0.
	// Kept under mu, read without it.
	currentUntil atomic.Int64

	kick, renew chan struct{}
}

// NewLease returns a lease that is not held yet: Check fails until Start
// has reported to pd.
func NewLease(cfg LeaseConfig) *Lease {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultLeaseTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Lease{cfg: cfg, kick: make(chan struct{}, 1), renew: make(chan struct{}, 1)}
}

// Token implements txn.CommitGuard: the lease's epoch.
func (l *Lease) Token() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch
}

// Check implements txn.CommitGuard: a commit may go on only while the
// lease is held, and only for a transaction that began under the lease as
// it is now (not before it ended and was granted anew).
func (l *Lease) Check(token uint64) error {
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.left {
		return fmt.Errorf("%w (the node is shutting down)", ErrLeaseExpired)
	}
	if token != l.epoch {
		return fmt.Errorf("%w (the node's schema lease ended while the transaction ran)", ErrSchemaChanged)
	}
	if !now.Before(l.validUntil) {
		return fmt.Errorf("%w (the node's lease of %v has not been renewed since %s)", ErrLeaseExpired, l.cfg.TTL,
			l.validUntil.Add(l.margin()-l.cfg.TTL).Format(time.RFC3339Nano))
	}
	return nil
}

// Current reports whether a read may use the schema the node has loaded
// without checking the schema version in the store: the lease is held
// (so no schema change got past a version the node has not loaded) and
// the node knows of no published version newer than the one it reports.
// Otherwise a schema change may have stopped waiting for the node, or it
// knows it is behind, and its cached catalog may be more than one
// version old (a table truncated, or rewritten into a new table ID, that
// still reads its old rows). It costs a clock read and an atomic load.
func (l *Lease) Current() bool {
	return l.cfg.Now().UnixNano() < l.currentUntil.Load()
}

// refreshLocked recomputes currentUntil. l.mu must be held.
func (l *Lease) refreshLocked() {
	var until int64
	if !l.left && l.latest <= l.reported && !l.validUntil.IsZero() {
		until = l.validUntil.UnixNano()
	}
	l.currentUntil.Store(until)
}

// margin is how much earlier than pd the node counts its lease ended:
// the two clocks may measure the TTL at slightly different rates.
func (l *Lease) margin() time.Duration { return l.cfg.TTL / 10 }

// catchUp is how long the node may stay behind a published version
// while it renews its lease: past it, it stops renewing, its lease ends,
// and schema changes stop waiting for it.
func (l *Lease) catchUp() time.Duration { return l.cfg.Wait + l.cfg.TTL }

// Start loads the schema and takes the lease, before the node serves
// anyone.
func (l *Lease) Start(ctx context.Context) error {
	v, _, err := l.cfg.Load(ctx)
	if err != nil {
		return fmt.Errorf("schema lease: load the schema: %w", err)
	}
	l.cfg.Tracker.Published(v)
	l.mu.Lock()
	l.reported = max(l.reported, v)
	l.mu.Unlock()
	return l.renewOnce(ctx)
}

// Run keeps the lease and follows the published versions until ctx ends.
func (l *Lease) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); l.runRenew(ctx) }()
	go func() { defer wg.Done(); l.runFollow(ctx) }()
	wg.Wait()
}

// runRenew renews the lease every TTL/2, and at once when asked.
func (l *Lease) runRenew(ctx context.Context) {
	t := time.NewTimer(l.cfg.TTL / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-l.renew:
		}
		next := l.cfg.TTL / 2
		if err := l.renewOnce(ctx); err != nil && ctx.Err() == nil {
			next = l.cfg.TTL / 10 // try again soon, before the lease ends
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// errBehind: the node stopped renewing, being too long behind.
var errBehind = errors.New("schema lease: not renewed, the node is behind the published schema version")

// renewOnce reports the node's version to pd and extends the lease.
func (l *Lease) renewOnce(ctx context.Context) error {
	l.reportMu.Lock()
	defer l.reportMu.Unlock()
	sent := l.cfg.Now()
	l.mu.Lock()
	v := l.reported
	behind := l.latest > v && !l.behindSince.IsZero() && sent.Sub(l.behindSince) > l.catchUp()
	wasLapsed := l.lapsed
	if behind {
		l.lapsed = true
	}
	l.mu.Unlock()
	if behind {
		if !wasLapsed {
			l.cfg.Logger.Warn("schema lease: the node could not load the newest schema in time; it stops renewing its lease and its commits fail with 8027 until it catches up",
				"loaded", v, "newest", l.Latest())
		}
		return errBehind
	}
	rctx, cancel := context.WithTimeout(ctx, max(l.cfg.TTL/2, 500*time.Millisecond))
	latest, renewed, err := l.cfg.PD.ReportSchemaVersion(rctx, l.cfg.Node, v, l.cfg.TTL)
	cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if !l.lapsed {
			l.cfg.Logger.Warn("schema lease: cannot renew", "node", l.cfg.Node, "err", err, "valid_until", l.validUntil)
		}
		l.lapsed = true
		return fmt.Errorf("schema lease: renew: %w", err)
	}
	if !renewed {
		// The lease had ended (or this is the first): schema changes
		// may have stopped waiting for this node meanwhile, so no
		// transaction begun before now may commit.
		l.epoch++
	}
	if l.lapsed {
		l.cfg.Logger.Info("schema lease: renewed", "node", l.cfg.Node, "version", v, "gap", !renewed)
	}
	l.lapsed = false
	l.validUntil = sent.Add(l.cfg.TTL - l.margin())
	l.noteLatestLocked(latest)
	l.refreshLocked()
	return nil
}

// noteLatestLocked records a published version and wakes the follower
// if the node is behind it. l.mu must be held.
func (l *Lease) noteLatestLocked(latest uint64) {
	if latest > l.latest {
		l.latest = latest
	}
	if l.latest > l.reported {
		if l.behindSince.IsZero() {
			l.behindSince = l.cfg.Now()
		}
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
	l.refreshLocked()
}

// followWait is how long one watch of the published version waits.
const followWait = time.Second

// runFollow watches the published version and loads each new one.
func (l *Lease) runFollow(ctx context.Context) {
	for ctx.Err() == nil {
		l.mu.Lock()
		known := max(l.latest, l.reported)
		behind := l.latest > l.reported
		l.mu.Unlock()
		if !behind {
			latest, _, err := l.cfg.PD.WatchSchema(ctx, known, 0, followWait)
			if err != nil {
				// pd is unreachable: the renewals say so; look again
				// after a pause (or when a renewal learns a version).
				select {
				case <-ctx.Done():
				case <-l.kick:
				case <-time.After(l.cfg.TTL / 10):
				}
				continue
			}
			l.mu.Lock()
			l.noteLatestLocked(latest)
			behind = l.latest > l.reported
			l.mu.Unlock()
			if !behind {
				continue
			}
		}
		if err := l.follow(ctx); err != nil && ctx.Err() == nil {
			l.cfg.Logger.Warn("schema lease: cannot load the newest schema; trying again", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(l.cfg.TTL / 10):
			}
		}
	}
}

// follow loads the newest schema, waits for the node's transactions that
// wrote a changed table under an older one (marking stale those that
// outlive the wait), then reports the version.
func (l *Lease) follow(ctx context.Context) error {
	v, tables, err := l.cfg.Load(ctx)
	if err != nil {
		return err
	}
	if err := l.settle(ctx, v, tables); err != nil {
		return err
	}
	if l.Reported() < l.Latest() {
		// The snapshot it loaded was older than the publication: look
		// again shortly.
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// settle waits for the node's transactions older than v that wrote one of
// tables, then makes v the reported version and renews at once.
func (l *Lease) settle(ctx context.Context, v uint64, tables []int64) error {
	l.cfg.Tracker.Published(v)
	if tables == nil || len(tables) > 0 {
		n, err := l.cfg.Tracker.WaitOlder(ctx, v, l.cfg.Wait, l.cfg.Grace, tables)
		if n > 0 {
			l.cfg.Logger.Info("schema change on another node: transactions of an older schema outlived the wait and will fail to commit writes",
				"version", v, "transactions", n, "wait", l.cfg.Wait)
		}
		if err != nil {
			return err
		}
	}
	l.Loaded(v)
	return nil
}

// Loaded records that the node has loaded version v and that no
// transaction of an older one can commit writes to what v changed (the
// node's own schema change waited for them), and has the lease renewed
// at once with it.
func (l *Lease) Loaded(v uint64) {
	l.mu.Lock()
	if v > l.reported {
		l.reported = v
	}
	if l.reported >= l.latest {
		l.behindSince = time.Time{}
	}
	l.refreshLocked()
	l.mu.Unlock()
	select {
	case l.renew <- struct{}{}:
	default:
	}
}

// Leave is called when the node shuts down, once Run has returned and
// none of its transactions can commit any more: it refuses every commit
// from now on and tells pd the node holds back no version (it reports the
// highest), so that schema changes stop waiting for it at once instead of
// when its lease ends.
func (l *Lease) Leave(ctx context.Context) error {
	l.mu.Lock()
	l.left = true
	l.refreshLocked()
	l.mu.Unlock()
	l.reportMu.Lock()
	defer l.reportMu.Unlock()
	if _, _, err := l.cfg.PD.ReportSchemaVersion(ctx, l.cfg.Node, math.MaxUint64, l.cfg.TTL); err != nil {
		return fmt.Errorf("schema lease: leave: %w", err)
	}
	return nil
}

// Report renews the lease now with the version the node has loaded: the
// node's own schema change calls it after Loaded, before it waits for the
// other nodes.
func (l *Lease) Report(ctx context.Context) error {
	return l.renewOnce(ctx)
}

// Node returns the node's name in pd.
func (l *Lease) Node() string { return l.cfg.Node }

// LiveNodes returns the nodes whose leases are alive in pd, with the
// versions they report.
func (l *Lease) LiveNodes(ctx context.Context) (map[string]uint64, error) {
	_, nodes, err := l.cfg.PD.WatchSchema(ctx, 0, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("schema lease: list the SQL nodes: %w", err)
	}
	return nodes, nil
}

// Tracker returns the tracker of the node's transactions the lease
// waits for.
func (l *Lease) Tracker() *Tracker { return l.cfg.Tracker }

// Latest returns the newest published version the node knows of.
func (l *Lease) Latest() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.latest
}

// Reported returns the version the node reports.
func (l *Lease) Reported() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reported
}

// syncLogAfter is how long Sync waits before it names the nodes it waits
// for in the log.
const syncLogAfter = 5 * time.Second

// Sync publishes version v and waits until every SQL node whose lease is
// alive reports at least v: then no transaction of a version below v can
// commit anywhere. A node that cannot keep up stops renewing its lease
// within a wait and a lease (catchUp), and is not waited for once its
// lease ends. It returns pd's error if pd cannot be reached, or ctx's.
func (l *Lease) Sync(ctx context.Context, v uint64) error {
	latest, err := l.cfg.PD.PublishSchemaVersion(ctx, v)
	if err != nil {
		return fmt.Errorf("schema lease: publish version %d: %w", v, err)
	}
	l.mu.Lock()
	l.noteLatestLocked(latest)
	l.mu.Unlock()
	start := l.cfg.Now()
	logged := false
	for {
		_, nodes, err := l.cfg.PD.WatchSchema(ctx, math.MaxUint64, v, followWait)
		if err != nil {
			return fmt.Errorf("schema lease: wait for the SQL nodes to load version %d: %w", v, err)
		}
		lagging := laggingNodes(nodes, v)
		if len(lagging) == 0 {
			return nil
		}
		if !logged && l.cfg.Now().Sub(start) > syncLogAfter {
			logged = true
			l.cfg.Logger.Info("schema change: waiting for SQL nodes to load the new schema version", "version", v, "nodes", lagging)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// laggingNodes returns the nodes reporting a version below v, sorted.
func laggingNodes(nodes map[string]uint64, v uint64) []string {
	var out []string
	for n, nv := range nodes {
		if nv < v {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return slices.Clip(out)
}
