// Package txn is percdb's Percolator transaction client: snapshot
// isolation over the MVCC key-value store of package kv, with timestamps
// from an Oracle, in the style of TiKV's client-go.
//
// # Pieces
//
// A Store is shared by every session of a process. It owns the kv.Client,
// the Oracle, the LockResolver, the heartbeat goroutine and the goroutines
// that finish commits in the background. A Txn is one transaction of one
// session: its start_ts, and a memBuffer of its writes. Nothing reaches
// the store before Commit: reads go to the snapshot, writes to the buffer.
//
// # Reads
//
// A transaction fetches its start_ts from the oracle lazily, at its first
// read (or at commit for blind writes), so a transaction that only writes
// costs one timestamp and one that does nothing costs none. Get, BatchGet
// and Iter read the buffer first (read-your-writes) and the snapshot at
// start_ts for the rest: each request is routed with LocateKey and names
// its region; a *kv.RegionError drops the route and retries (bounded).
// Iterators page through a region at a time, ScanPageSize pairs per
// request, ascending or descending; a caller that expects to need few
// pairs asks for a smaller first page (IterOptions.FirstPage).
//
// A read that meets a lock (*kv.KeyIsLockedError) asks the LockResolver.
// The fate of a Percolator transaction is decided by its primary lock
// alone, so the resolver calls CheckTxnStatus on the primary's region:
//
//   - committed: the lock met is committed at the same commit_ts (rolled
//     forward) and the read retried;
//   - rolled back, or its TTL ran out (CheckTxnStatus then rolls the
//     primary back itself): the lock met is rolled back and the read
//     retried;
//   - alive: CheckTxnStatus pushes the primary's min_commit_ts above the
//     reader's start_ts (the store then refuses to commit below it, see
//     *kv.CommitTSExpiredError), so the writer will commit above the
//     reader, and the reader reads past the lock: it reads the key at
//     lock.start_ts-1, which returns the newest version committed before
//     the lock (no version of a locked key can commit at or after its
//     lock's start_ts, or that prewrite would have failed). Scans read
//     past every lock of such a transaction at once: they name it in
//     their later requests (kv.ScanRequest.BypassLocks) and the store
//     skips its locks;
//   - no primary lock and no record: the primary's prewrite is still on
//     its way (batches are prewritten in parallel), so the writer has not
//     fetched its commit_ts yet and will commit above the reader, which
//     reads past.
//
// Decided fates are cached (they never change), so the locks of one dead
// transaction cost one CheckTxnStatus. A read reports every lock it met
// (up to kv.MaxLocksPerResponse; a scan only those of the part of the
// range its page covers), and they are settled in one round
// (LockResolver.ResolveLocks): the locks of a decided transaction of at
// least bigTxnKeys keys with one ResolveLock per region, which pages
// through the region's lock space and resolves all of the transaction's
// locks there (readers that meet the transaction at once share that
// request; a region already resolved so gets only the keys met named);
// those of a smaller one with one ResolveLock naming the keys met. A dead transaction of n keys costs its reader O(n), not one
// scan of the remaining range per lock. Every loop of reading, waiting
// and resolving stops when its context ends.
//
// Store.PointGet is an autocommit read without a timestamp: it reads at
// kv.MaxTS and fetches nothing from the oracle. At MaxTS, a lock whose
// primary is not committed is read past (the read linearizes before that
// commit), a committed one is rolled forward, a rolled back one rolled
// back. TTLs are then judged by the local clock, which is safe: a
// primary's commit and its rollback exclude each other at the store, so a
// rollback never undoes an acknowledged commit. Store.BatchPointGet does
// the same when all its keys lie in one region and its one request meets
// no lock (one request reads one storage snapshot); otherwise reading key
// by key could show a transaction committing meanwhile in some keys and
// not others, so it takes one timestamp and reads a snapshot.
// Store.BeginLatest extends this to one autocommit statement's read of
// any kind (latest.go): its first request goes at kv.MaxTS and stands
// only if it serves the whole read, meets no lock and no stale route;
// otherwise what it returned is dropped before anything of it is handed
// out and the read is made at a start_ts; a second read fails with
// ErrLatestSpent.
//
// Txn.Coprocessor walks the outputs of a program evaluated next to the
// data (kv.CoprocessorRequest) region by region at the snapshot, meeting
// locks as a scan does (resolved, read past or waited for, then the
// request is sent again). The store sees committed data only, so a
// transaction with buffered writes in the range gets ErrBufferedWrites
// and its caller evaluates over Iter instead. Txn.CoprocessorReverse
// walks the ranges in descending key order: the regions from the one
// holding the keys just below the end of the last range backwards (as a
// reverse scan finds them), each request's part of the ranges read from
// its end down (kv.CoprocessorRequest.Reverse), a page resumed below the
// last key it fed.
//
// # Commit
//
// Commit turns the buffer into sorted mutations (a put, a delete, an
// insert that must not overwrite, a lock-only key from LockKeys, an
// existence check for a key inserted then deleted) and:
//
//  1. chooses the primary: the first key in order that takes a lock;
//  2. groups the mutations by region (LocateKey) and cuts each group into
//     batches of about BatchBytes;
//  3. one phase (1PC) when every key is in one region and the batch is at
//     most OnePCMaxBytes: one Prewrite with TryOnePC and MaxCommitTS =
//     (the largest timestamp this Store has received from the oracle)+1.
//     The store commits at max(start_ts, the region's max_read_ts)+1 if
//     that is within MaxCommitTS. The bound is safe because every
//     timestamp the oracle issues later is at least that, so a transaction
//     that starts after this commit returns sees it; and the region's
//     max_read_ts puts the commit above every read that already happened
//     (repeatable read). No commit timestamp is fetched. If the store
//     answers OnePCCommitTS == 0 it prewrote instead, and the commit goes
//     on in two phases;
//  4. two phases (2PC): every batch is prewritten in parallel, the
//     primary's included, with the lock TTL (LockTTL plus the time since
//     start_ts, so that a transaction that read for long is not born
//     expired) and the transaction's size. Once the primary is locked the
//     heartbeat extends its TTL every HeartbeatInterval until the commit
//     point is passed or the commit fails, so a slow commit is not taken
//     for a dead one;
//  5. fetches commit_ts from the oracle and commits the primary alone:
//     that is the commit point. A *kv.CommitTSExpiredError (a reader
//     pushed min_commit_ts) fetches a newer commit_ts and commits again;
//  6. answers the caller, and commits the secondaries in the background on
//     a Store goroutine (bounded by MaxBackgroundCommits; Close waits for
//     them). A secondary left locked by a crash is rolled forward by
//     whoever meets it.
//
// A prewrite (of a key not pessimistically locked) that meets another
// transaction's lock resolves it as a read
// does (without pushing anything) and retries the batch. If the lock's
// owner is alive, the committer waits with exponential backoff, up to
// LockWaitTimeout (ErrLockWaitTimeout) — but only for a younger owner.
// Meeting the live lock of an older transaction, it fails at once with
// ErrWriteConflict (wait-die): since waits only go from older to younger
// transactions, two committers can never wait for each other, and the
// heartbeat, which keeps a waiting committer's locks alive, cannot turn a
// cycle into a stall. The younger transaction would most likely have hit
// a write conflict anyway once the older one committed.
//
// A write conflict (a version committed at or after start_ts: first
// committer wins), an existing key under an insert, or a transaction
// already rolled back by someone else fails the commit: every key is
// rolled back (BatchRollback, which leaves Rollback records so that a
// prewrite still in flight fails) and the error returned, wrapping the
// sentinel (ErrWriteConflict, ErrAlreadyExists, ErrTxnAborted) and the kv
// error. A conflict is never retried silently: the transaction's reads may
// be stale, and re-running it is the client's decision (MySQL 1213).
//
// If the primary's commit fails in a way that does not tell whether it
// took effect, Commit returns ErrUndetermined and leaves the locks for
// resolution.
//
// # Pessimistic transactions
//
// A transaction made pessimistic (Txn.SetPessimistic; TiDB's pessimistic
// mode over TiKV's AcquirePessimisticLock, with PostgreSQL's
// REPEATABLE READ rule for conflicts so that it stays snapshot isolation)
// locks what a statement writes or locks while the statement runs,
// instead of finding conflicts at commit. The caller (the SQL layer) runs
// each such statement after Txn.BeginStatement and in a stage
// (Txn.Staging), reading at the snapshot
// as every statement does, buffering its writes, and calls
// Txn.LockKeys(ctx, SnapshotTS, keys...) on the keys it writes or locks
// before anything of it reaches the client.
//
// LockKeys sends AcquirePessimisticLock per region, the primary's first:
// the primary is the first key the transaction ever locks, and every lock
// names it. A key held by another transaction is waited for in the
// store's queue for that key (kv doc.go, "Lock waiting"), woken in order
// when the holder commits or rolls back, up to the lock wait timeout
// (Txn.SetLockWaitTimeout, innodb_lock_wait_timeout): ErrLockWaitTimeout,
// after which the caller rolls back the statement only (its locks stay, as
// InnoDB's do). The store waits in slices; between two, the client checks
// the holder through its primary and rolls it back if its TTL has run out,
// so a crashed client's locks delay a waiter about their TTL. A wait that
// would close a cycle in the wait-for graph fails with ErrDeadlock, and
// the transaction is rolled back at once so that the others of the cycle
// go on (MySQL 1213).
//
// A statement that reads a key only to write or lock it (an UPDATE or
// DELETE of a row by its key, SELECT ... FOR UPDATE) may lock it first
// with Txn.LockKeysReading: the store returns the key's newest value with
// the lock (kv's ReturnValues), the transaction keeps it as the value of
// a key it holds (lockedvalues.go), and the statement's read of it asks
// the store for nothing. One request, and one walk of the key's write
// records, where a read and a lock were two.
//
// Txn.LockRange does the same for a range (SELECT ... FOR UPDATE over a
// key range, an UPDATE or DELETE by a key prefix): one request per
// region (kv's AcquirePessimisticLockRequest.Range) reads up to a limit
// of the range's pairs at for_update_ts and locks them, the store
// choosing the primary when the transaction has none yet. A transaction
// with writes of its own in the range reads and locks as before.
//
// A key written with Txn.SetCovered or DeleteCovered (a non-unique index
// entry, whose key holds its row's handle, so that only a writer of the
// row writes it) need not be locked: Txn.LockableSince leaves it out of
// what a statement locks, as TiDB locks only row keys and unique index
// keys. Its prewrite is that of an optimistic transaction's key (not
// kv.Mutation.Pessimistic): it fails on a version committed after the
// snapshot the transaction reads at, which no writer holding the row's
// lock can have made (the row's lock would have met that commit and moved
// the snapshot to it). An UPDATE of an indexed column or a DELETE thus
// locks its row alone, first, reading it with the lock.
//
// A key whose newest Put or Delete committed after the snapshot is locked
// all the same (kv's LockWithConflict: a waiter keeps the lock it waited
// for, as with TiKV's fair locking), but LockKeys returns
// ErrForUpdateConflict. First committer wins: the transaction may not
// write over a commit it did not see. Unless it can move its snapshot
// past that commit (RefreshSnapshot): the caller undoes the statement's
// writes (Cleanup), moves the snapshot to T and runs the statement
// again, and finds its keys locked already. T is the newest commit the
// statement's locks met: the earliest snapshot at which its locked keys
// read as they are now (nothing committed to them since their locks), so
// the fewest commits of others to validate the earlier reads against (a
// row the transaction read and another changed after that commit does
// not refuse the move); a retry for another cause (ErrAlreadyExists)
// takes a fresh timestamp.
//
// # Moving the snapshot: read validation
//
// A transaction that read at snapshot S may move to T only if it is
// equivalent to one that began at T: if nothing it read changed in
// (S, T]. So a pessimistic transaction remembers its reads (readSet): the
// keys Get and BatchGet fetched from the snapshot and the ranges its
// iterators covered (the whole range when opened, narrowed at Close to
// the part up to the last key the consumer saw). RefreshSnapshot sends the
// reads of the statements before the current one (the current statement
// runs again, so its reads are dropped) to the store in one kv
// ValidateReads per region: which of these keys, and which keys in these
// ranges, have a Put or Delete committed in (S, T]? That request is a read at T:
// it records T in the region's max_read_ts and waits for 1PC commits in
// flight, so no commit can land at or below T on those keys afterwards,
// and it reports the locks that could still commit at or below T, which
// are settled as a reader at T settles them (resolved, or their
// min_commit_ts pushed above T and then bypassed). T is the conflicting
// commit's commit_ts, or a fresh timestamp, and in both cases one the
// oracle has issued before the validation starts: a 1PC commit_ts is
// calculated and may be the oracle's next timestamp, which a two-phase
// commit holding only pessimistic locks (they block no read) could
// otherwise take after the validation, landing in (S, T] unseen. Keys the transaction
// holds locked pass: nothing committed to them since their lock, and
// before it, their LockKeys would have failed. A changed key is not yet
// a conflict: the transaction reads it at S and at T and asks every read
// that covered it whether what that read used of it is equal (presence
// first: a key present at one and absent at the other differs; then the
// bytes; then the read's ReadComparator). Reads made through a ReadView
// carry the comparator of their reader: the SQL layer's compares the
// columns a statement read of a row (its projection and the columns its
// filters look at), so a transaction that read warehouse.w_tax moves past
// a commit that changed only w_ytd. Other reads carry none and compare
// whole values, so a rewrite of the same value passes too. This keeps
// snapshot isolation: every value the transaction used from its earlier
// reads is what a read at T returns (max_read_ts fixes T's versions on
// the validated keys), and every range it read holds at T the same keys
// with the same used values, so its earlier statements computed at S
// exactly what they would have computed at T, and the transaction is
// equivalent to one that began at T. txn knows nothing of rows: the
// comparator is an interface the SQL layer implements with its row codec,
// and one that answers false is always safe. The store is asked for the
// changes first (kv's ChangesFirst): a move is most often refused for a
// change, and the scan for locks is then spared; if every change passes,
// the store is asked again, locks included, and what it then reports is
// compared as well. If every changed key passes,
// the snapshot moves to T; otherwise (or if a region reports more than
// kv.MaxChangesPerResponse changed keys) RefreshSnapshot fails with
// ErrWriteConflict and the caller rolls the transaction back (1213). The
// read set is bounded (Options.MaxReadSetEntries); a transaction that
// read more cannot move its snapshot once it has read (1213, the rule of
// PostgreSQL's REPEATABLE READ). So "BEGIN; SELECT ... FOR UPDATE;
// UPDATE ...; COMMIT", a transaction that begins with its UPDATE, and one
// that reads other rows first wait instead of failing; one that read the
// very row (or a range) another transaction changed meanwhile, in what it
// read of it, fails, and
// snapshot isolation holds: no lost update (Hermitage P4), no read skew
// (G-single). TiDB's pessimistic mode instead reads the newest data in
// every writing statement without such a check, which lets both through,
// as InnoDB's REPEATABLE READ does.
//
// # Read committed
//
// A pessimistic transaction made READ COMMITTED (Txn.SetReadCommitted,
// readcommitted.go) is that weaker level on purpose: every statement
// reads at a fresh timestamp taken at its first read, and a statement
// that meets a commit newer than its snapshot on a key it locks moves the
// snapshot and runs again without any read validation, so it never fails
// for a concurrent commit. It remembers no reads. Its locks still keep
// every key it writes from others' writes until it ends: no lost update
// of a row it wrote, but read skew and a lost update through a value read
// by an earlier statement are allowed, as in MySQL's READ COMMITTED.
//
// Two timestamps name a pessimistic transaction after a move. start_ts
// stays its identity: every lock it took and will take names it, the
// primary's status and the Rollback records are kept at it, so nothing
// already written changes. The snapshot (SnapshotTS, the read ts) is T:
// reads and for_update_ts of later statements use it. The commit follows:
// the prewrite carries SnapshotTS (kv.PrewriteRequest.SnapshotTS) so that
// the write-conflict check of a key not locked pessimistically looks for
// commits at or after T rather than start_ts (commits in (start_ts, T]
// are before the transaction in the equivalent order; a key it read there
// was validated), and min_commit_ts (ForUpdateTS) is at least T, so the
// commit, 1PC included, lands above every read it made.
//
// A key the transaction holds locked has no commit after its lock until
// the transaction ends, so its snapshot reads return one value from then
// on: the transaction keeps the value a point read found at or above the
// key's newest commit (the statement's read before its LockKeys, at the
// lock's for_update_ts, or a read after the lock) and answers later
// point reads of the key from it (lockedvalues.go): SELECT ... FOR
// UPDATE then UPDATE of the same row reads the store once.
//
// Keys the transaction Inserted are locked with an existence check
// (ErrAlreadyExists, MySQL 1062). While any pessimistic lock is held the
// heartbeat extends the primary's TTL, from the first lock until the
// commit point or the rollback. Commit prewrites every key, marking those
// it holds pessimistic locks on (the store converts them without conflict
// checks and fails if one is missing: a resolver judged the transaction
// dead), with min_commit_ts above the newest for_update_ts; keys locked by
// statements that later failed are committed as lock-only keys, so no
// pessimistic lock outlives the transaction. 1PC works as for optimistic
// transactions, with a commit_ts above every lock's for_update_ts.
// Rollback removes the pessimistic locks (PessimisticRollback, no Rollback
// records).
//
// # Notifications
//
// Percolator's notifications (notify.go): Txn.Notify marks a key the
// transaction commits as notified for an observer's column, and the store
// sets the key's notify entry when the key commits, primary or secondary.
// Store.ScanNotify, Store.ScanNotifyPage (a named scanner's page, which
// leaves out what other scanners hold) and Store.ClearNotify route the
// scanners' reads and clears by region; Txn.Acknowledge is an observer run's acknowledgement,
// an ordinary write of its start_ts, so that of two runs for one
// notification at most one commits. Package observe runs the observers.
// Store.ScanChanges (changes.go) reads the changes committed to a range
// between two timestamps, settling first every transaction that could
// still commit in the interval, for the SQL layer's change feed.
//
// # Crashes
//
// A client that dies leaves locks. Before its primary is committed, they
// expire after their TTL and the first reader or writer to meet one rolls
// the transaction back; after, they are rolled forward at once. CommitHooks
// let tests stop a commit at each of these points.
//
// # Garbage collection
//
// The Store keeps the set of its running transactions (active.go) for the
// MVCC garbage collector (package gcworker, under this one): a transaction
// is entered before it fetches its start_ts, at a timestamp below any the
// oracle will issue, and leaves at Rollback, when Commit returns, or when Go
// reclaims it unfinished. The collector's safe point never passes one
// (except one running past its wait, 24 h), and the store refuses reads below
// the safe point and prewrites at or below it (kv.GCTooOldError).
// SetSizeLimit bounds the bytes a transaction buffers (sizelimit.go,
// TxnTooLargeError).
//
// # Deviations
//
// A transaction's start_ts is fetched again if it equals the commit_ts of
// a 1PC commit this Store made: kv's prewrite counts a write at commit_ts
// == start_ts as a conflict, and a calculated commit_ts may be exactly the
// oracle's next timestamp. The rule is kept conservative on purpose:
// reading past a live lock at lock.start_ts-1 (above) is correct only if no
// version of the key commits at or after the lock's start_ts. Relaxing it
// to TiKV's (a write at start_ts is in the snapshot) needs reads that bypass
// named locks instead; until then a transaction of another Store that starts
// exactly at a 1PC commit_ts gets a spurious, retryable write conflict.
package txn
