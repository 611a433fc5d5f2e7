package catalog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/percdb/percdb/txn"
)

// AUTO_INCREMENT values and the hidden row IDs of tables without a primary
// key come from ID allocators, as in TiDB: each allocator's high-water mark
// is a meta key (m:a:<tableID><kind>), and a node takes IDs from it in
// batches, each batch in a small transaction of its own. Taking IDs in the
// inserting transaction instead would make every pair of concurrent inserts
// into a table conflict on that one key. The price is MySQL 8's, plus gaps:
// IDs are unique and increase within a node, but a batch that was not used
// up before a restart leaves a gap.

// idBatch is how many IDs a node takes at once.
const idBatch = 100

// allocRetries bounds the attempts of one batch allocation that keeps
// conflicting with other nodes' allocations.
const allocRetries = 20

// Allocator kinds, the last byte of an allocator key.
const (
	KindAutoIncrement byte = 'a'
	KindRowID         byte = 'r'
)

// Allocators holds the allocators of every table this node has written.
type Allocators struct {
	store *txn.Store
	mu    sync.Mutex
	m     map[allocatorKey]*Allocator
}

type allocatorKey struct {
	tableID int64
	kind    byte
}

// NewAllocators returns the ID allocators of a node, which reserve
// their batches in transactions of store.
func NewAllocators(store *txn.Store) *Allocators {
	return &Allocators{store: store, m: make(map[allocatorKey]*Allocator)}
}

// Get returns the allocator of a table; start is the first ID it hands out
// if nothing was allocated yet.
func (a *Allocators) Get(tableID int64, kind byte, start uint64) *Allocator {
	k := allocatorKey{tableID, kind}
	a.mu.Lock()
	defer a.mu.Unlock()
	al := a.m[k]
	if al == nil {
		if start == 0 {
			start = 1
		}
		al = &Allocator{store: a.store, key: AllocatorMetaKey(tableID, kind), start: start}
		a.m[k] = al
	}
	return al
}

// Forget drops the allocators of a table that is gone.
func (a *Allocators) Forget(tableID int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, allocatorKey{tableID, KindAutoIncrement})
	delete(a.m, allocatorKey{tableID, KindRowID})
}

// AllocatorMetaKey is the key of the high-water mark of the allocator of
// kind (KindAutoIncrement, KindRowID) of table tableID: m:a:<tableID><kind>.
func AllocatorMetaKey(tableID int64, kind byte) []byte {
	key := binary.BigEndian.AppendUint64(append([]byte(nil), prefixAllocators...), uint64(tableID))
	return append(key, kind)
}

// Allocator hands out increasing IDs from batches reserved in the store:
// [next, end) is reserved and unused.
type Allocator struct {
	store *txn.Store
	key   []byte
	start uint64

	mu        sync.Mutex
	next, end uint64
}

// Alloc returns a fresh ID.
func (al *Allocator) Alloc(ctx context.Context) (uint64, error) {
	al.mu.Lock()
	defer al.mu.Unlock()
	if al.next >= al.end {
		if err := al.reserve(ctx, 0); err != nil {
			return 0, err
		}
	}
	v := al.next
	al.next++
	return v, nil
}

// Observe records that v was used explicitly, so that later IDs are above
// it (MySQL: inserting a larger AUTO_INCREMENT value moves the counter).
func (al *Allocator) Observe(ctx context.Context, v uint64) error {
	al.mu.Lock()
	defer al.mu.Unlock()
	if v < al.next {
		return nil
	}
	if v < al.end {
		al.next = v + 1
		return nil
	}
	return al.reserve(ctx, v+1)
}

// Peek returns the ID alloc would return, without taking it.
func (al *Allocator) Peek(ctx context.Context) (uint64, error) {
	al.mu.Lock()
	defer al.mu.Unlock()
	if al.next < al.end {
		return al.next, nil
	}
	k, err := al.store.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = k.Rollback(ctx) }()
	return al.readMark(ctx, k)
}

// Reset makes the next ID v, discarding the cached batch (ALTER TABLE ...
// AUTO_INCREMENT = v, TRUNCATE).
func (al *Allocator) Reset(ctx context.Context, v uint64) error {
	al.mu.Lock()
	defer al.mu.Unlock()
	al.next, al.end = 0, 0
	return al.update(ctx, func(uint64) uint64 { return v })
}

// Raise makes the next ID at least v (ALTER TABLE ... AUTO_INCREMENT = v),
// discarding this node's cached batch. It never lowers the stored mark:
// IDs below it may sit in another node's cached batch, or in rows, and
// handing them out again would duplicate them (MySQL resets the counter
// to at most the column's maximum plus one; TiDB, with batches per node
// as here, ignores a value below what was handed out).
func (al *Allocator) Raise(ctx context.Context, v uint64) error {
	al.mu.Lock()
	defer al.mu.Unlock()
	if al.next < al.end && v < al.end {
		al.next = max(al.next, v) // within the batch this node holds
		return nil
	}
	al.next, al.end = 0, 0
	return al.update(ctx, func(mark uint64) uint64 { return max(mark, v) })
}

// reserve takes a new batch starting at least at from.
func (al *Allocator) reserve(ctx context.Context, from uint64) error {
	var first uint64
	err := al.update(ctx, func(mark uint64) uint64 {
		first = max(mark, from)
		return first + idBatch
	})
	if err != nil {
		return err
	}
	al.next, al.end = first, first+idBatch
	return nil
}

// update changes the stored high-water mark with fn in a transaction of its
// own, retrying when another node's allocation conflicts.
func (al *Allocator) update(ctx context.Context, fn func(mark uint64) uint64) error {
	var err error
	for attempt := 0; attempt < allocRetries; attempt++ {
		if err = al.tryUpdate(ctx, fn); err == nil || !errors.Is(err, txn.ErrWriteConflict) {
			return err
		}
	}
	return fmt.Errorf("allocate IDs: %w", err)
}

func (al *Allocator) tryUpdate(ctx context.Context, fn func(mark uint64) uint64) error {
	k, err := al.store.Begin(ctx)
	if err != nil {
		return fmt.Errorf("allocate IDs: %w", err)
	}
	mark, err := al.readMark(ctx, k)
	if err != nil {
		_ = k.Rollback(ctx)
		return err
	}
	if err := k.Set(al.key, EncodeUint64(fn(mark))); err != nil {
		_ = k.Rollback(ctx)
		return fmt.Errorf("allocate IDs: %w", err)
	}
	if err := k.Commit(ctx); err != nil {
		return fmt.Errorf("allocate IDs: %w", err)
	}
	return nil
}

// readMark reads the stored high-water mark: the first ID not yet handed
// out by any node.
func (al *Allocator) readMark(ctx context.Context, k *txn.Txn) (uint64, error) {
	raw, found, err := k.Get(ctx, al.key)
	if err != nil {
		return 0, fmt.Errorf("read ID allocator %q: %w", al.key, err)
	}
	if !found {
		return al.start, nil
	}
	return DecodeUint64("ID allocator", raw)
}
