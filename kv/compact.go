package kv

import (
	"context"
	"fmt"
)

// Compactor compacts the store files that hold a range of user keys
// (OPTIMIZE TABLE): every version, lock and write record of the range is
// rewritten into the bottom level, so that the deletions and overwritten
// versions garbage collection removed give their space back and a scan of
// the range reads one sorted run. It changes no data. Not every Client
// is one: the in-process client compacts its store; a cluster's KV nodes
// take no such request yet.
type Compactor interface {
	// CompactRange compacts the user keys [start, end) (end empty:
	// unbounded) in all three key spaces.
	CompactRange(ctx context.Context, start, end []byte) error
}

// AsCompactor returns c's Compactor, looking through an Instrument
// wrapper; false when c cannot compact.
func AsCompactor(c Client) (Compactor, bool) {
	if i, ok := c.(*instrumented); ok {
		c = i.c
	}
	cp, ok := c.(Compactor)
	return cp, ok
}

// CompactRange implements Compactor for the store.
func (s *Store) CompactRange(ctx context.Context, start, end []byte) error {
	what := fmt.Sprintf("compact range [%q, %q)", start, end)
	if err := s.enter(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer s.exit()
	// The cached iterators would pin the files the compaction replaces.
	s.iters.release()
	for _, sp := range dataSpaces {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		lo, hi := spaceBounds(sp, start, end)
		if err := s.db.Compact(lo, hi, true); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}
