package kv

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/percdb/percdb/kv/internal/keyspace"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// ScanChanges reads the committed changes of req's range (see
// ScanChangesRequest): the Put and Delete records with commit_ts in
// (FromTS, ToTS], walking the write space key by key. Like a read at
// ToTS it raises the region's max_read_ts to ToTS and waits for a
// one-phase commit in flight, so that nothing commits at or below ToTS
// in the range afterwards, and it fails with *KeyIsLockedError on the
// locks that could still commit at or below ToTS in the part of the range
// it covered (those of req.BypassLocks are skipped). A FromTS below the GC
// safe point is refused (*GCTooOldError): the changes since it may have
// been collected.
func (s *Store) ScanChanges(ctx context.Context, req *ScanChangesRequest) ([]Change, error) {
	what := func() string {
		return fmt.Sprintf("scan changes (%d, %d] of [%q, %q)", req.FromTS, req.ToTS, req.Start, req.End)
	}
	if req.ToTS == 0 || req.ToTS == MaxTS || req.FromTS >= req.ToTS {
		return nil, fmt.Errorf("%s: bad timestamps", what())
	}
	end, err := s.readRange(req.Region, req.Start, req.End, req.ToTS, what)
	if err != nil {
		return nil, err
	}
	if err := s.memLocks.waitRange(ctx, req.Start, end); err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	defer s.exit()
	snap := s.db.NewSnapshot()
	defer snap.Close()
	r := newMVCCReader(snap)
	defer r.close()
	changes, last, err := r.changes(ctx, req, end)
	if err != nil {
		return nil, wrapInternal(what(), err)
	}
	hi := end
	if last != nil {
		hi = append(bytes.Clone(last), 0)
	}
	var locked []LockInfo
	err = r.locks(req.Start, hi, false, func(key []byte, l *txntypes.Lock) bool {
		if blocksRead(l, req.ToTS) && !slices.Contains(req.BypassLocks, l.StartTS) {
			locked = append(locked, lockInfo(key, l))
		}
		return len(locked) < MaxLocksPerResponse
	})
	if err == nil {
		err = lockedError(locked)
	}
	if err == nil {
		// Checked after the walk, as reads are (checkReadTS): a change
		// in (FromTS, safe point] may have been collected, and the value
		// before the first change too, so a scan from below the safe
		// point must not answer.
		err = s.checkReadTS(req.FromTS)
	}
	if err != nil {
		return nil, err
	}
	return changes, nil
}

// changes walks the write records of [req.Start, end) (end nil:
// unbounded) and returns the changes in (req.FromTS, req.ToTS], and the
// last key walked when req.Limit keys with changes cut the walk short.
func (r *mvccReader) changes(ctx context.Context, req *ScanChangesRequest, end []byte) ([]Change, []byte, error) {
	iter, err := r.writeIter()
	if err != nil {
		return nil, nil, err
	}
	upper := keyspace.SpaceEnd(keyspace.Write)
	if end != nil {
		upper = keyspace.WritePrefix(end)
	}
	var out []Change
	keys := 0
	// versions are the current key's records, newest first.
	type version struct {
		ts uint64
		w  *txntypes.Write
	}
	var key []byte
	var versions []version
	flush := func() error {
		var mine []Change
		for i, v := range versions {
			if v.ts <= req.FromTS {
				break
			}
			if v.ts > req.ToTS || (v.w.Type != txntypes.WritePut && v.w.Type != txntypes.WriteDelete) {
				continue
			}
			c := Change{Key: key, CommitTS: v.ts}
			if v.w.Type == txntypes.WritePut {
				if c.Value, err = r.writeValue(key, v.w); err != nil {
					return err
				}
			} else {
				// The value deleted: the next older Put or Delete.
				for _, older := range versions[i+1:] {
					if older.w.Type == txntypes.WritePut {
						if c.Prev, err = r.writeValue(key, older.w); err != nil {
							return err
						}
					}
					if older.w.Type == txntypes.WritePut || older.w.Type == txntypes.WriteDelete {
						break
					}
				}
			}
			mine = append(mine, c)
		}
		if len(mine) > 0 {
			keys++
		}
		slices.Reverse(mine)
		out = append(out, mine...)
		return nil
	}
	steps := 0
	for ok := iter.SeekGE(keyspace.WritePrefix(req.Start)); ok; ok = iter.Next() {
		if steps++; steps%walkCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		k := iter.Key()
		if bytes.Compare(k, upper) >= 0 {
			break
		}
		kk, ts, err := keyspace.DecodeWriteKey(k)
		if err != nil {
			return nil, nil, err
		}
		if !bytes.Equal(kk, key) {
			if key != nil {
				if err := flush(); err != nil {
					return nil, nil, err
				}
				if req.Limit > 0 && keys >= req.Limit {
					return out, key, nil
				}
			}
			key, versions = kk, versions[:0]
		}
		w, err := txntypes.DecodeWrite(iter.Value())
		if err != nil {
			return nil, nil, fmt.Errorf("write record of %q at %d: %w", kk, ts, err)
		}
		versions = append(versions, version{ts: ts, w: w})
	}
	if err := iter.Error(); err != nil {
		return nil, nil, err
	}
	if key != nil {
		if err := flush(); err != nil {
			return nil, nil, err
		}
	}
	return out, nil, nil
}
