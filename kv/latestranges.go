package kv

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// The latest space by range (the automatic mode, LatestAuto). A store-wide
// switch made every table's writers pay for the copies as soon as one
// table's scans asked for them: under TPC-C the space went on for
// Delivery's walks and every New-Order paid (branch tpccprof). So the
// automatic mode weighs and switches each range on its own:
//
//   - A range is the user keys sharing their first latestRangeLen bytes:
//     for percdb's tables, `t{tableID}_r` (a table's rows) or
//     `t{tableID}_i` (its indexes), whatever the region layout (a store's
//     copies are its own state, derived on every replica by its applier,
//     latestswitch.go). Keys shorter than that belong to no range and are
//     never copied in this mode.
//   - The state is a set of ranges, each building or on, replaced whole
//     (copy on write) under latestSpace.mu's exclusive hold by every
//     switch; an apply read-holds mu and derives copies for the keys of
//     the ranges in the set, so no commit falls between a backfill
//     batch's read of a key and its copy (as for the store-wide switch).
//   - Switching a range on: it joins the set as building (its copies
//     cleared of whatever an earlier switch off left in one step), is
//     backfilled from the write space in batches, each under mu's
//     exclusive hold, then a new set marks it on. Switching it off: a new
//     set without it, then its copies cleared, in one exclusive hold.
//   - A walk reads the space only when its whole span lies in one range
//     that is on in the set it loaded before opening its view and that is
//     still the store's set after (the set's pointer is its generation):
//     a switch off replaces the set before it clears the copies, a switch
//     on only after its backfill, so such a view holds every copy of the
//     span.
//   - Nothing of it is kept on disk: Open clears the space and starts
//     every range off (the rule switches a range on again within one
//     window of its scans), so a crash mid-switch leaves nothing to trust.
//   - The rule is the store-wide one's (latestswitch.go), counted by
//     range: on when, over latestWindowKeys keys forward walks of the
//     range visited, they stepped over more hidden points than
//     latestCopySteps times the write records the range's applies wrote
//     meanwhile, and at least latestOnHidden a key; off when, over
//     latestOffPerKey copies a key of the range (counted by its backfill;
//     at least latestWindowKeys, at most latestOffCopies) derived for it,
//     walks read fewer than 1/latestOffShare as many of its keys through
//     the space.

// latestRangeLen is the length of the user-key prefix that names a range.
const latestRangeLen = 11

// latestRange is a range's name: the user keys' first latestRangeLen
// bytes.
type latestRange [latestRangeLen]byte

// latestRangeOfKey returns the range of user key k (ok false: none).
func latestRangeOfKey(k []byte) (r latestRange, ok bool) {
	if len(k) < latestRangeLen {
		return r, false
	}
	copy(r[:], k)
	return r, true
}

// latestRangeOfSpan returns the range every key of [start, end) lies in
// (end nil: unbounded), if one does.
func latestRangeOfSpan(start, end []byte) (r latestRange, ok bool) {
	if r, ok = latestRangeOfKey(start); !ok || end == nil {
		return r, false
	}
	return r, bytes.HasPrefix(end, r[:]) || isPrefixEnd(end, r[:])
}

// isPrefixEnd reports whether end is keyspace.PrefixEnd(prefix), the
// smallest key above every key with the prefix, without building it (a
// walk checks its span on every call): the prefix without its trailing
// 0xFF bytes, its last byte plus one.
func isPrefixEnd(end, prefix []byte) bool {
	n := len(end)
	if n == 0 || n > len(prefix) || end[n-1] != prefix[n-1]+1 || prefix[n-1] == 0xFF || !bytes.Equal(end[:n-1], prefix[:n-1]) {
		return false
	}
	for _, b := range prefix[n:] {
		if b != 0xFF {
			return false
		}
	}
	return true
}

// latestRangeOfEncoded returns the range of the user key whose
// memcomparable encoding begins enc (a store key without its space
// byte): its first 8 bytes are a full group (marker 0xFF), and the second
// group holds at least 3 of the key's bytes (marker 0xFF minus at most 5
// bytes of padding), so the key is at least latestRangeLen bytes long.
func latestRangeOfEncoded(enc []byte) (r latestRange, ok bool) {
	if len(enc) < 18 || enc[8] != 0xFF || enc[17] < 0xFF-(16-latestRangeLen) {
		return r, false
	}
	copy(r[:8], enc[:8])
	copy(r[8:], enc[9:9+latestRangeLen-8])
	return r, true
}

// latestRangeOfStoreKey returns the range of a write-space or
// latest-space key.
func latestRangeOfStoreKey(k []byte) (latestRange, bool) {
	if len(k) < 2 {
		return latestRange{}, false
	}
	return latestRangeOfEncoded(k[1:])
}

// latestRangeSet is the ranges whose copies applies derive: building
// (false) or on (true). A set is never changed once published.
type latestRangeSet struct {
	ranges map[latestRange]bool
}

// on reports whether walks may read r's copies in a view opened under s.
func (s *latestRangeSet) on(r latestRange) bool { return s != nil && s.ranges[r] }

// deriving reports whether applies derive the copies of r's keys.
func (s *latestRangeSet) deriving(r latestRange) bool {
	if s == nil {
		return false
	}
	_, ok := s.ranges[r]
	return ok
}

// with returns a copy of s with r in state on (building when false), or
// without r when drop.
func (s *latestRangeSet) with(r latestRange, on, drop bool) *latestRangeSet {
	n := &latestRangeSet{ranges: make(map[latestRange]bool, len(s.rangesOrNil())+1)}
	maps.Copy(n.ranges, s.rangesOrNil())
	if drop {
		delete(n.ranges, r)
	} else {
		n.ranges[r] = on
	}
	return n
}

// latestRangeStats are one range's windows of the automatic rule.
type latestRangeStats struct {
	// walkKeys and walkHidden: keys forward walks of the write space
	// visited and the hidden points they stepped over (while off);
	// written: write records the range's applies wrote meanwhile.
	walkKeys, walkHidden, written atomic.Uint64
	// copies derived and keys walks read through the space (while on).
	copies, reads atomic.Uint64
	// offWindow is the copies over which the range is weighed for its
	// switch off (offWindowFor), set by its switch on; 0: the store's
	// offCopies.
	offWindow atomic.Uint64
}

// offWindowFor returns the off window of a range whose backfill visited
// keys keys: latestOffPerKey copies a key, within [windowKeys, offCopies].
func (l *latestSpace) offWindowFor(keys uint64) uint64 {
	return min(max(latestOffPerKey*keys, l.windowKeys), l.offCopies)
}

// latestRanges is the per-range part of latestSpace.
type latestRanges struct {
	// set is the current latestRangeSet; replaced under latestSpace.mu's
	// exclusive hold.
	set atomic.Pointer[latestRangeSet]
	// stats maps a range to its windows; an entry is made by the first
	// walk of the range, and writes count only in ranges with one (a
	// range nobody walks needs no figures). Replaced whole under statsMu.
	stats   atomic.Pointer[map[latestRange]*latestRangeStats]
	statsMu sync.Mutex
	// switchTo, set by the store, runs a range's switch in the background.
	switchTo func(r latestRange, on bool)
	// switchedOn and switchedOff count the ranges' switches (stats).
	switchedOn, switchedOff atomic.Uint64
}

// statsOf returns r's windows, made when create is set (nil: none).
func (l *latestRanges) statsOf(r latestRange, create bool) *latestRangeStats {
	if m := l.stats.Load(); m != nil {
		if st := (*m)[r]; st != nil || !create {
			return st
		}
	} else if !create {
		return nil
	}
	l.statsMu.Lock()
	defer l.statsMu.Unlock()
	old := l.stats.Load()
	if old != nil {
		if st := (*old)[r]; st != nil {
			return st
		}
	}
	n := copyRangeStats(old)
	st := &latestRangeStats{}
	n[r] = st
	l.stats.Store(&n)
	return st
}

// copyRangeStats copies a stats map (nil: empty) with room for one more.
func copyRangeStats(old *map[latestRange]*latestRangeStats) map[latestRange]*latestRangeStats {
	if old == nil {
		return make(map[latestRange]*latestRangeStats, 1)
	}
	n := make(map[latestRange]*latestRangeStats, len(*old)+1)
	maps.Copy(n, *old)
	return n
}

// wroteRanges counts, for the ranges with windows and no copies, the
// write records wb writes (what copies would cost them). Called with mu
// read-held.
func (l *latestSpace) wroteRanges(wb *writeBatch, set *latestRangeSet) {
	if l.mode != LatestAuto {
		return
	}
	m := l.ranges.stats.Load()
	if m == nil || len(*m) == 0 {
		return
	}
	for i := range wb.ops {
		op := &wb.ops[i]
		if op.delete || len(op.key) == 0 || op.key[0] != keyspace.Write {
			continue
		}
		r, ok := latestRangeOfStoreKey(op.key)
		if !ok || set.deriving(r) {
			continue
		}
		if st := (*m)[r]; st != nil {
			st.written.Add(1)
		}
	}
}

// derivedRanges counts the copies an apply derived (its ops past the
// batch's own, deletions of copies among them) in their ranges' windows.
func (l *latestSpace) derivedRanges(copies []batchOp) {
	if l.mode != LatestAuto {
		return
	}
	for i := range copies {
		if op := &copies[i]; !op.delete {
			if r, ok := latestRangeOfStoreKey(op.key); ok {
				l.derivedRange(r)
			}
		}
	}
}

// derivedRange counts a copy derived for range r and asks for r's switch
// off when its window says so.
func (l *latestSpace) derivedRange(r latestRange) {
	st := l.ranges.statsOf(r, false)
	if st == nil {
		return
	}
	window := st.offWindow.Load()
	if window == 0 {
		window = l.offCopies
	}
	// One apply of those past the window restarts it (the window may
	// have been set below the copies counted while the range built).
	copies := st.copies.Add(1)
	if copies < window || !st.copies.CompareAndSwap(copies, 0) {
		return
	}
	reads := st.reads.Swap(0)
	if reads*latestOffShare < copies && l.ranges.switchTo != nil {
		l.ranges.switchTo(r, false)
	}
}

// walkedRange is walked for the automatic mode: c's walks all lay in
// range r.
func (l *latestSpace) walkedRange(r latestRange, c *walkCost) {
	st := l.ranges.statsOf(r, true)
	if c.latestKeys != 0 {
		st.reads.Add(c.latestKeys)
		return
	}
	if l.ranges.set.Load().deriving(r) || c.keys == 0 {
		return
	}
	keys := st.walkKeys.Add(c.keys)
	if c.points > c.keys {
		st.walkHidden.Add(c.points - c.keys)
	}
	if keys < l.windowKeys {
		return
	}
	keys, hidden, written := st.walkKeys.Swap(0), st.walkHidden.Swap(0), st.written.Swap(0)
	if keys > 0 && hidden > latestCopySteps*written && float64(hidden) >= latestOnHidden*float64(keys) && l.ranges.switchTo != nil {
		l.ranges.switchTo(r, true)
	}
}

// noteRange records the range of a walk of the user keys [start, end):
// a reader's walks are counted for a range only when all lay in it.
func (c *walkCost) noteRange(start, end []byte) {
	r, ok := latestRangeOfSpan(start, end)
	switch {
	case !ok:
		c.rangeState = walkRangeMixed
	case c.rangeState == walkRangeNone:
		c.rng, c.rangeState = r, walkRangeOne
	case c.rangeState == walkRangeOne && c.rng != r:
		c.rangeState = walkRangeMixed
	}
}

// The states of walkCost.rangeState.
const (
	walkRangeNone uint8 = iota
	walkRangeOne
	walkRangeMixed
)

// latestRangeBounds returns the raw bounds of range r in space.
func latestRangeBounds(space byte, r latestRange) (lo, hi []byte) {
	return spaceBounds(space, r[:], keyspace.PrefixEnd(r[:]))
}

// EnableLatestRange switches the latest space on for the range of user
// key key (its first latestRangeLen bytes; a shorter key names none):
// applies derive the range's copies from now on, the range is backfilled
// from the write space, and walks within it read the copies once that is
// done. It returns once they do, or with the error that stopped the
// build. The automatic mode calls it from its rule; tests call it
// directly. A store whose whole space is on or switching, or already
// switching a range, returns at once.
func (s *Store) EnableLatestRange(ctx context.Context, key []byte) error {
	r, ok := latestRangeOfKey(key)
	if !ok {
		return fmt.Errorf("enable the latest space for %x: the key is shorter than a range's %d bytes", key, latestRangeLen)
	}
	if err := s.enter(); err != nil {
		return fmt.Errorf("enable the latest space for %x: %w", r[:], err)
	}
	defer s.exit()
	if !s.latest.busy.CompareAndSwap(false, true) {
		return nil
	}
	defer s.latest.busy.Store(false)
	return s.enableLatestRange(ctx, r)
}

// DisableLatestRange switches the latest space off for the range of key:
// walks within it read the versions, applies derive no copies for it, and
// its copies are cleared.
func (s *Store) DisableLatestRange(ctx context.Context, key []byte) error {
	r, ok := latestRangeOfKey(key)
	if !ok {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("disable the latest space for %x: %w", r[:], err)
	}
	if err := s.enter(); err != nil {
		return fmt.Errorf("disable the latest space for %x: %w", r[:], err)
	}
	defer s.exit()
	if !s.latest.busy.CompareAndSwap(false, true) {
		return nil
	}
	defer s.latest.busy.Store(false)
	return s.disableLatestRange(r)
}

// enableLatestRange is EnableLatestRange once the caller holds the switch
// (busy) and the store (enter).
func (s *Store) enableLatestRange(ctx context.Context, r latestRange) error {
	l := s.latest
	lo, hi := latestRangeBounds(keyspace.Latest, r)
	l.mu.Lock()
	set := l.ranges.set.Load()
	if l.load()&3 != latestStateOff || set.deriving(r) {
		l.mu.Unlock()
		return nil
	}
	err := s.db.DeleteRange(lo, hi, pebble.NoSync)
	if err == nil {
		l.ranges.set.Store(set.with(r, false, false))
	}
	l.mu.Unlock()
	if err != nil {
		return fmt.Errorf("enable the latest space for %x: clear its copies: %w", r[:], err)
	}
	from, end := latestRangeBounds(keyspace.Write, r)
	var keys uint64
	for from != nil && err == nil {
		if err = ctx.Err(); err != nil {
			break
		}
		if s.isClosing.Load() {
			err = ErrClosed
			break
		}
		l.mu.Lock()
		var n int
		from, n, err = backfillBatch(s.db, from, end, s.gcSafePoint.Load())
		l.mu.Unlock()
		keys += uint64(n)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.ranges.set.Store(l.ranges.set.Load().with(r, false, true))
		if cerr := s.db.DeleteRange(lo, hi, pebble.NoSync); cerr != nil {
			s.logger.Warn("clearing a range's latest space after its build failed", "range", fmt.Sprintf("%x", r[:]), "dir", s.dir, "err", cerr)
		}
		return fmt.Errorf("enable the latest space for %x: %w", r[:], err)
	}
	// The off window is the range's size's, counted from here.
	st := l.ranges.statsOf(r, true)
	st.offWindow.Store(l.offWindowFor(keys))
	st.copies.Store(0)
	st.reads.Store(0)
	l.ranges.set.Store(l.ranges.set.Load().with(r, true, false))
	l.ranges.switchedOn.Add(1)
	s.logger.Info("the latest space is on for a range", "range", fmt.Sprintf("%q", r[:]), "dir", s.dir)
	return nil
}

// disableLatestRange is DisableLatestRange once the caller holds the
// switch (busy) and the store (enter).
func (s *Store) disableLatestRange(r latestRange) error {
	l := s.latest
	l.mu.Lock()
	defer l.mu.Unlock()
	set := l.ranges.set.Load()
	if !set.deriving(r) {
		return nil
	}
	// Walks turned away first (a new set), then the copies cleared.
	l.ranges.set.Store(set.with(r, false, true))
	l.ranges.switchedOff.Add(1)
	s.logger.Info("the latest space is off for a range", "range", fmt.Sprintf("%q", r[:]), "dir", s.dir)
	lo, hi := latestRangeBounds(keyspace.Latest, r)
	if err := s.db.DeleteRange(lo, hi, pebble.NoSync); err != nil {
		return fmt.Errorf("disable the latest space for %x: %w", r[:], err)
	}
	return nil
}

// switchLatestRange runs a range's switch the automatic mode asked for,
// in the background, as switchLatest does for the whole space.
func (s *Store) switchLatestRange(r latestRange, on bool) {
	s.inBackground(func() error {
		if on {
			return s.enableLatestRange(context.Background(), r)
		}
		return s.disableLatestRange(r)
	}, "switching the latest space of a range", "on", on, "range", fmt.Sprintf("%q", r[:]))
}

// rangesOrNil returns s's ranges (nil for a nil set).
func (s *latestRangeSet) rangesOrNil() map[latestRange]bool {
	if s == nil {
		return nil
	}
	return s.ranges
}
