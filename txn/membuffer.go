package txn

import (
	"bytes"
	"slices"
	"sort"
)

// bufOp is what a buffered key will become at commit.
type bufOp uint8

const (
	// bufPut writes entry.value.
	bufPut bufOp = iota + 1
	// bufDelete deletes the key.
	bufDelete
	// bufLock only locks the key (LockKeys): reads see through it to the
	// snapshot, and at commit it is prewritten as kv.OpLock.
	bufLock
)

// entry is one buffered key.
type entry struct {
	op    bufOp
	value []byte // bufPut only
	// presumeNotExists is set by Insert and kept by later writes of the key
	// in the same transaction: the key must not exist when the transaction
	// commits (a put becomes kv.OpInsert, a delete kv.OpCheckNotExists).
	presumeNotExists bool
	// notify are the observer columns the commit of the key notifies
	// (Txn.Notify); kept by later writes of the key.
	notify []string
}

// size is the entry's contribution to memBuffer.size.
func (e entry) size(key string) int { return len(key) + len(e.value) }

// undoRecord restores one key to what it was before a write.
type undoRecord struct {
	key     string
	prev    entry
	existed bool
}

// StagingHandle names a statement-level stage of a transaction's writes;
// see Txn.Staging. The zero value is not a valid handle.
type StagingHandle int

// memBuffer holds a transaction's writes until commit, TiDB MemBuffer
// style: a map for point lookups, a lazily sorted key list for ranges and
// commit, and a stack of stages with an undo log so that a failed
// statement can undo its own writes and nothing else.
//
// Sorting is lazy because the common transaction writes a handful of keys
// and reads none back in order; new keys are kept apart in pending and
// merged into sorted when a range or the commit needs order.
type memBuffer struct {
	entries map[string]entry
	sorted  []string // sorted keys; may hold keys no longer in entries when stale
	pending []string // keys added since sorted was last built
	stale   bool     // a key was removed from entries (by an undo)
	size    int

	undo   []undoRecord
	stages []int // undo-log length when each open stage began
}

func newMemBuffer() *memBuffer { return &memBuffer{entries: make(map[string]entry)} }

// get returns the buffered entry of key.
func (b *memBuffer) get(key []byte) (entry, bool) {
	e, ok := b.entries[string(key)]
	return e, ok
}

// set records a write of key; value is copied.
func (b *memBuffer) set(key []byte, e entry) {
	if e.value != nil {
		e.value = bytes.Clone(e.value)
	}
	k := string(key)
	prev, existed := b.entries[k]
	if len(b.stages) > 0 {
		b.undo = append(b.undo, undoRecord{key: k, prev: prev, existed: existed})
	}
	if existed {
		b.size -= prev.size(k)
	} else {
		b.pending = append(b.pending, k)
	}
	b.entries[k] = e
	b.size += e.size(k)
}

// len is the number of buffered keys.
func (b *memBuffer) len() int { return len(b.entries) }

// keys returns the buffered keys in ascending order. The slice is owned by
// the buffer and valid until the next write.
func (b *memBuffer) keys() []string {
	if len(b.pending) == 0 && !b.stale {
		return b.sorted
	}
	if b.stale {
		b.sorted = slices.DeleteFunc(b.sorted, func(k string) bool {
			_, ok := b.entries[k]
			return !ok
		})
		b.pending = slices.DeleteFunc(b.pending, func(k string) bool {
			_, ok := b.entries[k]
			return !ok
		})
		b.stale = false
	}
	if len(b.pending) > 0 {
		slices.Sort(b.pending)
		// An undo followed by a rewrite can queue a key that is still in
		// sorted (when sorted was not yet cleaned) or twice in pending.
		b.pending = slices.Compact(b.pending)
		merged := make([]string, 0, len(b.sorted)+len(b.pending))
		i, j := 0, 0
		for i < len(b.sorted) || j < len(b.pending) {
			switch {
			case j == len(b.pending) || (i < len(b.sorted) && b.sorted[i] < b.pending[j]):
				merged = append(merged, b.sorted[i])
				i++
			case i == len(b.sorted) || b.pending[j] < b.sorted[i]:
				merged = append(merged, b.pending[j])
				j++
			default: // equal
				merged = append(merged, b.sorted[i])
				i++
				j++
			}
		}
		b.sorted = merged
		b.pending = b.pending[:0]
	}
	return b.sorted
}

// bufPair is one buffered key with its entry, as copied for an iterator.
type bufPair struct {
	key []byte
	e   entry
}

// rangeSnapshot copies the entries in [start, end) (an empty end is
// unbounded) in ascending order, so that an iterator is not disturbed by
// writes made while it is open.
func (b *memBuffer) rangeSnapshot(start, end []byte) []bufPair {
	keys := b.keys()
	lo := sort.SearchStrings(keys, string(start))
	hi := len(keys)
	if len(end) > 0 {
		hi = sort.SearchStrings(keys, string(end))
	}
	if lo >= hi {
		return nil
	}
	out := make([]bufPair, 0, hi-lo)
	for _, k := range keys[lo:hi] {
		out = append(out, bufPair{key: []byte(k), e: b.entries[k]})
	}
	return out
}

// staging opens a stage and returns its handle.
func (b *memBuffer) staging() StagingHandle {
	b.stages = append(b.stages, len(b.undo))
	return StagingHandle(len(b.stages))
}

// validHandle reports whether h names an open stage.
func (b *memBuffer) validHandle(h StagingHandle) bool {
	return h > 0 && int(h) <= len(b.stages)
}

// release closes stage h and every stage opened after it, keeping their
// writes (they become part of the enclosing stage, if any). An invalid
// handle is ignored.
func (b *memBuffer) release(h StagingHandle) {
	if !b.validHandle(h) {
		return
	}
	b.stages = b.stages[:h-1]
	if len(b.stages) == 0 {
		b.undo = b.undo[:0]
	}
}

// cleanup undoes every write made since stage h was opened and closes it
// and the stages opened after it. An invalid handle is ignored.
func (b *memBuffer) cleanup(h StagingHandle) {
	if !b.validHandle(h) {
		return
	}
	mark := b.stages[h-1]
	for i := len(b.undo) - 1; i >= mark; i-- {
		r := b.undo[i]
		if cur, ok := b.entries[r.key]; ok {
			b.size -= cur.size(r.key)
		}
		if r.existed {
			b.entries[r.key] = r.prev
			b.size += r.prev.size(r.key)
		} else {
			delete(b.entries, r.key)
			b.stale = true
		}
	}
	clear(b.undo[mark:]) // let the undone values be collected
	b.undo = b.undo[:mark]
	b.stages = b.stages[:h-1]
}

// EachWrite calls fn with each key the transaction writes or deletes (not
// those it only locks), in no particular order, and what the write does
// to the number of keys: +1 for a key inserted (Insert: it did not
// exist), -1 for a key deleted that existed, 0 for one overwritten (Set:
// it may or may not have existed). A key inserted and deleted again is
// not passed. For the SQL layer's counts of modified rows
// (sql/statistics). The key is valid only during the call.
func (t *Txn) EachWrite(fn func(key []byte, delta int)) {
	for k, e := range t.buf.entries {
		switch {
		case e.op == bufPut && e.presumeNotExists:
			fn([]byte(k), 1)
		case e.op == bufPut:
			fn([]byte(k), 0)
		case e.op == bufDelete && !e.presumeNotExists:
			fn([]byte(k), -1)
		}
	}
}
