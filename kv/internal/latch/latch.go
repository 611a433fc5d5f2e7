package latch

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"
)

// DefaultSlots is the table size used when New is given 0.
const DefaultSlots = 4096

// Table is a table of latch slots. It is safe for concurrent use.
type Table struct {
	seed maphash.Seed
	// slots are binary semaphores: a slot is held while its channel holds a
	// token. Channels rather than mutexes so that waiting can be cancelled.
	slots []chan struct{}
	mask  uint64
}

// New returns a table of at least slots slots (rounded up to a power of
// two; DefaultSlots when 0).
func New(slots int) *Table {
	if slots <= 0 {
		slots = DefaultSlots
	}
	n := 1 << bits.Len(uint(slots-1))
	t := &Table{seed: maphash.MakeSeed(), slots: make([]chan struct{}, n), mask: uint64(n - 1)}
	for i := range t.slots {
		t.slots[i] = make(chan struct{}, 1)
	}
	return t
}

// Guard is a set of held slots; Release gives them back.
type Guard struct {
	t     *Table
	slots []uint64
}

// ErrAborted is AcquireOr's error when its abort channel closed first.
var ErrAborted = errors.New("latch wait aborted")

// Acquire takes the latches of keys, waiting for commands that hold them.
// It returns ctx's error, holding nothing, if ctx ends first.
func (t *Table) Acquire(ctx context.Context, keys [][]byte) (*Guard, error) {
	return t.AcquireOr(ctx, keys, nil)
}

// AcquireOr is Acquire that also gives up, holding nothing, with an error
// wrapping ErrAborted when abort is closed (nil: never) while it waits: a
// holder that may never let go (a write the storage holds until space is
// freed) need not hold the waiter.
func (t *Table) AcquireOr(ctx context.Context, keys [][]byte, abort <-chan struct{}) (*Guard, error) {
	slots := make([]uint64, len(keys))
	for i, k := range keys {
		slots[i] = maphash.Bytes(t.seed, k) & t.mask
	}
	slices.Sort(slots)
	slots = slices.Compact(slots)
	g := &Guard{t: t, slots: slots[:0]}
	for _, s := range slots {
		select {
		case t.slots[s] <- struct{}{}: // free: no need to watch ctx or abort
			g.slots = append(g.slots, s)
			continue
		default:
		}
		select {
		case t.slots[s] <- struct{}{}:
			g.slots = append(g.slots, s)
		case <-ctx.Done():
			g.Release()
			return nil, fmt.Errorf("acquire latch for %d keys: %w", len(keys), ctx.Err())
		case <-abort:
			g.Release()
			return nil, fmt.Errorf("acquire latch for %d keys: %w", len(keys), ErrAborted)
		}
	}
	return g, nil
}

// Release gives back every slot of g. It must be called exactly once.
func (g *Guard) Release() {
	for _, s := range g.slots {
		<-g.t.slots[s]
	}
	g.slots = nil
}
