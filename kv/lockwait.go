package kv

import (
	"bytes"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultLockWaitSlice is Options.LockWaitSlice when left zero (TiKV's
// wait-for-lock-timeout is 1 s too).
const DefaultLockWaitSlice = time.Second

// lockWaiter is one AcquirePessimisticLock waiting in a key's queue for
// the lock of transaction lockTS.
type lockWaiter struct {
	key     []byte
	startTS uint64 // the waiting transaction
	lockTS  uint64 // the transaction whose lock it waits for
	// woken receives once, when the waiter is taken off the queue because
	// the key's lock was released (or the turn was passed on).
	woken chan struct{}
}

// waiterTable holds, per key, the queue of pessimistic lock requests
// waiting for the key's lock to go (TiKV's waiter manager). A command
// that deletes locks wakes the first waiter of each of their keys after
// its batch is applied; a woken waiter tries again at the head of the
// queue, and passes the turn on when it does not end up waiting again, so
// waiters are served in the order they came.
type waiterTable struct {
	// waiting counts queued waiters: commands skip the mutex when it is 0,
	// which is nearly always.
	waiting atomic.Int64
	mu      sync.Mutex
	queues  map[string][]*lockWaiter
}

func newWaiterTable() *waiterTable {
	return &waiterTable{queues: make(map[string][]*lockWaiter)}
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
	return w
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
	if len(q) == 1 {
		delete(t.queues, string(key))
	} else {
		t.queues[string(key)] = q[1:]
	}
	t.waiting.Add(-1)
	w.woken <- struct{}{}
}

// leave takes w off its queue when it stops waiting unwoken (timeout,
// cancellation, deadlock). If it was woken meanwhile, the turn it did not
// use passes on.
func (t *waiterTable) leave(w *lockWaiter) {
	t.mu.Lock()
	q := t.queues[string(w.key)]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			if len(q) == 0 {
				delete(t.queues, string(w.key))
			} else {
				t.queues[string(w.key)] = q
			}
			t.mu.Unlock()
			t.waiting.Add(-1)
			return
		}
	}
	t.mu.Unlock()
	t.wakeNext(w.key)
}
