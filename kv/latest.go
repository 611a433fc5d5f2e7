package kv

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// The latest space keeps a copy of each key's newest Put or Delete write
// record under the key alone (keyspace.Latest), rewritten in place by
// every commit, so that a forward walk at the present reads one record a
// key however many younger versions the write space keeps.
//
// Why: under steady updates most rows keep a version younger than the GC
// safe point, which GC may not delete, and a walk of the write space
// steps over it: a row with a young version costs the walk about 0.65x a
// fresh row more, whatever compaction does (BenchmarkScanChurnShare,
// kind=version). A copy rewritten in place shadows the older copy only
// until a compaction drops it (about 0.35x, kind=copy), and only the rows
// written since the last compaction have one (docs/benchmarks.md, issue
// 16).
//
// Invariant: for every key of the write space with a Put or Delete
// record, the latest space holds the newest of them with its commit
// timestamp; for no other key does it hold anything. Every commit record
// goes through putCommitRecord, which writes the copy in the same batch;
// commits of one key are ordered by its lock, so the one written is
// always the newest. GC removes the copy when it collects the key's
// newest record (a Delete at or below the safe point). A walk at ts uses
// a copy committed at or below ts as the key's deciding record; for a
// newer one it reads the key's versions (valueWrite).

// latestValue encodes a latest-space value: the commit timestamp, 8
// bytes big-endian, then the write record.
func latestValue(commitTS uint64, w *txntypes.Write) []byte {
	return append(binary.BigEndian.AppendUint64(nil, commitTS), w.Encode()...)
}

// parseLatest decodes a latest-space value without allocating (the
// record's short value is a slice of v).
func parseLatest(v []byte) (uint64, txntypes.Write, error) {
	if len(v) < 8 {
		return 0, txntypes.Write{}, fmt.Errorf("latest record %x: %w", v, txntypes.ErrCorrupt)
	}
	w, err := txntypes.ParseWrite(v[8:])
	if err != nil {
		return 0, txntypes.Write{}, err
	}
	return binary.BigEndian.Uint64(v), w, nil
}

// putLatest writes key's latest-space copy of w, committed at commitTS,
// when w is a Put or a Delete (Lock and Rollback records decide no value).
func (b *writeBatch) putLatest(key []byte, commitTS uint64, w *txntypes.Write) {
	if w.Type != txntypes.WritePut && w.Type != txntypes.WriteDelete {
		return
	}
	b.put(keyspace.LatestKey(key), latestValue(commitTS, w))
}

// visitLatest is visit forward over the latest space (see the invariant
// above): one record a key, the key's versions read only where its copy
// is newer than ts.
func (r *mvccReader) visitLatest(ctx context.Context, start, end []byte, ts uint64, keyOnly bool, fn visitFn) error {
	lower := keyspace.LatestKey(start)
	upper := keyspace.SpaceEnd(keyspace.Latest)
	if end != nil {
		upper = keyspace.LatestKey(end)
	}
	iter, err := r.src.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return fmt.Errorf("open latest-space iterator: %w", err)
	}
	defer iter.Close()
	var keyBuf []byte
	steps := 0
	before := iter.Stats()
	ok := iter.First()
	defer func() {
		// What it stepped over (scancost.go) is counted, shadowed copies
		// and the tombstones of deleted keys' copies, but the walk's span
		// is not reported to the compactor (no last key): compacting
		// shadowed copies does not pay. Unlike GC's tombstones, which a
		// compaction drops for good, the copies are shadowed again by
		// the next update of each row, and a compaction of the space
		// rewrites every copy (and flushes the memtable over it) to save
		// each walk one step a shadowed copy. Under sysbench
		// oltp_read_write (10,000 rows, 4 threads) the reports made 25-33
		// compactions and 28-36 flushes in 15 s, 3.8-4.9 s of compaction,
		// against 0 and 6-9 without them; Pebble's own compactions keep
		// a churned walk at 0.5-1.0 hidden copies a row (TestScanUnderChurn,
		// docs/benchmarks.md, issue 16).
		r.walked.add(&before, iter, lower, upper, nil, false, !ok)
	}()
	for ; ok; ok = iter.Next() {
		if steps++; steps%walkCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r.walked.keys++
		commitTS, w, err := parseLatest(iter.Value())
		if err != nil {
			return fmt.Errorf("read latest record %x: %w", iter.Key(), err)
		}
		if commitTS <= ts && w.Type == txntypes.WriteDelete {
			continue // the key's user bytes are not even decoded
		}
		key, err := keyspace.AppendDecodeLatestKey(keyBuf[:0], iter.Key())
		if err != nil {
			return err
		}
		keyBuf = key
		if commitTS > ts {
			rec, err := r.valueWrite(key, ts)
			if err != nil {
				return err
			}
			if rec == nil || rec.Type != txntypes.WritePut {
				continue
			}
			w = *rec
		}
		if stop, err := r.feed(key, &w, keyOnly, fn); err != nil || stop {
			return err
		}
	}
	return iter.Error()
}

// latestBuilt reports whether db's latest space is complete.
func latestBuilt(db *pebble.DB) (bool, error) {
	_, closer, err := db.Get(keyspace.LatestBuiltKey())
	if err == pebble.ErrNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the latest space's marker: %w", err)
	}
	return true, closer.Close()
}

// buildLatest fills the latest space of a store written before it existed
// (or whose build a crash cut short) from the write space, then writes
// the marker: it clears the space, then writes each key's newest Put or
// Delete record, in batches of latestBuildBatch keys. Nothing else writes
// while Open runs it.
func buildLatest(ctx context.Context, db *pebble.DB) error {
	if err := db.DeleteRange(keyspace.SpaceStart(keyspace.Latest), keyspace.SpaceEnd(keyspace.Latest), pebble.NoSync); err != nil {
		return fmt.Errorf("clear the latest space: %w", err)
	}
	iter, err := db.NewIter(&pebble.IterOptions{LowerBound: keyspace.SpaceStart(keyspace.Write), UpperBound: keyspace.SpaceEnd(keyspace.Write)})
	if err != nil {
		return fmt.Errorf("build the latest space: %w", err)
	}
	defer iter.Close()
	b := db.NewBatch()
	var cur []byte
	done, n := false, 0
	for ok := iter.First(); ok; ok = iter.Next() {
		key, commitTS, err := keyspace.DecodeWriteKey(iter.Key())
		if err != nil {
			return fmt.Errorf("build the latest space: %w", err)
		}
		if cur == nil || string(key) != string(cur) {
			cur, done = key, false
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if done {
			continue
		}
		typ, err := txntypes.PeekWriteType(iter.Value())
		if err != nil {
			return fmt.Errorf("build the latest space: record %x: %w", iter.Key(), err)
		}
		if typ != txntypes.WritePut && typ != txntypes.WriteDelete {
			continue
		}
		done = true
		v := append(binary.BigEndian.AppendUint64(nil, commitTS), iter.Value()...)
		if err := b.Set(keyspace.LatestKey(key), v, nil); err != nil {
			return err
		}
		if n++; n%latestBuildBatch == 0 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return fmt.Errorf("build the latest space: %w", err)
			}
			b = db.NewBatch()
		}
	}
	if err := iter.Error(); err != nil {
		return fmt.Errorf("build the latest space: %w", err)
	}
	if err := b.Set(keyspace.LatestBuiltKey(), nil, nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("build the latest space: %w", err)
	}
	return nil
}

// latestBuildBatch is how many copies one batch of buildLatest writes.
const latestBuildBatch = 1000
