package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// Get reads key at version: the lock check, then the newest Put or Delete
// committed at or before version. A nil value and nil error mean not found.
func (s *Store) Get(ctx context.Context, rc RegionCtx, key []byte, version uint64) ([]byte, error) {
	var v [1][]byte
	if err := s.read(ctx, rc, [][]byte{key}, version, v[:]); err != nil {
		return nil, err
	}
	return v[0], nil
}

// BatchGet reads keys at version and returns the pairs found, in the order
// of keys. The first lock that blocks a read fails the whole call with a
// *KeyIsLockedError.
func (s *Store) BatchGet(ctx context.Context, rc RegionCtx, keys [][]byte, version uint64) ([]KvPair, error) {
	vals := make([][]byte, len(keys))
	if err := s.read(ctx, rc, keys, version, vals); err != nil {
		return nil, err
	}
	var pairs []KvPair
	for i, v := range vals {
		if v != nil {
			pairs = append(pairs, KvPair{Key: cloneKey(keys[i]), Value: v})
		}
	}
	return pairs, nil
}

// read is Get (one key) and BatchGet: it puts the value of keys[i] at
// version in vals[i], nil when there is none.
func (s *Store) read(ctx context.Context, rc RegionCtx, keys [][]byte, version uint64, vals [][]byte) error {
	if version == 0 {
		return fmt.Errorf("%s: version is 0", readName(keys))
	}
	if _, err := s.regions.check(rc, version, keys...); err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.memLocks.waitKey(ctx, k); err != nil {
			return fmt.Errorf("%s: %w", readName(keys), err)
		}
	}
	if err := s.enter(); err != nil {
		return fmt.Errorf("%s: %w", readName(keys), err)
	}
	defer s.exit()
	done, err := s.readUnlocked(keys, version, vals)
	if err == nil && !done {
		err = s.readLocked(keys, version, vals)
	}
	if err == nil {
		err = s.checkReadTS(version)
	}
	if err != nil && !isContractError(err) {
		return fmt.Errorf("%s: %w", readName(keys), err)
	}
	return err
}

// readUnlocked reads keys without looking at the lock space, which is
// possible when the lock set shows that none of them held a lock at any
// instant while they were read (see lockSet). done is false, and vals
// undefined, when that cannot be shown: the caller reads with
// readLocked.
//
// The keys are read with one iterator, a consistent view of the database,
// from the store's iterCache: its view may predate the probes, but it
// holds every batch applied before it was taken from the cache, and the
// only batches it may miss are ones still being applied, which cannot have
// removed a probed key from the lock set (the applier bumps the cache's
// generation first); so it reads the probed keys as of an instant between
// the probes and the re-checks.
func (s *Store) readUnlocked(keys [][]byte, version uint64, vals [][]byte) (done bool, err error) {
	var one [1]lockSetProbe
	probes := one[:0]
	if len(keys) > 1 {
		probes = make([]lockSetProbe, 0, len(keys))
	}
	for _, k := range keys {
		p, free := s.locks.probe(k)
		if !free {
			return false, nil
		}
		probes = append(probes, p)
	}
	if s.testingAfterProbe != nil {
		s.testingAfterProbe()
	}
	ci, err := s.iters.getFor(keys)
	if err != nil {
		return false, err
	}
	defer s.iters.put(ci)
	// Write records come from the iterator's view; long values from the
	// database (a committed value's data record never changes).
	r := mvccReader{src: s.db, iter: ci.it}
	defer r.closeData() // the write-space iterator goes back to the cache
	for i, k := range keys {
		if vals[i], err = r.batchValue(k, version, len(keys)); err != nil {
			return false, err
		}
	}
	for _, p := range probes {
		if !p.unchanged() {
			return false, nil
		}
	}
	return true, nil
}

// readLocked reads keys in one snapshot, each key's lock first. Every
// lock that blocks the read is reported (up to MaxLocksPerResponse), so
// that the client resolves them in one round.
func (s *Store) readLocked(keys [][]byte, version uint64, vals [][]byte) error {
	snap := s.db.NewSnapshot()
	defer snap.Close()
	r := mvccReader{src: snap}
	defer r.close()
	var locked []LockInfo
	for i, k := range keys {
		l, err := r.lock(k)
		if err != nil {
			return err
		}
		if l != nil && blocksRead(l, version) {
			if len(locked) < MaxLocksPerResponse {
				locked = append(locked, lockInfo(k, l))
			}
			continue
		}
		if len(locked) > 0 {
			continue
		}
		if vals[i], err = r.batchValue(k, version, len(keys)); err != nil {
			return err
		}
	}
	return lockedError(locked)
}

// lockedError reports locks met by a read, nil when there are none.
func lockedError(locks []LockInfo) error {
	if len(locks) == 0 {
		return nil
	}
	return &KeyIsLockedError{Lock: locks[0], More: locks[1:]}
}

// readName names a Get or a BatchGet of keys in its errors. It is called
// only when an error is returned: a Sprintf per read was 3% of a point
// select.
func readName(keys [][]byte) string {
	if len(keys) != 1 {
		return "batch get"
	}
	return fmt.Sprintf("get %q", keys[0])
}

// blocksRead reports whether lock l hides from a reader at ts what it
// should see: the lock's transaction started at or before ts and might
// commit at or below it. Lock-type locks never change the value, and a
// min_commit_ts above ts promises the commit lands above the read.
// Pessimistic locks have no value yet: the prewrite that gives them one
// comes later, and its commit_ts, fetched after it, is above every read
// that passed the pessimistic lock.
func blocksRead(l *txntypes.Lock, ts uint64) bool {
	return l.StartTS <= ts && l.Type != txntypes.LockLock && l.Type != txntypes.LockPessimistic && l.MinCommitTS <= ts
}

// lockInfo describes lock l on key for a client.
func lockInfo(key []byte, l *txntypes.Lock) LockInfo {
	op := OpPut
	switch l.Type {
	case txntypes.LockDelete:
		op = OpDelete
	case txntypes.LockLock:
		op = OpLock
	case txntypes.LockPessimistic:
		op = OpPessimisticLock
	}
	return LockInfo{
		Key:         append([]byte{}, key...),
		Primary:     append([]byte{}, l.Primary...),
		StartTS:     l.StartTS,
		TTL:         l.TTL,
		Type:        op,
		MinCommitTS: l.MinCommitTS,
		TxnSize:     l.TxnSize,
		ForUpdateTS: l.ForUpdateTS,
	}
}

// wrapInternal adds context to store errors but leaves the contract's
// typed errors as they are: they already name the key and the
// transaction, and clients match them with errors.As either way.
func wrapInternal(what string, err error) error {
	if isContractError(err) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// isContractError reports whether err is one of api.go's typed errors.
func isContractError(err error) bool {
	switch err.(type) {
	case *KeyIsLockedError, *WriteConflictError, *AlreadyExistsError, *TxnAbortedError,
		*TxnLockNotFoundError, *CommittedError, *RegionError, *CommitTSExpiredError,
		*DeadlockError, *PessimisticLockNotFoundError, *GCTooOldError:
		return true
	}
	return false
}

// Scan reads at most req.Limit visible pairs of [req.Start, req.End) at
// req.Version (Limit 0: no limit). req.End empty means the region's end; a
// range reaching past the region is a *RegionError. The locks that block
// the read in the part of the range the page covers fail the scan with a
// *KeyIsLockedError naming them (at most MaxLocksPerResponse, nearest the
// scan's start first); locks of req.BypassLocks are skipped, and all locks
// with req.IgnoreLocks. The walk stops early, with ctx's error, when ctx
// ends.
func (s *Store) Scan(ctx context.Context, req *ScanRequest) ([]KvPair, error) {
	// Named in errors only: a Sprintf per scan costs more than its lock
	// check now.
	what := func() string { return fmt.Sprintf("scan [%q, %q)", req.Start, req.End) }
	if req.Limit < 0 {
		return nil, fmt.Errorf("%s: negative limit %d", what(), req.Limit)
	}
	if len(req.Ranges) > 0 {
		return s.scanRanges(ctx, req)
	}
	end, err := s.readRange(req.Region, req.Start, req.End, req.Version, what)
	if err != nil {
		return nil, err
	}
	return rangeRead(ctx, s, req.Start, end, nil, req.Version, req.IgnoreLocks, what,
		func() ([]KvPair, bool, error) { return s.scanUnlocked(ctx, req, end) },
		func(r *mvccReader) ([]KvPair, error) { return r.scan(ctx, req, end) })
}

// scanRanges is Scan of a request with Ranges (a multi-range read).
func (s *Store) scanRanges(ctx context.Context, req *ScanRequest) ([]KvPair, error) {
	what := func() string {
		return fmt.Sprintf("scan of %d ranges [%q, %q)", len(req.Ranges), req.Ranges[0].Start, req.Ranges[len(req.Ranges)-1].End)
	}
	if req.Reverse {
		return nil, fmt.Errorf("%s: a reverse read of many ranges", what())
	}
	if len(req.Start) > 0 || len(req.End) > 0 {
		return nil, fmt.Errorf("%s: both Ranges and [Start, End) given", what())
	}
	ranges, err := s.checkRanges(req.Region, req.Ranges, req.Version, what)
	if err != nil {
		return nil, err
	}
	return rangeRead(ctx, s, ranges[0].Start, ranges[len(ranges)-1].End, ranges, req.Version, req.IgnoreLocks, what,
		func() ([]KvPair, bool, error) {
			return unlockedRead(s, req.IgnoreLocks, func(r *mvccReader) ([]KvPair, error) {
				pairs, _, err := r.walkRanges(ctx, ranges, req.Version, req.Limit, req.KeyOnly)
				return pairs, err
			})
		},
		func(r *mvccReader) ([]KvPair, error) { return r.scanRanges(ctx, req, ranges) })
}

// scanRanges is scanRanges on one view: the walk of every range, then
// the locks of the part of each range the walk covered.
func (r *mvccReader) scanRanges(ctx context.Context, req *ScanRequest, ranges []KeyRange) ([]KvPair, error) {
	pairs, ends, err := r.walkRanges(ctx, ranges, req.Version, req.Limit, req.KeyOnly)
	if err != nil {
		return nil, err
	}
	var locked []LockInfo
	for i, kr := range ranges {
		hi := kr.End
		if req.Limit > 0 && ends[i]-ends0(ends, i) == req.Limit {
			hi = append(bytes.Clone(pairs[ends[i]-1].Key), 0) // just past its last pair
		}
		err := r.locks(kr.Start, hi, false, func(key []byte, l *txntypes.Lock) bool {
			if blocksRead(l, req.Version) && !slices.Contains(req.BypassLocks, l.StartTS) {
				locked = append(locked, lockInfo(key, l))
			}
			return len(locked) < MaxLocksPerResponse
		})
		if err != nil {
			return nil, err
		}
		if len(locked) >= MaxLocksPerResponse {
			break
		}
	}
	if err := lockedError(locked); err != nil {
		return nil, err
	}
	return pairs, nil
}

// ends0 is where range i's pairs start in a walkRanges answer.
func ends0(ends []int, i int) int {
	if i == 0 {
		return 0
	}
	return ends[i-1]
}

// walkRanges walks each of ranges in turn, at most limit pairs of each
// (0: all), and returns their pairs in key order and, for each range,
// the end of its pairs in them. It does not look at locks.
func (r *mvccReader) walkRanges(ctx context.Context, ranges []KeyRange, ts uint64, limit int, keyOnly bool) ([]KvPair, []int, error) {
	var c pairCollector
	ends := make([]int, len(ranges))
	for i, kr := range ranges {
		first := len(c.pairs)
		if len(kr.End) == 0 || bytes.Compare(kr.Start, kr.End) < 0 {
			err := r.visit(ctx, kr.Start, kr.End, ts, false, keyOnly, func(key, value []byte) (bool, error) {
				c.add(key, value, keyOnly)
				return limit > 0 && len(c.pairs)-first >= limit, nil
			})
			if err != nil {
				return nil, nil, err
			}
		}
		ends[i] = len(c.pairs)
	}
	return c.pairs, ends, nil
}

// checkRanges checks the ranges of a multi-range read (ascending and
// disjoint, each bounded but the last, all in the region rc) and returns
// them with the last one's End as the walk takes it: cut to the region's
// end, nil when it reaches the end of the key space.
func (s *Store) checkRanges(rc RegionCtx, ranges []KeyRange, version uint64, what func() string) ([]KeyRange, error) {
	n := len(ranges)
	for i, kr := range ranges {
		switch {
		case len(kr.End) == 0 && i < n-1:
			return nil, fmt.Errorf("%s: range %d of %d is unbounded", what(), i, n)
		case len(kr.End) > 0 && bytes.Compare(kr.Start, kr.End) > 0:
			return nil, fmt.Errorf("%s: range %d ends before it starts", what(), i)
		case i > 0 && bytes.Compare(ranges[i-1].End, kr.Start) > 0:
			return nil, fmt.Errorf("%s: range %d starts before range %d ends", what(), i, i-1)
		}
	}
	// The region holds the first start and the last end, so every range.
	end, err := s.readRange(rc, ranges[0].Start, ranges[n-1].End, version, what)
	if err != nil {
		return nil, err
	}
	return append(ranges[:n-1:n-1], KeyRange{Start: ranges[n-1].Start, End: end}), nil
}

// rangeRead runs a read of [start, end) at version (Scan, Coprocessor):
// it waits for the one-phase commits racing with it in the range (a lock
// too) unless ignoreLocks, then reads latch-free with unlocked, and when
// that cannot be shown right, with locked on a snapshot. A version the GC
// safe point passed during the read fails it (gc.go). When ranges is not
// nil, the read covers only those ranges of [start, end) (a coprocessor
// request of many ranges), and only commits in them are waited for.
func rangeRead[T any](ctx context.Context, s *Store, start, end []byte, ranges []KeyRange, version uint64, ignoreLocks bool, what func() string,
	unlocked func() (T, bool, error), locked func(r *mvccReader) (T, error)) (T, error) {
	var zero T
	if !ignoreLocks {
		err := error(nil)
		if ranges != nil {
			err = s.memLocks.waitRanges(ctx, ranges)
		} else {
			err = s.memLocks.waitRange(ctx, start, end)
		}
		if err != nil {
			return zero, fmt.Errorf("%s: %w", what(), err)
		}
	}
	if err := s.enter(); err != nil {
		return zero, fmt.Errorf("%s: %w", what(), err)
	}
	defer s.exit()
	out, done, err := unlocked()
	if err == nil && !done {
		s.lockedRangeReads.Add(1)
		gen, set := s.latest.load(), s.latest.ranges.set.Load()
		snap := s.db.NewSnapshot()
		defer snap.Close()
		r := newMVCCReader(snap)
		// The space (or a range's copies) was on, with no switch, from
		// before the snapshot to after it: complete in its view.
		stable := !s.noLatestWalks && s.latest.load() == gen && s.latest.ranges.set.Load() == set
		r.latest = stable && latestOnIn(gen)
		if stable && !r.latest && set != nil && len(set.ranges) > 0 {
			r.latestRanges = set
		}
		defer r.close()
		out, err = locked(r)
		s.noteWalks(&r.walked)
	}
	if err == nil {
		err = s.checkReadTS(version)
	}
	if err != nil {
		return zero, wrapInternal(what(), err)
	}
	return out, nil
}

// readRange checks a read of [start, end) at version against the region
// rc it was routed to, and returns end with an empty one cut to the
// region's end (nil: unbounded). A range reaching past the region is a
// *RegionError.
func (s *Store) readRange(rc RegionCtx, start, end []byte, version uint64, what func() string) ([]byte, error) {
	if version == 0 {
		return nil, fmt.Errorf("%s: version is 0", what())
	}
	reg, err := s.regions.check(rc, version, start)
	if err != nil {
		return nil, err
	}
	if len(end) == 0 {
		end = reg.info.End
	} else if len(reg.info.End) != 0 && bytes.Compare(end, reg.info.End) > 0 {
		cur := cloneRegionInfo(reg.info)
		return nil, &RegionError{RegionID: reg.info.ID, Reason: fmt.Sprintf("%s: read end %q", reasonKeyNotInRange, end), Current: &cur}
	}
	if len(end) != 0 && bytes.Compare(end, start) < 0 {
		return nil, fmt.Errorf("%s: end is before start", what())
	}
	if len(end) == 0 {
		end = nil
	}
	return end, nil
}

// scanUnlocked is Scan without looking at the lock space, which is
// possible when the lock set held no lock that may block a read at the
// probe and no such lock was added to it until the walk was done: then no
// lock that would have failed the scan was in Pebble at any instant in
// between (pessimistic and lock-type locks never do, blocksRead). done is false when that cannot be shown (nearly always under
// writes): the caller scans with locks. The walk uses an iterator from the
// iterCache, as readUnlocked does and for the same reasons. A scan with
// IgnoreLocks is always done here.
func (s *Store) scanUnlocked(ctx context.Context, req *ScanRequest, end []byte) (pairs []KvPair, done bool, err error) {
	return unlockedRead(s, req.IgnoreLocks, func(r *mvccReader) ([]KvPair, error) {
		return r.walk(ctx, req.Start, end, req.Version, req.Limit, req.Reverse, req.KeyOnly)
	})
}

// unlockedRead runs read with a latch-free reader when the lock set shows
// that no lock was in Pebble at any instant between its probe and the
// end of the read (see scanUnlocked); done is false when that cannot be
// shown. With ignoreLocks it always runs and is done.
func unlockedRead[T any](s *Store, ignoreLocks bool, read func(r *mvccReader) (T, error)) (out T, done bool, err error) {
	var zero T
	adds, none := s.locks.probeBlocking()
	if !none && !ignoreLocks {
		return zero, false, nil
	}
	if s.testingAfterProbe != nil {
		s.testingAfterProbe()
	}
	ci, err := s.iters.get()
	if err != nil {
		return zero, false, err
	}
	defer s.iters.put(ci)
	r := &mvccReader{src: s.db, iter: ci.it}
	if !s.noLatestWalks {
		r.latestGate = s.latest
	}
	out, err = read(r)
	r.closeData() // the write-space iterator goes back to the cache
	s.noteWalks(&r.walked)
	if err != nil || (!ignoreLocks && !s.locks.noBlockingAddsSince(adds)) {
		return zero, false, err
	}
	return out, true, nil
}

// scan is Scan on one view; end nil is unbounded. It walks the write
// space up to the limit, then checks the locks of the part of the range
// the walk covered: a lock past the page's last pair does not matter to
// it, and the lock space beyond (where a resolved transaction leaves a
// tombstone per key until compaction) is not visited, so reading a range
// page by page costs what the range holds, once.
func (r *mvccReader) scan(ctx context.Context, req *ScanRequest, end []byte) ([]KvPair, error) {
	pairs, err := r.walk(ctx, req.Start, end, req.Version, req.Limit, req.Reverse, req.KeyOnly)
	if err != nil {
		return nil, err
	}
	lo, hi := req.Start, end
	if req.Limit > 0 && len(pairs) == req.Limit {
		last := pairs[len(pairs)-1].Key
		if req.Reverse {
			lo = last
		} else {
			hi = append(bytes.Clone(last), 0) // just past last
		}
	}
	if err := r.blockingLocks(lo, hi, req.Version, req.BypassLocks, req.Reverse); err != nil {
		return nil, err
	}
	return pairs, nil
}

// blockingLocks returns a *KeyIsLockedError naming the locks in [lo, hi)
// that block a read at version (at most MaxLocksPerResponse, nearest the
// read's start first), those of the transactions in bypass excepted; nil
// when there are none.
func (r *mvccReader) blockingLocks(lo, hi []byte, version uint64, bypass []uint64, reverse bool) error {
	var locked []LockInfo
	err := r.locks(lo, hi, reverse, func(key []byte, l *txntypes.Lock) bool {
		if blocksRead(l, version) && !slices.Contains(bypass, l.StartTS) {
			locked = append(locked, lockInfo(key, l))
		}
		return len(locked) < MaxLocksPerResponse
	})
	if err != nil {
		return err
	}
	return lockedError(locked)
}

// walkCheckEvery is how many keys a walk steps over between looks at its
// context.
const walkCheckEvery = 1024

// visitFn receives each visible pair of a walk. key and value are valid
// only during the call (the walk reuses its buffers); stop ends the walk.
type visitFn func(key, value []byte) (stop bool, err error)

// walk walks the write space of [start, end) key by key in the scan's
// direction and returns the visible pairs, at most limit (0: no limit).
// It does not look at locks. The pairs' keys and values share a few large
// allocations rather than two each.
func (r *mvccReader) walk(ctx context.Context, start, end []byte, ts uint64, limit int, reverse, keyOnly bool) ([]KvPair, error) {
	var c pairCollector
	if limit > 0 {
		c.pairs = make([]KvPair, 0, min(limit, 1024))
	}
	err := r.visit(ctx, start, end, ts, reverse, keyOnly, func(key, value []byte) (bool, error) {
		c.add(key, value, keyOnly)
		return limit > 0 && len(c.pairs) >= limit, nil
	})
	if err != nil {
		return nil, err
	}
	return c.pairs, nil
}

// pairCollector keeps the pairs of a walk: their keys and values share a
// few large allocations rather than two each.
type pairCollector struct {
	pairs []KvPair
	slab  []byte
}

// add keeps a copy of key and value (not of value when keyOnly).
func (c *pairCollector) add(key, value []byte, keyOnly bool) {
	n := len(key) + len(value)
	if cap(c.slab)-len(c.slab) < n {
		// Slabs grow from 4 KiB to 64 KiB: a short page stays small.
		c.slab = make([]byte, 0, max(n, min(2*cap(c.slab), 64<<10), 4<<10))
	}
	off := len(c.slab)
	c.slab = append(c.slab, key...)
	k := c.slab[off:len(c.slab):len(c.slab)]
	var v []byte
	if !keyOnly {
		off = len(c.slab)
		c.slab = append(c.slab, value...)
		v = c.slab[off:len(c.slab):len(c.slab)]
	}
	c.pairs = append(c.pairs, KvPair{Key: k, Value: v})
}

// visit walks the write space of [start, end) key by key in the scan's
// direction and calls fn with each visible pair until fn stops it. It does
// not look at locks. A forward walk allocates nothing per key: the user
// key is decoded into one buffer and the write record parsed in place.
func (r *mvccReader) visit(ctx context.Context, start, end []byte, ts uint64, reverse, keyOnly bool, fn visitFn) error {
	if reverse {
		r.walked.rangeState = walkRangeMixed
	} else {
		r.walked.noteRange(start, end)
	}
	if !reverse && (r.latest || r.latestGate != nil || r.latestRanges != nil) {
		if used, err := r.visitLatest(ctx, start, end, ts, keyOnly, fn); used {
			return err
		}
	}
	iter, err := r.writeIter()
	if err != nil {
		return err
	}
	lower := keyspace.WritePrefix(start)
	upper := keyspace.SpaceEnd(keyspace.Write)
	if end != nil {
		upper = keyspace.WritePrefix(end)
	}
	before := iter.Stats()
	var ok bool
	if reverse {
		ok = iter.SeekLT(upper)
	} else {
		ok = iter.SeekGE(lower)
	}
	var keyBuf, raw []byte
	defer func() {
		// The last key visited bounds the span reported to the
		// compactor; a forward walk decodes it only here, as it steps
		// over deleted keys undecoded.
		var last []byte
		if reverse {
			if len(keyBuf) > 0 {
				last = keyBuf
			}
		} else if len(raw) > 0 {
			if k, _, err := keyspace.AppendDecodeWriteKey(nil, raw); err == nil {
				last = k
			}
		}
		r.walked.add(&before, iter, lower, upper, last, reverse, !ok)
	}()
	for steps := 1; ok; steps++ {
		if steps%walkCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k := iter.Key()
		// A walk moves one way from its seek: only the bound ahead of
		// it can be passed.
		if reverse && bytes.Compare(k, lower) < 0 || !reverse && bytes.Compare(k, upper) >= 0 {
			break
		}
		var key []byte
		r.walked.keys++
		var w txntypes.Write
		found := false
		if reverse {
			if key, _, err = keyspace.AppendDecodeWriteKey(keyBuf[:0], k); err != nil {
				return err
			}
			keyBuf = key
			raw = append(raw[:0], k...) // iter.Key's buffer changes on Prev
			w, found, ok, err = r.decideReverse(iter, raw[:len(raw)-8], key, ts)
		} else {
			// The user key is decoded only for a pair the walk
			// returns: a deleted key is stepped over undecoded.
			raw = append(raw[:0], k...) // iter.Key's buffer changes on Next
			prefix := raw[:len(raw)-8]
			var decidedAt int
			w, found, decidedAt, ok, err = r.decideForward(iter, prefix, ts)
			if err == nil && found && w.Type == txntypes.WritePut {
				if key, _, err = keyspace.AppendDecodeWriteKey(keyBuf[:0], raw); err != nil {
					return err
				}
				keyBuf = key
				// The value is read in place: the iterator is still
				// at the deciding record, or past the key when the
				// record came from a point read.
				if stop, err := r.feed(key, &w, keyOnly, fn); err != nil || stop {
					return err
				}
			}
			if err == nil && decidedAt >= 0 {
				ok, err = r.leaveKey(iter, prefix, decidedAt)
			}
			if err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if found && w.Type == txntypes.WritePut {
			if stop, err := r.feed(key, &w, keyOnly, fn); err != nil || stop {
				return err
			}
		}
	}
	return iter.Error()
}

// feed hands a walk's visible pair to fn: key and the value of its
// deciding Put record w (none when keyOnly).
func (r *mvccReader) feed(key []byte, w *txntypes.Write, keyOnly bool, fn visitFn) (stop bool, err error) {
	var v []byte
	if !keyOnly {
		if v, err = r.scanValue(key, w); err != nil {
			return true, err
		}
	}
	return fn(key, v)
}

// scanSeekBound is how many records of one key a forward walk steps over
// with Next before it seeks instead (TiKV's SEEK_BOUND): a key has few
// write records unless it is rewritten often, and a Next is much cheaper
// than a seek.
const scanSeekBound = 8

// versionProbeEvery is how many keys a forward walk leaves with NextPrefix
// before it steps from a decided key with Next again to see whether the
// keys still keep older versions. NextPrefix costs a key without older
// versions more than a Next (Pebble splits both keys to compare their
// prefixes: +2.3% instructions a row on a fresh table) and saves a key
// with them the merge of each older version through the iterator's
// every level (-6.9% a row with two more versions over two more levels,
// BenchmarkScanSpreadVersions); so a walk steps with Next until a key
// shows older versions, then skips until a probe finds a key without.
// A Next also counts the hidden points after the deciding record exactly
// (scancost.go), which NextPrefix jumps over.
const versionProbeEvery = 16

// decideReverse is decideForward for a reverse walk: iter is at the
// key's oldest record, the first a walk down meets, and is left at the
// previous key's oldest record. It steps down the key's records with
// Prev, each newer than the last, so that the newest Put or Delete at or
// before ts seen last decides the key, until a record newer than ts or
// the next key: one step per record where it sought the key's records
// and then the previous key, two seeks a key (a seek costs several
// steps). Past scanSeekBound records (a key rewritten often) it asks
// valueWrite, whose prefix seek goes to the deciding record directly,
// and seeks below the key.
func (r *mvccReader) decideReverse(iter *pebble.Iterator, prefix, key []byte, ts uint64) (w txntypes.Write, found, ok bool, err error) {
	ok = true
	for steps := 0; ok && bytes.HasPrefix(iter.Key(), prefix); steps++ {
		k := iter.Key()
		if len(k) != len(prefix)+8 {
			return w, false, false, fmt.Errorf("write key %x has a bad length", k)
		}
		commitTS := ^binary.BigEndian.Uint64(k[len(prefix):])
		if steps == scanSeekBound {
			rec, err := r.valueWrite(key, ts)
			if err != nil {
				return w, false, false, err
			}
			w, found = txntypes.Write{}, false
			if rec != nil {
				w, found = *rec, true
			}
			return w, found, iter.SeekLT(prefix), iter.Error()
		}
		if commitTS > ts {
			// This record and the key's others below it are newer
			// than the snapshot.
			return w, found, iter.SeekLT(prefix), iter.Error()
		}
		typ, err := txntypes.PeekWriteType(iter.Value())
		if err != nil {
			return w, false, false, fmt.Errorf("read write record %x: %w", k, err)
		}
		switch typ {
		case txntypes.WriteDelete:
			w, found = txntypes.Write{Type: typ}, true
		case txntypes.WritePut:
			if w, err = txntypes.ParseWrite(iter.Value()); err != nil {
				return w, false, false, fmt.Errorf("read write record %x: %w", k, err)
			}
			found = true
			if w.ShortValue != nil {
				// The record's bytes change on Prev. An empty
				// value stays non-nil (nil: a long value).
				if r.valBuf == nil {
					r.valBuf = make([]byte, 0, txntypes.ShortValueMaxLen)
				}
				r.valBuf = append(r.valBuf[:0], w.ShortValue...)
				w.ShortValue = r.valBuf
			}
		}
		ok = iter.Prev()
	}
	return w, found, ok, iter.Error()
}

// decideForward returns the write record that decides, at ts, the value of
// the key whose write records start with prefix (see valueWrite; found
// false when none does), reading from iter, which is at the key's newest
// record. When the record is one of iter's, decideForward leaves iter at
// it, so that a Put's short value (a slice of the record) is read in
// place, and returns its step among the key's records in decidedAt, for
// leaveKey to move on from; else (no record decides, or a point read
// found it) it leaves iter at the next key's first record (ok false when
// there is none) and decidedAt is -1.
func (r *mvccReader) decideForward(iter *pebble.Iterator, prefix []byte, ts uint64) (w txntypes.Write, found bool, decidedAt int, ok bool, err error) {
	ok = true
	for steps := 0; ok && bytes.HasPrefix(iter.Key(), prefix); steps++ {
		if steps == scanSeekBound {
			key, _, err := keyspace.DecodeWriteKey(iter.Key())
			if err != nil {
				return w, false, -1, false, err
			}
			rec, err := r.valueWrite(key, ts)
			if err != nil {
				return w, false, -1, false, err
			}
			if rec != nil {
				w, found = *rec, true
			}
			r.skipVersions = true
			ok, err := r.seekNextKey(iter, prefix)
			return w, found, -1, ok, err
		}
		k := iter.Key()
		if len(k) != len(prefix)+8 {
			return w, false, -1, false, fmt.Errorf("write key %x has a bad length", k)
		}
		if commitTS := ^binary.BigEndian.Uint64(k[len(prefix):]); commitTS <= ts {
			// Only a Put is parsed whole: a Delete decides the key
			// by its type alone, and Lock and Rollback records are
			// stepped over (a key deleted and not yet collected
			// costs its records' iteration, no decoding), but for a
			// Lock record's pointer to a change far below, or to
			// none (lastChangeJump).
			typ, err := txntypes.PeekWriteType(iter.Value())
			if err != nil {
				return w, false, -1, false, fmt.Errorf("read write record %x: %w", k, err)
			}
			switch typ {
			case txntypes.WriteDelete:
				return txntypes.Write{Type: typ}, true, steps, true, nil
			case txntypes.WritePut:
				if w, err = txntypes.ParseWrite(iter.Value()); err != nil {
					return w, false, -1, false, fmt.Errorf("read write record %x: %w", k, err)
				}
				return w, true, steps, true, nil
			case txntypes.WriteLock:
				to, jump, err := lastChangeJump(iter.Value(), commitTS, lastChangeScanBound)
				if err != nil {
					return w, false, -1, false, fmt.Errorf("read write record %x: %w", k, err)
				}
				switch jump {
				case jumpNoValue:
					// Nothing below decides: the key has no
					// value, as a Delete would say.
					r.noValueJumps++
					return txntypes.Write{Type: txntypes.WriteDelete}, true, steps, true, nil
				case jumpSeek:
					r.seekJumps++
					r.seekKey = binary.BigEndian.AppendUint64(append(r.seekKey[:0], prefix...), ^to)
					ok = iter.SeekGE(r.seekKey)
					continue
				}
			}
		}
		ok = iter.Next()
	}
	if !ok {
		return w, false, -1, false, iter.Error()
	}
	return w, false, -1, true, nil
}

// leaveKey moves iter from the record that decided the key of the write
// records starting with prefix, the key's decidedAt-th, to the next key's
// first record (ok false when there is none). Where keys keep older
// versions it leaves them in one step (the comparer splits off the
// version, comparer.go) instead of a Next each, which merges every
// level's records one by one; past scanSeekBound records of the key it
// seeks.
func (r *mvccReader) leaveKey(iter *pebble.Iterator, prefix []byte, decidedAt int) (ok bool, err error) {
	if r.skipVersions && r.sinceProbe < versionProbeEvery {
		r.sinceProbe++
		r.walked.prefixSkips++
		if ok = iter.NextPrefix(); !ok {
			return false, iter.Error()
		}
		if !bytes.HasPrefix(iter.Key(), prefix) {
			return true, nil
		}
		// Still on the key: an sstable's prefix bit said otherwise
		// (written with another split, comparer.go). The loop steps
		// over the rest.
	} else {
		r.sinceProbe = 0
		ok = iter.Next()
	}
	steps := decidedAt + 1
	for ; ok && bytes.HasPrefix(iter.Key(), prefix); steps++ {
		if steps == scanSeekBound {
			r.skipVersions = true
			return r.seekNextKey(iter, prefix)
		}
		ok = iter.Next()
	}
	// Stepping on from the deciding record found another record of the
	// key, or the next key: the keys here keep older versions, or they
	// do not (see versionProbeEvery).
	r.skipVersions = steps > decidedAt+1
	if !ok {
		return false, iter.Error()
	}
	return true, nil
}

// seekNextKey moves iter past the write records starting with prefix.
func (r *mvccReader) seekNextKey(iter *pebble.Iterator, prefix []byte) (ok bool, err error) {
	if ok = iter.SeekGE(keyspace.PrefixEnd(prefix)); !ok {
		return false, iter.Error()
	}
	return true, nil
}
