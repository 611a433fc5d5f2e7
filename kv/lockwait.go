package kv

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLockWaitSlice is Options.LockWaitSlice when left zero (TiKV's
// wait-for-lock-timeout is 1 s too).
const DefaultLockWaitSlice = time.Second

// lockWaiter is one AcquirePessimisticLock waiting in a key's queue for
// the lock of transaction lockTS. lockTS, inGraph and err are guarded by
// the waiterTable's mutex.
type lockWaiter struct {
	key     []byte
	startTS uint64 // the waiting transaction
	lockTS  uint64 // the transaction whose lock it waits for
	// inGraph: the wait startTS -> lockTS is recorded in the detector.
	inGraph bool
	// err is set, and the waiter woken, when a change of the lock's owner
	// made its wait close a cycle (*DeadlockError).
	err error
	// woken receives once, when the waiter is taken off the queue because
	// the key's lock was released (or the turn was passed on), or err was
	// set.
	woken chan struct{}
}

// waiterTable holds, per key, the queue of pessimistic lock requests
// waiting for the key's lock to go (TiKV's waiter manager), and keeps the
// deadlock detector told of what each waits for. A command that deletes
// locks wakes the first waiter of each of their keys after its batch is
// applied; a woken waiter tries again at the head of the queue, and passes
// the turn on when it does not end up waiting again, so waiters are served
// in the order they came. When a request finds the lock held by another
// transaction than the one the queue's waiters wait for (the lock changed
// hands), they are moved to wait for the new owner in the detector too,
// so that a cycle through them is found at once.
type waiterTable struct {
	detector DeadlockDetector
	// waiting counts queued waiters: commands skip the mutex when it is 0,
	// which is nearly always.
	waiting atomic.Int64
	// waits, waitNanos and deadlocks count the waits begun, the time
	// spent in them and the waits refused or ended as deadlocks
	// (LockWaitStats).
	waits, waitNanos, deadlocks atomic.Uint64
	// detectMu orders the store's requests to the detector (detect);
	// taken before mu, never while holding it.
	detectMu sync.Mutex
	mu       sync.Mutex
	queues   map[string][]*lockWaiter
}

func newWaiterTable(d DeadlockDetector) *waiterTable {
	return &waiterTable{detector: d, queues: make(map[string][]*lockWaiter)}
}

// enqueue queues a waiter of txn startTS for the lock of lockTS on key.
// turn, when it is a waiter on the same key just woken, keeps its place:
// the new waiter goes first. The caller holds key's latch.
func (t *waiterTable) enqueue(key []byte, startTS, lockTS uint64, turn *lockWaiter) *lockWaiter {
	w := &lockWaiter{key: cloneKey(key), startTS: startTS, lockTS: lockTS, woken: make(chan struct{}, 1)}
	t.mu.Lock()
	q := t.queues[string(key)]
	if turn != nil && bytes.Equal(turn.key, key) {
		q = append([]*lockWaiter{w}, q...)
	} else {
		q = append(q, w)
	}
	t.queues[string(key)] = q
	t.mu.Unlock()
	t.waiting.Add(1)
	t.waits.Add(1)
	return w
}

// detect records w's wait in the detector, or takes w off its queue and
// returns the *DeadlockError when the wait would close a cycle. The other
// waiters of the key that still wait for an earlier owner of the lock are
// moved to w's lockTS; one whose new wait closes a cycle is woken with
// the *DeadlockError.
//
// The detector is asked under t.detectMu, not t.mu: a remote detector (a
// KV node of a cluster) is a round trip away, up to its RequestTimeout,
// and meanwhile the store's releases must still wake their waiters, new
// waits queue and LockWaits answer. detectMu keeps the store's requests
// to the detector, and so the moves and the waits they race with, in one
// order.
func (t *waiterTable) detect(ctx context.Context, w *lockWaiter) error {
	t.detectMu.Lock()
	defer t.detectMu.Unlock()
	if err := t.detector.Detect(ctx, w.startTS, w.lockTS, w.key); err != nil {
		t.mu.Lock()
		queued := t.removeLocked(w)
		t.mu.Unlock()
		if !queued {
			// A release woke w meanwhile: the turn it got passes on.
			t.wakeNext(w.key)
		}
		return err
	}
	type move struct {
		x    *lockWaiter
		from uint64
	}
	var moves []move
	t.mu.Lock()
	w.inGraph = true
	for _, x := range t.queues[string(w.key)] {
		if x == w || !x.inGraph || x.lockTS == w.lockTS || x.startTS == w.lockTS {
			continue
		}
		moves = append(moves, move{x, x.lockTS})
		x.lockTS = w.lockTS
	}
	t.mu.Unlock()
	for _, m := range moves {
		x := m.x
		t.detector.Done(x.startTS, m.from)
		if err := t.detector.Detect(ctx, x.startTS, w.lockTS, x.key); err != nil {
			t.mu.Lock()
			x.inGraph = false
			// Unless a release woke it meanwhile (its wait is over).
			if t.removeLocked(x) {
				x.err = err
				x.woken <- struct{}{}
			}
			t.mu.Unlock()
		}
	}
	return nil
}

// done ends w's wait: it leaves the detector and, unless it was woken, its
// queue. A waiter woken by a release that did not use its turn (it timed
// out meanwhile) passes the turn on. It waits for the detector requests
// in progress (detectMu), one of which may be moving w.
func (t *waiterTable) done(w *lockWaiter, woken bool) {
	t.detectMu.Lock()
	t.mu.Lock()
	if w.inGraph {
		t.detector.Done(w.startTS, w.lockTS)
		w.inGraph = false
	}
	queued := t.removeLocked(w)
	t.mu.Unlock()
	t.detectMu.Unlock()
	if !woken && !queued && w.err == nil {
		t.wakeNext(w.key)
	}
}

// removeLocked takes w off its queue and reports whether it was there.
// The caller holds t.mu.
func (t *waiterTable) removeLocked(w *lockWaiter) bool {
	q := t.queues[string(w.key)]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			if len(q) == 0 {
				delete(t.queues, string(w.key))
			} else {
				t.queues[string(w.key)] = q
			}
			t.waiting.Add(-1)
			return true
		}
	}
	return false
}

// released wakes the first waiter of each key whose lock a command
// deleted.
func (t *waiterTable) released(keys [][]byte) {
	if t.waiting.Load() == 0 {
		return
	}
	for _, k := range keys {
		t.wakeNext(k)
	}
}

// wakeNext takes the first waiter of key off its queue and wakes it.
func (t *waiterTable) wakeNext(key []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	q := t.queues[string(key)]
	if len(q) == 0 {
		return
	}
	w := q[0]
	t.removeLocked(w)
	w.woken <- struct{}{}
}

// LockWaitStats are a store's lock-wait counts since it opened.
type LockWaitStats struct {
	// Waiting is the requests waiting for a lock now.
	Waiting int64
	// Waits counts the requests queued behind a lock, a wait then refused
	// as a deadlock included. A request that waits longer than a wait
	// slice (Options.LockWaitSlice) returns to its client, which asks
	// again: each slice counts.
	Waits uint64
	// WaitTime is the time spent waiting.
	WaitTime time.Duration
	// Deadlocks counts the waits refused, or ended, because they closed
	// a cycle of waits (MySQL error 1213 for the victim).
	Deadlocks uint64
}

// LockWaitStats returns the store's lock-wait counts so far.
func (s *Store) LockWaitStats() LockWaitStats {
	t := s.waiters
	return LockWaitStats{Waiting: t.waiting.Load(), Waits: t.waits.Load(), WaitTime: time.Duration(t.waitNanos.Load()), Deadlocks: t.deadlocks.Load()}
}

// LockWait is one lock request waiting for another transaction's lock
// (information_schema.DATA_LOCK_WAITS).
type LockWait struct {
	Key    []byte
	Txn    uint64 // the waiting transaction
	LockTS uint64 // the transaction holding the lock
}

// LockWaitCounts implements Client: the store's LockWaitStats.
func (s *Store) LockWaitCounts(context.Context) (LockWaitStats, error) { return s.LockWaitStats(), nil }

// Add returns the sum of st and o.
func (st LockWaitStats) Add(o LockWaitStats) LockWaitStats {
	return LockWaitStats{Waiting: st.Waiting + o.Waiting, Waits: st.Waits + o.Waits, WaitTime: st.WaitTime + o.WaitTime,
		Deadlocks: st.Deadlocks + o.Deadlocks}
}

// LockWaitInfo implements Client: the store's LockWaits.
func (s *Store) LockWaitInfo(context.Context) ([]LockWait, error) { return s.LockWaits(), nil }

// LockWaits returns the lock requests waiting now, each key's in queue
// order: those whose wait the deadlock detector has recorded, so that a
// caller which sees a wait knows a cycle through it will be found.
func (s *Store) LockWaits() []LockWait {
	t := s.waiters
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []LockWait
	for _, q := range t.queues {
		for _, w := range q {
			if !w.inGraph {
				// Queued but not yet recorded in the detector (or just
				// refused by it): not a wait yet. Reporting only recorded
				// waits lets a caller that saw a wait rely on the
				// detector knowing it.
				continue
			}
			out = append(out, LockWait{Key: cloneKey(w.key), Txn: w.startTS, LockTS: w.lockTS})
		}
	}
	return out
}
