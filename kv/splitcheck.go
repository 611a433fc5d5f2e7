package kv

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// SplitCheck measures the user keys in [start, end) (end empty: to the
// end) for a split check (a cluster's KV node splits a region that grew
// past its size): size is the bytes of their records in the write and
// data spaces (keys and values, every version), and middle the first
// user key above start at which the write space's bytes reach half of
// theirs, where the region is cut in two; nil when the range holds fewer
// than two user keys. The figure is exact for what it reads; reading it
// costs a pass over the range (TiKV's split checker scans the same way
// when size properties are missing).
func (s *Store) SplitCheck(ctx context.Context, start, end []byte) (size uint64, middle []byte, err error) {
	if err := s.enter(); err != nil {
		return 0, nil, fmt.Errorf("split check: %w", err)
	}
	defer s.exit()
	snap := s.db.NewSnapshot()
	defer snap.Close()
	writeBytes, err := spaceBytes(ctx, snap, keyspace.Write, start, end)
	if err != nil {
		return 0, nil, err
	}
	dataBytes, err := spaceBytes(ctx, snap, keyspace.Data, start, end)
	if err != nil {
		return 0, nil, err
	}
	lo, hi := spaceBounds(keyspace.Write, start, end)
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, nil, fmt.Errorf("split check: %w", err)
	}
	defer it.Close()
	var acc uint64
	var cur []byte
	for ok := it.First(); ok; ok = it.Next() {
		key, _, err := keyspace.DecodeWriteKey(it.Key())
		if err != nil {
			return 0, nil, fmt.Errorf("split check: %w", err)
		}
		if cur == nil || !bytes.Equal(key, cur) {
			cur = append(cur[:0], key...)
			if acc >= writeBytes/2 && bytes.Compare(key, start) > 0 {
				middle = append([]byte(nil), key...)
				break
			}
		}
		acc += uint64(len(it.Key()) + len(it.Value()))
	}
	if err := it.Error(); err != nil {
		return 0, nil, fmt.Errorf("split check: %w", err)
	}
	return writeBytes + dataBytes, middle, nil
}

// spaceBytes adds up the bytes of the records of the user keys [start,
// end) in space.
func spaceBytes(ctx context.Context, snap *pebble.Snapshot, space byte, start, end []byte) (uint64, error) {
	lo, hi := spaceBounds(space, start, end)
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, fmt.Errorf("split check: %w", err)
	}
	defer it.Close()
	var n uint64
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i++; i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return 0, fmt.Errorf("split check: %w", err)
			}
		}
		n += uint64(len(it.Key()) + len(it.Value()))
	}
	if err := it.Error(); err != nil {
		return 0, fmt.Errorf("split check: %w", err)
	}
	return n, nil
}
