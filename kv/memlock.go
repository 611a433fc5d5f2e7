package kv

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// memLockTable closes the race between a 1PC commit and a read that does
// not take latches. A 1PC writer calculates commit_ts from max_read_ts; a
// reader at ts first records ts in max_read_ts, then reads. If the writer
// loaded max_read_ts just before the reader raised it, commit_ts may be at
// or below the reader's ts while the reader runs before the writer's batch
// is applied, and the reader would miss a version it should see.
//
// So the writer publishes its keys here before loading max_read_ts and
// withdraws them after applying; the reader, after recording its ts, waits
// for any published key it is about to read. Both steps are sequentially
// consistent atomics, so either the writer sees the reader's ts (and
// commits above it) or the reader sees the writer's keys (and waits for the
// commit). This is TiKV's concurrency manager in miniature.
type memLockTable struct {
	// active counts published keys; readers skip the mutex when it is 0.
	active atomic.Int64
	mu     sync.Mutex
	locks  map[string]chan struct{} // closed when the key is withdrawn
}

func newMemLockTable() *memLockTable {
	return &memLockTable{locks: map[string]chan struct{}{}}
}

// memLockGuard is a set of published keys.
type memLockGuard struct {
	t    *memLockTable
	keys []string
	done chan struct{}
}

// publish publishes keys. The caller holds their latches, so no other
// writer publishes them at the same time.
func (t *memLockTable) publish(keys [][]byte) *memLockGuard {
	g := &memLockGuard{t: t, keys: make([]string, len(keys)), done: make(chan struct{})}
	t.mu.Lock()
	for i, k := range keys {
		g.keys[i] = string(k)
		t.locks[g.keys[i]] = g.done
	}
	t.mu.Unlock()
	t.active.Add(int64(len(keys)))
	return g
}

// withdraw removes the guard's keys and wakes their waiters.
func (g *memLockGuard) withdraw() {
	g.t.mu.Lock()
	for _, k := range g.keys {
		if g.t.locks[k] == g.done {
			delete(g.t.locks, k)
		}
	}
	g.t.mu.Unlock()
	g.t.active.Add(-int64(len(g.keys)))
	close(g.done)
}

// A reader waits only for the keys published when it looks (pending),
// never for keys published while it waits: a writer that publishes
// after the reader looked loads max_read_ts after the reader recorded
// its ts (the table's mutex orders the two), so it commits above the
// reader's ts and the reader need not see it. Waiting until the range
// has no published key at all would starve a range reader (a change
// feed's scan over a table) under a steady stream of one-phase commits
// into the range, which in a cluster each stay published for a raft
// round.

// waitKey waits for the one-phase commit, if any, that has published
// key.
func (t *memLockTable) waitKey(ctx context.Context, key []byte) error {
	if t.active.Load() == 0 {
		return nil
	}
	t.mu.Lock()
	done := t.locks[string(key)]
	t.mu.Unlock()
	return waitOne(ctx, done)
}

// waitRange waits for the one-phase commits that have published a key
// in [start, end) (end nil: unbounded).
func (t *memLockTable) waitRange(ctx context.Context, start, end []byte) error {
	return waitAll(ctx, t.pending(func(k string) bool {
		return k >= string(start) && (end == nil || k < string(end))
	}))
}

// waitRanges waits for the one-phase commits that have published a key
// in one of ranges (ascending and disjoint; an empty End is unbounded).
func (t *memLockTable) waitRanges(ctx context.Context, ranges []KeyRange) error {
	return waitAll(ctx, t.pending(func(k string) bool {
		// The first range that ends past k holds it if it starts at or
		// before it.
		i := sort.Search(len(ranges), func(i int) bool {
			return len(ranges[i].End) == 0 || string(ranges[i].End) > k
		})
		return i < len(ranges) && string(ranges[i].Start) <= k
	}))
}

// pending returns the channels of the guards that have published a key
// for which in is true.
func (t *memLockTable) pending(in func(k string) bool) []chan struct{} {
	if t.active.Load() == 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []chan struct{}
	for k, done := range t.locks {
		if in(k) && !slices.Contains(out, done) {
			out = append(out, done)
		}
	}
	return out
}

// waitAll waits until every channel of chans is closed, or ctx ends.
func waitAll(ctx context.Context, chans []chan struct{}) error {
	for _, done := range chans {
		if err := waitOne(ctx, done); err != nil {
			return err
		}
	}
	return nil
}

// waitOne waits until done (nil: nothing to wait for) is closed, or ctx
// ends; a closed channel is never reported as a cancelled wait.
func waitOne(ctx context.Context, done chan struct{}) error {
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for a one-phase commit in flight: %w", ctx.Err())
	}
}
