package kv

import (
	"context"
	"fmt"
	"math"
	"time"
)

// This file is the contract between the Percolator client (package txn) and
// the stores that keep the data. The same interface is served in process by
// a LocalClient over one Pebble store and, later, over gRPC by KV nodes; txn
// never knows which. Every request names the region it was routed to
// (RegionCtx); a store that no longer serves that region, or serves it at a
// newer epoch, answers with a *RegionError and the client re-routes.

// MaxTS is the read timestamp of a point read without a timestamp: it reads
// the latest committed version. Reads at MaxTS never advance a region's
// max_read_ts, because MaxTS was not issued by the oracle.
const MaxTS uint64 = math.MaxUint64

// Op is the kind of one mutation in a prewrite.
type Op uint8

const (
	// OpPut writes a value.
	OpPut Op = iota + 1
	// OpDelete deletes the key (writes a tombstone version).
	OpDelete
	// OpLock locks the key without changing it (SELECT ... FOR UPDATE): it
	// takes part in conflict detection and commits as a Lock write record.
	OpLock
	// OpInsert writes a value and fails with *AlreadyExistsError if the key
	// has a committed, non-deleted value visible at or after start_ts.
	OpInsert
	// OpCheckNotExists asserts the key does not exist, without writing it.
	OpCheckNotExists
	// OpPessimisticLock is not a prewrite op: it names, in a LockInfo, a
	// pessimistic lock (AcquirePessimisticLock), which has no value yet.
	OpPessimisticLock
)

// String names the op.
func (o Op) String() string {
	switch o {
	case OpPut:
		return "put"
	case OpDelete:
		return "delete"
	case OpLock:
		return "lock"
	case OpInsert:
		return "insert"
	case OpCheckNotExists:
		return "check_not_exists"
	case OpPessimisticLock:
		return "pessimistic_lock"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Mutation is one key's change in a transaction.
type Mutation struct {
	Op    Op
	Key   []byte
	Value []byte // only for OpPut and OpInsert
	// Pessimistic says the transaction holds a pessimistic lock on Key
	// (TiKV's is_pessimistic_lock): the prewrite turns that lock into an
	// ordinary one without any conflict or existence check (the lock has
	// excluded writers since its for_update_ts, and AcquirePessimisticLock
	// checked then). A missing pessimistic lock fails the prewrite with
	// *PessimisticLockNotFoundError (or *TxnAbortedError when the
	// transaction was rolled back): it was removed by someone who judged
	// the transaction dead.
	Pessimistic bool
	// Notify names observer columns to notify when the key commits
	// (Percolator's notifications, see NotifyEntry): the commit that
	// turns this key's lock into a write record, or commits it in one
	// phase, sets the key's notify entry of each column to its
	// commit_ts in the same store batch. Not for OpCheckNotExists, which
	// takes no lock.
	Notify [][]byte
}

// RegionCtx names the region a request was routed to. A store checks it
// against its current view and answers *RegionError on a mismatch.
type RegionCtx struct {
	RegionID uint64
	Epoch    RegionEpoch
}

// RegionEpoch changes whenever a region's range (Version) or its replica set
// (ConfVer) changes, so that a request routed by a stale cache is refused.
type RegionEpoch struct {
	ConfVer uint64
	Version uint64
}

// RegionInfo describes a region as the client's router sees it: keys in
// [Start, End) belong to it; an empty End means +infinity.
type RegionInfo struct {
	ID    uint64
	Start []byte
	End   []byte
	Epoch RegionEpoch
	// Addr is the address of the node serving the region's leader; empty in
	// process.
	Addr string
}

// Ctx returns the RegionCtx that routes a request to this region.
func (r RegionInfo) Ctx() RegionCtx { return RegionCtx{RegionID: r.ID, Epoch: r.Epoch} }

// Contains reports whether key falls in the region's range.
func (r RegionInfo) Contains(key []byte) bool {
	return string(key) >= string(r.Start) && (len(r.End) == 0 || string(key) < string(r.End))
}

// KvPair is a key and its value as read.
type KvPair struct {
	Key   []byte
	Value []byte
}

// PrewriteRequest locks Mutations for the transaction StartTS whose primary
// key is Primary.
type PrewriteRequest struct {
	Region    RegionCtx
	Mutations []Mutation
	Primary   []byte
	StartTS   uint64
	// LockTTL is in milliseconds from the physical time of StartTS.
	LockTTL uint64
	// TxnSize is the number of keys in the whole transaction (a hint for
	// lock resolution).
	TxnSize uint64
	// TryOnePC asks the store to prewrite and commit in one step with a
	// calculated commit timestamp, max(StartTS, region max_read_ts)+1. The
	// store falls back to an ordinary prewrite when that timestamp would
	// exceed MaxCommitTS, and says so by returning OnePCCommitTS == 0.
	TryOnePC    bool
	MaxCommitTS uint64
	// AllowWhenDiskFull lets the prewrite through when the store's disk
	// is nearly full (*DiskFullError): for transactions whose writes are
	// small and free space, as the catalog changes of DROP and TRUNCATE.
	// Prewrites without values (deletes, locks) always go through.
	AllowWhenDiskFull bool
	// ForUpdateTS is, for a pessimistic transaction, the largest
	// for_update_ts at which it locked keys; 0 for an optimistic one. The
	// locks written keep it and get min_commit_ts ForUpdateTS+1, and a
	// one-phase commit_ts is above it: versions of the transaction's keys
	// may have committed up to ForUpdateTS, after its start_ts.
	ForUpdateTS uint64
	// SnapshotTS is, when above StartTS, the timestamp the transaction
	// reads at since it moved its snapshot (a pessimistic transaction
	// whose reads were validated up to it, see ValidateReadsRequest): the
	// write-conflict check of a mutation that is not Pessimistic fails on
	// a version committed after SnapshotTS instead of StartTS, as for a
	// transaction that started there. StartTS still names the
	// transaction's locks and records. In a pessimistic transaction
	// (ForUpdateTS set) such a mutation conflicts only with a version
	// committed after max(StartTS, SnapshotTS), which its reads see, as
	// TiKV checks a key a pessimistic transaction did not lock against its
	// for_update_ts; an optimistic one's also with a version committed at
	// StartTS.
	SnapshotTS uint64
}

// PrewriteResponse reports per-key failures. Errors holds *KeyIsLockedError,
// *WriteConflictError, *AlreadyExistsError or *TxnAbortedError values; a
// non-nil error return from Prewrite itself means the whole request failed
// (for example a *RegionError).
type PrewriteResponse struct {
	Errors []error
	// OnePCCommitTS is the commit timestamp when the request was committed
	// in one phase; 0 otherwise.
	OnePCCommitTS uint64
}

// CommitRequest commits the locks of StartTS on Keys at CommitTS.
type CommitRequest struct {
	Region   RegionCtx
	Keys     [][]byte
	StartTS  uint64
	CommitTS uint64
}

// TxnAction says what CheckTxnStatus did or found.
type TxnAction uint8

const (
	// TxnActionNone: the primary lock is alive; nothing was changed.
	TxnActionNone TxnAction = iota
	// TxnActionCommitted: the transaction had committed at CommitTS.
	TxnActionCommitted
	// TxnActionTTLExpireRollback: the primary lock had expired and was rolled
	// back by this call.
	TxnActionTTLExpireRollback
	// TxnActionLockNotExistRollback: there was no lock and no record; a
	// Rollback record was written so that a late prewrite fails.
	TxnActionLockNotExistRollback
	// TxnActionRolledBack: the transaction had already been rolled back.
	TxnActionRolledBack
	// TxnActionMinCommitTSPushed: the lock is alive and its min_commit_ts
	// was pushed past CallerStartTS, so the caller may read past it.
	TxnActionMinCommitTSPushed
)

// CheckTxnStatusRequest asks the region holding PrimaryKey for the state of
// transaction LockTS.
type CheckTxnStatusRequest struct {
	Region     RegionCtx
	PrimaryKey []byte
	LockTS     uint64
	// CallerStartTS is the start_ts of the transaction that met the lock
	// (MaxTS for a read without a timestamp); if non-zero and the lock is
	// alive, its min_commit_ts is pushed above it.
	CallerStartTS uint64
	// CurrentTS is the oracle's time now; a lock whose TTL has passed by it
	// is rolled back.
	CurrentTS uint64
	// RollbackIfNotExist writes a Rollback record when there is neither a
	// lock nor a commit record.
	RollbackIfNotExist bool
}

// CheckTxnStatusResponse reports what CheckTxnStatus found.
type CheckTxnStatusResponse struct {
	Action   TxnAction
	CommitTS uint64 // when Action == TxnActionCommitted
	LockTTL  uint64 // when the lock is alive
	// Lock is the primary lock when alive.
	Lock *LockInfo
}

// ResolveLockRequest commits (CommitTS > 0) or rolls back (CommitTS == 0)
// the locks of transaction StartTS on Keys, or on every key of the region
// when Keys is empty: then the store pages through the region's lock space
// in bounded batches, each batch latched and written as one command, so that resolving n locks costs O(n) whatever n is. The
// request may be cut short by its context between batches; what was
// resolved stays resolved, and sending it again resolves the rest.
type ResolveLockRequest struct {
	Region   RegionCtx
	StartTS  uint64
	CommitTS uint64
	Keys     [][]byte
	// Within, when set, confines a resolution without Keys to the part
	// of the region in it: a KV node of a cluster serves its raft
	// regions over a store that is one region (kv/node), and a region's
	// writes go through its own raft group only.
	Within *KeyRange
}

// ScanRequest reads at most Limit visible pairs in [Start, End) at Version,
// in ascending key order, or descending when Reverse.
//
// The locks that block the read are checked only over the part of the
// range the page covers (up to its last pair when Limit is reached), so a
// page costs what it reads, not what the rest of the range holds; they are
// reported together, at most MaxLocksPerResponse of them, in one
// *KeyIsLockedError.
type ScanRequest struct {
	Region  RegionCtx
	Start   []byte
	End     []byte // empty: to the region's end
	Limit   int
	Version uint64
	Reverse bool
	KeyOnly bool
	// BypassLocks lists transactions (by start_ts) whose locks this read
	// skips: the reader learned from their primaries that they cannot
	// commit at or below Version (CheckTxnStatus pushed their
	// min_commit_ts above it), so the newest version committed at or
	// below Version is the right answer under their locks too (TiKV's
	// Context.resolved_locks).
	BypassLocks []uint64
	// IgnoreLocks reads the newest committed versions at or below Version
	// and skips every lock, blocking on nothing. It is not a snapshot
	// read: a key whose transaction is committing may be read at its
	// previous version. For estimates only (the planner's row counts),
	// never for a transaction's reads.
	IgnoreLocks bool
	// Ranges, when not empty, are the request's ranges in place of
	// [Start, End), which must then be empty (a multi-range read): as a
	// CoprocessorRequest's Ranges, ascending and disjoint, each with a
	// non-empty End but the last (empty: to the region's end), all in
	// the region; Limit bounds the pairs of each range (0: no bound),
	// not of the whole; Reverse is not allowed. The pairs of all ranges
	// come in one response in key order (SplitPairs gives each range
	// its own). The locks are checked over each range's part the read
	// covered, all reported in one *KeyIsLockedError. A batch of
	// lookups (a batched join's ranges, an IN list on an index) is so
	// one request per region, one iterator and one latch-free pass over
	// the lock set, rather than one request per range.
	Ranges []KeyRange
}

// SplitPairs returns, for each of ranges (ascending and disjoint, as
// ScanRequest.Ranges), the pairs of pairs (in key order, as a
// multi-range Scan returns them) that fall in it; a pair in none is
// dropped. The slices share pairs' array.
func SplitPairs(ranges []KeyRange, pairs []KvPair) [][]KvPair {
	out := make([][]KvPair, len(ranges))
	i := 0
	for r, kr := range ranges {
		for i < len(pairs) && string(pairs[i].Key) < string(kr.Start) {
			i++
		}
		j := i
		for j < len(pairs) && (len(kr.End) == 0 || string(pairs[j].Key) < string(kr.End)) {
			j++
		}
		out[r] = pairs[i:j:j]
		i = j
	}
	return out
}

// MaxLocksPerResponse bounds the locks one read reports in a
// *KeyIsLockedError: enough that a reader meeting a dead transaction's
// locks resolves many per round trip, few enough that a response stays
// small.
const MaxLocksPerResponse = 256

// PessimisticKey is one key of an AcquirePessimisticLockRequest.
type PessimisticKey struct {
	Key []byte
	// CheckNotExists fails the request with *AlreadyExistsError when the
	// key has a value (the row or unique index key of an INSERT).
	CheckNotExists bool
}

// AcquirePessimisticLockRequest locks Keys for the pessimistic
// transaction StartTS at ForUpdateTS, the timestamp of the statement that
// reads and writes them. Per key:
//
//   - another transaction's lock: *KeyIsLockedError, after waiting up to
//     WaitTimeout for it to go (see below);
//   - this transaction's pessimistic lock: its for_update_ts is raised to
//     ForUpdateTS; its ordinary (prewrite) lock: an error;
//   - a Rollback record of this transaction at StartTS: *TxnAbortedError;
//   - a Put or Delete record newer than ForUpdateTS: *WriteConflictError
//     with its commit_ts (Lock and Rollback records change no data and
//     are no conflict);
//   - CheckNotExists and a value: *AlreadyExistsError.
//
// Else the key gets a pessimistic lock (no value). All keys are checked;
// if any fails, nothing is written and the first failure is returned.
//
// Waiting: with WaitTimeout > 0, a request that meets another
// transaction's lock waits in the key's queue until the lock is released
// (the waiters of a key are woken in the order they came), the request's
// context ends, or WaitTimeout passes, and then tries again. A wait that
// would close a cycle of transactions waiting for each other fails at
// once with *DeadlockError. The store bounds one wait by its
// Options.LockWaitSlice and then answers *KeyIsLockedError, so that the
// client can check that the lock's owner is alive (resolve it if not) and
// ask again: a dead owner's lock is never waited for longer than its TTL
// plus a slice.
type AcquirePessimisticLockRequest struct {
	Region      RegionCtx
	Keys        []PessimisticKey
	Primary     []byte
	StartTS     uint64
	ForUpdateTS uint64
	// LockTTL is in milliseconds from the physical time of StartTS.
	LockTTL uint64
	// ReturnValues asks for each key's value at ForUpdateTS (SELECT ...
	// FOR UPDATE reads what it locks in one request).
	ReturnValues bool
	// WaitTimeout bounds the wait for other transactions' locks; 0 does
	// not wait.
	WaitTimeout time.Duration
	// LockWithConflict takes a key's lock even when a write newer than
	// ForUpdateTS is there, at that write's commit_ts, and reports the
	// newest such commit_ts in the response instead of failing with
	// *WriteConflictError (TiKV's fair locking). The statement must still
	// run again at a newer for_update_ts, but it keeps the locks it
	// waited for: without this, a waiter woken by a commit to the key
	// would fail, go back to its client, and find the key taken again by
	// whoever asked first, and busy keys would starve their waiters.
	LockWithConflict bool
	// Range, when set (Keys then empty, ReturnValues implied), makes the
	// request a locking range read, SELECT ... FOR UPDATE over a range in
	// one request where a read and a lock were two (TiKV's pessimistic
	// lock of a range scan): the keys locked are the keys Range's read at
	// ForUpdateTS returns, as Scan would (see LockRange). An empty
	// Primary makes the first key locked the transaction's primary: a
	// transaction whose first locking statement is a range read does not
	// know its primary before the store finds it.
	Range *LockRange
	// LockOnlyIfExists locks only the keys that have a value (TiKV's
	// lock_only_if_exists; ReturnValues must be set, and no key may ask
	// CheckNotExists): a key without one is checked as any other (a
	// lock of another transaction on it is waited for, a newer write
	// is a conflict) and its value, nil, returned, but it gets no lock.
	// A locking read of keys of which some may be absent (SELECT ...
	// WHERE id IN (...) FOR UPDATE) so takes the rows' locks and values
	// in one request without locking the keys of rows that are not
	// there, which percdb, without gap locks, does not lock. With it an
	// empty Primary makes the first key locked (the first with a value)
	// the transaction's primary, as for a Range.
	LockOnlyIfExists bool
}

// LockRange is the range of a locking range read
// (AcquirePessimisticLockRequest.Range): up to Limit keys that have a
// value at ForUpdateTS in [Start, End) (End empty: to the region's end),
// from Start, or from End when Reverse. A lock of another transaction on
// a key the read covers that would block a Scan at ForUpdateTS (a
// prewrite) is waited for as a pessimistic lock is, after which the
// read is made again; BypassLocks lists transactions whose locks the
// read skips, as ScanRequest.BypassLocks. The keys found are then locked
// under the rules of AcquirePessimisticLockRequest, in one latched
// command, and returned with their values in
// AcquirePessimisticLockResponse.Pairs. A read that finds no key locks
// nothing.
type LockRange struct {
	Start, End  []byte
	Limit       int
	Reverse     bool
	BypassLocks []uint64
}

// AcquirePessimisticLockResponse answers an AcquirePessimisticLockRequest
// that locked every key.
type AcquirePessimisticLockResponse struct {
	// Values[i] is the value of Keys[i] at ForUpdateTS (its newest value
	// under LockWithConflict), nil when it has none; set only with
	// ReturnValues.
	Values [][]byte
	// Pairs are, for a request with a Range, the keys locked in the
	// read's order with their values at ForUpdateTS (their newest under
	// LockWithConflict: with ConflictTS set a value may be nil, the key
	// deleted since). With an empty request Primary, Pairs[0].Key is the
	// primary.
	Pairs []KvPair
	// ConflictTS is, under LockWithConflict, the newest commit_ts above
	// ForUpdateTS met on the keys (locked nonetheless), 0 when none was.
	ConflictTS uint64
}

// KeyRange is the keys in [Start, End); an empty End means +infinity.
type KeyRange struct {
	Start []byte
	End   []byte
}

// ValidateReadsRequest asks whether what a transaction read at From
// reads the same at To: which of Keys, and which keys in Ranges, have a
// Put or Delete committed in (From, To] (Lock and Rollback records change
// no data). A pessimistic transaction asks it before it moves its
// snapshot from From to To (package txn, "Pessimistic transactions"); it
// compares the values of the changed keys at From and To itself, since a
// change may leave what it read equal. The store records To in the
// region's max_read_ts, as a read at To does, so that no commit at or
// below To lands on the keys afterwards. A lock that could still commit
// at or below To (one that would block a read at To, and whose
// transaction is not in BypassLocks) fails the request with a
// *KeyIsLockedError unless the changes found already overflow the
// response (More): the client settles it as a reader at To does and asks
// again. Every range must start in the region and end at or before its
// end (an empty End: the region's).
type ValidateReadsRequest struct {
	Region   RegionCtx
	Keys     [][]byte
	Ranges   []KeyRange
	From, To uint64
	// BypassLocks: as ScanRequest.BypassLocks, at To.
	BypassLocks []uint64
	// ChangesFirst asks for the changes alone when there are any: the
	// locks that could still commit in the window are then not looked
	// at (ValidateReadsResponse.LocksUnchecked). A client that most often
	// refuses a move for a change it finds spares that scan; one that
	// finds every change passes asks again without it.
	ChangesFirst bool
}

// ValidateReadsResponse answers a ValidateReadsRequest.
type ValidateReadsResponse struct {
	// Changes are the keys with a Put or Delete committed in the window,
	// each with the newest such commit_ts: the point keys in request
	// order, then the keys of each range in key order. Empty when the
	// reads are valid at To.
	Changes []KeyChange
	// More is set when there were more changes than
	// MaxChangesPerResponse: Changes holds the first of them, and the
	// locks were not looked at.
	More bool
	// LocksUnchecked is set when the request asked for ChangesFirst and
	// there were changes: the locks were not looked at, so the reads are
	// not known valid at To even if every change leaves them equal.
	LocksUnchecked bool
}

// KeyChange is a key changed in a ValidateReads window, at CommitTS.
type KeyChange struct {
	Key      []byte
	CommitTS uint64
}

// MaxChangesPerResponse bounds the changed keys one ValidateReads
// returns: a transaction whose reads changed in more places than that
// cannot hope to find them all unchanged in value, and says so at once.
const MaxChangesPerResponse = 256

// NotifyEntry is a notification: Key committed a change, at TS, that the
// observer of Column has not processed yet (Percolator's notify column).
// It is a hint, not transactional data: set by the commit of a Mutation
// with Notify in the same store batch as the commit record, read by
// observers' scanners without a snapshot, and cleared when an observer
// run has committed (ClearNotify). Commits of one key happen in commit_ts
// order (a key's next prewrite waits for its lock to go), so an entry
// always holds the newest commit_ts that set it.
type NotifyEntry struct {
	Key    []byte
	Column []byte
	TS     uint64
}

// ScanNotifyRequest reads at most Limit notify entries of the keys in
// [Start, End) (End empty: to the region's end), in key order and, for
// one key, column order. Limit 0 means no limit.
//
// Scanner, when not 0, names an observer's scanner: a random number the
// scanner keeps while it runs. The store then keeps, for ScannerLease
// after each page, where the scanner reads next and which entries it was
// given (its claims), so that scanners of any process see each other:
// the entries another live scanner claimed are left out of the page
// (counted in Skipped, and in Limit), and the response says when another
// scanner's position lies in the page (Trailing: the caller scans right
// behind it, and should jump elsewhere, as the paper's scanners do).
// Claims are hints: a run's acknowledgement, not the claim, keeps two
// runs of one notification from both committing. Columns, with Scanner,
// are the observers the scanner runs (none: every one): the entries of
// other columns are left out of the page unclaimed (they count in
// Limit), so that a scanner never holds back a notification it would not
// run.
type ScanNotifyRequest struct {
	Region  RegionCtx
	Start   []byte
	End     []byte
	Limit   int
	Scanner uint64
	Columns [][]byte
}

// ScanNotifyResponse is a page of notify entries.
type ScanNotifyResponse struct {
	Entries []NotifyEntry
	// Resume is where the next page starts when Limit cut this one (the
	// key after the last entry read); nil when the range is done.
	Resume []byte
	// Skipped counts the entries left out because another live scanner
	// claimed them.
	Skipped int
	// Trailing reports that another live scanner reads next inside the
	// range this page covered: it has just read what the caller read.
	Trailing bool
}

// DefaultScannerLease is how long a scanner's position and claims outlive
// the page that set them (ScanNotifyRequest.Scanner, Options.ScannerLease):
// a scanner reads a page well within it, and the claims of a scanner that
// died pass to others after it. A run that outlasts it may be run by
// another scanner too; the acknowledgement lets one of them commit.
const DefaultScannerLease = 2 * time.Second

// ScanChangesRequest reads the committed changes of the keys in
// [Start, End) (End empty: to the region's end) whose commit_ts lies in
// (FromTS, ToTS]: every Put and Delete record there, in key order and,
// for one key, commit_ts order (a change feed's incremental scan). Limit
// bounds the keys with changes returned (0: no limit); a key's changes
// are never cut apart. Locks that could still commit at or below ToTS in
// the part of the range the page covers fail the request with
// *KeyIsLockedError, except those of BypassLocks (transactions whose
// primaries promise to commit above ToTS, if ever).
type ScanChangesRequest struct {
	Region       RegionCtx
	Start, End   []byte
	FromTS, ToTS uint64
	Limit        int
	BypassLocks  []uint64
}

// Change is one committed change of a key.
type Change struct {
	Key      []byte
	CommitTS uint64
	// Value is the key's value after the change; nil: deleted.
	Value []byte
	// Prev is, for a delete, the value it deleted (nil when the key had
	// none).
	Prev []byte
}

// Client is what the transaction layer needs from storage: routing plus the
// Percolator commands of TiKV's kvproto, one region per request. All
// methods are safe for concurrent use.
type Client interface {
	// LocateKey returns the region that holds key.
	LocateKey(ctx context.Context, key []byte) (RegionInfo, error)
	// InvalidateRegion drops a cached region after a *RegionError.
	InvalidateRegion(regionID uint64)

	// Get reads key at version; a nil value with a nil error means not
	// found. A lock that blocks the read is a *KeyIsLockedError.
	Get(ctx context.Context, region RegionCtx, key []byte, version uint64) ([]byte, error)
	// BatchGet reads keys at version and returns the pairs found.
	BatchGet(ctx context.Context, region RegionCtx, keys [][]byte, version uint64) ([]KvPair, error)
	// Scan reads a range at a version.
	Scan(ctx context.Context, req *ScanRequest) ([]KvPair, error)

	Prewrite(ctx context.Context, req *PrewriteRequest) (*PrewriteResponse, error)
	Commit(ctx context.Context, req *CommitRequest) error
	// BatchRollback rolls back the locks of startTS on keys and leaves
	// Rollback records.
	BatchRollback(ctx context.Context, region RegionCtx, keys [][]byte, startTS uint64) error
	// Cleanup rolls back the lock of startTS on key unless it is committed
	// (then it returns *CommittedError).
	Cleanup(ctx context.Context, region RegionCtx, key []byte, startTS, currentTS uint64) error
	CheckTxnStatus(ctx context.Context, req *CheckTxnStatusRequest) (*CheckTxnStatusResponse, error)
	ResolveLock(ctx context.Context, req *ResolveLockRequest) error
	// TxnHeartBeat extends the TTL of the primary lock of startTS to
	// adviseTTL (never shortening it) and returns the TTL now in force.
	TxnHeartBeat(ctx context.Context, region RegionCtx, primary []byte, startTS, adviseTTL uint64) (uint64, error)

	// AcquirePessimisticLock locks keys for a pessimistic transaction,
	// waiting for other transactions' locks (see the request).
	AcquirePessimisticLock(ctx context.Context, req *AcquirePessimisticLockRequest) (*AcquirePessimisticLockResponse, error)
	// PessimisticRollback removes the pessimistic locks of startTS on keys
	// whose for_update_ts is at most forUpdateTS, and nothing else: no
	// Rollback record, since the transaction goes on (a statement that
	// failed gives back the locks it took) or has ended before its
	// prewrite. Keys without such a lock are skipped.
	PessimisticRollback(ctx context.Context, region RegionCtx, keys [][]byte, startTS, forUpdateTS uint64) error
	// ValidateReads reports which keys read at req.From changed by
	// req.To (see the request).
	ValidateReads(ctx context.Context, req *ValidateReadsRequest) (*ValidateReadsResponse, error)

	// ScanNotify reads notify entries (see NotifyEntry); it takes no
	// latches and blocks on nothing.
	ScanNotify(ctx context.Context, req *ScanNotifyRequest) (*ScanNotifyResponse, error)
	// ClearNotify deletes each entry's notification of entry.Key for
	// entry.Column if its timestamp is at most entry.TS, and keeps it
	// otherwise: a newer commit notified again after the observer read the
	// entry it ran for. Entries that are gone already are skipped. Either
	// way the entries' claims (ScanNotifyRequest.Scanner) end.
	ClearNotify(ctx context.Context, region RegionCtx, entries []NotifyEntry) error

	// ScanChanges reads committed changes between two timestamps (see
	// the request); a change feed follows a range with it.
	ScanChanges(ctx context.Context, req *ScanChangesRequest) ([]Change, error)

	// Coprocessor evaluates a program over a range of one region at a
	// version, next to the data (see CoprocessorRequest, copr.go).
	Coprocessor(ctx context.Context, req *CoprocessorRequest) (*CoprocessorResponse, error)
	// LockWaitInfo lists the lock requests waiting now in every store
	// the client reaches (TiKV's GetLockWaitInfo): in process, the
	// store's (Store.LockWaits); in a cluster, each KV node's. It is for
	// operators (information_schema.DATA_LOCK_WAITS, the process list):
	// a store that does not answer is named in the error, and the waits
	// of the others are returned with it.
	LockWaitInfo(ctx context.Context) ([]LockWait, error)
	// LockWaitCounts returns the lock-wait counts of every store the
	// client reaches, summed (InnoDB's Innodb_row_lock_* on any SQL
	// node): in process, the store's (Store.LockWaitStats); in a
	// cluster, each KV node's. Like LockWaitInfo, a store that does not
	// answer is named in the error, which comes with the others' sum.
	LockWaitCounts(ctx context.Context) (LockWaitStats, error)
}

// Splitter splits regions on request (SPLIT TABLE): the in-process
// client splits its store's region map (Store.SplitRegion), and a
// cluster's client asks the region's leader, which splits it through
// raft. Not every Client is one.
type Splitter interface {
	// SplitRegion cuts the region holding key at key: the region keeps
	// its id and the keys below key (left), a new region takes key and
	// the rest (right). It fails when key is already a region's start.
	SplitRegion(ctx context.Context, key []byte) (left, right RegionInfo, err error)
}

// AsSplitter returns c's Splitter, looking through an Instrument
// wrapper; false when c cannot split regions.
func AsSplitter(c Client) (Splitter, bool) {
	if i, ok := c.(*instrumented); ok {
		c = i.c
	}
	sp, ok := c.(Splitter)
	return sp, ok
}

// LockInfo describes a lock met by a reader or writer.
type LockInfo struct {
	Key         []byte
	Primary     []byte
	StartTS     uint64
	TTL         uint64
	Type        Op // OpPut, OpDelete, OpLock or OpPessimisticLock
	MinCommitTS uint64
	TxnSize     uint64
	// ForUpdateTS is the for_update_ts of a pessimistic transaction's
	// lock (0 for an optimistic one): versions of the key may have
	// committed up to it, none above it while the lock is held.
	ForUpdateTS uint64
}

// KeyIsLockedError: the key is locked by another transaction. A read
// that met several locks (BatchGet, Scan) reports the first in Lock and
// the others, in the order the read met them, in More; at most
// MaxLocksPerResponse in all.
type KeyIsLockedError struct {
	Lock LockInfo
	More []LockInfo
}

func (e *KeyIsLockedError) Error() string {
	msg := fmt.Sprintf("key %q is locked by txn %d (primary %q, ttl %d ms)", e.Lock.Key, e.Lock.StartTS, e.Lock.Primary, e.Lock.TTL)
	if len(e.More) > 0 {
		msg += fmt.Sprintf(", and %d more locked keys", len(e.More))
	}
	return msg
}

// Locks returns every lock the error reports, Lock first.
func (e *KeyIsLockedError) Locks() []LockInfo {
	return append([]LockInfo{e.Lock}, e.More...)
}

// WriteConflictError: another transaction committed the key at or after
// StartTS (first committer wins). MySQL reports it as error 1213.
type WriteConflictError struct {
	Key              []byte
	StartTS          uint64
	ConflictStartTS  uint64
	ConflictCommitTS uint64
}

func (e *WriteConflictError) Error() string {
	if e.ConflictStartTS == 0 {
		// A read validation knows the commit, not its transaction.
		return fmt.Sprintf("write conflict on key %q: txn %d met a write committed at %d", e.Key, e.StartTS, e.ConflictCommitTS)
	}
	return fmt.Sprintf("write conflict on key %q: txn %d met a write committed at %d by txn %d", e.Key, e.StartTS, e.ConflictCommitTS, e.ConflictStartTS)
}

// AlreadyExistsError: an OpInsert or OpCheckNotExists met an existing key.
type AlreadyExistsError struct{ Key []byte }

func (e *AlreadyExistsError) Error() string { return fmt.Sprintf("key %q already exists", e.Key) }

// TxnAbortedError: the transaction was already rolled back on Key (a late
// prewrite or commit after a rollback).
type TxnAbortedError struct {
	Key     []byte
	StartTS uint64
}

func (e *TxnAbortedError) Error() string {
	return fmt.Sprintf("txn %d was rolled back (key %q)", e.StartTS, e.Key)
}

// TxnLockNotFoundError: commit found neither the lock nor a commit record.
type TxnLockNotFoundError struct {
	Key     []byte
	StartTS uint64
}

func (e *TxnLockNotFoundError) Error() string {
	return fmt.Sprintf("txn %d: lock on key %q not found", e.StartTS, e.Key)
}

// CommittedError: a rollback was asked of a committed transaction.
type CommittedError struct {
	Key      []byte
	StartTS  uint64
	CommitTS uint64
}

func (e *CommittedError) Error() string {
	return fmt.Sprintf("txn %d already committed at %d (key %q)", e.StartTS, e.CommitTS, e.Key)
}

// RegionError: the request was routed to a region the store does not serve
// as named; the client refreshes its route and retries.
type RegionError struct {
	RegionID uint64
	Reason   string // "not found", "epoch not match", "key not in region", "not leader"
	// Current is the store's view of the region, when known.
	Current *RegionInfo
}

func (e *RegionError) Error() string {
	return fmt.Sprintf("region %d: %s", e.RegionID, e.Reason)
}

// CommitTSExpiredError: the commit timestamp is below the lock's
// min_commit_ts, which a reader pushed above its own timestamp through
// CheckTxnStatus so that it could read past the lock. Committing lower would
// change what that reader saw; the client commits again with a newer
// timestamp from the oracle.
type CommitTSExpiredError struct {
	Key         []byte
	StartTS     uint64
	CommitTS    uint64
	MinCommitTS uint64
}

func (e *CommitTSExpiredError) Error() string {
	return fmt.Sprintf("txn %d: commit_ts %d is below min_commit_ts %d of key %q", e.StartTS, e.CommitTS, e.MinCommitTS, e.Key)
}

// DeadlockError: waiting for the lock of LockTS on Key would close a cycle
// of transactions waiting for each other (MySQL 1213). The transaction
// StartTS that asked is the one refused; it should roll back, which
// releases its locks and breaks the cycle.
type DeadlockError struct {
	Key     []byte
	StartTS uint64
	LockTS  uint64
	// Chain is the cycle: each entry waits for the next one's lock, the
	// last for StartTS.
	Chain []WaitForEntry
}

// WaitForEntry is one edge of the wait-for graph: Txn waits for the lock
// of WaitForTxn on Key.
type WaitForEntry struct {
	Txn        uint64
	WaitForTxn uint64
	Key        []byte
}

func (e *DeadlockError) Error() string {
	return fmt.Sprintf("deadlock: txn %d waiting for the lock of txn %d on key %q closes a cycle of %d transactions", e.StartTS, e.LockTS, e.Key, len(e.Chain)+1)
}

// PessimisticLockNotFoundError: a prewrite of a pessimistic mutation found
// no pessimistic lock of its transaction on the key (it was removed by a
// resolver that judged the transaction dead, or never taken).
type PessimisticLockNotFoundError struct {
	Key     []byte
	StartTS uint64
}

func (e *PessimisticLockNotFoundError) Error() string {
	return fmt.Sprintf("txn %d: pessimistic lock on key %q not found", e.StartTS, e.Key)
}
