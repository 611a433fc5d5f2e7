package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"

	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// snapshotSpaces are the key spaces a region's snapshot carries: every
// space whose keys are a user key's (the meta space is the store's own),
// but the latest space: whether a store keeps it is its own state, and a
// receiver that keeps it derives the copies from the snapshot's write
// records as it applies them (latestswitch.go).
var snapshotSpaces = []byte{keyspace.Data, keyspace.Lock, keyspace.Notify, keyspace.Write}

// spaceBounds returns the raw bounds of the user keys [start, end) (end
// nil: to the end of the key space) in space.
func spaceBounds(space byte, start, end []byte) (lo, hi []byte) {
	lo, hi = keyspace.KeyBound(space, start), keyspace.SpaceEnd(space)
	if len(end) > 0 {
		hi = keyspace.KeyBound(space, end)
	}
	return lo, hi
}

// A snapshot chunk, the one place it is laid out: raw store keys and
// their values, in key order within a space,
//
//	chunk := pair*
//	pair  := uvarint len key | key | uvarint len value | value

// appendPair appends one pair to chunk.
func appendPair(chunk, k, v []byte) []byte { return appendBytes(appendBytes(chunk, k), v) }

// errBadChunk: a snapshot chunk that does not decode.
var errBadChunk = errors.New("kv: corrupt snapshot chunk")

// eachPair calls fn with every pair of chunk (the slices alias chunk).
func eachPair(chunk []byte, fn func(k, v []byte) error) error {
	for len(chunk) > 0 {
		var kv [2][]byte
		for i := range kv {
			n, w := binary.Uvarint(chunk)
			if w <= 0 || uint64(len(chunk)-w) < n {
				return errBadChunk
			}
			kv[i], chunk = chunk[w:w+int(n)], chunk[w+int(n):]
		}
		if err := fn(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// ExportRange sends the store's keys of the user keys [start, end) (end
// nil: to the end), in the data, lock, notify and write spaces, to emit
// in chunks of about chunkBytes each, all from one Pebble snapshot: the
// state after some applied batch, never between two. A replica's
// snapshot for a follower (package kv/raftstore) is such a state at or
// after the raft index it is sent as; the follower applies the log's
// entries after that index again, which leaves the same state (each
// replicated batch is blind puts and deletes).
func (s *Store) ExportRange(ctx context.Context, start, end []byte, chunkBytes int, emit func(chunk []byte) error) error {
	if err := s.enter(); err != nil {
		return fmt.Errorf("export range: %w", err)
	}
	snap := s.db.NewSnapshot()
	s.exit()
	defer snap.Close()
	var chunk []byte
	for _, space := range snapshotSpaces {
		lo, hi := spaceBounds(space, start, end)
		it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return fmt.Errorf("export range: %w", err)
		}
		for it.First(); it.Valid(); it.Next() {
			if len(chunk) >= chunkBytes {
				if err := ctx.Err(); err != nil {
					_ = it.Close()
					return fmt.Errorf("export range: %w", err)
				}
				if err := emit(chunk); err != nil {
					_ = it.Close()
					return err
				}
				chunk = nil
			}
			chunk = appendPair(chunk, it.Key(), it.Value())
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return fmt.Errorf("export range: %w", err)
		}
	}
	if len(chunk) > 0 {
		return emit(chunk)
	}
	return nil
}

// ImportRange replaces the store's keys of the user keys [start, end) in
// the spaces ExportRange sends with the pairs of chunks, atomically: one
// batch of range deletions followed by the pairs, applied as every batch
// is (the lock set and iterator cache kept in step), then synced, since
// the replica that imports it drops its log up to the snapshot's index
// once this returns.
func (s *Store) ImportRange(ctx context.Context, start, end []byte, chunks [][]byte) error {
	if err := s.enter(); err != nil {
		return fmt.Errorf("import range: %w", err)
	}
	defer s.exit()
	wb := &writeBatch{}
	// The locks the range holds now are forgotten once the batch is
	// applied, unless the snapshot writes them again.
	r := newMVCCReader(s.db)
	err := r.locks(start, end, false, func(key []byte, _ *txntypes.Lock) bool {
		wb.lockDels = append(wb.lockDels, key)
		return true
	})
	r.close()
	if err != nil {
		return fmt.Errorf("import range: %w", err)
	}
	for _, space := range snapshotSpaces {
		wb.delRange(spaceBounds(space, start, end))
	}
	// The range's copies go too; the applier derives them again from
	// the snapshot when the store keeps the space.
	wb.delRange(spaceBounds(keyspace.Latest, start, end))
	for _, c := range chunks {
		err := eachPair(c, func(k, v []byte) error {
			if len(k) == 0 {
				return fmt.Errorf("%w: empty key", errBadChunk)
			}
			lo, hi := spaceBounds(k[0], start, end)
			if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
				return fmt.Errorf("%w: key %x outside the range", errBadChunk, k)
			}
			if k[0] == keyspace.Lock {
				key, err := keyspace.DecodeLockKey(k)
				if err != nil {
					return fmt.Errorf("%w: %w", errBadChunk, err)
				}
				wb.lockPuts = append(wb.lockPuts, key)
			}
			wb.put(k, v)
			return nil
		})
		if err != nil {
			return fmt.Errorf("import range: %w", err)
		}
	}
	wb.volatile = true
	if err := s.applier.apply(ctx, wb); err != nil {
		return fmt.Errorf("import range: %w", err)
	}
	if err := s.syncWAL(); err != nil {
		return fmt.Errorf("import range: %w", err)
	}
	return nil
}
