package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/percdb/percdb/kv"
)

// ErrBufferedWrites is returned by Txn.Coprocessor when the transaction
// has buffered writes in the range: the store sees only committed data, so
// the caller evaluates the program itself over Txn.Iter, which merges
// them.
var ErrBufferedWrites = errors.New("the transaction has buffered writes in the range")

// CoprIter walks the outputs of a program evaluated next to the data over
// a range, or a list of ranges, one kv.CoprocessorRequest per region (or
// per page of one) in key order, or in descending key order from the
// last region; see Txn.Coprocessor, Txn.CoprocessorRanges and
// Txn.CoprocessorReverse. It is not safe for concurrent use.
type CoprIter struct {
	t       *Txn
	program []byte
	// rest is what is left to read: ascending, disjoint ranges, each
	// with a non-empty End but the last (+infinity).
	rest    []kv.KeyRange
	done    bool
	visited int64
	// reverse walks the ranges in descending key order
	// (kv.CoprocessorRequest.Reverse), the regions from the last.
	reverse bool
	// it carries the lock and region handling of scans.
	it *scanIter
}

// Coprocessor returns an iterator over the outputs of program evaluated
// next to the data over [start, end) (an empty end is +infinity) at the
// transaction's snapshot. It fails with ErrBufferedWrites when the
// transaction has buffered writes in the range.
func (t *Txn) Coprocessor(ctx context.Context, start, end, program []byte) (*CoprIter, error) {
	return t.coprocessor(ctx, []kv.KeyRange{{Start: start, End: end}}, program, nil, false)
}

// CoprocessorRanges is Coprocessor over ranges, ascending and disjoint
// (each ends at or before the next starts; only the last may have an
// empty End), evaluated as one program over the rows of all of them in
// key order: the ranges that lie in one region go to it in one request
// (kv.CoprocessorRequest's Ranges), so that a batch of lookups costs a
// request per region, not per range. It fails with ErrBufferedWrites
// when the transaction has buffered writes in any of the ranges.
func (t *Txn) CoprocessorRanges(ctx context.Context, ranges []kv.KeyRange, program []byte) (*CoprIter, error) {
	return t.coprocessorRanges(ctx, ranges, program, nil, false)
}

// CoprocessorReverse is CoprocessorRanges in descending key order: the
// program is fed the rows of the last range first, each range read from
// its end down, the regions walked from the one holding the end of the
// last range backwards, so that a program that stops early (a LIMIT of
// ORDER BY ... DESC, MAX as a range's last row) reads the end of the
// ranges and no more. Locks and stale routes met on the way are dealt
// with as a forward walk deals with them.
func (t *Txn) CoprocessorReverse(ctx context.Context, ranges []kv.KeyRange, program []byte) (*CoprIter, error) {
	return t.coprocessorRanges(ctx, ranges, program, nil, true)
}

// coprocessorRanges is CoprocessorRanges (CoprocessorReverse when
// reverse) for a program that uses what cmp compares of each value it
// reads.
func (t *Txn) coprocessorRanges(ctx context.Context, ranges []kv.KeyRange, program []byte, cmp ReadComparator, reverse bool) (*CoprIter, error) {
	for i, kr := range ranges {
		if i > 0 && (len(ranges[i-1].End) == 0 || bytes.Compare(ranges[i-1].End, kr.Start) > 0) {
			return nil, fmt.Errorf("coprocessor of %d ranges: range %d starts before range %d ends", len(ranges), i, i-1)
		}
	}
	return t.coprocessor(ctx, ranges, program, cmp, reverse)
}

// coprocessor is coprocessorRanges once the ranges are checked.
func (t *Txn) coprocessor(ctx context.Context, ranges []kv.KeyRange, program []byte, cmp ReadComparator, reverse bool) (*CoprIter, error) {
	what := func() string {
		if len(ranges) == 1 {
			return fmt.Sprintf("coprocessor [%q, %q)", ranges[0].Start, ranges[0].End)
		}
		return fmt.Sprintf("coprocessor of %d ranges", len(ranges))
	}
	if err := t.usable(); err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	// Empty ranges read nothing; the others are kept, copied, as the
	// walk trims them.
	rest := make([]kv.KeyRange, 0, len(ranges))
	for _, kr := range ranges {
		if len(kr.End) > 0 && bytes.Compare(kr.Start, kr.End) >= 0 {
			continue
		}
		if len(t.buf.rangeSnapshot(kr.Start, kr.End)) > 0 {
			return nil, fmt.Errorf("%s: %w", what(), ErrBufferedWrites)
		}
		rest = append(rest, kv.KeyRange{Start: bytes.Clone(kr.Start), End: kr.End})
	}
	ts, err := t.snapshotTS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	if t.pess != nil {
		// A pessimistic transaction validates its reads before it moves
		// its snapshot (readset.go): the whole ranges count as read.
		for _, kr := range rest {
			t.reads.addRange(kr.Start, kr.End, cmp, t.s.opts.MaxReadSetEntries)
		}
	}
	c := &CoprIter{
		t: t, program: program, rest: rest, reverse: reverse,
		it: &scanIter{s: t.s, version: ts, rr: newRegionRetrier(t.s.opts), reverse: reverse},
	}
	if ts == kv.MaxTS {
		c.it.latest = t
	}
	c.done = len(rest) == 0
	return c, nil
}

// Next returns the next output, or io.EOF after the last. A region that
// stops early (its answer is full) is asked again from where it stopped;
// an answer that says Done ends the walk. Locks met are resolved as a
// scan's are and the request is sent again; a stale route is refreshed.
func (c *CoprIter) Next(ctx context.Context) ([]byte, error) {
	if c.reverse {
		return c.nextReverse(ctx)
	}
	for !c.done {
		if err := ctx.Err(); err != nil {
			return nil, c.fail(context.Cause(ctx))
		}
		s := c.t.s
		lo := c.rest[0].Start
		reg, err := s.client.LocateKey(ctx, lo)
		if err != nil {
			return nil, c.fail(fmt.Errorf("locate %q: %w", lo, err))
		}
		// sent is how many of rest lie in the region (the last perhaps
		// in part: cut at the region's end, atEdge).
		sent, atEdge := c.inRegion(reg)
		req := &kv.CoprocessorRequest{Region: reg.Ctx(), Version: c.it.version, Program: c.program, BypassLocks: c.it.bypass}
		if sent == 1 {
			req.Start, req.End = lo, c.rest[0].End
			if atEdge {
				req.End = reg.End
			}
		} else {
			req.Ranges = slices.Clone(c.rest[:sent])
			if atEdge {
				req.Ranges[sent-1].End = reg.End
			}
		}
		resp, err := s.client.Coprocessor(ctx, req)
		if retry, err := c.answered(ctx, reg, resp, err, !atEdge && sent == len(c.rest)); err != nil {
			return nil, err
		} else if retry {
			continue
		}
		switch {
		case resp.Done:
			c.done = true
		case resp.Resume != nil:
			c.resumeAt(resp.Resume)
		case atEdge:
			c.rest[sent-1].Start = reg.End
			c.rest = c.rest[sent-1:]
		default:
			c.rest = c.rest[sent:]
			c.done = len(c.rest) == 0
		}
		return resp.Data, nil
	}
	return nil, io.EOF
}

// answered deals with the answer (resp, or err) of one of the walk's
// requests to reg, which held all the walk has left when last: the
// walk's first request at kv.MaxTS is kept only if it read the whole
// walk (latest.go); a failed request is settled (locks resolved or
// waited for, a stale route refreshed). retry says the request is to be
// sent again; otherwise resp is the walk's.
func (c *CoprIter) answered(ctx context.Context, reg kv.RegionInfo, resp *kv.CoprocessorResponse, err error, last bool) (retry bool, _ error) {
	if c.it.latest != nil {
		whole := err == nil && (resp.Done || resp.Resume == nil && last)
		if ok, err := c.it.keepLatest(ctx, reg, err, !whole, false); err != nil {
			return false, c.fail(err)
		} else if !ok {
			return true, nil
		}
	}
	if err != nil {
		if err := c.it.handle(ctx, reg, err); err != nil {
			return false, c.fail(err)
		}
		return true, nil
	}
	c.it.rr = newRegionRetrier(c.t.s.opts)
	c.visited += resp.Visited
	return false, nil
}

// nextReverse is Next of a reverse walk: each request goes to the region
// holding the keys just below the end of the ranges left, with the ranges
// (or the parts of them) that lie in it.
func (c *CoprIter) nextReverse(ctx context.Context) ([]byte, error) {
	for !c.done {
		if err := ctx.Err(); err != nil {
			return nil, c.fail(context.Cause(ctx))
		}
		s := c.t.s
		reg, err := c.it.regionBefore(ctx, c.rest[len(c.rest)-1].End)
		if err != nil {
			return nil, c.fail(err)
		}
		// The ranges from first on end in the region (the first perhaps
		// starting before it: atEdge).
		first, atEdge := c.inRegionBelow(reg)
		req := &kv.CoprocessorRequest{Region: reg.Ctx(), Version: c.it.version, Program: c.program, BypassLocks: c.it.bypass, Reverse: true}
		if first == len(c.rest)-1 {
			req.Start, req.End = c.rest[first].Start, c.rest[first].End
			if atEdge {
				req.Start = reg.Start
			}
		} else {
			req.Ranges = slices.Clone(c.rest[first:])
			if atEdge {
				req.Ranges[0].Start = reg.Start
			}
		}
		resp, err := s.client.Coprocessor(ctx, req)
		if retry, err := c.answered(ctx, reg, resp, err, !atEdge && first == 0); err != nil {
			return nil, err
		} else if retry {
			continue
		}
		switch {
		case resp.Done:
			c.done = true
		case resp.Resume != nil:
			c.resumeBelow(resp.Resume)
		case atEdge:
			c.rest[first].End = reg.Start
			c.rest = c.rest[:first+1]
		default:
			c.rest = c.rest[:first]
			c.done = len(c.rest) == 0
		}
		return resp.Data, nil
	}
	return nil, io.EOF
}

// inRegionBelow returns the first of the ranges left that ends in reg
// (those after it do too: reg holds the keys just below the last one's
// end), and whether it starts before reg.
func (c *CoprIter) inRegionBelow(reg kv.RegionInfo) (first int, atEdge bool) {
	first = sort.Search(len(c.rest), func(i int) bool {
		end := c.rest[i].End
		return len(end) == 0 || bytes.Compare(end, reg.Start) > 0
	})
	return first, bytes.Compare(c.rest[first].Start, reg.Start) < 0
}

// resumeBelow drops what is at or after key from the ranges left: a
// reverse response stopped there (its last key fed).
func (c *CoprIter) resumeBelow(key []byte) {
	for len(c.rest) > 0 && bytes.Compare(c.rest[len(c.rest)-1].Start, key) >= 0 {
		c.rest = c.rest[:len(c.rest)-1]
	}
	if len(c.rest) == 0 {
		c.done = true
		return
	}
	if last := &c.rest[len(c.rest)-1]; len(last.End) == 0 || bytes.Compare(last.End, key) > 0 {
		last.End = bytes.Clone(key)
	}
}

// inRegion returns how many of the ranges left start in reg (at least
// one: the first starts there), and whether the last of them reaches
// past reg's end.
func (c *CoprIter) inRegion(reg kv.RegionInfo) (n int, atEdge bool) {
	if len(reg.End) == 0 {
		return len(c.rest), false
	}
	n = 1 + sort.Search(len(c.rest)-1, func(i int) bool { return bytes.Compare(c.rest[i+1].Start, reg.End) >= 0 })
	last := c.rest[n-1].End
	return n, len(last) == 0 || bytes.Compare(last, reg.End) > 0
}

// resumeAt drops what is before key from the ranges left: a response
// stopped there.
func (c *CoprIter) resumeAt(key []byte) {
	for len(c.rest) > 0 && len(c.rest[0].End) > 0 && bytes.Compare(c.rest[0].End, key) <= 0 {
		c.rest = c.rest[1:]
	}
	if len(c.rest) == 0 {
		c.done = true
		return
	}
	if bytes.Compare(c.rest[0].Start, key) < 0 {
		c.rest[0].Start = key
	}
}

// SetProgram makes the requests after this one evaluate program, which
// must be the walk's program with only its page size changed (a reader
// that may stop early asks for small pages first, copr.RunPaged), or
// its limit lowered to the rows still wanted: a program that computed
// something else would give the rest of the range other outputs.
func (c *CoprIter) SetProgram(program []byte) { c.program = program }

// Visited returns how many rows (visible pairs) the store has fed the
// program so far.
func (c *CoprIter) Visited() int64 { return c.visited }

func (c *CoprIter) fail(err error) error {
	c.done = true
	if len(c.rest) == 0 {
		return fmt.Errorf("coprocessor: %w", err)
	}
	return fmt.Errorf("coprocessor [%q, %q) of %d ranges left: %w", c.rest[0].Start, c.rest[len(c.rest)-1].End, len(c.rest), err)
}
