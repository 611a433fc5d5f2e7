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

// ValidateReads answers which keys of req.Keys and req.Ranges have a
// Put or Delete committed in (req.From, req.To] (see
// ValidateReadsRequest). It reads one Pebble snapshot after recording To
// in the region's max_read_ts and waiting for the 1PC commits in flight
// on the keys, as a read at To does, so no commit at or below To can
// land on them afterwards.
func (s *Store) ValidateReads(ctx context.Context, req *ValidateReadsRequest) (*ValidateReadsResponse, error) {
	what := func() string {
		return fmt.Sprintf("validate %d keys and %d ranges in (%d, %d]", len(req.Keys), len(req.Ranges), req.From, req.To)
	}
	switch {
	case req.From == 0 || req.To == MaxTS || req.From >= req.To:
		return nil, fmt.Errorf("%s: the window must be (from, to] with 0 < from < to < max", what())
	case len(req.Keys) == 0 && len(req.Ranges) == 0:
		return nil, fmt.Errorf("%s: nothing to validate", what())
	}
	starts := slices.Clone(req.Keys)
	for _, r := range req.Ranges {
		starts = append(starts, r.Start)
	}
	reg, err := s.regions.check(req.Region, req.To, starts...)
	if err != nil {
		return nil, err
	}
	ranges := make([]KeyRange, len(req.Ranges))
	for i, r := range req.Ranges {
		if ranges[i], err = clipRange(reg.info, r); err != nil {
			return nil, fmt.Errorf("%s: %w", what(), err)
		}
	}
	// A 1PC commit racing with the check is a lock too (memLockTable).
	for _, k := range req.Keys {
		if err := s.memLocks.waitKey(ctx, k); err != nil {
			return nil, fmt.Errorf("%s: %w", what(), err)
		}
	}
	for _, r := range ranges {
		if err := s.memLocks.waitRange(ctx, r.Start, r.End); err != nil {
			return nil, fmt.Errorf("%s: %w", what(), err)
		}
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	defer s.exit()
	snap := s.db.NewSnapshot()
	defer snap.Close()
	r := newMVCCReader(snap)
	defer r.close()
	resp, err := validateReads(ctx, r, req, ranges)
	if err != nil {
		return nil, wrapInternal(what(), err)
	}
	return resp, nil
}

// clipRange checks that range r starts in region info and returns it
// with an empty End (+infinity) cut at the region's end; an End past the
// region's end is a *RegionError (the client splits ranges by region).
func clipRange(info RegionInfo, r KeyRange) (KeyRange, error) {
	end := r.End
	switch {
	case len(end) == 0:
		end = info.End
	case len(info.End) != 0 && bytes.Compare(end, info.End) > 0:
		cur := cloneRegionInfo(info)
		return KeyRange{}, &RegionError{RegionID: info.ID, Reason: fmt.Sprintf("%s: range end %q", reasonKeyNotInRange, end), Current: &cur}
	case bytes.Compare(end, r.Start) < 0:
		return KeyRange{}, fmt.Errorf("range [%q, %q) ends before it starts", r.Start, r.End)
	}
	if len(end) == 0 {
		end = nil
	}
	return KeyRange{Start: r.Start, End: end}, nil
}

// validateReads is ValidateReads on one view: the changes found, up to
// MaxChangesPerResponse; unless they overflow, the locks that could still
// commit in the window fail the request with a *KeyIsLockedError.
func validateReads(ctx context.Context, r *mvccReader, req *ValidateReadsRequest, ranges []KeyRange) (*ValidateReadsResponse, error) {
	resp := &ValidateReadsResponse{}
	note := func(key []byte, ts uint64) bool {
		if len(resp.Changes) == MaxChangesPerResponse {
			resp.More = true
			return false
		}
		resp.Changes = append(resp.Changes, KeyChange{Key: cloneKey(key), CommitTS: ts})
		return true
	}
	for _, k := range req.Keys {
		ts, err := changedIn(r, k, req.From, req.To)
		if err != nil {
			return nil, err
		}
		if ts != 0 && !note(k, ts) {
			return resp, nil
		}
	}
	for _, rg := range ranges {
		if err := rangeChangesIn(ctx, r, rg, req.From, req.To, note); err != nil {
			return nil, err
		}
		if resp.More {
			return resp, nil
		}
	}
	if req.ChangesFirst && len(resp.Changes) > 0 {
		resp.LocksUnchecked = true
		return resp, nil
	}
	// A lock that blocks a read at To may still commit at or below it: the
	// client settles it (resolving, or pushing its min_commit_ts above To)
	// and asks again, bypassing it if it was pushed.
	var locked []LockInfo
	collect := func(key []byte, l *txntypes.Lock) bool {
		if blocksRead(l, req.To) && !slices.Contains(req.BypassLocks, l.StartTS) {
			locked = append(locked, lockInfo(key, l))
		}
		return len(locked) < MaxLocksPerResponse
	}
	for _, k := range req.Keys {
		l, err := r.lock(k)
		if err != nil {
			return nil, err
		}
		if l != nil && !collect(k, l) {
			break
		}
	}
	for _, rg := range ranges {
		if len(locked) >= MaxLocksPerResponse {
			break
		}
		if err := r.locks(rg.Start, rg.End, false, collect); err != nil {
			return nil, err
		}
	}
	if err := lockedError(locked); err != nil {
		return nil, err
	}
	return resp, nil
}

// changedIn returns the commit_ts of key's newest Put or Delete committed
// in (from, to], 0 when there is none.
func changedIn(r *mvccReader, key []byte, from, to uint64) (uint64, error) {
	var found uint64
	err := r.writes(key, to, func(cts uint64, w *txntypes.Write) bool {
		if cts <= from {
			return false
		}
		if w.Type == txntypes.WritePut || w.Type == txntypes.WriteDelete {
			found = cts
			return false
		}
		return true
	})
	return found, err
}

// rangeChangesIn calls note with each key of range rg (End nil:
// unbounded) that changed in (from, to], in key order, until note
// returns false. It walks the write space of the range once, newest
// version first within a key: versions above to are stepped over, the
// first one at or below it decides (above from, a Put or Delete is a
// change; a Lock or Rollback record is stepped over; at or below from,
// nothing changed), and the key's older versions are left in one step
// once a few Nexts did not (the comparer splits off the version,
// comparer.go), as a scan leaves them. A seek per key, as changedIn
// makes for a point key, costs a range of small rows several times more.
func rangeChangesIn(ctx context.Context, r *mvccReader, rg KeyRange, from, to uint64, note func(key []byte, ts uint64) bool) error {
	upper := keyspace.SpaceEnd(keyspace.Write)
	if rg.End != nil {
		upper = keyspace.WritePrefix(rg.End)
	}
	iter, err := r.src.NewIter(&pebble.IterOptions{LowerBound: keyspace.WritePrefix(rg.Start), UpperBound: upper})
	if err != nil {
		return fmt.Errorf("open write-space iterator: %w", err)
	}
	var (
		prefix  []byte // the write prefix of the key being walked
		decided bool   // its versions at or below to are decided
		skipped int    // its versions stepped over since it was decided
	)
	ok := iter.First()
	for steps := 1; ok; steps++ {
		if steps%walkCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				_ = iter.Close()
				return err
			}
		}
		k := iter.Key()
		if len(k) < 8 {
			_ = iter.Close()
			return fmt.Errorf("write key %x has a bad length", k)
		}
		p := k[:len(k)-8]
		if decided && bytes.Equal(p, prefix) {
			if skipped++; skipped >= versionNexts {
				ok = iter.NextPrefix()
			} else {
				ok = iter.Next()
			}
			continue
		}
		if !bytes.Equal(p, prefix) {
			prefix, decided, skipped = append(prefix[:0], p...), false, 0
		}
		commitTS := ^binary.BigEndian.Uint64(k[len(p):])
		if commitTS > to {
			ok = iter.Next()
			continue
		}
		if commitTS <= from {
			decided = true
			ok = iter.Next()
			continue
		}
		typ, err := txntypes.PeekWriteType(iter.Value())
		if err != nil {
			_ = iter.Close()
			return fmt.Errorf("read write record %x: %w", k, err)
		}
		if typ == txntypes.WritePut || typ == txntypes.WriteDelete {
			decided = true
			key, _, err := keyspace.DecodeWriteKey(k)
			if err != nil {
				_ = iter.Close()
				return err
			}
			if !note(key, commitTS) {
				return iter.Close()
			}
		}
		ok = iter.Next()
	}
	if err := iter.Error(); err != nil {
		_ = iter.Close()
		return err
	}
	return iter.Close()
}

// versionNexts is how many of a decided key's older versions
// rangeChangesIn steps over one by one before it leaves the rest in one
// step: a Next is cheaper than the seek NextPrefix makes, as long as few
// versions remain.
const versionNexts = 3
