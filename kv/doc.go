// Package kv is percdb's storage node: a Percolator store over Pebble, the
// regions it serves, and the Client contract (api.go) through which the
// transaction layer (package txn) talks to it.
//
// # Key spaces
//
// Pebble has one ordered key space and no column families, so the three
// Percolator columns are three key spaces told apart by a prefix byte (see
// internal/keyspace for the byte layout). User keys are memcomparable-
// encoded (package memcomparable) so that a timestamp can follow them
// without breaking key order:
//
//	'l' enc(key)              lock:   Lock{type, primary, start_ts, ttl, short value, min_commit_ts, txn_size}
//	'w' enc(key) ^commit_ts   write:  Write{type Put/Delete/Lock/Rollback, start_ts, short value}
//	'd' enc(key) ^start_ts    data:   values longer than 255 bytes
//	'v' enc(key)              latest: commit_ts + a copy of key's newest Put
//	                          or Delete write record (latest.go)
//	'n' enc(key) enc(column)  notify: commit_ts of the newest commit of key
//	                          that notified the observer column (notify.go)
//	'm' ...                   meta:   store-local metadata (region descriptors)
//
// The latest space is not Percolator's: while a store keeps it, every
// batch it applies (on every replica) also rewrites the copy of each key
// whose Put or Delete record the batch writes, so that a forward walk at
// the present (Scan, Coprocessor) reads one record a key instead of
// stepping over the younger versions GC may not delete yet; a copy newer
// than the walk's timestamp sends that key to its versions. Reverse
// walks, point reads and every write's checks read the write space.
// Whether a store keeps the space is its own state (latestswitch.go): on
// while its forward walks pay for it, backfilled when it goes on, cleared
// when it goes off, so a store that only takes writes keeps none; in the
// automatic mode each range (a table's rows, or its indexes) is weighed
// and switched on its own, so a write-heavy table beside a scanned one
// pays nothing for the other's copies (latestranges.go). The
// replicated batches carry no copies. A store that keeps the space must
// not be opened by a percdb older than it, which would commit without
// the copies (the marker 'm' 'v' says the space is complete).
//
// Timestamps are inverted (^ts, big-endian) so the newest version of a key
// sorts first and a seek to enc(key)+^ts finds the newest version at or
// below ts. A value of at most 255 bytes rides in the lock at prewrite and
// moves into the write record at commit, so reading it is one seek; a longer
// value goes to the data space at prewrite and stays there.
//
// Pebble's comparer (comparer.go) orders keys bytewise as ever, and its
// Split cuts a write or data key into its version prefix ('w'/'d' and
// enc(key)) and its timestamp (keyspace.VersionSplit). So a forward walk
// leaves the older versions of a key it decided with one NextPrefix where
// keys keep older versions (decideForward), the sstables' bloom filters
// hold version prefixes, and a read of one key's versions is a
// SeekPrefixGE that skips the files without any of them. The sstables
// are of format Pebblev3: a data block marks each key that shares its
// version prefix with the one before, so NextPrefix steps over older
// versions by a bit, and their values live in value blocks apart from
// the newest versions. Stores written before the split open and are
// ratcheted to that format: their filters, of whole keys, are ignored,
// and their tables carry no prefix marks (comparer.go says why that is
// all that was needed).
//
// # Commands and their rules
//
// The commands are TiKV's (src/storage/txn/actions): Get, BatchGet and Scan
// read, and so does percdb's ValidateReads; Prewrite, Commit, BatchRollback, Cleanup, CheckTxnStatus,
// ResolveLock, TxnHeartBeat, AcquirePessimisticLock and
// PessimisticRollback write. Their rules, in short:
//
//   - Read at ts: a lock of a transaction with start_ts <= ts blocks the read
//     (*KeyIsLockedError), unless it is a Lock-type or Pessimistic lock (it
//     changes no value) or its min_commit_ts is above ts. Reads at MaxTS are blocked by
//     every such lock too. Then the newest Put or Delete record with
//     commit_ts <= ts decides; Lock and Rollback records are skipped.
//     A Lock record points at the key's last change below it (its
//     commit_ts and how many records down, TiKV's last_change_ts), which
//     Commit writes from the records under the key's latch, where no
//     change can commit below it any more: a reader at the record seeks
//     there when it is more than a few records down (a point read sooner
//     than a walk, whose seek costs more) and stops at once when there
//     is no change below. A committed SELECT ... FOR UPDATE leaves a
//     Lock record on every row it locked, which every later read of the
//     row stepped over one by one until GC collected them. Rollback
//     records carry no pointer: a rollback may land at a start_ts below
//     which a transaction still holding a lock commits later. Lock
//     records written before the pointer existed read as before.
//   - Prewrite: another transaction's lock -> *KeyIsLockedError; a Rollback
//     record at start_ts -> *TxnAbortedError; a write record with commit_ts
//     >= start_ts (> max(start_ts, SnapshotTS) for a pessimistic
//     transaction's key it did not lock) -> *WriteConflictError; the transaction's own lock ->
//     idempotent success; OpInsert/OpCheckNotExists on an existing key ->
//     *AlreadyExistsError. All keys are checked and all failures reported;
//     if any key fails nothing is written.
//   - Commit: commit_ts must exceed start_ts and reach the lock's
//     min_commit_ts (*CommitTSExpiredError). The lock becomes a write
//     record, in one batch. A missing lock is success if the transaction's
//     commit record exists, *TxnAbortedError if its Rollback record does,
//     else *TxnLockNotFoundError.
//   - Rollback (BatchRollback, Cleanup, and the rollbacks of CheckTxnStatus
//     and ResolveLock): delete the lock and write a Rollback record at
//     start_ts, also when there is no lock, so that a late prewrite fails. A
//     committed transaction cannot be rolled back (*CommittedError).
//   - CheckTxnStatus on the primary key: committed -> its commit_ts; lock
//     alive (physical(start_ts)+ttl >= physical(current_ts)) -> its TTL, and
//     min_commit_ts pushed above the caller's start_ts; lock expired -> roll
//     back; neither lock nor record -> a Rollback record when asked.
//   - TxnHeartBeat raises the primary lock's TTL.
//   - Notifications (Percolator's, notify.go): a mutation's Notify columns
//     ride in its lock; whatever commits the lock (Commit, ResolveLock,
//     1PC) sets the key's notify entry of each column to the commit_ts in
//     the same batch. ScanNotify reads entries without latches, and
//     keeps the observers' scanners' positions and claims so that
//     scanners of every process avoid each other (notifyscanners.go);
//     ClearNotify deletes one unless a newer commit set it again.
//   - ScanChanges (changes.go) reads the Put and Delete records committed
//     to a range in (from, to], for a change feed; like a read at to it
//     raises max_read_ts and reports the locks that could still commit
//     at or below to.
//
// # Coprocessor
//
// Coprocessor (copr.go) is a read that evaluates a program next to the
// data: it walks a range of one region at a version as Scan does, under
// the same lock rules (the locks that block the read in the part of the
// range walked fail it with *KeyIsLockedError), and feeds the visible
// pairs to a program compiled by the Coprocessor the store was opened
// with (Options.Coprocessor; package executor/copr's Evaluator for table
// rows). The answer is the program's output, and where the walk stopped
// when the output filled a response. A Reverse request walks its range
// (the last of its ranges first) from the end down, and stops below the
// last key fed, so that a program that wants the last rows of a range
// (ORDER BY ... DESC LIMIT, MAX) reads those and no more; the locks of
// the part walked, from its end down to where it stopped, fail it as
// forwards. A program that reads no value
// (KeyOnlyProgram: a count) is fed keys only, so a walk of rows whose
// values live in the data space reads none of them. Requests and
// responses are plain bytes and integers, for the wire.
//
// # Pessimistic locks
//
// A pessimistic transaction (TiKV's, src/storage/txn/actions/
// acquire_pessimistic_lock.rs) locks the keys a statement writes or locks
// before it prewrites, at the statement's for_update_ts:
//
//   - AcquirePessimisticLock: another transaction's lock ->
//     *KeyIsLockedError (after waiting, below); a Rollback record of this
//     transaction -> *TxnAbortedError; a Put or Delete record newer than
//     for_update_ts -> *WriteConflictError carrying its commit_ts (or,
//     with LockWithConflict, the lock taken as of that commit and the
//     commit_ts reported: TiKV's fair locking); an
//     existence check on a key with a value -> *AlreadyExistsError; else
//     a lock of type Pessimistic (no value, for_update_ts recorded). The
//     transaction's own pessimistic lock moves to the newer for_update_ts,
//     and a Put or Delete newer than the request's for_update_ts (older
//     than the lock) is reported as above: the request may be one sent
//     again whose answer was lost, and must answer as its first attempt
//     did (else its statement writes from a snapshot missing that
//     commit: a lost update).
//   - Readers never block on a pessimistic lock: it has no value, and the
//     commit_ts of the prewrite that gives it one is fetched after that
//     prewrite, above every read that passed the lock.
//   - AcquirePessimisticLock with a Range (lockrange.go) is a locking
//     range read: the keys a read of the range at for_update_ts finds
//     are locked under the rules above in the same request and returned
//     with their values. The read and the locks are two steps of one
//     request, not one latched command, and need not be: a commit at or
//     below for_update_ts had its lock in place before for_update_ts was
//     handed out, so the read meets it (and waits for it in its key's
//     queue, then reads again), and a commit above it is a conflict of
//     the key locked.
//   - Prewrite of a Mutation.Pessimistic turns the lock into an ordinary
//     one without conflict checks (writers were excluded since
//     for_update_ts); a missing lock fails (*PessimisticLockNotFoundError,
//     or *TxnAbortedError after a rollback). The new locks keep
//     for_update_ts and get min_commit_ts = for_update_ts+1, and a 1PC
//     commit_ts is above for_update_ts: versions of the keys may have
//     committed between start_ts and for_update_ts.
//   - PessimisticRollback removes the transaction's pessimistic locks at
//     or below a for_update_ts (a failed statement gives its locks back).
//   - ValidateReads (percdb's; TiKV has none): is there a Put or Delete
//     committed in (from, to] on any of some keys or in some ranges? A
//     pessimistic transaction asks before it moves its snapshot from
//     from to to (package txn). It is a read at to: to goes into the
//     region's max_read_ts, 1PC commits in flight are waited for, and a
//     lock that blocks a read at to is reported (*KeyIsLockedError) when
//     no change was found, unless its transaction is named in
//     BypassLocks.
//   - Both write without waiting for the WAL sync, as TiKV keeps
//     pessimistic locks in memory: a pessimistic lock lost in a crash
//     makes its transaction's prewrite fail (the lock is checked there),
//     never lets a conflicting write through unnoticed.
//   - Lock resolution treats a pessimistic lock as any other: a dead
//     transaction's are rolled back (CheckTxnStatus on the primary, TTL,
//     ResolveLock); the heartbeat extends a pessimistic primary; a
//     committed transaction's leftover pessimistic lock (a key locked and
//     never written) is simply removed by ResolveLock, and refused by
//     Commit.
//
// # Lock waiting and deadlock detection
//
// An AcquirePessimisticLock with a WaitTimeout that meets another
// transaction's lock joins the key's wait queue (lockwait.go, TiKV's
// waiter manager) while it still holds the key's latch, so the release,
// which needs the latch, finds it. Every command that deletes locks wakes
// the first waiter of each key after its batch is applied; the woken
// request tries again at the head of the queue, and passes the turn on
// unless it waits again, so waiters are served in the order they came.
// One wait lasts at most Options.LockWaitSlice (1 s): the request then
// answers *KeyIsLockedError and the client checks the owner through its
// primary (rolling back a dead one) before asking again, so a crashed
// client's locks are waited for about their TTL, not the whole timeout.
//
// Before waiting, the request asks the DeadlockDetector (deadlock.go)
// to record the edge waiter -> holder in the wait-for graph; an edge that
// closes a cycle is refused with *DeadlockError, so exactly the
// transaction that closed the cycle is told, and its rollback releases
// the others. The seam: the store knows the detector only through the
// DeadlockDetector interface (Options.DeadlockDetector). In one process it
// is embedded (NewDeadlockDetector), shared by the stores of the process.
// In a cluster, as in TiKV (src/server/lock_manager/deadlock.rs), one
// detector lives on the leader of the region that holds the first key of
// the key space, and every store's detector is a client of it that sends
// its waits there (package kv/deadlock; the graph is WaitForGraph, which
// there also expires edges whose end was never reported); the wait
// queues stay on the store that holds each key, since only its applier
// sees the releases. Operators see them through Client.LockWaitInfo (the
// store's LockWaits in process; every KV node's over gRPC).
//
// Calculated commit timestamps (1PC) are not unique: a commit record may
// sit at the very timestamp a rolled-back transaction started at. A
// Rollback record never overwrites a commit record: it becomes a flag on it
// (Write.OverlappedRollback, tikv#8349), and prewrite and commit read the
// flag as the rollback it stands for.
//
// # Latches and the applier
//
// Each write command takes the per-key latches of its keys (a fixed table
// of slots picked by key hash, taken in slot order, so commands cannot
// deadlock), reads the keys' records, decides, and fills one write batch;
// the batch is applied atomically while the latches are held. That is
// Percolator's single-row transaction. Reads take no latches: they read a
// consistent view of Pebble (a snapshot, or one iterator; see "The lock
// set" below), and Percolator's timestamp order does the rest (a
// commit_ts at or below a read's ts was issued after the prewrite's locks
// were in place, so the read sees the lock or the commit).
//
// A synced batch gives its latches up, and wakes the lock waiters of the
// keys it unlocked, once it is visible, before its WAL sync ends
// (writeBatch.visible, Pebble's ApplyNoSyncWait); the command answers
// after the sync. So the next owner of a hot row works during the
// holder's fsync instead of after it, as InnoDB releases row locks
// before its log flush. Nothing acknowledged can be lost by it: Pebble
// shows a batch to reads before its sync in any case, and the WAL is one
// sequence, so whatever the next owner commits (synced) is durable only
// with the batch it read. A Commit or Prewrite that writes nothing
// answers "durable" from what it read (sent again, it finds its work
// done), so while such a batch is unsynced it syncs the WAL before it
// answers. A batch a
// Replicator replicates keeps its latches until it is applied.
//
// Point lookups (a key's lock, a long value, one write record) are Pebble
// Gets, not iterator seeks: every committed key leaves a tombstone in the
// lock space, and a seek would step over all the tombstones after the key
// until compaction drops them. Lock-space scans (Scan's lock check,
// ResolveLock over a region) use iterators bounded to their range; Scan
// checks locks only over the part of its range that its page covered
// (walking the write space first), so a range read page by page visits
// each lock or tombstone once, and reports every blocking lock it met
// there, up to MaxLocksPerResponse, in one *KeyIsLockedError.
//
// Commands never write to Pebble directly: they hand their batch to an
// applier. The single-node applier commits it to Pebble. A command run
// with a Replicator in its context (WithReplicator; a KV node of a cluster
// passes its region's raft leadership, package kv/raftstore) hands the
// encoded batch (replicate.go) to it instead, with its latches held; every
// replica applies it with ApplyReplicated, the commands unchanged. A
// replica drops applied raft log entries only after Sync made them
// durable, and a follower behind the truncated log gets a region's keys
// from the leader's ExportRange, installed by ImportRange (snapshot.go).
//
// # The lock set
//
// Nearly every key a read asks for has no lock, and the Pebble lookup
// that says so misses through every level: it was about 45% of a point
// read. So the store keeps in memory the set of keys that hold a lock
// (lockset.go), rebuilt from the lock space at open and maintained by the
// applier around each batch it applies: a lock's key is added before the
// batch that writes the lock is applied and removed after the batch that
// deletes it is, so the set never lacks a lock Pebble holds. A command
// holding a key's latch trusts the set on that key outright. Get and
// BatchGet probe the set without latches; each shard of the set counts its
// changes, and a read whose keys were absent at the probe, in shards that
// did not change until its Pebble reads were done, skips the lock space.
// Any other read, or one whose shard changed, reads the locks from a
// snapshot as before. A Scan skips the lock space when the whole set was
// empty and no key was added to it until the walk was done.
//
// Such a read or scan seeks the write records with a cached iterator
// (itercache.go): opening and closing a Pebble iterator cost about as much
// as the seek. The applier bumps the cache's generation after every batch
// that changes the write space, before the lock set forgets the locks the
// batch deleted, and an iterator is reused only within the generation it
// was opened in, so it sees every such batch applied before the read
// began. The applier also raises, per slot of keys (by hash), the
// generation of the last batch that changed a key's write records, so a
// point read or a write command reuses an older iterator when no batch
// since it was opened changed its keys (under its latches a command's
// keys were last written by batches counted before it took them).
//
// # Regions and max_read_ts
//
// Even a single store serves its key space as regions: descriptors (id,
// [start, end), epoch) kept in the meta space, one region over everything
// at first. SplitRegion cuts one in two and bumps the epoch version of both
// halves. Every command names a region (RegionCtx); an unknown region, an
// epoch mismatch or a key outside the region's range is a *RegionError, on
// which the client re-routes.
//
// Each region records max_read_ts, the largest timestamp a read on it used
// (Get, BatchGet, Scan, and CheckTxnStatus's caller_start_ts), except MaxTS,
// which was not issued by the oracle. It lives in memory only: after a
// restart it is unknown, and the node must call UpdateMaxReadTS with a fresh
// oracle timestamp before serving one-phase commits.
//
// # One-phase commit
//
// A Prewrite with TryOnePC, all of whose keys pass the prewrite checks and
// none of which this transaction has locked already, commits at once:
// commit_ts = max(start_ts, max_read_ts)+1, and the write records are
// written directly, without locks. If that timestamp exceeds MaxCommitTS the
// prewrite proceeds as usual and OnePCCommitTS is 0. A read that raced with
// the calculation could otherwise miss the commit; the memory lock table
// (memlock.go) makes such a read wait for it.
//
// # Durability
//
// With Options.SyncWrites at its default, SyncAlways, every command's batch
// is in the synced write-ahead log before the command returns: a commit that
// returned survives kill -9 and power loss. SyncNone trades that for speed.
// Close waits for the commands in flight; later commands get ErrClosed.
// It stops waiting for writes the storage holds on a full disk after a
// bound, with ErrCloseInDoubt (Store.Close).
//
// # Garbage collection
//
// Old versions are collected by a scanning worker (package gcworker)
// that sends GC requests region by region through GCClient (gc.go); the
// store side of it is here. A GC request at safe point sp keeps, for each
// key, every version above sp and the newest Put at or below it, and
// deletes the rest at or below sp: older versions, Lock and Rollback
// records, a Delete that is the newest at or below sp, and the data
// records of the Puts it deletes. One request examines a bounded number
// of keys (and deletes at most 4,096 records, resuming inside a key with
// more), decides without latches, and applies its deletions as one batch
// under the latches of the keys it changes: nothing it deletes can be
// written again, since every commit from then on is above sp. A Lock
// record's pointer stays safe: the Put it points at is the newest at or
// below sp when the record is above sp (kept), and a Delete it points at,
// deleted with everything below it, leaves the reader that seeks there
// no record, that is no value, as the Delete said.
//
// The store records the highest safe point it collected at, durably,
// before it deletes anything, and from then on refuses a read below it
// and a prewrite or pessimistic lock at or below it (*GCTooOldError,
// MySQL 9006): the versions the read needs, or the Rollback record that
// would stop a late prewrite, may be gone. Reads check after reading, so
// that one racing with a GC batch sees the raised point.
//
// Why a scanning worker and not a compaction hook: Pebble 1.1.5 has no
// compaction filter (TiKV's GC runs in RocksDB's since 5.0), and a hook
// patched into compactions would have to know the safe point and the
// newest version of each key across levels, which a compaction of one
// level's files does not see; it would also not work the same when the
// regions live on other nodes, where the worker's requests do. The cost
// of scanning is what TiKV's users met (tikv#9216: GC rescanning quiet
// ranges), so each region counts the batches written to it
// (regionGC) and remembers whether its last complete pass met a version
// above that pass's safe point: a region with neither is quiet and its
// next GC request answers Skipped without a scan. That state is in
// memory: after a restart each region is scanned once.
//
// Dropped tables and indexes are not collected version by version:
// UnsafeDestroyRange deletes their keys from the three spaces with
// Pebble range deletions, once the DROP committed below the safe point,
// and compacts the ranges so that the space returns at once (tikv#11902,
// tikv#17256). ScanLock lists a region's locks older than a timestamp,
// which the worker resolves before it collects.
package kv
