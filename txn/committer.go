package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/percdb/percdb/kv"
)

// cleanupTimeout bounds the rollback of a failed commit, which runs even
// when the caller's context has ended (locks left behind would block
// others until their TTL ran out).
const cleanupTimeout = 10 * time.Second

// committer runs the commit protocol of one transaction (doc.go).
type committer struct {
	s *Store
	t *Txn

	// muts are the transaction's mutations in key order; keys are their
	// keys. lockKeys are the keys that get a lock at prewrite (all but
	// kv.OpCheckNotExists): those are committed or rolled back.
	muts     []kv.Mutation
	keys     [][]byte
	lockKeys [][]byte
	primary  []byte
	size     int
	// sent[i] is set once a prewrite of muts[i] may have taken effect: it
	// succeeded, or failed without saying. Only those keys need a
	// rollback: a request refused with per-key errors wrote nothing, and a
	// Rollback record left where no lock was would make an older
	// transaction's later prewrite of the key fail for nothing. Spans
	// prewritten in parallel set disjoint elements.
	sent []bool

	startTS  uint64
	commitTS uint64
	lockTTL  uint64
	// forUpdateTS is a pessimistic transaction's newest for_update_ts, or
	// its moved snapshot if newer: the commit lands above both.
	forUpdateTS uint64
	// snapshotTS is the moved snapshot of a pessimistic transaction
	// (RefreshSnapshot), 0 if it reads at start_ts: the prewrite's write
	// conflicts are found from there.
	snapshotTS uint64
	// onePC is set when the store committed in one phase (tryOnePC).
	onePC bool

	// live is the primary's heartbeat registration while it is locked.
	liveMu sync.Mutex
	live   *liveCommit
}

func newCommitter(t *Txn) *committer {
	c := &committer{s: t.s, t: t, startTS: t.startTS}
	keys := t.buf.keys()
	c.muts = make([]kv.Mutation, 0, len(keys))
	c.keys = make([][]byte, 0, len(keys))
	for _, k := range keys {
		e := t.buf.entries[k]
		m := kv.Mutation{Key: []byte(k)}
		switch {
		case e.op == bufPut && e.presumeNotExists:
			m.Op, m.Value = kv.OpInsert, e.value
		case e.op == bufPut:
			m.Op, m.Value = kv.OpPut, e.value
		case e.op == bufDelete && e.presumeNotExists:
			// Inserted then deleted: nothing to write, but the insert's
			// promise that the key did not exist must still hold.
			m.Op = kv.OpCheckNotExists
		case e.op == bufDelete:
			m.Op = kv.OpDelete
		default:
			m.Op = kv.OpLock
		}
		if t.pess != nil {
			if _, ok := t.pess.locked[k]; ok {
				m.Pessimistic = true
				if m.Op == kv.OpCheckNotExists {
					// Inserted then deleted under our lock, which was taken
					// with the existence check: commit the lock alone.
					m.Op = kv.OpLock
				}
			}
		}
		if m.Op != kv.OpCheckNotExists {
			// Inserted then deleted changed nothing: no notification.
			for _, col := range e.notifyColumns() {
				m.Notify = append(m.Notify, []byte(col))
			}
		}
		c.muts = append(c.muts, m)
		c.keys = append(c.keys, m.Key)
		c.size += len(k) + len(m.Value)
		if m.Op != kv.OpCheckNotExists {
			c.lockKeys = append(c.lockKeys, m.Key)
			if c.primary == nil {
				c.primary = m.Key
			}
		}
	}
	c.sent = make([]bool, len(c.muts))
	c.lockTTL = t.s.lockTTL(t.born)
	if t.pess != nil && t.pess.primary != nil {
		// Every pessimistic lock names this primary already.
		c.primary = t.pess.primary
		c.forUpdateTS = t.pess.maxForUpdateTS
	}
	if t.readTS != 0 {
		c.snapshotTS = t.readTS
		c.forUpdateTS = max(c.forUpdateTS, t.readTS)
	}
	return c
}

// hooks returns the test failpoints, never nil.
func (c *committer) hooks() *CommitHooks {
	if c.s.opts.Hooks != nil {
		return c.s.opts.Hooks
	}
	return &CommitHooks{}
}

// commit runs the whole protocol.
func (c *committer) commit(ctx context.Context) error {
	if c.primary == nil {
		// Only existence checks (keys inserted then deleted): they lock
		// nothing and leave nothing to commit.
		return c.checkOnly(ctx)
	}
	spans, err := groupByRegion(ctx, c.s.client, c.keys, 0, len(c.keys))
	if err != nil {
		return err
	}
	defer c.stopHeartbeat()
	if len(spans) == 1 && c.size <= c.s.opts.OnePCMaxBytes && c.s.opts.onePC() {
		done, err := c.tryOnePC(ctx, spans[0])
		if err != nil || done {
			return err
		}
		// The store fell back to an ordinary prewrite: every key is
		// locked; finish in two phases.
	} else if err := c.prewrite(ctx, splitBySize(spans, c.s.opts.BatchBytes, c.mutSize)); err != nil {
		return err
	}
	if err := c.hooks().runAfterPrewrite(c.startTS); err != nil {
		return err
	}
	return c.commitPrimaryThenSecondaries(ctx)
}

func (c *committer) mutSize(i int) int { return len(c.muts[i].Key) + len(c.muts[i].Value) }

// checkOnly sends a transaction's existence checks when it has nothing to
// lock.
func (c *committer) checkOnly(ctx context.Context) error {
	spans, err := groupByRegion(ctx, c.s.client, c.keys, 0, len(c.keys))
	if err != nil {
		return err
	}
	c.primary = c.keys[0]
	return c.s.runSpans(ctx, c.keys, spans, func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		return c.prewriteBatch(ctx, reg, lo, hi, nil)
	})
}

// tryOnePC prewrites the single batch asking the store to commit it at
// once, with a commit_ts it calculates above every read of the region and
// at most MaxCommitTS. MaxCommitTS is the largest timestamp this Store has
// received from the oracle plus one: every later timestamp of the oracle
// is at least that, so a transaction that starts after this commit
// returns sees it, with no oracle call for the commit. It reports done
// when the store committed; otherwise the keys are prewritten and the
// commit goes on in two phases.
func (c *committer) tryOnePC(ctx context.Context, sp regionSpan) (done bool, err error) {
	onePC := &onePCState{maxCommitTS: c.s.maxTS.Load() + 1}
	// The bound is fixed: every commit_ts the store may calculate was
	// issued by the oracle before now.
	if err := c.checkGuard(); err != nil {
		return false, err
	}
	err = c.s.runSpan(ctx, c.keys, sp, func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		if lo != 0 || hi != len(c.keys) {
			onePC = nil // a split cut the batch: no longer one region
		}
		return c.prewriteBatch(ctx, reg, lo, hi, onePC)
	})
	if err != nil {
		c.rollbackAfter(ctx, err)
		var doubt *kv.WriteInDoubtError
		if onePC != nil && errors.As(err, &doubt) {
			// The store may still commit the batch in one phase.
			return false, fmt.Errorf("%w: %w", ErrUndetermined, err)
		}
		return false, err
	}
	if onePC != nil && onePC.commitTS != 0 {
		c.commitTS = onePC.commitTS
		c.onePC = true
		c.s.noteOnePC(c.commitTS)
		return true, nil
	}
	return false, nil
}

// checkGuard asks Options.CommitGuard whether the commit may take the
// commit_ts it has now (see CommitGuard).
func (c *committer) checkGuard() error {
	if g := c.s.opts.CommitGuard; g != nil {
		return g.Check(c.t.guardToken)
	}
	return nil
}

// onePCState carries a 1PC attempt's bound and result.
type onePCState struct {
	maxCommitTS uint64
	commitTS    uint64
}

// prewrite locks every key, the batches in parallel (the primary's
// included). With an AfterPrimaryPrewrite hook the primary's batch goes
// first, alone.
func (c *committer) prewrite(ctx context.Context, spans []regionSpan) error {
	batch := func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		return c.prewriteBatch(ctx, reg, lo, hi, nil)
	}
	if h := c.hooks().AfterPrimaryPrewrite; h != nil {
		p := c.primarySpan(spans)
		if err := c.s.runSpan(ctx, c.keys, spans[p], batch); err != nil {
			c.rollbackAfter(ctx, err)
			return err
		}
		if err := h(c.startTS); err != nil {
			return err
		}
		spans = append(spans[:p:p], spans[p+1:]...)
		if len(spans) == 0 {
			return nil
		}
	}
	if err := c.s.runSpans(ctx, c.keys, spans, batch); err != nil {
		c.rollbackAfter(ctx, err)
		return err
	}
	return nil
}

// primarySpan returns the index of the span holding the primary.
func (c *committer) primarySpan(spans []regionSpan) int {
	for i, sp := range spans {
		for _, k := range c.keys[sp.lo:sp.hi] {
			if bytes.Equal(k, c.primary) {
				return i
			}
		}
	}
	return 0
}

// prewriteBatch prewrites muts[lo:hi] in region reg. Locks of other
// transactions are resolved and the batch retried (prewrite is idempotent
// for keys already locked by this transaction); a live lock of an older
// transaction is not waited for (wait-die, see doc.go). Any other per-key
// error fails the batch.
func (c *committer) prewriteBatch(ctx context.Context, reg kv.RegionInfo, lo, hi int, onePC *onePCState) error {
	req := &kv.PrewriteRequest{
		Region:      reg.Ctx(),
		Mutations:   c.muts[lo:hi],
		Primary:     c.primary,
		StartTS:     c.startTS,
		LockTTL:     c.lockTTL,
		TxnSize:     uint64(len(c.muts)),
		ForUpdateTS: c.forUpdateTS,
		SnapshotTS:  c.snapshotTS,

		AllowWhenDiskFull: c.t.allowWhenDiskFull,
	}
	if onePC != nil {
		req.TryOnePC, req.MaxCommitTS = true, onePC.maxCommitTS
	}
	var w lockWaiter
	for {
		resp, err := c.s.client.Prewrite(ctx, req)
		if err != nil {
			var re *kv.RegionError
			if !errors.As(err, &re) {
				markSent(c.sent[lo:hi])
			}
			return fmt.Errorf("prewrite %d keys from %q: %w", hi-lo, c.muts[lo].Key, err)
		}
		if len(resp.Errors) == 0 {
			markSent(c.sent[lo:hi])
			if onePC != nil {
				onePC.commitTS = resp.OnePCCommitTS
			}
			if onePC == nil || resp.OnePCCommitTS == 0 {
				c.primaryLocked(lo, hi)
			}
			return nil
		}
		var locks []kv.LockInfo
		for _, e := range resp.Errors {
			var locked *kv.KeyIsLockedError
			if !errors.As(e, &locked) {
				return fmt.Errorf("prewrite: %w", classify(e))
			}
			locks = append(locks, locked.Lock)
		}
		outcomes, err := c.s.resolver.ResolveLocks(ctx, locks, 0)
		if err != nil {
			return fmt.Errorf("prewrite: %w", err)
		}
		wait := false
		for i, l := range locks {
			if outcomes[i] != LockAlive {
				continue
			}
			if l.StartTS < c.startTS {
				// Wait-die: a younger transaction never waits for an
				// older one, so waits cannot form a cycle.
				return fmt.Errorf("prewrite: %w: %w", ErrWriteConflict, &kv.WriteConflictError{
					Key: l.Key, StartTS: c.startTS, ConflictStartTS: l.StartTS,
				})
			}
			wait = true
		}
		if wait {
			if w.deadline.IsZero() {
				w = newLockWaiter(c.s.opts.LockWaitTimeout)
			}
			if err := w.wait(ctx, fmt.Sprintf("%d locks, first on %q", len(locks), locks[0].Key)); err != nil {
				return fmt.Errorf("prewrite: %w", err)
			}
		}
	}
}

// primaryLocked starts the heartbeat once the batch muts[lo:hi] holding
// the primary is prewritten.
func (c *committer) primaryLocked(lo, hi int) {
	if len(c.lockKeys) == 0 || !containsKey(c.keys[lo:hi], c.primary) {
		return
	}
	if c.t.pess != nil && c.t.pess.live != nil {
		return // the transaction's own heartbeat beats already
	}
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	if c.live == nil {
		c.live = &liveCommit{primary: c.primary, startTS: c.startTS, born: c.t.born, extended: time.Now()}
		c.s.heartbeat.add(c.live)
	}
}

// stopHeartbeat ends the heartbeat, once the commit point is passed or the
// commit has failed.
func (c *committer) stopHeartbeat() {
	c.liveMu.Lock()
	defer c.liveMu.Unlock()
	if c.live != nil {
		c.s.heartbeat.remove(c.live)
		c.live = nil
	}
}

func containsKey(keys [][]byte, key []byte) bool {
	for _, k := range keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	return false
}

// commitPrimaryThenSecondaries fetches the commit_ts and commits the
// primary alone (the commit point), then the secondaries in the
// background.
func (c *committer) commitPrimaryThenSecondaries(ctx context.Context) error {
	ts, err := c.s.timestamp(ctx)
	if err != nil {
		c.rollback(ctx)
		return err
	}
	c.commitTS = ts
	if err := ctx.Err(); err != nil {
		c.rollback(ctx)
		return err
	}
	if err := c.checkGuard(); err != nil {
		c.rollback(ctx)
		return err
	}
	primary := [][]byte{c.primary}
	spans, err := groupByRegion(ctx, c.s.client, primary, 0, 1)
	for err == nil {
		err = c.s.runSpan(ctx, primary, spans[0], c.commitBatch(primary))
		var expired *kv.CommitTSExpiredError
		if !errors.As(err, &expired) {
			break
		}
		// A reader pushed the primary's min_commit_ts above commit_ts
		// to read past the lock: commit later than that reader. The
		// oracle's next timestamp is above the reader's start_ts, which is
		// what min_commit_ts exceeds by one.
		if c.commitTS, err = c.s.timestamp(ctx); err != nil {
			c.rollback(ctx)
			return err
		}
		if err = c.checkGuard(); err != nil {
			c.rollback(ctx)
			return err
		}
	}
	if err != nil {
		var re *kv.RegionError
		if spans == nil || errors.Is(err, ErrTxnAborted) || errors.As(err, &re) {
			// The primary is certainly not committed: the request was
			// never sent, or every attempt was refused, or someone rolled
			// the primary back (its TTL ran out). Clean up the rest.
			c.rollback(ctx)
			return err
		}
		return fmt.Errorf("%w: %w", ErrUndetermined, err)
	}
	c.stopHeartbeat()
	if err := c.hooks().runAfterPrimaryCommit(c.startTS, c.commitTS); err != nil {
		return err
	}
	if len(c.lockKeys) > 1 {
		c.s.background(c.commitSecondaries)
	}
	return nil
}

// commitBatch returns the request that commits keys[lo:hi] at commitTS.
func (c *committer) commitBatch(keys [][]byte) regionFunc {
	return func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		err := c.s.client.Commit(ctx, &kv.CommitRequest{
			Region: reg.Ctx(), Keys: keys[lo:hi], StartTS: c.startTS, CommitTS: c.commitTS,
		})
		if err != nil {
			return fmt.Errorf("commit %d keys from %q at %d: %w", hi-lo, keys[lo], c.commitTS, classify(err))
		}
		return nil
	}
}

// commitSecondaries commits every lock but the primary's. Failures are
// left to lock resolution: the primary is committed, so whoever meets a
// secondary lock rolls it forward.
func (c *committer) commitSecondaries(ctx context.Context) {
	secondaries := make([][]byte, 0, len(c.lockKeys)-1)
	for _, k := range c.lockKeys {
		if !bytes.Equal(k, c.primary) {
			secondaries = append(secondaries, k)
		}
	}
	spans, err := groupByRegion(ctx, c.s.client, secondaries, 0, len(secondaries))
	if err != nil {
		return
	}
	spans = splitBySize(spans, c.s.opts.BatchBytes, func(i int) int { return len(secondaries[i]) })
	_ = c.s.runSpans(ctx, secondaries, spans, c.commitBatch(secondaries))
}

func markSent(s []bool) {
	for i := range s {
		s[i] = true
	}
}

// rollbackAfter rolls back after a prewrite failed with err. A write in
// doubt (kv.WriteInDoubtError: the caller's context ended while the
// store held the write, as in a write stall on a full disk) keeps its
// keys' latches until the store applies it or fails it, which a rollback
// of those keys waits for; the statement has been interrupted, so its
// answer does not wait: the rollback runs in the background, still
// within cleanupTimeout, and the locks it cannot reach expire.
func (c *committer) rollbackAfter(ctx context.Context, err error) {
	var doubt *kv.WriteInDoubtError
	if errors.As(err, &doubt) {
		c.stopHeartbeat()
		c.s.background(func(context.Context) { c.rollback(ctx) })
		return
	}
	c.rollback(ctx)
}

// rollback rolls back every lock the transaction may hold after its
// commit failed before the commit point, leaving Rollback records so that
// a prewrite of it still in flight fails. It runs even when ctx has ended,
// within cleanupTimeout; its own failure is not reported (the locks then
// expire and are rolled back by whoever meets them).
func (c *committer) rollback(ctx context.Context) {
	c.stopHeartbeat()
	var keys [][]byte
	for i, m := range c.muts {
		if (c.sent[i] || m.Pessimistic) && m.Op != kv.OpCheckNotExists {
			keys = append(keys, m.Key)
		}
	}
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	spans, err := groupByRegion(ctx, c.s.client, keys, 0, len(keys))
	if err != nil {
		return
	}
	_ = c.s.runSpans(ctx, keys, spans, func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		return c.s.client.BatchRollback(ctx, reg.Ctx(), keys[lo:hi], c.startTS)
	})
}

func (h *CommitHooks) runAfterPrewrite(startTS uint64) error {
	if h.AfterPrewrite == nil {
		return nil
	}
	return h.AfterPrewrite(startTS)
}

func (h *CommitHooks) runAfterPrimaryCommit(startTS, commitTS uint64) error {
	if h.AfterPrimaryCommit == nil {
		return nil
	}
	return h.AfterPrimaryCommit(startTS, commitTS)
}
