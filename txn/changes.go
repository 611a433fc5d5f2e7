package txn

import (
	"bytes"
	"context"
	"fmt"

	"github.com/percdb/percdb/kv"
)

// changesPageKeys bounds the keys with changes one ScanChanges request
// returns.
const changesPageKeys = 256

// ScanChanges returns every change committed to a key of [start, end)
// (end nil: to the end of the key space) with commit_ts in (fromTS,
// toTS], in key order and, per key, commit_ts order. toTS must be a
// timestamp of the oracle (a change feed takes a fresh one). The answer
// is final: every transaction that could still commit at or below toTS
// in the range is settled first (rolled forward or back when decided or
// dead, pushed above toTS when alive, as reads do), and each region's
// max_read_ts is raised to toTS, so no change at or below toTS appears
// later.
func (s *Store) ScanChanges(ctx context.Context, start, end []byte, fromTS, toTS uint64) ([]kv.Change, error) {
	if err := s.usable(); err != nil {
		return nil, err
	}
	var out []kv.Change
	var bypass []uint64
	w := lockWaiter{}
	rr := newRegionRetrier(s.opts)
	lo := bytes.Clone(start)
	for len(end) == 0 || bytes.Compare(lo, end) < 0 {
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		reg, err := s.client.LocateKey(ctx, lo)
		if err != nil {
			return nil, fmt.Errorf("scan changes: locate %q: %w", lo, err)
		}
		hi := end
		if len(reg.End) > 0 && (len(hi) == 0 || bytes.Compare(reg.End, hi) < 0) {
			hi = reg.End
		}
		page, err := s.client.ScanChanges(ctx, &kv.ScanChangesRequest{
			Region: reg.Ctx(), Start: lo, End: hi, FromTS: fromTS, ToTS: toTS,
			Limit: changesPageKeys, BypassLocks: bypass,
		})
		if err != nil {
			if err := s.settleRangeError(ctx, reg, err, toTS, &bypass, &w, &rr); err != nil {
				return nil, fmt.Errorf("scan changes (%d, %d] of [%q, %q): %w", fromTS, toTS, lo, hi, err)
			}
			continue
		}
		out = append(out, page...)
		switch {
		case len(page) > 0 && countKeys(page) >= changesPageKeys:
			lo = append(bytes.Clone(page[len(page)-1].Key), 0)
		case len(hi) == 0:
			return out, nil
		default:
			lo = bytes.Clone(hi)
		}
	}
	return out, nil
}

// countKeys counts the distinct keys of changes, which come grouped by
// key.
func countKeys(changes []kv.Change) int {
	n := 0
	for i := range changes {
		if i == 0 || !bytes.Equal(changes[i].Key, changes[i-1].Key) {
			n++
		}
	}
	return n
}
