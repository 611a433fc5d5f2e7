package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// mvccReader reads lock, write and data records from one view of the
// store. Write commands read the database itself, under the latches of
// their keys, so what they read of those keys cannot change before they
// apply. Reads take no latches and read a Pebble snapshot, so all their
// records come from one instant.
//
// Point lookups (lock, data, one write record) use Get, not an iterator: a
// committed or rolled-back key's lock is a tombstone, and an iterator
// seeking in the lock space would step over every tombstone after the key
// until compaction removes them, while Get stops at the key.
type mvccReader struct {
	src pebble.Reader
	// lockSet, when set, is exact on every key the reader is asked for
	// (the caller holds their latches): lock skips the lookup of a key the
	// set lacks.
	lockSet *lockSet
	// iter walks the write space; opened on first use, or taken from
	// iters when that is set (a write command's reader, under the
	// latches of the keys it reads: see borrowIters), and then handed
	// back to it by close.
	iter     *pebble.Iterator
	iters    *iterCache
	iterKeys [][]byte
	borrowed cachedIter
	// dataIter reads long values for a walk (scanValue); opened on first
	// use. dataAt is the data-space key it was left at (nil: none, or
	// not known), which lets the next read step to its record with Next
	// rather than seek (dataStepBound).
	dataIter *pebble.Iterator
	dataAt   []byte
	// dataKey is scanValue's buffer for the data-space key it reads.
	dataKey []byte
	// valBuf holds the short value of the record a reverse walk decided
	// on (decideReverse).
	valBuf []byte
	// walked is what the reader's walks stepped over (scancost.go).
	walked walkCost
	// skipVersions: a forward walk leaves decided keys with NextPrefix,
	// the last key it stepped from having had older versions;
	// sinceProbe counts the keys it left so (versionProbeEvery).
	skipVersions bool
	sinceProbe   int
	// seekJumps and noValueJumps count the Lock records whose
	// last-change pointer a read followed, with a seek or by ending the
	// walk, for tests.
	seekJumps, noValueJumps int
	// seekKey is decideForward's buffer for the key of a last change.
	seekKey []byte
	// latest: forward walks read the latest space (latest.go), which
	// was complete in the reader's view (a snapshot taken while it was
	// on). latestGate, for a reader of the live store: forward walks read
	// the space if it (or the range of their span) is on around the
	// opening of their iterator.
	latest     bool
	latestGate *latestSpace
	// latestRanges, for a reader of a snapshot taken while the whole
	// space was off: the ranges whose copies were complete in its view
	// (those on in the set, latestranges.go).
	latestRanges *latestRangeSet
}

// newMVCCReader returns a reader over src (a *pebble.DB or a snapshot).
func newMVCCReader(src pebble.Reader) *mvccReader { return &mvccReader{src: src} }

// close releases the reader's iterator.
func (r *mvccReader) close() {
	// The iterators' errors were already reported by the calls that met
	// them.
	if r.borrowed.it != nil {
		r.iters.put(r.borrowed)
		r.borrowed, r.iter = cachedIter{}, nil
	} else if r.iter != nil {
		_ = r.iter.Close()
	}
	r.closeData()
}

// borrowIters lets a write command's reader take its write-space
// iterator from the store's cache (and give it back on close), rather
// than open one: opening and closing an iterator, and the first seek's
// loading of each level's files, cost about as much as the command's
// reads of a key. keys are the keys the command holds the latches of,
// the only ones it reads. The cache hands out only an iterator that no
// batch applied since it was opened changed keys' write records in
// (iterCache.getFor), and every batch that wrote one of keys was applied
// before the command took its latch (the applier marks the cache before
// the latches are given back), so the iterator sees keys as a fresh one
// would.
func (r *mvccReader) borrowIters(c *iterCache, keys [][]byte) { r.iters, r.iterKeys = c, keys }

// closeData closes the data-space iterator, if one was opened.
func (r *mvccReader) closeData() {
	if r.dataIter != nil {
		_ = r.dataIter.Close()
		r.dataIter = nil
	}
	r.dataAt = r.dataAt[:0]
}

// writeIter returns the write-space iterator, opening it if needed.
func (r *mvccReader) writeIter() (*pebble.Iterator, error) {
	if r.iter != nil {
		return r.iter, nil
	}
	if r.iters != nil {
		ci, err := r.iters.getFor(r.iterKeys)
		if err != nil {
			return nil, err
		}
		r.borrowed, r.iter = ci, ci.it
		return r.iter, nil
	}
	iter, err := r.src.NewIter(&pebble.IterOptions{
		LowerBound: keyspace.SpaceStart(keyspace.Write),
		UpperBound: keyspace.SpaceEnd(keyspace.Write),
	})
	if err != nil {
		return nil, fmt.Errorf("open write-space iterator: %w", err)
	}
	r.iter = iter
	return iter, nil
}

// exact returns a copy of the value stored at raw key k, or nil if there is
// none.
func (r *mvccReader) exact(k []byte) ([]byte, error) {
	v, closer, err := r.src.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %x: %w", k, err)
	}
	v = append([]byte{}, v...)
	if err := closer.Close(); err != nil {
		return nil, fmt.Errorf("get %x: %w", k, err)
	}
	return v, nil
}

// lock returns key's lock, or nil if it has none.
func (r *mvccReader) lock(key []byte) (*txntypes.Lock, error) {
	if r.lockSet != nil && !r.lockSet.has(key) {
		return nil, nil
	}
	v, err := r.exact(keyspace.LockKey(key))
	if err != nil || v == nil {
		return nil, err
	}
	l, err := txntypes.DecodeLock(v)
	if err != nil {
		return nil, fmt.Errorf("read lock of %q: %w", key, err)
	}
	return l, nil
}

// data returns key's long value written by transaction startTS.
func (r *mvccReader) data(key []byte, startTS uint64) ([]byte, error) {
	v, err := r.exact(keyspace.DataKey(key, startTS))
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("read value of %q at start_ts %d: data record missing", key, startTS)
	}
	return v, nil
}

// writeAt returns key's write record at exactly commitTS, or nil. It
// seeks the reader's write-space iterator rather than calling Get: the
// commands that ask (a commit, a one-phase prewrite, a rollback) ask for
// every key they write, and often walk the key's versions too, so the one
// iterator serves them all, where each Get builds an iterator over every
// level of the LSM again (the write records of a commit's keys were about
// 7% of a TPC-C server's CPU). Unlike the lock space, the write space has
// few tombstones: GC deletes a key's versions older than the newest one it
// keeps, so a prefix seek steps over tombstones only of a key whose every
// version GC removed, and only that key's.
func (r *mvccReader) writeAt(key []byte, commitTS uint64) (*txntypes.Write, error) {
	iter, err := r.writeIter()
	if err != nil {
		return nil, err
	}
	k := keyspace.WriteKey(key, commitTS)
	if !iter.SeekPrefixGE(k) || !bytes.Equal(iter.Key(), k) {
		if err := iter.Error(); err != nil {
			return nil, fmt.Errorf("read write record of %q at %d: %w", key, commitTS, err)
		}
		return nil, nil
	}
	w, err := txntypes.DecodeWrite(iter.Value())
	if err != nil {
		return nil, fmt.Errorf("read write record of %q at %d: %w", key, commitTS, err)
	}
	return w, nil
}

// writes calls fn with key's write records committed at or before ts,
// newest first, until fn returns false.
func (r *mvccReader) writes(key []byte, ts uint64, fn func(commitTS uint64, w *txntypes.Write) (more bool)) error {
	iter, err := r.writeIter()
	if err != nil {
		return err
	}
	seek := keyspace.WriteKey(key, ts)
	prefix := seek[:len(seek)-8] // keyspace.WritePrefix(key)
	// A prefix seek reads only key's versions, and skips the sstables
	// whose bloom filters have none of them (comparer.go).
	for ok := iter.SeekPrefixGE(seek); ok; ok = iter.Next() {
		k := iter.Key()
		if !bytes.HasPrefix(k, prefix) {
			break
		}
		if len(k) != len(prefix)+8 {
			return fmt.Errorf("read writes of %q: write key %x has a bad length", key, k)
		}
		commitTS := ^binary.BigEndian.Uint64(k[len(prefix):])
		w, err := txntypes.DecodeWrite(iter.Value())
		if err != nil {
			return fmt.Errorf("read write record of %q at %d: %w", key, commitTS, err)
		}
		if !fn(commitTS, w) {
			return nil
		}
	}
	return iter.Error()
}

// newestWrite returns key's newest write record of any type, or a nil
// record if the key has none.
func (r *mvccReader) newestWrite(key []byte) (uint64, *txntypes.Write, error) {
	var commitTS uint64
	var found *txntypes.Write
	err := r.writes(key, math.MaxUint64, func(ts uint64, w *txntypes.Write) bool {
		commitTS, found = ts, w
		return false
	})
	return commitTS, found, err
}

// valueWrite returns the write record that decides key's value at ts: the
// newest Put or Delete committed at or before ts (Lock and Rollback records
// are skipped), or nil. A Lock record's last-change pointer ends the walk
// (no change below it) or, past lastChangeGetBound records, moves it
// with one seek to the record it points at.
func (r *mvccReader) valueWrite(key []byte, ts uint64) (*txntypes.Write, error) {
	iter, err := r.writeIter()
	if err != nil {
		return nil, err
	}
	seek := keyspace.WriteKey(key, ts)
	prefix := seek[:len(seek)-8] // keyspace.WritePrefix(key)
	for ok := iter.SeekPrefixGE(seek); ok; {
		k := iter.Key()
		if !bytes.HasPrefix(k, prefix) {
			break
		}
		if len(k) != len(prefix)+8 {
			return nil, fmt.Errorf("read writes of %q: write key %x has a bad length", key, k)
		}
		commitTS := ^binary.BigEndian.Uint64(k[len(prefix):])
		typ, err := txntypes.PeekWriteType(iter.Value())
		if err != nil {
			return nil, fmt.Errorf("read write record of %q at %d: %w", key, commitTS, err)
		}
		switch typ {
		case txntypes.WritePut, txntypes.WriteDelete:
			w, err := txntypes.DecodeWrite(iter.Value())
			if err != nil {
				return nil, fmt.Errorf("read write record of %q at %d: %w", key, commitTS, err)
			}
			return w, nil
		case txntypes.WriteLock:
			to, jump, err := lastChangeJump(iter.Value(), commitTS, lastChangeGetBound)
			if err != nil {
				return nil, fmt.Errorf("read write record of %q at %d: %w", key, commitTS, err)
			}
			switch jump {
			case jumpNoValue:
				r.noValueJumps++
				return nil, nil
			case jumpSeek:
				r.seekJumps++
				binary.BigEndian.PutUint64(seek[len(prefix):], ^to)
				ok = iter.SeekPrefixGE(seek)
				continue
			}
		}
		ok = iter.Next()
	}
	return nil, iter.Error()
}

// lastChangeGetBound and lastChangeScanBound are how many records a
// reader at a Lock record with a last-change pointer steps over with
// Next; a change further down is sought instead. A Next within one key's
// records costs a fraction of a seek, which positions the memtables and
// every level-0 file and level again. A walk (decideForward) seeks
// sooner than a point read (valueWrite): past scanSeekBound records it
// would seek twice anyway, once to decide and once to the next key.
// BenchmarkLastChange, records spread over level-0 files and the
// memtable, seeking at every pointer against stepping (loaded machine,
// process CPU, 4 runs each): a BatchGet of 10 keys under 1 Lock record
// +22% with the seek, under 4 and 8 the same within the noise, under 16
// -21%, under 64 -44%; a Scan of 100 keys under 4 Lock records +70%,
// under 8 -65%.
const (
	lastChangeGetBound  = 8
	lastChangeScanBound = 6
)

// jumpKind is what a reader does at a Lock record (lastChangeJump).
type jumpKind uint8

const (
	// jumpStep: step to the next record, as without a pointer.
	jumpStep jumpKind = iota
	// jumpSeek: seek to the record at the returned commit_ts.
	jumpSeek
	// jumpNoValue: no Put or Delete lies below; the key has no value.
	jumpNoValue
)

// lastChangeJump reads the pointer of the Lock record rec committed at
// commitTS and says what a reader deciding the key's value below it
// does: it seeks to a change more than bound records down. A pointer at or above the record itself is corrupt: following it
// would walk in circles.
func lastChangeJump(rec []byte, commitTS, bound uint64) (uint64, jumpKind, error) {
	w, err := txntypes.ParseWrite(rec)
	if err != nil || !w.HasLastChange() {
		return 0, jumpStep, err
	}
	switch {
	case w.LastChangeTS >= commitTS:
		return 0, jumpStep, fmt.Errorf("last change %d not below the record: %w", w.LastChangeTS, txntypes.ErrCorrupt)
	case w.LastChangeTS == 0:
		return 0, jumpNoValue, nil
	case w.VersionsToLastChange > bound:
		return w.LastChangeTS, jumpSeek, nil
	}
	return 0, jumpStep, nil
}

// lastChangeSearchBound is how many records below a new Lock record
// lastChangeBelow reads, looking for a Put, a Delete or a record with a
// pointer, before it gives up and writes none. Only records from before
// pointers existed (or Rollback records, which carry none) make it look
// further than one.
const lastChangeSearchBound = 128

// lastChangeBelow returns the last-change pointer of a Lock record to be
// committed at commitTS on key (see txntypes.Write.LastChangeTS): versions
// 0 when it is not known within lastChangeSearchBound records.
func (r *mvccReader) lastChangeBelow(key []byte, commitTS uint64) (ts, versions uint64, err error) {
	n := uint64(0)
	known := false
	err = r.writes(key, commitTS-1, func(cts uint64, w *txntypes.Write) bool {
		var v uint64
		ts, v, known = w.NextLastChange(cts)
		if known {
			versions = n + v
			return false
		}
		n++
		return n < lastChangeSearchBound
	})
	switch {
	case err != nil:
		return 0, 0, err
	case known:
		return ts, versions, nil
	case n < lastChangeSearchBound:
		// The key has no Put or Delete below: no value.
		return 0, max(n, 1), nil
	}
	return 0, 0, nil
}

// value returns key's value at ts, or nil if it has none (never written, or
// deleted).
func (r *mvccReader) value(key []byte, ts uint64) ([]byte, error) {
	w, err := r.valueWrite(key, ts)
	if err != nil || w == nil || w.Type != txntypes.WritePut {
		return nil, err
	}
	return r.writeValue(key, w)
}

// batchValue is value for one of n keys read together: with more than
// one, a long value is read through the data-space iterator the reader
// keeps (scanValue) and copied, rather than with a Get each, which opens
// every level's iterator again.
func (r *mvccReader) batchValue(key []byte, ts uint64, n int) ([]byte, error) {
	if n < 2 {
		return r.value(key, ts)
	}
	w, err := r.valueWrite(key, ts)
	if err != nil || w == nil || w.Type != txntypes.WritePut {
		return nil, err
	}
	if w.ShortValue != nil {
		return w.ShortValue, nil
	}
	v, err := r.scanValue(key, w)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(v), nil
}

// writeValue returns the value a Put record stands for.
func (r *mvccReader) writeValue(key []byte, w *txntypes.Write) ([]byte, error) {
	if w.ShortValue != nil {
		return w.ShortValue, nil
	}
	return r.data(key, w.StartTS)
}

// scanValue is writeValue for a walk: a long value is read with an
// iterator over the data space that the reader keeps, not with Get. A
// walk reads the data records of consecutive keys in key order, so each
// seek starts where the last one ended (Pebble then tries a few Next
// steps before seeking: TrySeekUsingNext) and reuses the files and blocks
// it has open, where a Get opens every level's iterator again: with
// values over the short-value limit, Gets were about a quarter of a scan's
// CPU. A seek to an existing record lands on it whatever tombstones lie
// before it, so the lock space's reason for Get does not apply. The value
// is valid until the next call.
func (r *mvccReader) scanValue(key []byte, w *txntypes.Write) ([]byte, error) {
	if w.ShortValue != nil {
		return w.ShortValue, nil
	}
	if r.dataIter == nil {
		iter, err := r.src.NewIter(&pebble.IterOptions{
			LowerBound: keyspace.SpaceStart(keyspace.Data),
			UpperBound: keyspace.SpaceEnd(keyspace.Data),
		})
		if err != nil {
			return nil, fmt.Errorf("open data-space iterator: %w", err)
		}
		r.dataIter = iter
	}
	k := keyspace.AppendDataKey(r.dataKey[:0], key, w.StartTS)
	r.dataKey = k
	found, err := r.dataStep(k)
	if err == nil && !found {
		if r.dataIter.SeekGE(k) && bytes.Equal(r.dataIter.Key(), k) {
			found = true
		} else {
			err = r.dataIter.Error()
		}
	}
	if err != nil {
		r.dataAt = r.dataAt[:0]
		return nil, fmt.Errorf("read value of %q at start_ts %d: %w", key, w.StartTS, err)
	}
	if !found {
		r.dataAt = r.dataAt[:0]
		return nil, fmt.Errorf("read value of %q at start_ts %d: data record missing", key, w.StartTS)
	}
	r.dataAt = append(r.dataAt[:0], k...)
	v, err := r.dataIter.ValueAndErr()
	if err != nil {
		return nil, fmt.Errorf("read value of %q at start_ts %d: %w", key, w.StartTS, err)
	}
	return v, nil
}

// dataStepBound is how many records scanValue steps over with Next,
// from the record it read last, before it seeks instead. A forward walk
// reads the long values of consecutive keys, whose data records are
// usually next to each other (a key's older values, until GC collects
// them, and those of keys deleted or not visible lie between): one Next
// moves the merging iterator's top level only, where a seek, even one
// Pebble turns into Next steps (TrySeekUsingNext), seeks every level again
// and rebuilds the merge. Reads in no order (BatchGet's) mostly lose the
// steps, so there are few.
const dataStepBound = 2

// dataStep tries to move the data-space iterator to k with Next steps
// from the record it was left at, which must come before k. found says
// it is there; false with no error means scanValue must seek.
func (r *mvccReader) dataStep(k []byte) (found bool, err error) {
	if len(r.dataAt) == 0 || bytes.Compare(r.dataAt, k) >= 0 {
		return false, nil
	}
	for range dataStepBound {
		if !r.dataIter.Next() {
			return false, r.dataIter.Error()
		}
		switch c := bytes.Compare(r.dataIter.Key(), k); {
		case c == 0:
			return true, nil
		case c > 0:
			// The iterator stepped from a record before k to one
			// after it: there is no record at k; the seek says so.
			return false, nil
		}
	}
	return false, nil
}

// txnStatus is what the write space says of one transaction on one key.
type txnStatus uint8

const (
	// txnNoRecord: neither a commit nor a rollback record.
	txnNoRecord txnStatus = iota
	// txnCommitted: committed at the returned commit_ts.
	txnCommitted
	// txnRolledBack: a Rollback record, or a commit record of another
	// transaction flagged with an overlapped rollback, is at start_ts.
	txnRolledBack
)

// txnRecord finds what transaction startTS left in key's write space.
// Records older than startTS cannot belong to it, so the search stops
// there.
func (r *mvccReader) txnRecord(key []byte, startTS uint64) (txnStatus, uint64, error) {
	status, commitTS := txnNoRecord, uint64(0)
	err := r.writes(key, math.MaxUint64, func(ts uint64, w *txntypes.Write) bool {
		if ts < startTS {
			return false
		}
		if w.StartTS == startTS {
			status, commitTS = txnCommitted, ts
			if w.Type == txntypes.WriteRollback {
				status = txnRolledBack
			}
			return false
		}
		if ts == startTS && w.OverlappedRollback {
			status, commitTS = txnRolledBack, ts
			return false
		}
		return true
	})
	return status, commitTS, err
}

// locks calls fn with each lock in [start, end) (end nil: unbounded), in
// key order (descending when reverse), until fn returns false. The
// iterator is bounded to the range so that lock tombstones beyond it are
// never visited.
func (r *mvccReader) locks(start, end []byte, reverse bool, fn func(key []byte, l *txntypes.Lock) (more bool)) error {
	upper := keyspace.SpaceEnd(keyspace.Lock)
	if end != nil {
		upper = keyspace.LockKey(end)
	}
	iter, err := r.src.NewIter(&pebble.IterOptions{LowerBound: keyspace.LockKey(start), UpperBound: upper})
	if err != nil {
		return fmt.Errorf("open lock-space iterator: %w", err)
	}
	first, next := iter.First, iter.Next
	if reverse {
		first, next = iter.Last, iter.Prev
	}
	for ok := first(); ok; ok = next() {
		key, err := keyspace.DecodeLockKey(iter.Key())
		if err != nil {
			_ = iter.Close()
			return err
		}
		l, err := txntypes.DecodeLock(iter.Value())
		if err != nil {
			_ = iter.Close()
			return fmt.Errorf("read lock of %q: %w", key, err)
		}
		if !fn(key, l) {
			break
		}
	}
	if err := iter.Error(); err != nil {
		_ = iter.Close()
		return err
	}
	return iter.Close()
}
