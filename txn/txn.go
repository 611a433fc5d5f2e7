package txn

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/percdb/percdb/kv"
)

// Txn is one snapshot-isolation transaction: reads see the snapshot at its
// start_ts overlaid with its own buffered writes; writes are buffered until
// Commit runs the Percolator protocol (doc.go). A Txn is used by one
// goroutine at a time: it is not safe for concurrent use.
type Txn struct {
	s   *Store
	buf *memBuffer

	startTS uint64
	// guardToken is Options.CommitGuard's token, taken at Begin.
	guardToken uint64
	// born is when startTS was fetched, by the local clock: lock TTLs count
	// from there.
	born     time.Time
	commitTS uint64
	finished bool
	// committing: Commit is running (the transaction is finished but
	// still running for the garbage collector, see activeTxns).
	committing bool
	// activeID is the transaction's handle in the Store's running
	// transactions (active.go), 0 when it is not there; activeCleanup
	// takes it out if the transaction is dropped unfinished.
	activeID      uint64
	activeCleanup runtime.Cleanup
	// sizeLimit bounds the buffer's bytes (SetSizeLimit); 0: no bound.
	sizeLimit int
	// allowWhenDiskFull: see AllowWhenDiskFull.
	allowWhenDiskFull bool

	// pess is set in a pessimistic transaction (SetPessimistic).
	pess *pessimisticState
	// lockWait overrides Options.LockWaitTimeout when non-zero.
	lockWait time.Duration
	// lockNoWait: LockKeys fails at once on a live lock (SetLockNoWait).
	lockNoWait bool
	// readTS, when non-zero, replaces start_ts for reads (RefreshSnapshot).
	readTS uint64
	// reads is what a pessimistic transaction read from its snapshot.
	reads readSet
	// rc is set in a READ COMMITTED transaction (readcommitted.go).
	rc *rcState
	// latest is the state of a transaction begun by BeginLatest.
	latest latestState
}

// AllowWhenDiskFull marks the transaction as one a store whose disk is
// nearly full must still accept (kv.PrewriteRequest.AllowWhenDiskFull):
// its writes are small and free space, as the catalog changes of DROP
// TABLE and TRUNCATE. Without it, a transaction that writes values fails
// to commit with an error wrapping *kv.DiskFullError on such a store.
func (t *Txn) AllowWhenDiskFull() { t.allowWhenDiskFull = true }

// StartTS returns the transaction's start timestamp, fetching it from the
// oracle if no read has yet.
func (t *Txn) StartTS(ctx context.Context) (uint64, error) {
	if t.startTS != 0 {
		return t.startTS, nil
	}
	switch t.latest {
	case latestSpent:
		// Its read was at the latest state, no timestamp.
		return 0, ErrLatestSpent
	case latestFresh:
		// Asked before any read: an ordinary transaction from now on.
		t.latest = latestOff
	}
	// Entered below any timestamp the oracle will issue, then moved to
	// the real one (active.go).
	// A finished transaction is not entered (nothing would take it out),
	// unless it is committing (Commit takes it out).
	var entered func(uint64, error)
	if !t.finished || t.committing {
		entered = t.enterActive()
	}
	ts, err := t.s.startTimestamp(ctx)
	if entered != nil {
		entered(ts, err)
	}
	if err != nil {
		return 0, fmt.Errorf("start transaction: %w", err)
	}
	t.startTS, t.born = ts, time.Now()
	return ts, nil
}

// CommitTS returns the commit timestamp once Commit has succeeded, else 0
// (also for a transaction that wrote nothing).
func (t *Txn) CommitTS() uint64 { return t.commitTS }

// Len returns the number of buffered keys (writes and locks).
func (t *Txn) Len() int { return t.buf.len() }

// Size returns the bytes of buffered keys and values.
func (t *Txn) Size() int { return t.buf.size }

// IsReadOnly reports whether the transaction has nothing to commit: no
// buffered write and no key locked by LockKeys.
func (t *Txn) IsReadOnly() bool { return t.buf.len() == 0 }

// usable returns an error when the transaction can no longer be used.
func (t *Txn) usable() error {
	if t.finished {
		return ErrTxnFinished
	}
	return t.s.usable()
}

// Get returns the value of key as this transaction sees it: its own
// buffered write if any (read-your-writes), else the snapshot at start_ts.
func (t *Txn) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	return t.get(ctx, key, nil)
}

// get is Get by a reader that uses what cmp compares of the value.
func (t *Txn) get(ctx context.Context, key []byte, cmp ReadComparator) ([]byte, bool, error) {
	if err := checkKey(key); err != nil {
		return nil, false, fmt.Errorf("get: %w", err)
	}
	if err := t.usable(); err != nil {
		return nil, false, fmt.Errorf("get %q: %w", key, err)
	}
	if e, ok := t.buf.get(key); ok && e.op != bufLock {
		return e.value, e.op == bufPut, nil
	}
	ts, err := t.snapshotTS(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("get %q: %w", key, err)
	}
	t.trackRead(cmp, key)
	if v, ok := t.pess.cachedLocked(key, ts); ok {
		return v, v != nil, nil
	}
	v, err := t.s.get(ctx, key, ts)
	if err != nil {
		return nil, false, fmt.Errorf("get %q: %w", key, err)
	}
	t.pess.noteRead(key, ts, v)
	return v, v != nil, nil
}

// BatchGet returns the values of the keys found, as Get would see them,
// keyed by string(key). The snapshot part is read one request per region,
// the regions in parallel.
func (t *Txn) BatchGet(ctx context.Context, keys [][]byte) (map[string][]byte, error) {
	return t.batchGet(ctx, keys, nil)
}

// batchGet is BatchGet by a reader that uses what cmp compares of the
// values.
func (t *Txn) batchGet(ctx context.Context, keys [][]byte, cmp ReadComparator) (map[string][]byte, error) {
	if err := t.usable(); err != nil {
		return nil, fmt.Errorf("batch get: %w", err)
	}
	out := make(map[string][]byte, len(keys))
	var missing [][]byte
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, fmt.Errorf("batch get: %w", err)
		}
		e, ok := t.buf.get(k)
		switch {
		case !ok || e.op == bufLock:
			missing = append(missing, k)
		case e.op == bufPut:
			out[string(k)] = e.value
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	ts, err := t.snapshotTS(ctx)
	if err != nil {
		return nil, fmt.Errorf("batch get: %w", err)
	}
	t.trackRead(cmp, missing...)
	if t.pess.knowsValues() {
		// Keys held locked whose values are known are not asked for.
		ask := missing[:0:0]
		for _, k := range missing {
			if v, ok := t.pess.cachedLocked(k, ts); !ok {
				ask = append(ask, k)
			} else if v != nil {
				out[string(k)] = v
			}
		}
		if missing = ask; len(missing) == 0 {
			return out, nil
		}
	}
	var got map[string][]byte
	if ts == kv.MaxTS {
		// A latest transaction's read: one snapshot of the keys
		// (BatchPointGet's).
		got, err = t.s.batchPointGet(ctx, missing)
	} else {
		got, err = t.s.batchGet(ctx, missing, ts)
	}
	if err != nil {
		return nil, fmt.Errorf("batch get: %w", err)
	}
	if t.pess != nil {
		for _, k := range missing {
			t.pess.noteRead(k, ts, got[string(k)])
		}
	}
	for k, v := range got {
		out[k] = v
	}
	return out, nil
}

// Iter returns an ascending iterator over [start, end) (an empty end is
// +infinity) as this transaction sees it: the snapshot at start_ts, paged
// through region by region, with its buffered writes merged over it. The
// buffered writes are those at the time of the call; writes made while the
// iterator is open do not show in it.
func (t *Txn) Iter(ctx context.Context, start, end []byte) (Iterator, error) {
	return t.iter(ctx, start, end, IterOptions{}, nil)
}

// IterReverse is Iter in descending key order over the same [start, end).
func (t *Txn) IterReverse(ctx context.Context, start, end []byte) (Iterator, error) {
	return t.iter(ctx, start, end, IterOptions{Reverse: true}, nil)
}

// IterOptions tunes an iterator (IterWith). The zero value is Iter's.
type IterOptions struct {
	// Reverse walks in descending key order (IterReverse).
	Reverse bool
	// FirstPage, when positive, is how many pairs the first request asks
	// for (at most Options.ScanPageSize; later requests ask for that): a
	// caller that expects to need few pairs (a LIMIT, the first batch of
	// an index lookup) has the store read and send no more than that,
	// and pays another request only if it needs more. It does not bound
	// what the iterator returns.
	FirstPage int
}

// IterWith is Iter or IterReverse as o says.
func (t *Txn) IterWith(ctx context.Context, start, end []byte, o IterOptions) (Iterator, error) {
	return t.iter(ctx, start, end, o, nil)
}

// iter opens an iterator for a reader that uses what cmp compares of
// the values.
func (t *Txn) iter(ctx context.Context, start, end []byte, o IterOptions, cmp ReadComparator) (Iterator, error) {
	// The range is formatted only for an error: a lookup join opens an
	// iterator per range it reads, and formatting both keys was about a
	// seventh of the opening's CPU.
	fail := func(err error) error { return fmt.Errorf("iterate [%q, %q): %w", start, end, err) }
	if err := t.usable(); err != nil {
		return nil, fail(err)
	}
	ts, err := t.snapshotTS(ctx)
	if err != nil {
		return nil, fail(err)
	}
	var latest *Txn
	if ts == kv.MaxTS {
		latest = t
	}
	snap, err := t.s.scan(ctx, start, end, ts, o, latest)
	if err != nil {
		return nil, fail(err)
	}
	var buf []bufPair
	if len(end) == 0 || bytes.Compare(start, end) < 0 {
		buf = t.buf.rangeSnapshot(start, end)
	}
	if len(buf) == 0 {
		return t.trackIter(snap, cmp, start, end, o.Reverse), nil
	}
	if o.Reverse {
		slices.Reverse(buf)
	}
	u := &unionIter{snap: snap, buf: buf, reverse: o.Reverse}
	if err := u.settle(ctx); err != nil {
		return nil, fail(err)
	}
	return t.trackIter(u, cmp, start, end, o.Reverse), nil
}

// write buffers one write after the common checks.
func (t *Txn) write(what string, key []byte, e entry) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if t.finished {
		return fmt.Errorf("%s %q: %w", what, key, ErrTxnFinished)
	}
	if t.latest != latestOff {
		return fmt.Errorf("%s %q: %w", what, key, ErrLatestWrite)
	}
	if err := t.checkSize(key, e); err != nil {
		return fmt.Errorf("%s %q: %w", what, key, err)
	}
	t.buf.set(key, e)
	return nil
}

// Set buffers a write of value to key. A key written by Insert earlier in
// the transaction keeps Insert's check that it did not exist.
func (t *Txn) Set(key, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	prev, _ := t.buf.get(key)
	return t.write("set", key, entry{op: bufPut, value: value, presumeNotExists: prev.presumeNotExists, notify: prev.notify})
}

// Delete buffers a delete of key. A key written by Insert earlier in the
// transaction is still checked, at commit, not to exist.
func (t *Txn) Delete(key []byte) error {
	prev, _ := t.buf.get(key)
	return t.write("delete", key, entry{op: bufDelete, presumeNotExists: prev.presumeNotExists, notify: prev.notify})
}

// SetCovered is Set for a key whose every writer also writes, and so
// locks, another key of the same transaction: a non-unique index entry,
// whose key holds its row's handle, is written only with its row. A
// pessimistic statement need not lock it (LockableSince leaves it out:
// the row's lock excludes its other writers), and its prewrite checks it
// for a newer commit as an optimistic transaction's does (a mutation
// that is not kv.Mutation.Pessimistic), as TiDB locks only row keys and
// unique index keys and TiKV prewrites the others with a write-conflict
// check.
func (t *Txn) SetCovered(key, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	prev, _ := t.buf.get(key)
	return t.write("set", key, entry{op: bufPut, value: value, presumeNotExists: prev.presumeNotExists, notify: prev.notify, covered: true})
}

// DeleteCovered is Delete for a key SetCovered would write.
func (t *Txn) DeleteCovered(key []byte) error {
	prev, _ := t.buf.get(key)
	return t.write("delete", key, entry{op: bufDelete, presumeNotExists: prev.presumeNotExists, notify: prev.notify, covered: true})
}

// Insert buffers a write of value to key that must not overwrite an
// existing key. The check is made by the store at prewrite (kv.OpInsert),
// so a key that exists makes Commit fail with ErrAlreadyExists; a caller
// that needs the answer sooner reads the key first. Inserting a key this
// transaction already wrote is checked here: it exists unless the
// transaction deleted it.
func (t *Txn) Insert(key, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	prev, ok := t.buf.get(key)
	if ok && prev.op == bufPut {
		return fmt.Errorf("insert %q: %w", key, ErrAlreadyExists)
	}
	// Over a buffered delete the key is known to exist in the snapshot
	// unless an earlier Insert said otherwise: the net effect is a put.
	presume := !ok || prev.op == bufLock || prev.presumeNotExists
	return t.write("insert", key, entry{op: bufPut, value: value, presumeNotExists: presume, notify: prev.notify})
}

// Staging opens a stage of the buffered writes, TiDB MemBuffer style: a
// statement opens one before it writes, then either Release keeps its
// writes or Cleanup undoes them, so that a failed statement undoes only
// itself. Stages nest; handles are closed innermost first.
func (t *Txn) Staging() StagingHandle { return t.buf.staging() }

// BeginStatement marks the start of a statement for RefreshSnapshot: what
// the transaction read from its snapshot before it is what a move of the
// snapshot must validate. In a READ COMMITTED transaction the statement
// reads at a fresh snapshot (SetReadCommitted).
func (t *Txn) BeginStatement() {
	t.reads.beginStatement()
	t.pess.beginStatement()
	t.beginStatementRC()
}

// Release closes stage h (and any stage opened after it), keeping its
// writes. An unknown or already closed handle is ignored.
func (t *Txn) Release(h StagingHandle) { t.buf.release(h) }

// Cleanup undoes every write made since stage h was opened and closes it
// (and any stage opened after it). An unknown or already closed handle is
// ignored.
func (t *Txn) Cleanup(h StagingHandle) { t.buf.cleanup(h) }

// Rollback abandons the transaction. An optimistic transaction wrote
// nothing to the store before Commit, so this is local; a pessimistic one
// gives back its pessimistic locks. Rolling back a finished transaction is
// a no-op.
func (t *Txn) Rollback(ctx context.Context) error {
	if t.finished {
		return nil
	}
	t.finished = true
	t.leaveActive()
	t.buf = newMemBuffer()
	t.releasePessimisticLocks(ctx)
	t.s.stats.rolledBack.Add(1)
	return nil
}

// Commit makes the buffered writes durable and visible atomically, or
// fails leaving no trace of them; doc.go describes the protocol. A
// transaction with nothing buffered commits without any request. After
// Commit, successful or not, the transaction is finished.
func (t *Txn) Commit(ctx context.Context) error {
	if t.finished {
		return fmt.Errorf("commit: %w", ErrTxnFinished)
	}
	if err := t.s.usable(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	t.finished, t.committing = true, true
	// Running until the commit returns: its prewrite must not meet a GC
	// safe point above its start_ts.
	defer t.leaveActive()
	// The heartbeat of a pessimistic transaction's primary runs until the
	// commit point is passed or the commit fails; the committer's own
	// then takes no part.
	defer t.stopPessimisticHeartbeat()
	if t.pess != nil {
		// Keys locked by statements that failed afterwards are no longer
		// buffered; they are committed as lock-only keys so that no
		// pessimistic lock outlives the transaction.
		for k := range t.pess.locked {
			if _, ok := t.buf.entries[k]; !ok {
				t.buf.set([]byte(k), entry{op: bufLock})
			}
		}
	}
	if t.buf.len() == 0 {
		t.s.stats.noteCommit(nil, false, false)
		return nil
	}
	if _, err := t.StartTS(ctx); err != nil {
		t.s.stats.noteCommit(err, true, false)
		return fmt.Errorf("commit: %w", err)
	}
	c := newCommitter(t)
	// Existence checks alone (keys inserted then deleted) lock nothing.
	locks := c.primary != nil
	err := c.commit(ctx)
	t.s.stats.noteCommit(err, locks, c.onePC)
	if err != nil {
		return fmt.Errorf("commit txn %d: %w", t.startTS, err)
	}
	t.commitTS = c.commitTS
	return nil
}
