package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/percdb/percdb/kv"
)

// Iterator walks key-value pairs in order. A new iterator is positioned at
// its first pair (or is not Valid when there is none). Key and Value are
// valid until the next call to Next; the caller must not modify them.
// Next fails like a read does (a lock wait timeout, a store error); after
// an error the iterator is not Valid. An iterator is not safe for
// concurrent use; Close releases it.
type Iterator interface {
	Valid() bool
	Key() []byte
	Value() []byte
	Next(ctx context.Context) error
	Close()
}

// successor returns the smallest key above key.
func successor(key []byte) []byte {
	out := make([]byte, len(key)+1)
	copy(out, key)
	return out
}

// reverseProbe returns a key just below b, for finding the region that
// holds the keys right below b: b's exact predecessor when b ends in 0x00,
// else b with its last byte lowered and a run of 0xFF appended, which no
// region boundary is likely to fall in between (regionBefore walks
// forward past any that does). For an empty b (+infinity) it is a run of
// 0xFF.
func reverseProbe(b []byte) []byte {
	const run = 16
	if len(b) == 0 {
		return bytes.Repeat([]byte{0xFF}, run)
	}
	n := len(b)
	if b[n-1] == 0 {
		return bytes.Clone(b[:n-1])
	}
	out := make([]byte, n, n+run)
	copy(out, b)
	out[n-1]--
	return append(out, bytes.Repeat([]byte{0xFF}, run)...)
}

// scanIter pages through [lo, hi) of the snapshot at version, region by
// region, ScanPageSize pairs per request. lo and hi shrink as pages are
// fetched; an empty hi is +infinity.
type scanIter struct {
	s       *Store
	version uint64
	reverse bool
	lo, hi  []byte

	page []kv.KvPair
	pos  int
	done bool // nothing is left to fetch

	// bypass lists the transactions whose locks the scan may read past
	// (LockReadPast): their primaries promise to commit above version, if
	// ever, so the store skips their locks (kv.ScanRequest.BypassLocks).
	bypass []uint64
	// estimate reads keys only and ignores every lock
	// (kv.ScanRequest.IgnoreLocks): for Store.EstimateKeys.
	estimate bool

	w  lockWaiter
	rr regionRetrier

	// first is the size of the next request's page while it is the
	// first (IterOptions.FirstPage; 0: ScanPageSize).
	first int
	// latest is the latest transaction (BeginLatest) whose one read
	// this walk is, while the walk reads at kv.MaxTS and has handed out
	// nothing; spent says it handed out a page at kv.MaxTS that did not
	// end the walk, so that it cannot read on (ErrLatestSpent).
	latest *Txn
	spent  bool
}

// scan returns an iterator over the snapshot at version in [start, end),
// as o says; latest is the latest transaction whose read it is when
// version is kv.MaxTS (latest.go).
func (s *Store) scan(ctx context.Context, start, end []byte, version uint64, o IterOptions, latest *Txn) (*scanIter, error) {
	it := &scanIter{
		s: s, version: version, reverse: o.Reverse,
		lo: bytes.Clone(start), hi: bytes.Clone(end),
		rr: newRegionRetrier(s.opts), first: o.FirstPage, latest: latest,
	}
	if len(end) > 0 && bytes.Compare(start, end) >= 0 {
		it.done = true
		return it, nil
	}
	if err := it.fetch(ctx); err != nil {
		return nil, err
	}
	return it, nil
}

func (it *scanIter) Valid() bool   { return it.pos < len(it.page) }
func (it *scanIter) Key() []byte   { return it.page[it.pos].Key }
func (it *scanIter) Value() []byte { return it.page[it.pos].Value }
func (it *scanIter) Close()        { it.page, it.done = nil, true }

func (it *scanIter) Next(ctx context.Context) error {
	if !it.Valid() {
		return nil
	}
	it.pos++
	if it.pos < len(it.page) {
		return nil
	}
	return it.fetch(ctx)
}

// fetch loads the next non-empty page, or leaves the iterator exhausted.
// It stops with ctx's error when ctx ends: a range of deleted or locked
// keys may take many requests to get through.
func (it *scanIter) fetch(ctx context.Context) error {
	it.page, it.pos = nil, 0
	for len(it.page) == 0 && !it.done {
		err := ctx.Err()
		if err != nil {
			err = context.Cause(ctx)
		} else {
			err = it.fetchOnce(ctx)
		}
		if err != nil {
			it.page, it.done = nil, true
			return fmt.Errorf("scan [%q, %q): %w", it.lo, it.hi, err)
		}
	}
	return nil
}

// maxBypass bounds the transactions a scan reads past: beyond, it resolves
// their locks as it meets them again (waiting for the live ones), which is
// slower but always right.
const maxBypass = 64

// handle deals with a failed scan request (see Store.settleRangeError).
func (it *scanIter) handle(ctx context.Context, reg kv.RegionInfo, err error) error {
	return it.s.settleRangeError(ctx, reg, err, it.version, &it.bypass, &it.w, &it.rr)
}

// settleRangeError deals with a failed range read at version: it
// re-routes after a region error and settles the locks the page met, all
// in one round (waiting once if any is alive), adding to bypass the
// transactions the read may go past; the caller then retries. Other
// errors are returned.
func (s *Store) settleRangeError(ctx context.Context, reg kv.RegionInfo, err error, version uint64, bypass *[]uint64, w *lockWaiter, rr *regionRetrier) error {
	var (
		re     *kv.RegionError
		locked *kv.KeyIsLockedError
	)
	switch {
	case errors.As(err, &re):
		s.client.InvalidateRegion(reg.ID)
		return rr.retry(ctx, err)
	case errors.As(err, &locked):
		locks := locked.Locks()
		outcomes, err := s.resolver.ResolveLocks(ctx, locks, version)
		if err != nil {
			return err
		}
		wait := -1
		for i, o := range outcomes {
			switch {
			case o == LockReadPast && len(*bypass) < maxBypass:
				if !slices.Contains(*bypass, locks[i].StartTS) {
					*bypass = append(*bypass, locks[i].StartTS)
				}
			case o != LockGone && wait < 0:
				wait = i
			}
		}
		if wait >= 0 {
			return s.waitLock(ctx, locks[wait], w)
		}
		return nil
	}
	return err
}

// fetchOnce fetches one page: the next part of the range in the walk's
// direction that one region holds.
func (it *scanIter) fetchOnce(ctx context.Context) error {
	var reg kv.RegionInfo
	var err error
	if it.reverse {
		reg, err = it.regionBefore(ctx, it.hi)
	} else if reg, err = it.s.client.LocateKey(ctx, it.lo); err != nil {
		err = fmt.Errorf("locate %q: %w", it.lo, err)
	}
	if err != nil {
		return err
	}
	// The request's bounds: the range cut to the region (atEdge: the walk
	// goes on in the next region).
	lo, hi := it.lo, it.hi
	atEdge := false
	if it.reverse {
		if bytes.Compare(reg.Start, lo) > 0 {
			lo, atEdge = reg.Start, true
		}
	} else if len(reg.End) > 0 && (len(hi) == 0 || bytes.Compare(reg.End, hi) < 0) {
		hi, atEdge = reg.End, true
	}
	if it.spent {
		return ErrLatestSpent
	}
	limit := it.s.opts.ScanPageSize
	if it.first > 0 && it.first < limit {
		limit = it.first
	}
	pairs, err := it.s.client.Scan(ctx, &kv.ScanRequest{
		Region: reg.Ctx(), Start: lo, End: hi, Limit: limit, Version: it.version, Reverse: it.reverse,
		BypassLocks: it.bypass, IgnoreLocks: it.estimate, KeyOnly: it.estimate,
	})
	if it.latest != nil {
		if ok, err := it.keepLatest(ctx, reg, err, len(pairs) == limit, atEdge); !ok || err != nil {
			return err
		}
	}
	if err != nil {
		return it.handle(ctx, reg, err)
	}
	it.rr = newRegionRetrier(it.s.opts)
	it.first = 0
	it.page = pairs
	// advance moves the walk's near bound past key (exclusive hi going
	// down, successor going up).
	advance := func(key []byte) {
		if it.reverse {
			it.hi = key
		} else {
			it.lo = successor(key)
		}
	}
	switch {
	case len(pairs) == limit:
		advance(pairs[len(pairs)-1].Key)
	case atEdge && it.reverse:
		it.hi = reg.Start
	case atEdge:
		it.lo = reg.End
	default:
		it.done = true
	}
	return nil
}

// keepLatest decides what becomes of the answer to a request at kv.MaxTS
// (the walk's first, as nothing was handed out): ok when the page (err
// nil) is kept. It is kept when it ends the walk, or when it is a full
// first page the caller asked for (IterOptions.FirstPage), which may be
// all the caller needs: more would then fail (spent). Otherwise, and
// after a lock or a stale route, what it returned is dropped and the
// walk goes on at a start_ts from the oracle (leaveLatest), asking
// again from where it began.
func (it *scanIter) keepLatest(ctx context.Context, reg kv.RegionInfo, err error, full, atEdge bool) (bool, error) {
	var (
		re     *kv.RegionError
		locked *kv.KeyIsLockedError
	)
	switch {
	case err == nil && !full && !atEdge:
		it.latest = nil
		return true, nil
	case err == nil && full && it.first > 0:
		it.latest, it.spent = nil, true
		return true, nil
	case err == nil:
	case errors.As(err, &re):
		it.s.client.InvalidateRegion(reg.ID)
	case !errors.As(err, &locked):
		return false, err
	}
	ts, err := it.latest.leaveLatest(ctx)
	if err != nil {
		return false, err
	}
	it.version, it.latest = ts, nil
	return false, nil
}

// regionBefore returns the region holding the keys just below b (an empty
// b is +infinity).
func (it *scanIter) regionBefore(ctx context.Context, b []byte) (kv.RegionInfo, error) {
	probe := reverseProbe(b)
	for {
		reg, err := it.s.client.LocateKey(ctx, probe)
		if err != nil {
			return kv.RegionInfo{}, fmt.Errorf("locate %q: %w", probe, err)
		}
		if len(reg.End) == 0 || (len(b) > 0 && bytes.Compare(reg.End, b) >= 0) {
			return reg, nil
		}
		probe = reg.End
	}
}

// unionIter merges a transaction's buffered writes over the snapshot:
// a buffered put replaces or adds a pair, a buffered delete hides one, and
// a buffered lock (LockKeys) shows the snapshot's pair unchanged.
type unionIter struct {
	snap    *scanIter
	buf     []bufPair
	bi      int
	reverse bool

	key, value      []byte
	valid           bool
	advSnap, advBuf bool // which sides the current pair came from
}

func (u *unionIter) Valid() bool   { return u.valid }
func (u *unionIter) Key() []byte   { return u.key }
func (u *unionIter) Value() []byte { return u.value }
func (u *unionIter) Close()        { u.snap.Close(); u.buf, u.valid = nil, false }

func (u *unionIter) Next(ctx context.Context) error {
	if !u.valid {
		return nil
	}
	if u.advBuf {
		u.bi++
	}
	if u.advSnap {
		if err := u.snap.Next(ctx); err != nil {
			u.valid = false
			return err
		}
	}
	return u.settle(ctx)
}

// settle moves to the next pair visible through the buffer.
func (u *unionIter) settle(ctx context.Context) error {
	for {
		snapOK, bufOK := u.snap.Valid(), u.bi < len(u.buf)
		if !snapOK && !bufOK {
			u.valid = false
			return nil
		}
		// c < 0: the snapshot's pair comes first in the walk's order.
		c := 1
		switch {
		case snapOK && bufOK:
			c = bytes.Compare(u.snap.Key(), u.buf[u.bi].key)
			if u.reverse {
				c = -c
			}
		case snapOK:
			c = -1
		}
		if c < 0 {
			u.key, u.value, u.valid = u.snap.Key(), u.snap.Value(), true
			u.advSnap, u.advBuf = true, false
			return nil
		}
		b := u.buf[u.bi]
		switch b.e.op {
		case bufPut:
			u.key, u.value, u.valid = b.key, b.e.value, true
			u.advSnap, u.advBuf = c == 0, true
			return nil
		case bufLock:
			if c == 0 {
				u.key, u.value, u.valid = u.snap.Key(), u.snap.Value(), true
				u.advSnap, u.advBuf = true, true
				return nil
			}
			u.bi++
		default: // bufDelete
			u.bi++
			if c == 0 {
				if err := u.snap.Next(ctx); err != nil {
					u.valid = false
					return err
				}
			}
		}
	}
}
