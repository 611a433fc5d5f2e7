package kv

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sync"
	"time"
)

// DeadlockDetector keeps the wait-for graph of pessimistic transactions
// and refuses a wait that would close a cycle. A store asks it before a
// lock request waits for another transaction's lock and tells it when the
// wait ends. In one process every store shares one detector (the
// embedded one, NewDeadlockDetector); in a cluster the waits of all
// stores must meet in one graph, so the detector is a client of the one
// kept on the leader of the first region, as TiKV does (see doc.go and
// package kv/deadlock).
type DeadlockDetector interface {
	// Detect records that txn waits for the lock of lockTS on key, or
	// returns a *DeadlockError, recording nothing, when lockTS already
	// waits, directly or through others, for txn. A detector that cannot
	// tell (a remote one out of reach until ctx ends) answers nil: the
	// wait is then bounded by its wait slice and timeout only.
	Detect(ctx context.Context, txn, lockTS uint64, key []byte) error
	// Done removes one wait recorded by Detect. It does not block.
	Done(txn, lockTS uint64)
}

// NewDeadlockDetector returns an embedded, in-memory detector.
func NewDeadlockDetector() DeadlockDetector { return NewWaitForGraph(time.Now) }

// WaitForGraph is the wait-for graph in memory: an edge txn -> lockTS per
// wait in progress, counted (the same pair may wait on several keys at
// once, from requests to several regions), each stamped with when it was
// last recorded. It is the embedded detector, and the graph the cluster's
// detector keeps (package kv/deadlock), which also expires edges whose
// end it was never told of (ExpireBefore) and records edges re-sent after
// a change of detector unchecked (Ensure).
type WaitForGraph struct {
	now     func() time.Time
	mu      sync.Mutex
	waitFor map[uint64]map[uint64]*waitEdge
}

type waitEdge struct {
	key []byte
	n   int
	at  time.Time // last recorded
}

// NewWaitForGraph returns an empty graph whose edges are stamped with
// now().
func NewWaitForGraph(now func() time.Time) *WaitForGraph {
	return &WaitForGraph{now: now, waitFor: make(map[uint64]map[uint64]*waitEdge)}
}

// Detect implements DeadlockDetector; it never blocks on ctx.
func (g *WaitForGraph) Detect(_ context.Context, txn, lockTS uint64, key []byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if chain := g.path(lockTS, txn); chain != nil {
		return &DeadlockError{Key: cloneKey(key), StartTS: txn, LockTS: lockTS, Chain: chain}
	}
	g.addLocked(txn, lockTS, key)
	return nil
}

// Ensure records the wait txn -> lockTS without checking for a cycle, or
// refreshes its stamp if it is recorded (its count unchanged): a wait
// already checked, re-sent to a detector that may not have it (a new
// one) or to keep it from expiring.
func (g *WaitForGraph) Ensure(txn, lockTS uint64, key []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e := g.waitFor[txn][lockTS]; e != nil {
		e.at = g.now()
		return
	}
	g.addLocked(txn, lockTS, key)
}

func (g *WaitForGraph) addLocked(txn, lockTS uint64, key []byte) {
	out := g.waitFor[txn]
	if out == nil {
		out = make(map[uint64]*waitEdge)
		g.waitFor[txn] = out
	}
	e := out[lockTS]
	if e == nil {
		e = &waitEdge{key: cloneKey(key)}
		out[lockTS] = e
	}
	e.n++
	e.at = g.now()
}

// Done implements DeadlockDetector.
func (g *WaitForGraph) Done(txn, lockTS uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := g.waitFor[txn]
	e := out[lockTS]
	if e == nil {
		return
	}
	if e.n--; e.n == 0 {
		g.deleteLocked(txn, lockTS)
	}
}

func (g *WaitForGraph) deleteLocked(txn, lockTS uint64) {
	out := g.waitFor[txn]
	delete(out, lockTS)
	if len(out) == 0 {
		delete(g.waitFor, txn)
	}
}

// ExpireBefore removes every edge last recorded before t, whatever its
// count, and returns how many it removed: the waits whose Done was lost
// (a store that crashed, or a message that did not arrive) must not make
// later waits look like deadlocks.
func (g *WaitForGraph) ExpireBefore(t time.Time) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for txn, out := range g.waitFor {
		for lockTS, e := range out {
			if e.at.Before(t) {
				g.deleteLocked(txn, lockTS)
				n++
			}
		}
	}
	return n
}

// Reset removes every edge.
func (g *WaitForGraph) Reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.waitFor)
}

// Edges returns the graph's edges ordered by waiter, then holder.
func (g *WaitForGraph) Edges() []WaitForEntry {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []WaitForEntry
	for txn, m := range g.waitFor {
		for lockTS, e := range m {
			out = append(out, WaitForEntry{Txn: txn, WaitForTxn: lockTS, Key: cloneKey(e.key)})
		}
	}
	slices.SortFunc(out, func(a, b WaitForEntry) int {
		return cmp.Or(cmp.Compare(a.Txn, b.Txn), cmp.Compare(a.WaitForTxn, b.WaitForTxn), bytes.Compare(a.Key, b.Key))
	})
	return out
}

// path returns the waits that lead from txn from to txn to, in order, or
// nil when there is no such path. Depth first, each transaction visited
// once: the graph holds one edge per waiting request, so it is small.
// Edges are tried in holder order, so that the cycle reported does not
// depend on map order.
func (g *WaitForGraph) path(from, to uint64) []WaitForEntry {
	visited := map[uint64]bool{from: true}
	var walk func(at uint64) []WaitForEntry
	walk = func(at uint64) []WaitForEntry {
		out := g.waitFor[at]
		next := make([]uint64, 0, len(out))
		for n := range out {
			next = append(next, n)
		}
		slices.Sort(next)
		for _, n := range next {
			step := WaitForEntry{Txn: at, WaitForTxn: n, Key: cloneKey(out[n].key)}
			if n == to {
				return []WaitForEntry{step}
			}
			if visited[n] {
				continue
			}
			visited[n] = true
			if rest := walk(n); rest != nil {
				return append([]WaitForEntry{step}, rest...)
			}
		}
		return nil
	}
	return walk(from)
}
