package txn

import (
	"bytes"
	"slices"
	"sort"
	"unsafe"
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

// entry is one buffered key. It is kept small: a large transaction holds
// one per key in the map and one per overwrite in the undo log.
type entry struct {
	op bufOp
	// presumeNotExists is set by Insert and kept by later writes of the key
	// in the same transaction: the key must not exist when the transaction
	// commits (a put becomes kv.OpInsert, a delete kv.OpCheckNotExists).
	presumeNotExists bool
	value            []byte // bufPut only
	// notify, when set, are the observer columns the commit of the key
	// notifies (Txn.Notify); kept by later writes of the key. Never
	// changed in place: an undo record may share it.
	notify *[]string
	// covered is set by SetCovered and DeleteCovered: the key's writers
	// all lock another key the transaction writes with it, so a
	// pessimistic statement need not lock it (LockableSince).
	covered bool
}

// notifyColumns returns the columns the commit of the key notifies.
func (e entry) notifyColumns() []string {
	if e.notify == nil {
		return nil
	}
	return *e.notify
}

// size is the entry's contribution to memBuffer.size.
func (e entry) size(key string) int { return len(key) + len(e.value) }

// undoRecord restores a key a stage overwrote to what it was before.
type undoRecord struct {
	key  string
	prev entry
}

// stageMark is where a stage's undo began: the lengths of the two logs.
type stageMark struct{ created, overwritten int }

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
//
// A large transaction (INSERT ... SELECT, LOAD DATA) buffers hundreds of
// thousands of keys, so the bytes per key beyond the key and value count:
// the keys and their first values live in large chunks (byteArena), not
// one allocation each; the
// undo log keeps only the key of a key a stage created (undoing it is a
// delete), and a whole record only for a key it overwrote; and the logs
// and the pending list give their memory back when they empty.
// BenchmarkMemBufferLarge measures it.
type memBuffer struct {
	entries map[string]entry
	sorted  []string // sorted keys; may hold keys no longer in entries when stale
	pending []string // keys added since sorted was last built
	stale   bool     // a key was removed from entries (by an undo)
	size    int
	arena   byteArena

	// The undo log of the open stages, in two parts: keys absent before
	// a stage's write (created) and keys it overwrote (overwritten).
	created     []string
	overwritten []undoRecord
	stages      []stageMark // where each open stage's undo began
}

// byteArena holds the bytes of a buffer's keys, and of the first value
// written to each, appended to chunks of up to arenaChunkMax bytes and
// never changed after: the map's key strings and the entries' values
// point into them. A chunk lives as long as anything in it does. A value
// written over another is allocated apart (bytes.Clone), so a key
// rewritten many times leaves at most its first value unused here.
type byteArena struct{ chunk []byte }

// arenaChunkMax bounds an arena chunk; the first is 4 KiB and each is
// twice the last, so a small transaction's keys take one small
// allocation.
const arenaChunkMax = 1 << 20

// alloc copies b into the arena and returns the copy, its capacity
// capped (an append to it copies).
func (a *byteArena) alloc(b []byte) []byte {
	if len(b) == 0 {
		return b[:0:0] // empty stays empty, nil stays nil
	}
	if cap(a.chunk)-len(a.chunk) < len(b) {
		a.chunk = make([]byte, 0, max(len(b), min(max(2*cap(a.chunk), 4<<10), arenaChunkMax)))
	}
	off := len(a.chunk)
	a.chunk = append(a.chunk, b...)
	return a.chunk[off:len(a.chunk):len(a.chunk)]
}

// intern returns a string of key's bytes held in the arena.
func (a *byteArena) intern(key []byte) string {
	if len(key) == 0 {
		return ""
	}
	c := a.alloc(key)
	return unsafe.String(&c[0], len(c))
}

// shrinkAbove is the capacity past which an emptied log or list is
// dropped rather than kept for reuse.
const shrinkAbove = 1024

// emptied returns s emptied, its memory dropped when large. Only its
// length is cleared: what lies past it was cleared when it was cut off
// (cleanup clears what it undoes), so a statement's release does not pay
// for the capacity an earlier, larger statement left.
func emptied[T any](s []T) []T {
	if cap(s) > shrinkAbove {
		return nil
	}
	clear(s) // let what it referred to be collected
	return s[:0]
}

func newMemBuffer() *memBuffer { return &memBuffer{entries: make(map[string]entry)} }

// get returns the buffered entry of key.
func (b *memBuffer) get(key []byte) (entry, bool) {
	e, ok := b.entries[string(key)]
	return e, ok
}

// set records a write of key; value is copied.
func (b *memBuffer) set(key []byte, e entry) {
	prev, existed := b.entries[string(key)]
	if e.value != nil {
		if existed {
			e.value = bytes.Clone(e.value)
		} else {
			e.value = b.arena.alloc(e.value)
		}
	}
	var k string
	if existed {
		k = string(key)
		b.size -= prev.size(k)
		if len(b.stages) > 0 {
			b.overwritten = append(b.overwritten, undoRecord{key: k, prev: prev})
		}
	} else {
		k = b.arena.intern(key)
		b.pending = append(b.pending, k)
		if len(b.stages) > 0 {
			b.created = append(b.created, k)
		}
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
		b.pending = emptied(b.pending)
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
	b.stages = append(b.stages, stageMark{created: len(b.created), overwritten: len(b.overwritten)})
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
		b.created, b.overwritten = emptied(b.created), emptied(b.overwritten)
	}
}

// cleanup undoes every write made since stage h was opened and closes it
// and the stages opened after it. An invalid handle is ignored.
func (b *memBuffer) cleanup(h StagingHandle) {
	if !b.validHandle(h) {
		return
	}
	mark := b.stages[h-1]
	// Overwritten keys first, newest first, each back to what it was
	// before its write; then the keys the stage created go. A key created
	// and then overwritten in the stage is restored to its first value by
	// the first loop and deleted by the second.
	for i := len(b.overwritten) - 1; i >= mark.overwritten; i-- {
		r := b.overwritten[i]
		if cur, ok := b.entries[r.key]; ok {
			b.size -= cur.size(r.key)
		}
		b.entries[r.key] = r.prev
		b.size += r.prev.size(r.key)
	}
	for _, k := range b.created[mark.created:] {
		if cur, ok := b.entries[k]; ok {
			b.size -= cur.size(k)
			delete(b.entries, k)
			b.stale = true
		}
	}
	clear(b.overwritten[mark.overwritten:]) // let the undone values be collected
	b.overwritten = b.overwritten[:mark.overwritten]
	clear(b.created[mark.created:])
	b.created = b.created[:mark.created]
	b.stages = b.stages[:h-1]
	if len(b.stages) == 0 {
		b.created, b.overwritten = emptied(b.created), emptied(b.overwritten)
	}
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
