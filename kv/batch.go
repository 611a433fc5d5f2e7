package kv

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// writeBatch is what a command decided to write: an ordered list of puts
// and deletes of raw store keys, applied atomically or not at all. Commands
// never write to Pebble themselves; they fill a writeBatch and hand it to
// the store's applier. That is the seam for replication: a single node
// applies the batch to Pebble, a raft group will propose it and apply it on
// every replica, and the commands do not change.
type writeBatch struct {
	ops []batchOp
	// lockPuts and lockDels are the user keys whose lock the batch writes
	// and deletes, for the store's lockSet; lockQuiet, when as long as
	// lockPuts, tells which of the locks written never block a read
	// (pessimistic and lock-type locks). It is replicated (replicate.go);
	// a batch without it (of the replicated format's version 1) counts
	// every lock as one that may block.
	lockPuts, lockDels [][]byte
	lockQuiet          []bool
	// volatile: losing the batch in a crash is harmless, so it need not
	// wait for the WAL sync (pessimistic locks: a transaction whose lock
	// vanished fails its prewrite with *PessimisticLockNotFoundError, and
	// a lock given back is gone either way). A later synced batch syncs it
	// too.
	volatile bool
	// collects: the batch only removes garbage (GC, gc.go), so it does
	// not count as a write that may leave garbage behind (regionGC).
	collects bool
	// ackDurable: the command's answer tells its client that what it
	// read is durable, even when it writes nothing (a Commit sent again
	// that finds the commit done: the client reports a commit; a Prewrite
	// that finds its locks: the client commits the primary). Such a
	// command, with a batch still unsynced (visible), syncs the WAL
	// before it answers (Store.mutateThen).
	ackDurable bool
	// visible, when set, is told once that a synced batch is applied and
	// visible to every read while its WAL sync is still under way (the
	// single-node applier; others never call it). The command releases
	// its latches and wakes its lock waiters there, so that the next
	// owner of a hot key works during the sync rather than after it, as
	// InnoDB releases row locks before its log flush. The command still
	// answers only after the sync. That is safe because Pebble shows a
	// batch to reads before its sync in any case, and the WAL is one
	// sequence: any later synced batch, such as the next owner's commit,
	// is durable only with this one. Store.unsynced counts such batches.
	visible func()
}

// batchOp is one write; value is nil for a delete. A range delete
// (rangeEnd set) removes every raw key in [key, rangeEnd).
type batchOp struct {
	key, value []byte
	delete     bool
	rangeEnd   []byte
}

// put writes value at the raw key.
func (b *writeBatch) put(key, value []byte) {
	b.ops = append(b.ops, batchOp{key: key, value: value})
}

// del deletes the raw key.
func (b *writeBatch) del(key []byte) { b.ops = append(b.ops, batchOp{key: key, delete: true}) }

// putLock writes key's lock record.
func (b *writeBatch) putLock(key []byte, l *txntypes.Lock) {
	b.put(keyspace.LockKey(key), l.Encode())
	b.lockPuts = append(b.lockPuts, key)
	b.lockQuiet = append(b.lockQuiet, l.Type == txntypes.LockPessimistic || l.Type == txntypes.LockLock)
}

// delLock deletes key's lock record.
func (b *writeBatch) delLock(key []byte) {
	b.del(keyspace.LockKey(key))
	b.lockDels = append(b.lockDels, key)
}

// putWrite writes key's write record at commitTS.
func (b *writeBatch) putWrite(key []byte, commitTS uint64, w *txntypes.Write) {
	b.put(keyspace.WriteKey(key, commitTS), w.Encode())
}

// putData writes key's long value under startTS.
func (b *writeBatch) putData(key []byte, startTS uint64, value []byte) {
	b.put(keyspace.DataKey(key, startTS), value)
}

// delData deletes key's long value under startTS.
func (b *writeBatch) delData(key []byte, startTS uint64) { b.del(keyspace.DataKey(key, startTS)) }

// delRange deletes every raw key in [start, end).
func (b *writeBatch) delRange(start, end []byte) {
	b.ops = append(b.ops, batchOp{key: start, rangeEnd: end, delete: true})
}

// empty reports whether the batch writes nothing.
func (b *writeBatch) empty() bool { return len(b.ops) == 0 }

// changesWriteSpace reports whether the batch may change what a
// write-space iterator reads: it writes outside the spaces that are only
// ever read by key (locks, long values, notify entries), or deletes a
// range (which may span spaces). A space added later counts until it is
// listed here (unreadByIterators).
func (b *writeBatch) changesWriteSpace() bool {
	for _, op := range b.ops {
		if op.rangeEnd != nil || len(op.key) == 0 || !unreadByIterators(op.key[0]) {
			return true
		}
	}
	return false
}

// unreadByIterators reports whether the space of prefix byte space is
// read by Get alone, never through the store's cached iterators, so that
// writing it leaves them current.
func unreadByIterators(space byte) bool {
	return space == keyspace.Lock || space == keyspace.Data || space == keyspace.Notify
}

// applier makes a command's writes durable and visible, atomically. When
// apply returns nil, every later read sees the whole batch; when it returns
// an error, none of it may be assumed written. Implementations are safe for
// concurrent use; the store calls apply while holding the latches of the
// keys the batch touches, so batches on the same key are applied in the
// order the commands decided them. An applier keeps the store's lockSet
// in step with the lock space it writes (lockSet.beforeApply and
// afterApply around each batch), and tells the store's iterCache of each
// batch applied, before the lock set forgets any lock.
type applier interface {
	apply(ctx context.Context, wb *writeBatch) error
}

// pebbleApplier is the single-node applier: it commits the batch to the
// local Pebble instance, waiting for the WAL sync when sync is set, and
// keeps locks and iters (either nil: none to keep) in step.
type pebbleApplier struct {
	db    *pebble.DB
	opts  *pebble.WriteOptions
	locks *lockSet
	iters *iterCache
	// collected, when set, is told of every collecting batch applied
	// (the store's gcCompactor).
	collected func(*writeBatch)
	// latest, when set, is the store's latest-space switch: while it is
	// building or on, each batch gets the copies its write records make
	// (latestswitch.go).
	latest *latestSpace
}

// newPebbleApplier returns an applier over db that maintains locks and
// iters.
func newPebbleApplier(db *pebble.DB, sync bool, locks *lockSet, iters *iterCache) *pebbleApplier {
	return &pebbleApplier{db: db, opts: &pebble.WriteOptions{Sync: sync}, locks: locks, iters: iters}
}

func (a *pebbleApplier) apply(ctx context.Context, wb *writeBatch) error {
	if wb.empty() {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("apply %d writes: %w", len(wb.ops), err)
	}
	if a.locks != nil {
		a.locks.beforeApply(wb)
	}
	var syncWait func() error
	var err error
	if a.latest != nil {
		var churn uint64
		// Read-held from the derivation to the commit: a switch or a
		// backfill batch comes wholly before or after the batch.
		a.latest.mu.RLock()
		if a.latest.deriving() {
			var n int
			ops := len(wb.ops)
			if n, err = wb.deriveLatest(a.db, nil); err == nil {
				a.latest.derived(n)
				churn = wb.opBytes(ops)
			}
		} else if set := a.latest.ranges.set.Load(); set != nil && len(set.ranges) > 0 {
			// The ranges whose copies are kept (latestranges.go).
			a.latest.wroteRanges(wb, set)
			ops := len(wb.ops)
			if _, err = wb.deriveLatest(a.db, set); err == nil {
				a.latest.derivedRanges(wb.ops[ops:])
				churn = wb.opBytes(ops)
			}
		} else {
			a.latest.wroteRanges(wb, nil)
		}
		if err == nil {
			syncWait, err = a.commit(wb)
		}
		a.latest.mu.RUnlock()
		if err == nil {
			// After the commit: a compaction it asks for sees its copies.
			a.latest.churned(churn)
		}
	} else {
		syncWait, err = a.commit(wb)
	}
	// Even a failed commit may have written something: iterators opened
	// before are stale either way. The cached iterators read the write
	// space only, so a batch that leaves it alone (a pessimistic lock, a
	// prewrite's locks and long values) leaves them current.
	if a.iters != nil && wb.changesWriteSpace() {
		a.iters.applied(wb)
	}
	if err != nil {
		return err
	}
	if a.locks != nil {
		a.locks.afterApply(wb)
	}
	if wb.collects && a.collected != nil {
		a.collected(wb)
	}
	if syncWait == nil {
		return nil
	}
	// Applied and visible, the lock set and the iterator cache in step:
	// what the batch's command holds may go before the sync ends.
	wb.visible()
	return syncWait()
}

// commit writes wb to Pebble in one batch. A synced batch with a visible
// hook is applied without waiting for its WAL sync: commit then returns
// the wait for it (syncWait), which the caller must call; otherwise
// syncWait is nil and the batch is durable as the options say.
func (a *pebbleApplier) commit(wb *writeBatch) (syncWait func() error, err error) {
	b := a.db.NewBatch()
	for _, op := range wb.ops {
		var err error
		if op.rangeEnd != nil {
			err = b.DeleteRange(op.key, op.rangeEnd, nil)
		} else if op.delete {
			err = b.Delete(op.key, nil)
		} else {
			err = b.Set(op.key, op.value, nil)
		}
		if err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("apply: build batch: %w", err)
		}
	}
	opts := a.opts
	if wb.volatile {
		opts = pebble.NoSync
	}
	if !opts.Sync || wb.visible == nil {
		defer b.Close()
		if err := b.Commit(opts); err != nil {
			return nil, fmt.Errorf("apply %d writes: %w", len(wb.ops), err)
		}
		return nil, nil
	}
	// Pebble's ApplyNoSyncWait returns once the batch is in the memtable
	// and visible, which a synced Commit also makes it before its sync
	// ends; the batch must not be closed before SyncWait.
	if err := a.db.ApplyNoSyncWait(b, opts); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("apply %d writes: %w", len(wb.ops), err)
	}
	return func() error {
		defer b.Close()
		if err := b.SyncWait(); err != nil {
			return fmt.Errorf("apply %d writes: sync: %w", len(wb.ops), err)
		}
		return nil
	}, nil
}
