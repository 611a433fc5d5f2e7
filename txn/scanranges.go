package txn

import (
	"bytes"
	"context"
	"fmt"
	"sort"

	"github.com/percdb/percdb/kv"
)

// ScanRanges reads several ranges at the transaction's snapshot, at most
// limit pairs of each (0: all of them), and returns each range's pairs in
// key order: out[i] are those of ranges[i]. The ranges must be
// ascending and disjoint (each ends at or before the next one starts;
// only the last may have an empty End, to the end of the key space).
//
// It is the multi-range read of a batch of lookups (the ranges of a
// batched join's outer rows, an IN list on an index): the ranges that
// lie in one region are read with one kv request (kv.ScanRequest.Ranges),
// where an iterator per range costs a request, a store iterator and its
// buffers per range. Locks met are settled as a scan's are and the
// region's request is sent again; a range that crosses a region's end is
// read on in the next region. A range in which the transaction has
// buffered writes, and every range of a read at kv.MaxTS (a latest
// transaction's), is read with an iterator (Iter), which merges them.
// The whole ranges count as read for a pessimistic transaction's
// validation, as a coprocessor's do.
func (t *Txn) ScanRanges(ctx context.Context, ranges []kv.KeyRange, limit int) ([][]kv.KvPair, error) {
	what := func() string { return fmt.Sprintf("scan of %d ranges", len(ranges)) }
	if limit < 0 {
		return nil, fmt.Errorf("%s: negative limit %d", what(), limit)
	}
	for i, kr := range ranges {
		if i > 0 && (len(ranges[i-1].End) == 0 || bytes.Compare(ranges[i-1].End, kr.Start) > 0) {
			return nil, fmt.Errorf("%s: range %d starts before range %d ends", what(), i, i-1)
		}
		if err := checkKey(kr.Start); err != nil {
			return nil, fmt.Errorf("%s: %w", what(), err)
		}
	}
	if err := t.usable(); err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	ts, err := t.snapshotTS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	out := make([][]kv.KvPair, len(ranges))
	// pending are the positions of the ranges the store reads.
	pending := make([]int, 0, len(ranges))
	for i, kr := range ranges {
		switch {
		case len(kr.End) > 0 && bytes.Compare(kr.Start, kr.End) >= 0:
			// Empty: nothing to read.
		case ts == kv.MaxTS || len(t.buf.rangeSnapshot(kr.Start, kr.End)) > 0:
			if out[i], err = t.iterRange(ctx, kr, limit); err != nil {
				return nil, fmt.Errorf("%s: %w", what(), err)
			}
		default:
			pending = append(pending, i)
		}
	}
	if len(pending) == 0 {
		return out, nil
	}
	if t.pess != nil && t.rc == nil {
		for _, i := range pending {
			t.reads.addRange(ranges[i].Start, ranges[i].End, nil, t.s.opts.MaxReadSetEntries)
		}
	}
	if err := t.s.scanRanges(ctx, ranges, pending, limit, ts, out); err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	return out, nil
}

// iterRange reads at most limit pairs (0: all) of kr with an iterator.
func (t *Txn) iterRange(ctx context.Context, kr kv.KeyRange, limit int) ([]kv.KvPair, error) {
	it, err := t.iter(ctx, kr.Start, kr.End, IterOptions{FirstPage: limit}, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var pairs []kv.KvPair
	for it.Valid() && (limit == 0 || len(pairs) < limit) {
		pairs = append(pairs, kv.KvPair{Key: bytes.Clone(it.Key()), Value: bytes.Clone(it.Value())})
		if err := it.Next(ctx); err != nil {
			return nil, err
		}
	}
	return pairs, nil
}

// scanRanges reads ranges[pending[...]] at version from the store, each
// region's with one request, into out (by position in ranges).
func (s *Store) scanRanges(ctx context.Context, ranges []kv.KeyRange, pending []int, limit int, version uint64, out [][]kv.KvPair) error {
	// rest are the parts of the pending ranges left to read, pos their
	// positions in ranges; a range cut at a region's end goes on from
	// there.
	rest := make([]kv.KeyRange, len(pending))
	for j, i := range pending {
		rest[j] = ranges[i]
	}
	pos := pending
	var (
		bypass []uint64
		w      lockWaiter
		rr     = newRegionRetrier(s.opts)
	)
	for len(rest) > 0 {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		reg, err := s.client.LocateKey(ctx, rest[0].Start)
		if err != nil {
			return fmt.Errorf("locate %q: %w", rest[0].Start, err)
		}
		// sent is how many of rest start in the region; the last of them
		// is cut at its end (atEdge) when it reaches past it.
		sent := len(rest)
		if len(reg.End) > 0 {
			sent = 1 + sort.Search(len(rest)-1, func(j int) bool { return bytes.Compare(rest[j+1].Start, reg.End) >= 0 })
		}
		req := &kv.ScanRequest{Region: reg.Ctx(), Version: version, Limit: limit, BypassLocks: bypass}
		req.Ranges = append([]kv.KeyRange(nil), rest[:sent]...)
		last := &req.Ranges[sent-1]
		atEdge := len(reg.End) > 0 && (len(last.End) == 0 || bytes.Compare(last.End, reg.End) > 0)
		if atEdge {
			last.End = reg.End
		}
		pairs, err := s.client.Scan(ctx, req)
		if err != nil {
			if err := s.settleRangeError(ctx, reg, err, version, &bypass, &w, &rr); err != nil {
				return fmt.Errorf("scan of %d ranges from %q: %w", sent, req.Ranges[0].Start, err)
			}
			continue
		}
		rr = newRegionRetrier(s.opts)
		for j, ps := range kv.SplitPairs(req.Ranges, pairs) {
			i := pos[j]
			if limit > 0 && len(out[i])+len(ps) > limit {
				// The rest of a range cut at a region's end, asked with
				// the whole limit.
				ps = ps[:limit-len(out[i])]
			}
			out[i] = append(out[i], ps...)
		}
		if !atEdge {
			rest, pos = rest[sent:], pos[sent:]
			continue
		}
		// The last range goes on in the next region unless it has its
		// pairs.
		i := pos[sent-1]
		if limit > 0 && len(out[i]) >= limit {
			rest, pos = rest[sent:], pos[sent:]
			continue
		}
		rest[sent-1].Start = reg.End
		rest, pos = rest[sent-1:], pos[sent-1:]
	}
	return nil
}
