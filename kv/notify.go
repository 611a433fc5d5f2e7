package kv

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// Percolator's notifications (the paper's section 2.4): a commit of a key
// whose lock names notify columns sets one entry per column in the notify
// space, in the batch that writes the commit record. They are set at
// commit, not at prewrite: an observer that finds an entry starts its
// transaction after the commit it announces, so its snapshot holds the
// change. An entry set at prewrite could be found before the commit_ts is
// fetched; the observer's read would push the writer's min_commit_ts past
// it, the run would see nothing new, commit, and clear the entry, and the
// change would never be observed. Riding in the lock, the columns are
// written by whoever commits the key: the transaction, or a resolver
// rolling a dead client's secondary forward.

// notifyValueLen is the length of a notify entry's value: the commit_ts,
// 8 bytes big-endian.
const notifyValueLen = 8

// putNotify sets key's notify entries of columns to commitTS.
func (b *writeBatch) putNotify(key []byte, columns [][]byte, commitTS uint64) {
	for _, c := range columns {
		b.put(keyspace.NotifyKey(key, c), binary.BigEndian.AppendUint64(nil, commitTS))
	}
}

// decodeNotifyValue decodes a notify entry's value.
func decodeNotifyValue(k, v []byte) (uint64, error) {
	if len(v) != notifyValueLen {
		return 0, fmt.Errorf("notify entry %x: value of %d bytes, want %d", k, len(v), notifyValueLen)
	}
	return binary.BigEndian.Uint64(v), nil
}

// ScanNotify reads the notify entries of req's range (see Client).
func (s *Store) ScanNotify(ctx context.Context, req *ScanNotifyRequest) (*ScanNotifyResponse, error) {
	what := "scan notify entries"
	reg, err := s.regions.check(req.Region, 0)
	if err != nil {
		return nil, err
	}
	start := req.Start
	if bytes.Compare(start, reg.info.Start) < 0 {
		start = reg.info.Start
	}
	if !reg.info.Contains(start) {
		cur := cloneRegionInfo(reg.info)
		return nil, &RegionError{RegionID: req.Region.RegionID, Reason: fmt.Sprintf("%s: %q", reasonKeyNotInRange, start), Current: &cur}
	}
	end := req.End
	if len(end) == 0 || (len(reg.info.End) > 0 && bytes.Compare(end, reg.info.End) > 0) {
		end = reg.info.End
	}
	upper := keyspace.SpaceEnd(keyspace.Notify)
	if len(end) > 0 {
		upper = keyspace.NotifyBound(end)
	}
	if err := s.enter(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer s.exit()
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: keyspace.NotifyBound(start), UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := &ScanNotifyResponse{}
	var notifyKeys [][]byte // of out.Entries, for the scanners' claims
	read := 0               // entries read, those of other columns included
	var last []byte         // the key of the last entry read
	for iter.First(); iter.Valid() && (req.Limit <= 0 || read < req.Limit); iter.Next() {
		if err := ctx.Err(); err != nil {
			_ = iter.Close()
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		key, col, err := keyspace.DecodeNotifyKey(iter.Key())
		if err == nil {
			var ts uint64
			if ts, err = decodeNotifyValue(iter.Key(), iter.Value()); err == nil {
				read++
				last = key
				if req.Scanner != 0 && len(req.Columns) > 0 && !slices.ContainsFunc(req.Columns, func(c []byte) bool { return bytes.Equal(c, col) }) {
					continue
				}
				out.Entries = append(out.Entries, NotifyEntry{Key: key, Column: col, TS: ts})
				if req.Scanner != 0 {
					notifyKeys = append(notifyKeys, bytes.Clone(iter.Key()))
				}
				continue
			}
		}
		_ = iter.Close()
		return nil, wrapInternal(what, err)
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	next := bytes.Clone(end) // where the scanner reads next; nil: the end of the key space
	if req.Limit > 0 && read == req.Limit {
		// Cut after the last key read: that key's other columns wait for
		// the next pass (entries are hints, and scanners come round again).
		out.Resume = append(bytes.Clone(last), 0)
		next = out.Resume
	}
	if req.Scanner != 0 {
		keep, skipped, trailing := s.scanners.page(req.Scanner, start, next, notifyKeys, time.Now())
		out.Skipped, out.Trailing = skipped, trailing
		if skipped > 0 {
			kept := out.Entries[:0]
			for i, e := range out.Entries {
				if keep[i] {
					kept = append(kept, e)
				}
			}
			out.Entries = kept
		}
	}
	return out, nil
}

// ClearNotify deletes the entries that no newer commit has set again (see
// Client). It takes the latches of the entries' keys, as commits do, so
// that it cannot delete an entry a commit sets meanwhile.
func (s *Store) ClearNotify(ctx context.Context, rc RegionCtx, entries []NotifyEntry) error {
	what := fmt.Sprintf("clear %d notify entries", len(entries))
	keys := make([][]byte, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	notifyKeys := make([][]byte, len(entries))
	for i, e := range entries {
		notifyKeys[i] = keyspace.NotifyKey(e.Key, e.Column)
	}
	err := s.mutate(ctx, rc, what, keys, func(r *mvccReader, wb *writeBatch) error {
		for i, e := range entries {
			nk := notifyKeys[i]
			v, err := r.exact(nk)
			if err != nil || v == nil {
				if err != nil {
					return err
				}
				continue
			}
			ts, err := decodeNotifyValue(nk, v)
			if err != nil {
				return err
			}
			if ts <= e.TS {
				wb.del(nk)
			}
		}
		return nil
	})
	if err == nil {
		s.scanners.release(notifyKeys)
	}
	return err
}
