package txn

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/percdb/percdb/kv"
)

// Percolator's notifications and acknowledgements (the paper's section
// 2.4; package observe runs the observers). A transaction marks a key it
// writes as notified for an observer's column (Notify); the store sets the
// key's notify entry when the key commits (kv doc.go, notify.go). An
// observer's scanner finds the entry (Store.ScanNotify), runs the observer
// in a transaction of its own that acknowledges the notification
// (Txn.Acknowledge) and commits, then clears the entry
// (Store.ClearNotify), which the store does only if no newer commit has
// set it again.

// ackLen is the length of an acknowledgement's value: the start_ts of the
// observer run that wrote it, 8 bytes big-endian.
const ackLen = 8

// Notify marks key as notified for column: when the transaction commits,
// the commit of key sets key's notify entry for column to its commit_ts.
// A key the transaction does not write is locked (kv.OpLock) to carry the
// notification. Marks stay with the key through later writes of it in the
// transaction and are undone with the stage that made them.
func (t *Txn) Notify(key []byte, column string) error {
	if column == "" {
		return fmt.Errorf("notify %q: empty column", key)
	}
	e, ok := t.buf.get(key)
	if !ok {
		e = entry{op: bufLock}
	}
	if slices.Contains(e.notifyColumns(), column) {
		return nil
	}
	cols := append(slices.Clip(e.notifyColumns()), column)
	e.notify = &cols
	return t.write("notify", key, e)
}

// Acknowledge is an observer run's acknowledgement of the notification of
// notifiedTS (the entry's commit_ts) at ackKey, the key that holds the
// start_ts of the observer's last committed run for the notified key.
// When that run started at or after notifiedTS, it saw the change already
// and Acknowledge returns false: nothing is to be done. (At: a read at ts
// sees a commit at ts, and a one-phase commit's calculated commit_ts can
// be exactly the start_ts another store's transaction got next from the
// oracle.) Otherwise it writes
// this transaction's start_ts there and returns true. The acknowledgement
// is an ordinary write: two runs for the same notification both write it,
// so at most one of them commits (the other meets a write conflict or, if
// it starts after the first committed, reads its acknowledgement). The
// observer's snapshot sees every commit of the notified key below its
// start_ts, provided the run reads that key (package observe does).
func (t *Txn) Acknowledge(ctx context.Context, ackKey []byte, notifiedTS uint64) (bool, error) {
	v, found, err := t.Get(ctx, ackKey)
	if err != nil {
		return false, fmt.Errorf("acknowledge %q: %w", ackKey, err)
	}
	if found {
		if len(v) != ackLen {
			return false, fmt.Errorf("acknowledge %q: value of %d bytes, want %d", ackKey, len(v), ackLen)
		}
		if binary.BigEndian.Uint64(v) >= notifiedTS {
			return false, nil
		}
	}
	startTS, err := t.StartTS(ctx)
	if err != nil {
		return false, err
	}
	return true, t.Set(ackKey, binary.BigEndian.AppendUint64(nil, startTS))
}

// ScanNotify reads one page of notify entries of keys in [start, end)
// (end nil: to the end of the key space), from the region that holds
// start, at most limit of them. next is where the following page starts,
// nil when the range is done. A page cut by limit continues after the
// last key it holds, so that key's other columns wait for the next pass:
// entries are hints, and the scanners come round again.
func (s *Store) ScanNotify(ctx context.Context, start, end []byte, limit int) (entries []kv.NotifyEntry, next []byte, err error) {
	p, err := s.ScanNotifyPage(ctx, start, end, limit, 0, nil)
	return p.Entries, p.Next, err
}

// NotifyPage is a page of notify entries read by ScanNotifyPage.
type NotifyPage struct {
	Entries []kv.NotifyEntry
	// Next is where the following page starts; nil when the range is
	// done.
	Next []byte
	// Skipped and Trailing are kv.ScanNotifyResponse's: entries another
	// live scanner holds, and whether another scanner reads next inside
	// the page.
	Skipped  int
	Trailing bool
}

// ScanNotifyPage is ScanNotify for an observer's scanner: scanner (not 0)
// names it to the store, which leaves out the entries other live scanners
// hold and those of columns other than columns (the observers the scanner
// runs; none: all), and says whether the page trails another scanner
// (kv.ScanNotifyRequest.Scanner). limit counts the entries left out too.
func (s *Store) ScanNotifyPage(ctx context.Context, start, end []byte, limit int, scanner uint64, columns [][]byte) (NotifyPage, error) {
	if err := s.usable(); err != nil {
		return NotifyPage{}, err
	}
	rr := newRegionRetrier(s.opts)
	for {
		r, err := s.client.LocateKey(ctx, start)
		if err != nil {
			return NotifyPage{}, fmt.Errorf("scan notify entries: locate %q: %w", start, err)
		}
		pageEnd := end
		if len(r.End) > 0 && (len(end) == 0 || bytes.Compare(r.End, end) < 0) {
			pageEnd = r.End
		}
		resp, err := s.client.ScanNotify(ctx, &kv.ScanNotifyRequest{Region: r.Ctx(), Start: start, End: pageEnd, Limit: limit, Scanner: scanner, Columns: columns})
		var re *kv.RegionError
		if errors.As(err, &re) {
			s.client.InvalidateRegion(r.ID)
			if err := rr.retry(ctx, err); err != nil {
				return NotifyPage{}, err
			}
			continue
		}
		if err != nil {
			return NotifyPage{}, err
		}
		p := NotifyPage{Entries: resp.Entries, Skipped: resp.Skipped, Trailing: resp.Trailing}
		switch {
		case resp.Resume != nil:
			p.Next = resp.Resume
		case len(pageEnd) > 0 && (len(end) == 0 || bytes.Compare(pageEnd, end) < 0):
			p.Next = bytes.Clone(pageEnd)
		}
		return p, nil
	}
}

// ClearNotify clears notifications an observer has processed: each
// entry's notify entry is deleted unless a commit newer than entry.TS has
// set it again (kv.Client.ClearNotify).
func (s *Store) ClearNotify(ctx context.Context, entries []kv.NotifyEntry) error {
	if err := s.usable(); err != nil {
		return err
	}
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b kv.NotifyEntry) int { return bytes.Compare(a.Key, b.Key) })
	keys := make([][]byte, len(sorted))
	for i, e := range sorted {
		keys[i] = e.Key
	}
	spans, err := groupByRegion(ctx, s.client, keys, 0, len(keys))
	if err != nil {
		return err
	}
	return s.runSpans(ctx, keys, spans, func(ctx context.Context, r kv.RegionInfo, lo, hi int) error {
		return s.client.ClearNotify(ctx, r.Ctx(), sorted[lo:hi])
	})
}
