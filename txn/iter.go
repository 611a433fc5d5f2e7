package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"

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

	// fence is the key of a lock the scan may read past (see lockMet):
	// the scan first fetches the range on its near side, then reads the
	// fenced key alone at fenceTS, then goes on beyond it.
	fence   []byte
	fenceTS uint64

	w  lockWaiter
	rr regionRetrier
}

// scan returns an iterator over the snapshot at version in [start, end).
func (s *Store) scan(ctx context.Context, start, end []byte, version uint64, reverse bool) (*scanIter, error) {
	it := &scanIter{
		s: s, version: version, reverse: reverse,
		lo: bytes.Clone(start), hi: bytes.Clone(end),
		rr: newRegionRetrier(s.opts.MaxRegionRetries),
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
func (it *scanIter) fetch(ctx context.Context) error {
	it.page, it.pos = nil, 0
	for len(it.page) == 0 && !it.done {
		if err := it.fetchOnce(ctx); err != nil {
			it.page, it.done = nil, true
			return fmt.Errorf("scan [%q, %q): %w", it.lo, it.hi, err)
		}
	}
	return nil
}

// handle deals with a failed scan request: it re-routes after a region
// error and settles a lock; the caller then retries.
func (it *scanIter) handle(ctx context.Context, reg kv.RegionInfo, err error) error {
	var (
		re     *kv.RegionError
		locked *kv.KeyIsLockedError
	)
	switch {
	case errors.As(err, &re):
		it.s.client.InvalidateRegion(reg.ID)
		return it.rr.retry(ctx, err)
	case errors.As(err, &locked):
		ts, err := it.s.lockMet(ctx, locked.Lock, it.version, it.version, &it.w)
		if err != nil {
			return err
		}
		if ts != it.version {
			it.fence, it.fenceTS = locked.Lock.Key, ts
		}
		return nil
	}
	return err
}

// readFence reads the fenced key past its lock and adds it to the page.
func (it *scanIter) readFence(ctx context.Context) error {
	v, err := it.s.getAt(ctx, it.fence, it.version, it.fenceTS)
	if err != nil {
		return fmt.Errorf("get %q: %w", it.fence, err)
	}
	if v != nil {
		it.page = append(it.page, kv.KvPair{Key: it.fence, Value: v})
	}
	it.fence = nil
	return nil
}

// fetchOnce fetches one page: the next part of the range in the walk's
// direction that one region holds, up to a fence if there is one.
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
	// goes on in the next region) and to the fence (atFence).
	lo, hi := it.lo, it.hi
	atEdge, atFence := false, false
	if it.reverse {
		if bytes.Compare(reg.Start, lo) > 0 {
			lo, atEdge = reg.Start, true
		}
		if it.fence != nil {
			if f := successor(it.fence); bytes.Compare(f, lo) > 0 {
				lo, atFence = f, true
			}
		}
	} else {
		if len(reg.End) > 0 && (len(hi) == 0 || bytes.Compare(reg.End, hi) < 0) {
			hi, atEdge = reg.End, true
		}
		if it.fence != nil && (len(hi) == 0 || bytes.Compare(it.fence, hi) < 0) {
			hi, atFence = it.fence, true
		}
	}
	limit := it.s.opts.ScanPageSize
	pairs, err := it.s.client.Scan(ctx, &kv.ScanRequest{
		Region: reg.Ctx(), Start: lo, End: hi, Limit: limit, Version: it.version, Reverse: it.reverse,
	})
	if err != nil {
		return it.handle(ctx, reg, err)
	}
	it.rr = newRegionRetrier(it.s.opts.MaxRegionRetries)
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
	case atFence:
		advance(it.fence)
		return it.readFence(ctx)
	case atEdge && it.reverse:
		it.hi = reg.Start
	case atEdge:
		it.lo = reg.End
	default:
		it.done = true
	}
	return nil
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
