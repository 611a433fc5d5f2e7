package kv

import (
	"sync"
)

// DeadlockDetector keeps the wait-for graph of pessimistic transactions
// and refuses a wait that would close a cycle. A store asks it before a
// lock request waits for another transaction's lock and tells it when the
// wait ends. In one process every store shares one detector (the
// embedded one, NewDeadlockDetector); in a cluster the waits of all
// stores must meet in one graph, so the detector is a client of the one
// kept on the leader of the first region, as TiKV does (see doc.go).
type DeadlockDetector interface {
	// Detect records that txn waits for the lock of lockTS on key, or
	// returns a *DeadlockError, recording nothing, when lockTS already
	// waits, directly or through others, for txn.
	Detect(txn, lockTS uint64, key []byte) error
	// Done removes one wait recorded by Detect.
	Done(txn, lockTS uint64)
}

// NewDeadlockDetector returns an embedded, in-memory detector.
func NewDeadlockDetector() DeadlockDetector {
	return &localDetector{waitFor: make(map[uint64]map[uint64]*waitEdge)}
}

// localDetector is the wait-for graph in memory: an edge txn -> lockTS per
// wait in progress, counted (the same pair may wait on several keys at
// once, from requests to several regions).
type localDetector struct {
	mu      sync.Mutex
	waitFor map[uint64]map[uint64]*waitEdge
}

type waitEdge struct {
	key []byte
	n   int
}

func (d *localDetector) Detect(txn, lockTS uint64, key []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if chain := d.path(lockTS, txn); chain != nil {
		return &DeadlockError{Key: cloneKey(key), StartTS: txn, LockTS: lockTS, Chain: chain}
	}
	out := d.waitFor[txn]
	if out == nil {
		out = make(map[uint64]*waitEdge)
		d.waitFor[txn] = out
	}
	e := out[lockTS]
	if e == nil {
		e = &waitEdge{key: cloneKey(key)}
		out[lockTS] = e
	}
	e.n++
	return nil
}

func (d *localDetector) Done(txn, lockTS uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.waitFor[txn]
	e := out[lockTS]
	if e == nil {
		return
	}
	if e.n--; e.n == 0 {
		delete(out, lockTS)
		if len(out) == 0 {
			delete(d.waitFor, txn)
		}
	}
}

// path returns the waits that lead from txn from to txn to, in order, or
// nil when there is no such path. Depth first, each transaction visited
// once: the graph holds one edge per waiting request, so it is small.
func (d *localDetector) path(from, to uint64) []WaitForEntry {
	visited := map[uint64]bool{from: true}
	var walk func(at uint64) []WaitForEntry
	walk = func(at uint64) []WaitForEntry {
		for next, e := range d.waitFor[at] {
			step := WaitForEntry{Txn: at, WaitForTxn: next, Key: cloneKey(e.key)}
			if next == to {
				return []WaitForEntry{step}
			}
			if visited[next] {
				continue
			}
			visited[next] = true
			if rest := walk(next); rest != nil {
				return append([]WaitForEntry{step}, rest...)
			}
		}
		return nil
	}
	return walk(from)
}
