package txn

import (
	"context"
	"fmt"
	"time"
)

// Oracle hands out strictly increasing timestamps. tso's batching client
// satisfies it; txn depends on nothing else of package tso but the layout.
type Oracle interface {
	GetTimestamp(ctx context.Context) (uint64, error)
}

// AboveOracle is an Oracle that can also issue a timestamp above a floor
// in one call, given that the floor is at most one above a timestamp it
// issued before the call (tso's BatchClient: two timestamps in one
// request). A Store uses it for a start_ts that must be above a 1PC
// commit's calculated commit_ts (startTimestamp); without it, it asks
// again.
type AboveOracle interface {
	Oracle
	GetTimestampAbove(ctx context.Context, floor uint64) (uint64, error)
}

// Options tunes a Store. The zero value gives the defaults documented on
// each field.
type Options struct {
	// LockTTL is how long a prewritten lock stays alive without a
	// heartbeat, counted from the moment the transaction got its start_ts
	// (a transaction that read for a while before committing prewrites
	// with LockTTL plus the time it has lived, as TiKV's client does, so
	// that its locks are not born expired). A lock whose TTL has passed may
	// be rolled back by anyone who meets it. Default 3 s.
	LockTTL time.Duration
	// HeartbeatInterval is how often a commit in progress extends its
	// primary lock's TTL. It must be well below LockTTL so that a live
	// transaction is never mistaken for a dead one. Default LockTTL/3.
	HeartbeatInterval time.Duration
	// OnePCMaxBytes bounds the size (keys plus values) of a transaction
	// that may commit in one phase. Default 16 KiB (TiKV's limit).
	OnePCMaxBytes int
	// EnableOnePC lets a transaction whose keys all live in one region
	// commit in one phase with a calculated commit timestamp. nil means the
	// default, true; a pointer because the zero value must mean "default"
	// and the default is on (write EnableOnePC: new(false) to turn it off).
	EnableOnePC *bool
	// LockWaitTimeout bounds how long a reader or writer waits for another
	// transaction's live lock; past it the operation fails with
	// ErrLockWaitTimeout (MySQL's innodb_lock_wait_timeout is 50 s too).
	// Default 50 s.
	LockWaitTimeout time.Duration
	// BatchBytes is the size at which the mutations of one region are cut
	// into separate prewrite and commit requests. Default 16 KiB.
	BatchBytes int
	// ScanPageSize is how many pairs an iterator asks a region for at once.
	// Default 256.
	ScanPageSize int
	// MaxBackgroundCommits bounds the goroutines committing secondaries
	// after the caller was answered; a commit that finds them all busy
	// commits its secondaries itself before returning. Default 64.
	MaxBackgroundCommits int
	// ResolvedCacheSize is how many final transaction states (committed at
	// a timestamp, or rolled back) the LockResolver remembers, so that the
	// locks of one dead transaction met by many readers cost one
	// CheckTxnStatus. Default 4096.
	ResolvedCacheSize int
	// MaxRegionRetries and RegionRetryTimeout bound how long one request
	// is re-routed after region errors: it fails once it was re-routed
	// MaxRegionRetries times and RegionRetryTimeout has passed since its
	// first attempt. Defaults 20 and 20 s (a raft election after a
	// leader's store died takes 1-2 s, and pd learns the new leader right
	// after).
	MaxRegionRetries   int
	RegionRetryTimeout time.Duration
	// MaxReadSetEntries bounds what a pessimistic transaction remembers of
	// its reads (keys read, plus key ranges iterated) so that it can move
	// its snapshot past a conflicting commit after validating them
	// (RefreshSnapshot). A transaction that read more cannot move its
	// snapshot once it has read: its statements that meet a newer commit
	// fail with ErrWriteConflict. Default 4096.
	MaxReadSetEntries int
	// Hooks are failpoints for tests; nil in production.
	Hooks *CommitHooks
	// CommitGuard, when set, vets every commit once its commit_ts is
	// fixed: a SQL node of a cluster refuses commits while its schema
	// lease is not known to be held (sql/schemalease). Default nil: every
	// commit goes ahead.
	CommitGuard CommitGuard
}

// CommitGuard vets commits by when they take effect. A commit must not
// take a commit_ts the guard could not vouch for: Check is called after
// the oracle gave the commit_ts (or, for a one-phase commit, once its
// upper bound is fixed) and before anything is committed, so that a
// Check that passes at a moment proves the commit_ts was issued before it.
type CommitGuard interface {
	// Token is taken when a transaction begins and given to Check at its
	// commit: a guard may refuse transactions that began before some
	// event.
	Token() uint64
	// Check fails a commit (it is rolled back and Commit returns the
	// error) or lets it go on.
	Check(token uint64) error
}

// onePC reports whether one-phase commit is enabled.
func (o Options) onePC() bool { return o.EnableOnePC == nil || *o.EnableOnePC }

// Validate reports the first invalid option, or nil. NewStore cannot
// return an error, so a caller that builds Options from configuration
// checks them here first.
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}

// withDefaults fills zero fields and rejects nonsense.
func (o Options) withDefaults() (Options, error) {
	if o.LockTTL == 0 {
		o.LockTTL = 3 * time.Second
	}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = o.LockTTL / 3
	}
	if o.OnePCMaxBytes == 0 {
		o.OnePCMaxBytes = 16 << 10
	}
	if o.LockWaitTimeout == 0 {
		o.LockWaitTimeout = 50 * time.Second
	}
	if o.BatchBytes == 0 {
		o.BatchBytes = 16 << 10
	}
	if o.ScanPageSize == 0 {
		o.ScanPageSize = 256
	}
	if o.MaxBackgroundCommits == 0 {
		o.MaxBackgroundCommits = 64
	}
	if o.ResolvedCacheSize == 0 {
		o.ResolvedCacheSize = 4096
	}
	if o.MaxRegionRetries == 0 {
		o.MaxRegionRetries = 20
	}
	if o.RegionRetryTimeout == 0 {
		o.RegionRetryTimeout = 20 * time.Second
	}
	if o.MaxReadSetEntries == 0 {
		o.MaxReadSetEntries = 4096
	}
	switch {
	case o.LockTTL < time.Millisecond:
		return o, fmt.Errorf("txn: LockTTL %v is below 1ms", o.LockTTL)
	case o.HeartbeatInterval <= 0 || o.HeartbeatInterval >= o.LockTTL:
		return o, fmt.Errorf("txn: HeartbeatInterval %v must be positive and below LockTTL %v", o.HeartbeatInterval, o.LockTTL)
	case o.OnePCMaxBytes < 0, o.BatchBytes < 0, o.ScanPageSize < 0, o.MaxBackgroundCommits < 0,
		o.ResolvedCacheSize < 0, o.MaxRegionRetries < 0, o.LockWaitTimeout < 0, o.MaxReadSetEntries < 0:
		return o, fmt.Errorf("txn: negative option in %+v", o)
	}
	return o, nil
}

// CommitHooks are failpoints that let tests stop a commit where a client
// could die. Each hook runs at its point of the protocol; a non-nil error
// makes Commit return that error at once and skip everything after it,
// cleanup included, exactly as if the client had died there: the locks and
// records already written stay for others to resolve. A hook may also kill
// the process. Setting AfterPrimaryPrewrite makes the primary's batch
// prewrite alone, before the other batches, so that the hook sees a state
// where only the primary is locked. The points are those of a two-phase
// commit: a one-phase commit has none of them (AfterPrewrite still runs
// when a 1PC attempt falls back to two phases).
type CommitHooks struct {
	// AfterPrimaryPrewrite runs when the primary's batch is prewritten and
	// no other batch has been sent.
	AfterPrimaryPrewrite func(startTS uint64) error
	// AfterPrewrite runs when every key is prewritten, before the commit
	// timestamp is fetched.
	AfterPrewrite func(startTS uint64) error
	// AfterPrimaryCommit runs when the primary is committed (the commit
	// point), before any secondary is committed.
	AfterPrimaryCommit func(startTS, commitTS uint64) error
}
