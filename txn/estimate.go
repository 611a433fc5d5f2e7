package txn

import (
	"context"
	"fmt"

	"github.com/percdb/percdb/kv"
)

// EstimateKeys counts the keys of [start, end) (an empty end is
// +infinity), stopping at limit, for statistics: it reads the newest
// committed versions, ignoring every lock (kv.ScanRequest.IgnoreLocks),
// so it never waits for, resolves or pushes another transaction, and
// fetches no timestamp. The count is an estimate, not a snapshot: a
// transaction committing meanwhile may be counted in part, and the keys
// of a committed transaction whose locks are not yet resolved are
// counted at their previous versions. Its cost is bounded by the keys it
// reads (limit, plus the deleted versions it steps over), and it stops
// when ctx ends.
func (s *Store) EstimateKeys(ctx context.Context, start, end []byte, limit int) (int, error) {
	if err := s.usable(); err != nil {
		return 0, fmt.Errorf("estimate keys: %w", err)
	}
	if err := checkKey(start); err != nil {
		return 0, fmt.Errorf("estimate keys: %w", err)
	}
	it := &scanIter{
		s: s, version: kv.MaxTS, lo: start, hi: end,
		rr: newRegionRetrier(s.opts), estimate: true,
	}
	if len(end) > 0 && string(start) >= string(end) {
		return 0, nil
	}
	n := 0
	for err := it.fetch(ctx); ; err = it.fetch(ctx) {
		if err != nil {
			return 0, fmt.Errorf("estimate keys: %w", err)
		}
		if !it.Valid() {
			return n, nil
		}
		n += len(it.page)
		if n >= limit {
			return limit, nil
		}
	}
}
