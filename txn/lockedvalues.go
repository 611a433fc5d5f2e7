package txn

import "bytes"

// Values of locked keys.
//
// A pessimistic transaction often reads a row, locks it, and reads it
// again: SELECT ... FOR UPDATE then UPDATE of the same row (TPC-C's
// New-Order does it for its district and every stock line, Payment for
// its customer), or an UPDATE that runs again after its snapshot moved.
// Once the transaction holds a key's lock, nothing can commit to the key
// until the transaction ends, so a snapshot read of it returns the same
// value at every snapshot from the key's newest commit on. The
// transaction keeps that value (lockedValues) and answers later snapshot
// reads of the key from it instead of asking the store again.
//
// Which value is the stable one: LockKeys records, per key, a timestamp
// at or above its newest commit when the lock was taken (locked: the
// for_update_ts, or the newer commit the lock met under LockWithConflict;
// the store reports none newer than that). A point read at a snapshot at
// or above it returned the stable value. Such a read is either made after
// the lock (kept at once) or made by the statement before it locks the
// key, at its snapshot, which is the lock's for_update_ts: the statement's
// point reads are held (pendingReads) until its LockKeys and kept for the
// keys it locked at a timestamp at or below the read's. A read below that
// timestamp (the lock met a newer commit: the statement runs again at a
// newer snapshot) is not kept.
//
// Reads answered from these values are recorded in the read set as any
// read is (trackRead): the validation of a snapshot move is unchanged.
// The transaction's own writes still come first (read-your-writes). Rollback
// forgets the values with the locks.

// maxPendingReads bounds the point reads one statement holds for its
// LockKeys: a statement that reads more keys than that by point reads
// is a large read, which rarely locks what it read key by key.
const maxPendingReads = 256

// pendingRead is a point read of the current statement, at snapshot ts:
// value is nil when the key was absent.
type pendingRead struct {
	ts    uint64
	value []byte
}

// lockedValue is the value of a key the transaction holds locked, as
// every snapshot read of it from now on returns it (nil: absent).
type lockedValue struct {
	value []byte
}

// cachedLocked returns the value of key if the transaction holds its lock
// and knows its stable value, for a read at snapshot ts, or nil if the
// statement's LockKeysReadingIfExist found the key absent at ts.
func (p *pessimisticState) cachedLocked(key []byte, ts uint64) ([]byte, bool) {
	if p == nil {
		return nil, false
	}
	if at, ok := p.absent[string(key)]; ok && at == ts {
		return nil, true
	}
	if p.values == nil {
		return nil, false
	}
	lv, ok := p.values[string(key)]
	if !ok {
		return nil, false
	}
	if at, locked := p.locked[string(key)]; !locked || ts < at {
		return nil, false
	}
	// A copy: the caller owns what a read returns.
	return bytes.Clone(lv.value), true
}

// noteRead remembers what a point read of key at snapshot ts returned
// (nil: absent): as the key's stable value if it is locked from at or
// below ts already, else for the statement's LockKeys.
func (p *pessimisticState) noteRead(key []byte, ts uint64, value []byte) {
	if p == nil {
		return
	}
	if at, locked := p.locked[string(key)]; locked {
		if ts >= at {
			p.keep(string(key), bytes.Clone(value))
		}
		return
	}
	if p.pending == nil {
		p.pending = make(map[string]pendingRead)
	}
	if _, ok := p.pending[string(key)]; !ok && len(p.pending) >= maxPendingReads {
		return
	}
	p.pending[string(key)] = pendingRead{ts: ts, value: bytes.Clone(value)}
}

// keepPending keeps, for each of keys just locked, the statement's point
// read of it if that read was at or above the timestamp the key is now
// stable from (locked).
func (p *pessimisticState) keepPending(keys [][]byte) {
	if len(p.pending) == 0 {
		return
	}
	for _, k := range keys {
		r, ok := p.pending[string(k)]
		if !ok {
			continue
		}
		delete(p.pending, string(k))
		if r.ts >= p.locked[string(k)] {
			p.keep(string(k), r.value)
		}
	}
}

// keep records value (nil: absent) as key's stable value; value must not
// be shared with a caller.
func (p *pessimisticState) keep(key string, value []byte) {
	if p.values == nil {
		p.values = make(map[string]lockedValue)
	}
	p.values[key] = lockedValue{value: value}
}

// noteAbsent records that key had no value at snapshot ts, as the store
// found it under LockKeysReadingIfExist without locking it: a snapshot at
// ts never changes (a commit at or below it had its lock in place before
// the store's check, which met it, and a one-phase commit lands above
// the reads a region served), so the statement's read of key at ts is
// answered so. Kept until the statement ends (beginStatement).
func (p *pessimisticState) noteAbsent(key []byte, ts uint64) {
	if p.absent == nil {
		p.absent = make(map[string]uint64)
	}
	p.absent[string(key)] = ts
}

// beginStatement forgets the point reads of the statement before, and
// the keys it found absent.
func (p *pessimisticState) beginStatement() {
	if p != nil {
		clear(p.pending)
		clear(p.absent)
	}
}

// knowsValues reports whether cachedLocked may answer a read.
func (p *pessimisticState) knowsValues() bool {
	return p != nil && (len(p.values) > 0 || len(p.absent) > 0)
}
