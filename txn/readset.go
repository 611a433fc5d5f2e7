package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/percdb/percdb/kv"
)

// readSet is what a pessimistic transaction read from its snapshot: the
// keys it got and the key ranges it iterated over, so that it can move
// its snapshot later after checking that none of them changed
// (RefreshSnapshot, doc.go "Pessimistic transactions"). It is bounded:
// past Options.MaxReadSetEntries entries it is full, and a full set
// cannot be validated.
type readSet struct {
	keys   [][]byte
	ranges []*readRange
	full   bool
	// mark is the set as it was when the current statement began
	// (BeginStatement): what the statements before it read.
	mark readSetMark
}

// readSetMark is a prefix of a readSet.
type readSetMark struct {
	keys, ranges int
	full         bool
}

// readRange is a range an iterator read: [start, end), end nil for
// +infinity. It is recorded whole when the iterator opens and narrowed to
// what the iterator returned when it closes before the end.
type readRange struct {
	start, end []byte
}

// addKeys records point reads; max bounds the entries.
func (rs *readSet) addKeys(keys [][]byte, max int) {
	if rs.full {
		return
	}
	if len(rs.keys)+len(rs.ranges)+len(keys) > max {
		rs.full = true
		return
	}
	for _, k := range keys {
		rs.keys = append(rs.keys, bytes.Clone(k))
	}
}

// addRange records a range read, returning its entry for narrowing (nil
// when the set is full).
func (rs *readSet) addRange(start, end []byte, max int) *readRange {
	if rs.full {
		return nil
	}
	if len(rs.keys)+len(rs.ranges)+1 > max {
		rs.full = true
		return nil
	}
	r := &readRange{start: bytes.Clone(start)}
	if len(end) > 0 {
		r.end = bytes.Clone(end)
	}
	rs.ranges = append(rs.ranges, r)
	return r
}

// beginStatement marks what was read before the statement that begins.
func (rs *readSet) beginStatement() {
	rs.mark = readSetMark{keys: len(rs.keys), ranges: len(rs.ranges), full: rs.full}
}

// dropStatement forgets what the current statement read: it runs again.
func (rs *readSet) dropStatement() {
	clear(rs.keys[rs.mark.keys:])
	clear(rs.ranges[rs.mark.ranges:])
	rs.keys, rs.ranges, rs.full = rs.keys[:rs.mark.keys], rs.ranges[:rs.mark.ranges], rs.mark.full
}

// before returns what the statements before the current one read: the
// keys sorted without duplicates, and the ranges.
func (rs *readSet) before() ([][]byte, []kv.KeyRange) {
	keys := slices.Clone(rs.keys[:rs.mark.keys])
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	ranges := make([]kv.KeyRange, 0, rs.mark.ranges)
	for _, r := range rs.ranges[:rs.mark.ranges] {
		if r.end == nil || bytes.Compare(r.start, r.end) < 0 {
			ranges = append(ranges, kv.KeyRange{Start: r.start, End: r.end})
		}
	}
	return keys, ranges
}

// trackedIter narrows its range in the read set when closed: a consumer
// that stops at key k has read [start, k] of an ascending iterator and
// [k, end) of a descending one; one that ran to the end read it all.
type trackedIter struct {
	Iterator
	r       *readRange
	reverse bool
}

// Close implements Iterator.
func (it *trackedIter) Close() {
	if it.r != nil && it.Valid() {
		if it.reverse {
			it.r.start = bytes.Clone(it.Key())
		} else {
			it.r.end = successor(it.Key())
		}
	}
	it.r = nil
	it.Iterator.Close()
}

// trackRead records a read of keys from the snapshot for a pessimistic
// transaction.
func (t *Txn) trackRead(keys ...[]byte) {
	if t.pess != nil {
		t.reads.addKeys(keys, t.s.opts.MaxReadSetEntries)
	}
}

// trackIter records an iteration over [start, end) for a pessimistic
// transaction and returns the iterator to hand out.
func (t *Txn) trackIter(it Iterator, start, end []byte, reverse bool) Iterator {
	if t.pess == nil {
		return it
	}
	r := t.reads.addRange(start, end, t.s.opts.MaxReadSetEntries)
	if r == nil {
		return it
	}
	return &trackedIter{Iterator: it, r: r, reverse: reverse}
}

// validateReads checks that nothing the statements before the current one
// read changed in (from, to]: ErrWriteConflict when something did.
func (t *Txn) validateReads(ctx context.Context, from, to uint64) error {
	keys, ranges := t.reads.before()
	if err := t.s.validate(ctx, keys, ranges, from, to); err != nil {
		return fmt.Errorf("validate reads in (%d, %d]: %w", from, to, err)
	}
	return nil
}

// validate checks keys (sorted) and ranges in (from, to] with one kv
// ValidateReads per region, the regions in parallel; the locks it reports
// are settled as a reader at to settles them.
func (s *Store) validate(ctx context.Context, keys [][]byte, ranges []kv.KeyRange, from, to uint64) error {
	// Items in key order, each a point key or a range routed by its
	// start; a range that crosses regions is cut at their boundaries.
	type item struct {
		start []byte
		rng   *kv.KeyRange
	}
	var items []item
	for _, k := range keys {
		items = append(items, item{start: k})
	}
	for _, r := range ranges {
		pieces, err := s.cutByRegion(ctx, r)
		if err != nil {
			return err
		}
		for _, p := range pieces {
			items = append(items, item{start: p.Start, rng: &p})
		}
	}
	if len(items) == 0 {
		return nil
	}
	slices.SortStableFunc(items, func(a, b item) int { return bytes.Compare(a.start, b.start) })
	starts := make([][]byte, len(items))
	for i, it := range items {
		starts[i] = it.start
	}
	spans, err := groupByRegion(ctx, s.client, starts, 0, len(starts))
	if err != nil {
		return err
	}
	var (
		mu   sync.Mutex
		rest []kv.KeyRange // parts of ranges past a region that split since they were cut
	)
	err = s.runSpans(ctx, starts, spans, func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		req := &kv.ValidateReadsRequest{Region: reg.Ctx(), From: from, To: to}
		for _, it := range items[lo:hi] {
			if it.rng == nil {
				req.Keys = append(req.Keys, it.start)
				continue
			}
			rg := *it.rng
			if len(reg.End) > 0 && (len(rg.End) == 0 || bytes.Compare(rg.End, reg.End) > 0) {
				mu.Lock()
				rest = append(rest, kv.KeyRange{Start: reg.End, End: rg.End})
				mu.Unlock()
				rg.End = reg.End
			}
			req.Ranges = append(req.Ranges, rg)
		}
		return s.validateRegion(ctx, req)
	})
	if err != nil || len(rest) == 0 {
		return err
	}
	return s.validate(ctx, nil, rest, from, to)
}

// validateRegion sends one ValidateReads, settling the locks it reports:
// committed or rolled back ones are resolved, live ones whose commit was
// pushed above To are bypassed, others waited for (bounded by
// Options.LockWaitTimeout).
func (s *Store) validateRegion(ctx context.Context, req *kv.ValidateReadsRequest) error {
	var w lockWaiter
	for {
		resp, err := s.client.ValidateReads(ctx, req)
		if err == nil {
			if resp.Changed != nil {
				return fmt.Errorf("%w: %w", ErrWriteConflict, &kv.WriteConflictError{Key: resp.Changed, StartTS: req.From, ConflictCommitTS: resp.CommitTS})
			}
			return nil
		}
		var locked *kv.KeyIsLockedError
		if !errors.As(err, &locked) {
			return err // a *kv.RegionError is re-routed by runSpan
		}
		locks := locked.Locks()
		outcomes, err := s.resolver.ResolveLocks(ctx, locks, req.To)
		if err != nil {
			return err
		}
		wait := -1
		for i, o := range outcomes {
			switch {
			case o == LockReadPast:
				req.BypassLocks = append(req.BypassLocks, locks[i].StartTS)
			case o == LockAlive && wait < 0:
				wait = i
			}
		}
		if wait >= 0 {
			if err := s.waitLock(ctx, locks[wait], &w); err != nil {
				return err
			}
		}
	}
}

// cutByRegion cuts range r at the boundaries of the regions it crosses.
func (s *Store) cutByRegion(ctx context.Context, r kv.KeyRange) ([]kv.KeyRange, error) {
	var out []kv.KeyRange
	start := r.Start
	for {
		reg, err := s.client.LocateKey(ctx, start)
		if err != nil {
			return nil, fmt.Errorf("locate key %q: %w", start, err)
		}
		if len(reg.End) == 0 || (len(r.End) > 0 && bytes.Compare(r.End, reg.End) <= 0) {
			return append(out, kv.KeyRange{Start: start, End: r.End}), nil
		}
		out = append(out, kv.KeyRange{Start: start, End: reg.End})
		start = reg.End
	}
}
