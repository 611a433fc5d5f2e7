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
	keys   []pointRead
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

// pointRead is a point read: the key and what the reader used of its
// value (nil: all of it).
type pointRead struct {
	key []byte
	cmp ReadComparator
}

// readRange is a range an iterator read: [start, end), end nil for
// +infinity, and what the reader used of each value in it (nil: all of
// it). It is recorded whole when the iterator opens and narrowed to what
// the iterator returned when it closes before the end.
type readRange struct {
	start, end []byte
	cmp        ReadComparator
}

// ReadComparator knows what a reader used of the values it read, so that
// a transaction may move its snapshot past a change that left that part
// equal (RefreshSnapshot; doc.go, "Moving the snapshot"). The SQL layer
// implements it with its row codec for the columns a statement read.
type ReadComparator interface {
	// SameRead reports whether a read of key that found the value
	// before would have given the reader the same as one that found
	// after. Both values are present: absence is compared by the
	// transaction itself. It must be false whenever anything the reader
	// used of the value differs; false is always safe.
	SameRead(key, before, after []byte) (bool, error)
}

// sameRead compares two versions of key for the reader cmp (nil: the
// whole value); nil before or after means absent.
func sameRead(cmp ReadComparator, key, before, after []byte) (bool, error) {
	switch {
	case (before == nil) != (after == nil):
		return false, nil
	case before == nil:
		return true, nil
	case bytes.Equal(before, after):
		return true, nil
	case cmp == nil:
		return false, nil
	}
	return cmp.SameRead(key, before, after)
}

// addKeys records point reads, used by cmp; max bounds the entries.
func (rs *readSet) addKeys(keys [][]byte, cmp ReadComparator, max int) {
	if rs.full {
		return
	}
	if len(rs.keys)+len(rs.ranges)+len(keys) > max {
		rs.full = true
		return
	}
	for _, k := range keys {
		rs.keys = append(rs.keys, pointRead{key: bytes.Clone(k), cmp: cmp})
	}
}

// addRange records a range read, returning its entry for narrowing (nil
// when the set is full).
func (rs *readSet) addRange(start, end []byte, cmp ReadComparator, max int) *readRange {
	if rs.full {
		return nil
	}
	if len(rs.keys)+len(rs.ranges)+1 > max {
		rs.full = true
		return nil
	}
	r := &readRange{start: bytes.Clone(start), cmp: cmp}
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
	keys := make([][]byte, 0, rs.mark.keys)
	for _, k := range rs.keys[:rs.mark.keys] {
		keys = append(keys, k.key)
	}
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

// readersOf returns the comparators of the reads before the current
// statement that covered key: the point reads of it and the ranges
// holding it (nil entries: the whole value was used).
func (rs *readSet) readersOf(key []byte) []ReadComparator {
	var out []ReadComparator
	for _, k := range rs.keys[:rs.mark.keys] {
		if bytes.Equal(k.key, key) {
			out = append(out, k.cmp)
		}
	}
	for _, r := range rs.ranges[:rs.mark.ranges] {
		if bytes.Compare(key, r.start) >= 0 && (r.end == nil || bytes.Compare(key, r.end) < 0) {
			out = append(out, r.cmp)
		}
	}
	return out
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

// ReadView reads through its transaction (Get, BatchGet, Iter,
// IterReverse are the transaction's) for a reader that uses only what
// its ReadComparator compares of the values: a pessimistic transaction
// may then move its snapshot past changes to the rest (RefreshSnapshot).
// Reads made on the Txn itself count as using the whole value.
type ReadView struct {
	t   *Txn
	cmp ReadComparator
}

// ReadingWith returns a view of t for a reader that uses what cmp
// compares of the values it reads.
func (t *Txn) ReadingWith(cmp ReadComparator) *ReadView { return &ReadView{t: t, cmp: cmp} }

// Get is Txn.Get.
func (v *ReadView) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	return v.t.get(ctx, key, v.cmp)
}

// BatchGet is Txn.BatchGet.
func (v *ReadView) BatchGet(ctx context.Context, keys [][]byte) (map[string][]byte, error) {
	return v.t.batchGet(ctx, keys, v.cmp)
}

// Iter is Txn.Iter.
func (v *ReadView) Iter(ctx context.Context, start, end []byte) (Iterator, error) {
	return v.t.iter(ctx, start, end, IterOptions{}, v.cmp)
}

// IterReverse is Txn.IterReverse.
func (v *ReadView) IterReverse(ctx context.Context, start, end []byte) (Iterator, error) {
	return v.t.iter(ctx, start, end, IterOptions{Reverse: true}, v.cmp)
}

// IterWith is Txn.IterWith.
func (v *ReadView) IterWith(ctx context.Context, start, end []byte, o IterOptions) (Iterator, error) {
	return v.t.iter(ctx, start, end, o, v.cmp)
}

// Coprocessor is Txn.Coprocessor, for a program that uses what the
// view's comparator compares of each value it reads.
func (v *ReadView) Coprocessor(ctx context.Context, start, end, program []byte) (*CoprIter, error) {
	return v.t.coprocessor(ctx, []kv.KeyRange{{Start: start, End: end}}, program, v.cmp, false)
}

// CoprocessorRanges is Txn.CoprocessorRanges, for a program that uses
// what the view's comparator compares of each value it reads.
func (v *ReadView) CoprocessorRanges(ctx context.Context, ranges []kv.KeyRange, program []byte) (*CoprIter, error) {
	return v.t.coprocessorRanges(ctx, ranges, program, v.cmp, false)
}

// CoprocessorReverse is Txn.CoprocessorReverse, for a program that uses
// what the view's comparator compares of each value it reads.
func (v *ReadView) CoprocessorReverse(ctx context.Context, ranges []kv.KeyRange, program []byte) (*CoprIter, error) {
	return v.t.coprocessorRanges(ctx, ranges, program, v.cmp, true)
}

// trackRead records a read of keys from the snapshot for a pessimistic
// transaction, by a reader that used what cmp compares of them.
func (t *Txn) trackRead(cmp ReadComparator, keys ...[]byte) {
	if t.pess != nil && t.rc == nil {
		t.reads.addKeys(keys, cmp, t.s.opts.MaxReadSetEntries)
	}
}

// trackIter records an iteration over [start, end) for a pessimistic
// transaction, by a reader that used what cmp compares of each value,
// and returns the iterator to hand out.
func (t *Txn) trackIter(it Iterator, cmp ReadComparator, start, end []byte, reverse bool) Iterator {
	if t.pess == nil || t.rc != nil {
		return it
	}
	r := t.reads.addRange(start, end, cmp, t.s.opts.MaxReadSetEntries)
	if r == nil {
		return it
	}
	return &trackedIter{Iterator: it, r: r, reverse: reverse}
}

// validateReads checks that what the statements before the current one
// read reads the same at to as at from: ErrWriteConflict when it does
// not. The keys changed in (from, to] are read at both and compared for
// every read that covered them (sameRead): a change that left what the
// reader used equal passes. It reports how many changed keys so passed.
//
// The store is asked for the changes first (kv.ValidateReadsRequest's
// ChangesFirst): most moves that meet a change are refused for it, and
// the store's look at the locks in the ranges, which may still commit in
// the window, is then not needed. When every change passes, the store is
// asked again with the locks, and the changes it then reports (a lock
// settled meanwhile may have committed in the window) are compared too.
func (t *Txn) validateReads(ctx context.Context, from, to uint64) (int, error) {
	keys, ranges := t.reads.before()
	changesFirst := true
	for {
		changes, unchecked, err := t.s.validate(ctx, keys, ranges, from, to, changesFirst)
		if err != nil {
			return 0, fmt.Errorf("validate reads in (%d, %d]: %w", from, to, err)
		}
		passed, err := t.changesPass(ctx, changes, from, to)
		if err != nil || !unchecked {
			return passed, err
		}
		changesFirst = false
	}
}

// changesPass reads each changed key at from and at to and fails with
// ErrWriteConflict unless every read before the current statement that
// covered it used the same of it in both; it returns how many passed.
func (t *Txn) changesPass(ctx context.Context, changes []kv.KeyChange, from, to uint64) (int, error) {
	if len(changes) == 0 {
		return 0, nil
	}
	changed := make([][]byte, len(changes))
	for i, c := range changes {
		changed[i] = c.Key
	}
	before, err := t.s.batchGet(ctx, changed, from)
	if err != nil {
		return 0, fmt.Errorf("validate reads: read the changed keys at %d: %w", from, err)
	}
	after, err := t.s.batchGet(ctx, changed, to)
	if err != nil {
		return 0, fmt.Errorf("validate reads: read the changed keys at %d: %w", to, err)
	}
	for _, c := range changes {
		same, err := t.readsSame(c.Key, before[string(c.Key)], after[string(c.Key)])
		if err != nil {
			return 0, fmt.Errorf("validate reads: compare %q: %w", c.Key, err)
		}
		if !same {
			return 0, fmt.Errorf("validate reads in (%d, %d]: %w: %w", from, to, ErrWriteConflict,
				&kv.WriteConflictError{Key: c.Key, StartTS: from, ConflictCommitTS: c.CommitTS})
		}
	}
	return len(changes), nil
}

// readsSame reports whether every read before the current statement that
// covered key used the same of it in before as in after (nil: absent).
// A key no read covers (the store reports only keys it was asked about,
// so that would be a defect) counts as changed.
func (t *Txn) readsSame(key, before, after []byte) (bool, error) {
	readers := t.reads.readersOf(key)
	for _, cmp := range readers {
		if same, err := sameRead(cmp, key, before, after); err != nil || !same {
			return false, err
		}
	}
	return len(readers) > 0, nil
}

// validate asks which of keys (sorted) and ranges changed in (from, to]
// with one kv ValidateReads per region, the regions in parallel; the
// locks it reports are settled as a reader at to settles them. More
// changes than a region reports at once fail with ErrWriteConflict.
//
// With changesFirst, a region that finds changes reports them without
// looking at its locks; unchecked then says that some region did so.
func (s *Store) validate(ctx context.Context, keys [][]byte, ranges []kv.KeyRange, from, to uint64, changesFirst bool) (changes []kv.KeyChange, unchecked bool, err error) {
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
			return nil, false, err
		}
		for _, p := range pieces {
			items = append(items, item{start: p.Start, rng: &p})
		}
	}
	if len(items) == 0 {
		return nil, false, nil
	}
	slices.SortStableFunc(items, func(a, b item) int { return bytes.Compare(a.start, b.start) })
	starts := make([][]byte, len(items))
	for i, it := range items {
		starts[i] = it.start
	}
	spans, err := groupByRegion(ctx, s.client, starts, 0, len(starts))
	if err != nil {
		return nil, false, err
	}
	var (
		mu   sync.Mutex
		rest []kv.KeyRange // parts of ranges past a region that split since they were cut
	)
	err = s.runSpans(ctx, starts, spans, func(ctx context.Context, reg kv.RegionInfo, lo, hi int) error {
		req := &kv.ValidateReadsRequest{Region: reg.Ctx(), From: from, To: to, ChangesFirst: changesFirst}
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
		found, partial, err := s.validateRegion(ctx, req)
		mu.Lock()
		changes = append(changes, found...)
		unchecked = unchecked || partial
		mu.Unlock()
		return err
	})
	if err != nil || len(rest) == 0 {
		return changes, unchecked, err
	}
	more, partial, err := s.validate(ctx, nil, rest, from, to, changesFirst)
	return append(changes, more...), unchecked || partial, err
}

// validateRegion sends one ValidateReads, settling the locks it reports:
// committed or rolled back ones are resolved, live ones whose commit was
// pushed above To are bypassed, others waited for (bounded by
// Options.LockWaitTimeout). unchecked reports that the region answered
// changes without looking at its locks (req.ChangesFirst).
func (s *Store) validateRegion(ctx context.Context, req *kv.ValidateReadsRequest) (changes []kv.KeyChange, unchecked bool, err error) {
	var w lockWaiter
	for {
		resp, err := s.client.ValidateReads(ctx, req)
		if err == nil {
			if resp.More {
				c := resp.Changes[len(resp.Changes)-1]
				return nil, false, fmt.Errorf("%w: more than %d keys changed: %w", ErrWriteConflict, len(resp.Changes),
					&kv.WriteConflictError{Key: c.Key, StartTS: req.From, ConflictCommitTS: c.CommitTS})
			}
			return resp.Changes, resp.LocksUnchecked, nil
		}
		var locked *kv.KeyIsLockedError
		if !errors.As(err, &locked) {
			return nil, false, err // a *kv.RegionError is re-routed by runSpan
		}
		locks := locked.Locks()
		outcomes, err := s.resolver.ResolveLocks(ctx, locks, req.To)
		if err != nil {
			return nil, false, err
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
				return nil, false, err
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
