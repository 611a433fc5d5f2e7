package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/percdb/percdb/kv"
)

// pessimisticState is what a pessimistic transaction keeps of the locks
// it holds before its commit.
type pessimisticState struct {
	// locked maps each key holding our pessimistic lock to the
	// for_update_ts it was locked at, or to the newer commit the lock met
	// (LockWithConflict): its newest commit is at or below that.
	locked map[string]uint64
	// values and pending are the values of locked keys that later
	// snapshot reads return (lockedvalues.go).
	values  map[string]lockedValue
	pending map[string]pendingRead
	// absent maps the keys the statement's LockKeysReadingIfExist found
	// without a value (and did not lock) to the snapshot they were read
	// at (lockedvalues.go).
	absent map[string]uint64
	// primary is the first key locked; every lock names it.
	primary []byte
	// maxForUpdateTS is the newest for_update_ts any key was locked at.
	maxForUpdateTS uint64
	// conflictTS is the newest commit that the last LockKeys met above
	// its for_update_ts on the keys it locked (ErrForUpdateConflict),
	// 0 when it met none: RefreshSnapshot moves the snapshot there.
	conflictTS uint64
	// live keeps the primary's TTL ahead of the clock while locks are
	// held.
	live *liveCommit
}

// SetPessimistic makes the transaction pessimistic: LockKeys takes locks
// in the store at once, waiting for other transactions' locks, and the
// commit prewrites over them (doc.go, "Pessimistic transactions"). It must
// be called before the first LockKeys.
func (t *Txn) SetPessimistic() error {
	if t.finished {
		return fmt.Errorf("set pessimistic: %w", ErrTxnFinished)
	}
	if t.pess == nil {
		t.pess = &pessimisticState{locked: make(map[string]uint64)}
	}
	return nil
}

// IsPessimistic reports whether SetPessimistic was called.
func (t *Txn) IsPessimistic() bool { return t.pess != nil }

// SetLockWaitTimeout sets how long LockKeys waits for other transactions'
// locks (innodb_lock_wait_timeout); 0 restores Options.LockWaitTimeout.
func (t *Txn) SetLockWaitTimeout(d time.Duration) { t.lockWait = d }

// SetLockNoWait makes LockKeys fail with ErrLockNotWaited, taking none of
// its keys, when one of them holds a live lock of another transaction,
// instead of waiting for it (MySQL's FOR UPDATE NOWAIT and SKIP LOCKED;
// TiKV's wait_timeout 0). A dead owner's lock is still resolved and the
// key locked. Off again restores waiting.
func (t *Txn) SetLockNoWait(on bool) { t.lockNoWait = on }

// SnapshotTS returns the timestamp the transaction reads at: its start_ts,
// or the one RefreshSnapshot moved it to. A pessimistic statement locks
// what it writes at this timestamp (LockKeys' forUpdateTS).
func (t *Txn) SnapshotTS(ctx context.Context) (uint64, error) {
	return t.snapshotTS(ctx)
}

// snapshotTS is the timestamp reads use.
func (t *Txn) snapshotTS(ctx context.Context) (uint64, error) {
	if t.latest != latestOff {
		return t.latestTS()
	}
	if t.rc != nil && t.rc.stale {
		return t.statementSnapshot(ctx)
	}
	if t.readTS != 0 {
		return t.readTS, nil
	}
	return t.StartTS(ctx)
}

// CanRefreshSnapshot reports whether RefreshSnapshot may try to move the
// snapshot: the transaction is pessimistic and remembers every read made
// before the current statement (Options.MaxReadSetEntries).
func (t *Txn) CanRefreshSnapshot() bool {
	return t.pess != nil && !t.finished && (t.rc != nil || !t.reads.mark.full)
}

// RefreshSnapshot moves the snapshot of a pessimistic transaction to a
// fresh timestamp T, after a commit that conflicted with its current
// statement (LockKeys' ErrForUpdateConflict): the statement, its writes
// undone, runs again at T. It is allowed only if nothing the statements
// before it read changed between the snapshot and T (kv ValidateReads
// over the read set finds the keys with a Put or Delete committed in
// (snapshot, T]; each is read at both and passes if what its readers
// used of it is equal, see ReadComparator): the
// transaction is then equivalent to one that began at T, and snapshot
// isolation holds (doc.go, "Pessimistic transactions"). Otherwise it
// fails with ErrWriteConflict, and the caller rolls the transaction back
// (MySQL 1213). The start_ts, which names the transaction's locks, stays.
// A READ COMMITTED transaction validates nothing (refreshReadCommitted).
func (t *Txn) RefreshSnapshot(ctx context.Context) error {
	if t.rc != nil {
		return t.refreshReadCommitted(ctx)
	}
	if !t.CanRefreshSnapshot() {
		t.s.stats.noteValidation(false, 0)
		return fmt.Errorf("refresh snapshot: %w: the transaction read more than the %d reads it remembers", ErrWriteConflict, t.s.opts.MaxReadSetEntries)
	}
	from, err := t.snapshotTS(ctx)
	if err != nil {
		return fmt.Errorf("refresh snapshot: %w", err)
	}
	// The snapshot moves to the newest commit the statement's locks met,
	// not to a fresh timestamp: that is the earliest snapshot the
	// statement can run again at (its locked keys have no later
	// commit, their locks having kept writers out since), and the
	// earlier it is, the fewer commits of others the reads before the
	// statement are validated against. A retry for another cause (a
	// row inserted where the statement inserts) takes a fresh one.
	//
	// Either way the oracle is asked first: a snapshot is only safe at a
	// timestamp the oracle has issued. A 1PC commit's commit_ts is
	// calculated, and may be the oracle's next timestamp (tryOnePC). A
	// transaction that holds only pessimistic locks on a key read before
	// (they do not block the validation) could prewrite after the
	// validation, take that very timestamp from the oracle as its
	// commit_ts and land in the window unseen: the statement would read
	// its write on one key and miss it on another. Once the oracle has
	// issued now, every commit_ts it issues later is above now, and a
	// transaction that took one at or below it had its prewrite locks in
	// place before, where the validation meets them.
	// TestPessimisticSnapshotMovesOnlyToIssuedTimestamps.
	now, err := t.s.timestamp(ctx)
	if err != nil {
		return fmt.Errorf("refresh snapshot: %w", err)
	}
	ts := t.pess.conflictTS
	t.pess.conflictTS = 0
	if ts <= from || ts > now {
		ts = now
	}
	passed, err := t.validateReads(ctx, from, ts)
	if err != nil {
		t.s.stats.noteValidation(false, 0)
		return fmt.Errorf("refresh snapshot: %w", err)
	}
	t.s.stats.noteValidation(true, passed)
	t.readTS = ts
	// The current statement runs again and reads anew.
	t.reads.dropStatement()
	return nil
}

// LockKeys locks keys for the transaction.
//
// In an optimistic transaction (the default) it only makes them part of
// the transaction's conflict detection, as SELECT ... FOR UPDATE: a key not
// otherwise written is prewritten at commit as a lock-only mutation
// (kv.OpLock), so that a write committed to it by another transaction
// after this one started makes the commit fail with ErrWriteConflict.
// forUpdateTS is ignored. It fetches the start_ts if no read has yet, so
// that the conflict window is fixed.
//
// In a pessimistic transaction it takes the keys' locks in the store at
// once, at forUpdateTS (the statement's SnapshotTS; the start_ts if
// lower), the primary's region first. A key another transaction holds is
// waited for, up to the lock wait timeout (ErrLockWaitTimeout; the locks
// taken so far stay, as InnoDB's do); a wait that would deadlock fails
// with ErrDeadlock and rolls the whole transaction back, releasing its
// locks. A key written by a commit newer than forUpdateTS is locked all
// the same, but LockKeys fails with ErrForUpdateConflict (with
// ErrWriteConflict): under snapshot isolation this transaction may not
// write over that commit (first committer wins) unless it moves its
// snapshot past it, which RefreshSnapshot allows when the statement is
// its first to read. A key this transaction Inserted is checked not to
// exist (ErrAlreadyExists). Keys locked already are not asked for again:
// their locks have excluded writers since.
func (t *Txn) LockKeys(ctx context.Context, forUpdateTS uint64, keys ...[]byte) error {
	return t.lockKeys(ctx, forUpdateTS, false, keys)
}

// LockKeysReading is LockKeys for keys the caller reads next at the same
// snapshot: the row of an UPDATE, DELETE or SELECT ... FOR UPDATE by its
// key, locked before it is read rather than after. In a pessimistic
// transaction each key is locked with its newest value (kv's
// ReturnValues, TiKV's return_values), which the transaction keeps as
// the key's stable value (lockedvalues.go): the read that follows is
// answered without asking the store, so the statement makes one request
// where a read and a lock were two, and the store walks the key's write
// records once. A key that has no value is locked all the same, as a
// locking read of it must keep an insert out until the transaction ends.
// In an optimistic transaction it is LockKeys.
func (t *Txn) LockKeysReading(ctx context.Context, forUpdateTS uint64, keys ...[]byte) error {
	return t.lockKeys(ctx, forUpdateTS, true, keys)
}

// LockKeysReadingIfExist is LockKeysReading for keys of which some may
// have no value, which it does not lock (kv's LockOnlyIfExists, TiKV's
// lock_only_if_exists): a locking read of an IN list of primary keys
// (SELECT ... WHERE id IN (...) FOR UPDATE) locks the rows there are and
// takes their values in one request, where it read them and then locked
// those found, and no insert of an absent row waits for it (percdb has no
// gap locks). A key without a value is known absent at the snapshot
// forUpdateTS until the statement ends: the read that follows at that
// snapshot is answered without asking the store, and recorded in the read
// set as any read (a move of the snapshot checks that no row came there).
// The caller must read the keys next at forUpdateTS (the statement's
// SnapshotTS).
//
// ok is false, with nothing locked, when the transaction cannot lock so:
// it is not pessimistic, reads at a statement's or the latest snapshot
// (READ COMMITTED, a latest read), or has a write of its own to one of
// keys (its read must see it); the caller reads, then locks what it
// found. Errors are LockKeys'.
func (t *Txn) LockKeysReadingIfExist(ctx context.Context, forUpdateTS uint64, keys ...[]byte) (ok bool, err error) {
	if t.pess == nil || t.rc != nil || t.latest != latestOff {
		return false, nil
	}
	for _, k := range keys {
		if e, ok := t.buf.get(k); ok && e.op != bufLock {
			return false, nil
		}
	}
	return true, t.lockKeysWith(ctx, forUpdateTS, lockIfExists, keys)
}

// lockMode is what lockKeys asks the store for with the locks.
type lockMode int

const (
	lockOnly     lockMode = iota // the locks (LockKeys)
	lockReading                  // and the keys' values (LockKeysReading)
	lockIfExists                 // locks of the keys with values only, and the values (LockKeysReadingIfExist)
)

// lockKeys is LockKeys, asking the store for the keys' values with their
// locks when withValues is set (LockKeysReading).
func (t *Txn) lockKeys(ctx context.Context, forUpdateTS uint64, withValues bool, keys [][]byte) error {
	mode := lockOnly
	if withValues {
		mode = lockReading
	}
	return t.lockKeysWith(ctx, forUpdateTS, mode, keys)
}

// lockKeysWith is lockKeys in mode.
func (t *Txn) lockKeysWith(ctx context.Context, forUpdateTS uint64, mode lockMode, keys [][]byte) error {
	if err := t.usable(); err != nil {
		return fmt.Errorf("lock keys: %w", err)
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return fmt.Errorf("lock keys: %w", err)
		}
	}
	if _, err := t.StartTS(ctx); err != nil {
		return fmt.Errorf("lock keys: %w", err)
	}
	if t.pess != nil {
		if err := t.lockPessimistic(ctx, max(forUpdateTS, t.startTS), mode, keys); err != nil {
			if errors.Is(err, ErrLockWaitTimeout) {
				t.s.stats.lockWaitTimeouts.Add(1)
			}
			if errors.Is(err, ErrDeadlock) {
				t.s.stats.deadlocks.Add(1)
				// MySQL rolls back the victim of a deadlock: its locks are
				// what the others of the cycle wait for.
				_ = t.Rollback(ctx)
			}
			return fmt.Errorf("lock keys: %w", err)
		}
	}
	for _, k := range keys {
		if mode == lockIfExists {
			if _, locked := t.pess.locked[string(k)]; !locked {
				// Absent: not locked, nothing to commit.
				continue
			}
		}
		if _, ok := t.buf.get(k); !ok {
			t.buf.set(k, entry{op: bufLock})
		}
	}
	return nil
}

// lockPessimistic takes the pessimistic locks of keys not locked yet, at
// forUpdateTS, and keeps their values unless mode is lockOnly (under
// lockIfExists, only of the keys that have one; the others are noted
// absent at forUpdateTS).
func (t *Txn) lockPessimistic(ctx context.Context, forUpdateTS uint64, mode lockMode, keys [][]byte) error {
	withValues := mode != lockOnly
	var todo [][]byte
	for _, k := range keys {
		if _, ok := t.pess.locked[string(k)]; !ok {
			todo = append(todo, k)
		}
	}
	t.pess.conflictTS = 0
	if len(todo) == 0 {
		return nil
	}
	slices.SortFunc(todo, bytes.Compare)
	todo = slices.CompactFunc(todo, bytes.Equal)
	first := t.pess.primary == nil
	if first && mode != lockIfExists {
		t.pess.primary = bytes.Clone(todo[0])
	}
	// Under lockIfExists without a primary, the store makes the first
	// key it locks the primary (kv's LockOnlyIfExists with an empty
	// Primary), and the spans are asked one after another: the first
	// that locks a key names the primary for the next.
	spans, err := groupByRegion(ctx, t.s.client, todo, 0, len(todo))
	if err != nil {
		return err
	}
	// groupByRegion keeps key order, so the primary's span comes first
	// when this call chose it: its lock is taken before any other names it
	// (a resolver that finds neither lock nor record at a primary takes
	// the transaction for dead once the lock it met has expired).
	wait := t.lockWait
	if wait == 0 {
		wait = t.s.opts.LockWaitTimeout
	}
	deadline := time.Now().Add(wait)
	var (
		conflict *kv.WriteConflictError
		newest   uint64   // the newest commit met above forUpdateTS
		values   [][]byte // withValues: the value of todo[i] (nil: none)
	)
	if withValues {
		values = make([][]byte, len(todo))
	}
	for _, sp := range spans {
		var conflictTS uint64
		err := t.s.runSpan(ctx, todo, sp, func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
			var got [][]byte
			if withValues {
				got = values[lo:hi]
			}
			ts, err := t.acquire(ctx, reg, todo[lo:hi], forUpdateTS, deadline, got, mode == lockIfExists)
			if err == nil && mode == lockIfExists && t.pess.primary == nil {
				if i := slices.IndexFunc(got, func(v []byte) bool { return v != nil }); i >= 0 {
					t.pess.primary = bytes.Clone(todo[lo+i])
				}
			}
			conflictTS = max(conflictTS, ts)
			newest = max(newest, ts)
			if ts != 0 && conflict == nil {
				conflict = &kv.WriteConflictError{Key: todo[lo], StartTS: t.startTS, ConflictCommitTS: ts}
			}
			return err
		})
		if err != nil {
			if first && len(t.pess.locked) == 0 {
				t.pess.primary = nil
			}
			return err
		}
		var got [][]byte
		if withValues {
			got = values[sp.lo:sp.hi]
		}
		if mode == lockIfExists {
			t.noteLockedIfExists(todo[sp.lo:sp.hi], got, forUpdateTS, conflictTS)
			continue
		}
		t.noteLocked(todo[sp.lo:sp.hi], got, forUpdateTS, conflictTS)
	}
	if conflict != nil {
		// The keys are ours, but the statement read below a write to one
		// of them: it runs again, at a newer for_update_ts, and finds the
		// keys locked already.
		t.pess.conflictTS = newest
		return fmt.Errorf("%w: %w: %w", ErrForUpdateConflict, ErrWriteConflict, conflict)
	}
	return nil
}

// noteLocked records keys as locked at forUpdateTS (at conflictTS when
// the store locked them as of a newer write), with their values when
// values is not nil (values[i] of keys[i], nil: none), and starts the
// heartbeat of the primary's lock with the first locks.
func (t *Txn) noteLocked(keys, values [][]byte, forUpdateTS, conflictTS uint64) {
	for _, k := range keys {
		t.pess.locked[string(k)] = max(forUpdateTS, conflictTS)
	}
	t.pess.keepPending(keys)
	if values != nil {
		// The store read each value under the key's new lock, at or
		// above the timestamp the key is stable from (locked): no
		// commit can change it until the transaction ends.
		for i, k := range keys {
			t.pess.keep(string(k), values[i])
		}
	}
	// A key locked with a conflict is locked as of the newer write: the
	// commit must land above it.
	t.pess.maxForUpdateTS = max(t.pess.maxForUpdateTS, forUpdateTS, conflictTS)
	if t.pess.live == nil {
		t.pess.live = &liveCommit{primary: t.pess.primary, startTS: t.startTS, born: t.born, extended: time.Now()}
		t.s.heartbeat.add(t.pess.live)
	}
}

// noteLockedIfExists is noteLocked for keys locked under lockIfExists:
// those with a value (values[i] not nil) are locked, the others noted
// absent at forUpdateTS for the statement's read.
func (t *Txn) noteLockedIfExists(keys, values [][]byte, forUpdateTS, conflictTS uint64) {
	var lk, lv [][]byte
	for i, k := range keys {
		if values[i] == nil {
			if conflictTS == 0 {
				// (With a conflict, nil is the newest value, a
				// delete after forUpdateTS: the statement runs again
				// at a newer snapshot.)
				t.pess.noteAbsent(k, forUpdateTS)
			}
			continue
		}
		lk, lv = append(lk, k), append(lv, values[i])
	}
	if len(lk) > 0 {
		t.noteLocked(lk, lv, forUpdateTS, conflictTS)
	}
}

// acquire locks keys, all in region reg, waiting for other transactions'
// locks until deadline. The store waits in slices: between two, the owner
// of the lock met is checked through its primary and, if dead, rolled
// back. Keys written after forUpdateTS are locked nonetheless (fair
// locking: a waiter keeps the lock it waited for); conflictTS is then the
// newest such write's commit_ts. With values non-nil (one per key), the
// store also returns each key's newest value, which is stored in values
// (nil: the key has none). With ifExists (values non-nil) a key without
// a value is not locked (kv's LockOnlyIfExists).
func (t *Txn) acquire(ctx context.Context, reg kv.RegionInfo, keys [][]byte, forUpdateTS uint64, deadline time.Time, values [][]byte, ifExists bool) (conflictTS uint64, err error) {
	req := &kv.AcquirePessimisticLockRequest{
		Region:           reg.Ctx(),
		Keys:             make([]kv.PessimisticKey, len(keys)),
		Primary:          t.pess.primary,
		StartTS:          t.startTS,
		ForUpdateTS:      forUpdateTS,
		LockWithConflict: true,
		ReturnValues:     values != nil,
		LockOnlyIfExists: ifExists,
	}
	for i, k := range keys {
		e, _ := t.buf.get(k)
		req.Keys[i] = kv.PessimisticKey{Key: k, CheckNotExists: e.presumeNotExists && !ifExists}
	}
	for {
		// The TTL counts from start_ts: set it as of now, or a lock taken
		// after a long wait would be born expired.
		req.LockTTL = t.s.lockTTL(t.born)
		req.WaitTimeout = time.Until(deadline)
		if t.lockNoWait {
			req.WaitTimeout = 0 // the store answers a lock at once
		} else if req.WaitTimeout <= 0 {
			return 0, fmt.Errorf("lock %d keys from %q: %w", len(keys), keys[0], ErrLockWaitTimeout)
		}
		resp, err := t.s.client.AcquirePessimisticLock(ctx, req)
		if err == nil && values != nil {
			if len(resp.Values) != len(keys) {
				return 0, fmt.Errorf("lock %d keys from %q: the store returned %d values", len(keys), keys[0], len(resp.Values))
			}
			copy(values, resp.Values)
		}
		if err == nil {
			return resp.ConflictTS, nil
		}
		var locked *kv.KeyIsLockedError
		if !errors.As(err, &locked) {
			return 0, classifyLockError(err)
		}
		// The store waited a slice (or, not waiting, none) and the lock is
		// still there: settle it if its owner is dead, else ask (and wait)
		// again, or, not waiting, give up.
		outcomes, err := t.s.resolver.ResolveLocks(ctx, locked.Locks(), 0)
		if err != nil {
			return 0, fmt.Errorf("lock %d keys from %q: %w", len(keys), keys[0], err)
		}
		if t.lockNoWait && slices.ContainsFunc(outcomes, func(o LockOutcome) bool { return o != LockGone }) {
			return 0, fmt.Errorf("lock %d keys from %q: %w", len(keys), keys[0], ErrLockNotWaited)
		}
		if t.lockNoWait && time.Now().After(deadline) {
			// Locks that keep coming back, each gone when resolved.
			return 0, fmt.Errorf("lock %d keys from %q: %w", len(keys), keys[0], ErrLockWaitTimeout)
		}
	}
}

// classifyLockError wraps an AcquirePessimisticLock failure with its
// sentinel.
func classifyLockError(err error) error {
	var (
		wc *kv.WriteConflictError
		dl *kv.DeadlockError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &wc):
		return fmt.Errorf("%w: %w: %w", ErrForUpdateConflict, ErrWriteConflict, err)
	case errors.As(err, &dl):
		return fmt.Errorf("%w: %w", ErrDeadlock, err)
	}
	return classify(err)
}

// stopPessimisticHeartbeat stops extending the primary's TTL: the commit
// has passed its commit point or failed, or the transaction rolled back.
func (t *Txn) stopPessimisticHeartbeat() {
	if t.pess != nil && t.pess.live != nil {
		t.s.heartbeat.remove(t.pess.live)
		t.pess.live = nil
	}
}

// releasePessimisticLocks gives back every pessimistic lock of a
// transaction that rolls back, without Rollback records: the transaction
// never prewrote. Failures are left to lock resolution (the primary's TTL
// runs out without the heartbeat).
func (t *Txn) releasePessimisticLocks(ctx context.Context) {
	t.stopPessimisticHeartbeat()
	if t.pess == nil || len(t.pess.locked) == 0 {
		return
	}
	keys := make([][]byte, 0, len(t.pess.locked))
	for k := range t.pess.locked {
		keys = append(keys, []byte(k))
	}
	slices.SortFunc(keys, bytes.Compare)
	t.pess.locked = map[string]uint64{}
	t.pess.values, t.pess.pending, t.pess.absent = nil, nil, nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	spans, err := groupByRegion(ctx, t.s.client, keys, 0, len(keys))
	if err != nil {
		return
	}
	_ = t.s.runSpans(ctx, keys, spans, func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		return t.s.client.PessimisticRollback(ctx, reg.Ctx(), keys[lo:hi], t.startTS, kv.MaxTS)
	})
}

// WriteMark marks the writes buffered so far in the open stage, for
// WrittenSince.
type WriteMark struct{ created, overwritten int }

// WriteMark returns a mark of the writes buffered so far in the open
// stage, for WrittenSince. Outside any stage WrittenSince returns
// nothing: writes are only logged inside stages.
func (t *Txn) WriteMark() WriteMark {
	return WriteMark{created: len(t.buf.created), overwritten: len(t.buf.overwritten)}
}

// WrittenSince returns the keys written (Set, Delete, Insert, LockKeys'
// lock-only entries) since mark, inside the open stage: what a statement
// of a pessimistic transaction must lock. Keys the transaction had not
// written before come first, in the order they were written, then those
// it wrote again; a key written twice since mark may come twice.
func (t *Txn) WrittenSince(mark WriteMark) [][]byte {
	return t.writtenSince(mark, false)
}

// LockableSince is WrittenSince without the keys whose last write was
// SetCovered or DeleteCovered: what a statement of a pessimistic
// transaction must lock when it locks the keys that cover them (a row it
// writes, locked by the same statement or before).
func (t *Txn) LockableSince(mark WriteMark) [][]byte {
	return t.writtenSince(mark, true)
}

func (t *Txn) writtenSince(mark WriteMark, skipCovered bool) [][]byte {
	b := t.buf
	if mark.created < 0 || mark.created > len(b.created) || mark.overwritten < 0 || mark.overwritten > len(b.overwritten) {
		return nil
	}
	keys := make([][]byte, 0, len(b.created)-mark.created+len(b.overwritten)-mark.overwritten)
	add := func(k string) {
		if skipCovered && b.entries[k].covered {
			return
		}
		keys = append(keys, []byte(k))
	}
	for _, k := range b.created[mark.created:] {
		add(k)
	}
	for _, u := range b.overwritten[mark.overwritten:] {
		add(u.key)
	}
	return keys
}
