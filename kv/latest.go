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
// Invariant, while the space is on (latestswitch.go): for every key of
// the write space with a Put or Delete record, the latest space holds the
// newest of them with its commit timestamp, except that a key whose
// newest record is a Delete at or below the GC safe point may have none;
// for no other key does it hold anything. The applier derives the copy
// from each Put or Delete record a batch writes (deriveLatest), in the
// same batch; commits of one key are ordered by its lock, so the one
// written is always the newest. When GC collects a key's newest record
// (a Delete at or below the safe point), the applier deletes its copy
// with it. A walk at ts uses a copy committed at or below ts as the key's
// deciding record; for a newer one it reads the key's versions
// (valueWrite).

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

// visitLatest is visit forward over the latest space (see the invariant
// above): one record a key, the key's versions read only where its copy
// is newer than ts.
//
// used is false when the space was not complete in the reader's view (a
// reader of the live store whose iterator opened across a switch): the
// caller walks the versions then.
func (r *mvccReader) visitLatest(ctx context.Context, start, end []byte, ts uint64, keyOnly bool, fn visitFn) (used bool, err error) {
	lower := keyspace.LatestKey(start)
	upper := keyspace.SpaceEnd(keyspace.Latest)
	if end != nil {
		upper = keyspace.LatestKey(end)
	}
	var gen uint64
	var set *latestRangeSet // a range's copies are read, under this set
	switch {
	case r.latest:
	case r.latestRanges != nil:
		// A snapshot's reader: the set was the store's around it.
		if rng, ok := latestRangeOfSpan(start, end); !ok || !r.latestRanges.on(rng) {
			return false, nil
		}
	case r.latestGate == nil:
		return false, nil
	default:
		if gen = r.latestGate.load(); !latestOnIn(gen) {
			// The whole space is off or building: the span's range may
			// be on (latestranges.go).
			set = r.latestGate.ranges.set.Load()
			if rng, ok := latestRangeOfSpan(start, end); !ok || !set.on(rng) {
				return false, nil // no iterator opened
			}
		}
	}
	iter, err := r.src.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return true, fmt.Errorf("open latest-space iterator: %w", err)
	}
	defer iter.Close()
	// A Pebble iterator reads the store as of its opening: the space (or
	// the range's copies) was complete in that view if it was on before
	// and after it opened, with no switch between (a switch off clears
	// the copies after it turns walks away, a switch on turns them to it
	// after its build; a range's switch replaces the set).
	if !r.latest && r.latestRanges == nil && (r.latestGate.load() != gen || (set != nil && r.latestGate.ranges.set.Load() != set)) {
		return false, nil
	}
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
				return true, err
			}
		}
		r.walked.keys++
		r.walked.latestKeys++
		commitTS, w, err := parseLatest(iter.Value())
		if err != nil {
			return true, fmt.Errorf("read latest record %x: %w", iter.Key(), err)
		}
		if commitTS <= ts && w.Type == txntypes.WriteDelete {
			continue // the key's user bytes are not even decoded
		}
		key, err := keyspace.AppendDecodeLatestKey(keyBuf[:0], iter.Key())
		if err != nil {
			return true, err
		}
		keyBuf = key
		if commitTS > ts {
			rec, err := r.valueWrite(key, ts)
			if err != nil {
				return true, err
			}
			if rec == nil || rec.Type != txntypes.WritePut {
				continue
			}
			w = *rec
		}
		if stop, err := r.feed(key, &w, keyOnly, fn); err != nil || stop {
			return true, err
		}
	}
	return true, iter.Error()
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
	for from := keyspace.SpaceStart(keyspace.Write); from != nil; {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		if from, _, err = backfillBatch(db, from, keyspace.SpaceEnd(keyspace.Write), 0); err != nil {
			return err
		}
	}
	if err := db.Set(keyspace.LatestBuiltKey(), nil, pebble.Sync); err != nil {
		return fmt.Errorf("build the latest space: %w", err)
	}
	return nil
}

// latestBuildBatch is how many copies one batch of buildLatest writes.
const latestBuildBatch = 1000
