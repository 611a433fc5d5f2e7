package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/percdb/percdb/kv"
)

// ErrBufferedWrites is returned by Txn.Coprocessor when the transaction
// has buffered writes in the range: the store sees only committed data, so
// the caller evaluates the program itself over Txn.Iter, which merges
// them.
var ErrBufferedWrites = errors.New("the transaction has buffered writes in the range")

// CoprIter walks the outputs of a program evaluated next to the data over
// a range, one kv.CoprocessorRequest per region (or per page of one) in
// key order; see Txn.Coprocessor. It is not safe for concurrent use.
type CoprIter struct {
	t       *Txn
	program []byte
	lo, end []byte
	done    bool
	visited int64
	// it carries the lock and region handling of scans.
	it *scanIter
}

// Coprocessor returns an iterator over the outputs of program evaluated
// next to the data over [start, end) (an empty end is +infinity) at the
// transaction's snapshot. It fails with ErrBufferedWrites when the
// transaction has buffered writes in the range.
func (t *Txn) Coprocessor(ctx context.Context, start, end, program []byte) (*CoprIter, error) {
	return t.coprocessor(ctx, start, end, program, nil)
}

// coprocessor is Coprocessor for a program that uses what cmp compares
// of each value it reads.
func (t *Txn) coprocessor(ctx context.Context, start, end, program []byte, cmp ReadComparator) (*CoprIter, error) {
	what := func() string { return fmt.Sprintf("coprocessor [%q, %q)", start, end) }
	if err := t.usable(); err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	if len(t.buf.rangeSnapshot(start, end)) > 0 {
		return nil, fmt.Errorf("%s: %w", what(), ErrBufferedWrites)
	}
	ts, err := t.snapshotTS(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what(), err)
	}
	if t.pess != nil {
		// A pessimistic transaction validates its reads before it moves
		// its snapshot (readset.go): the whole range counts as read.
		t.reads.addRange(start, end, cmp, t.s.opts.MaxReadSetEntries)
	}
	c := &CoprIter{
		t: t, program: program, lo: bytes.Clone(start), end: end,
		it: &scanIter{s: t.s, version: ts, rr: newRegionRetrier(t.s.opts)},
	}
	c.done = len(end) > 0 && bytes.Compare(start, end) >= 0
	return c, nil
}

// Next returns the next output, or io.EOF after the last. A region that
// stops early (its answer is full) is asked again from where it stopped;
// an answer that says Done ends the walk. Locks met are resolved as a
// scan's are and the request is sent again; a stale route is refreshed.
func (c *CoprIter) Next(ctx context.Context) ([]byte, error) {
	for !c.done {
		if err := ctx.Err(); err != nil {
			return nil, c.fail(context.Cause(ctx))
		}
		s := c.t.s
		reg, err := s.client.LocateKey(ctx, c.lo)
		if err != nil {
			return nil, c.fail(fmt.Errorf("locate %q: %w", c.lo, err))
		}
		hi, atEdge := c.end, false
		if len(reg.End) > 0 && (len(hi) == 0 || bytes.Compare(reg.End, hi) < 0) {
			hi, atEdge = reg.End, true
		}
		resp, err := s.client.Coprocessor(ctx, &kv.CoprocessorRequest{
			Region: reg.Ctx(), Start: c.lo, End: hi, Version: c.it.version, Program: c.program, BypassLocks: c.it.bypass,
		})
		if err != nil {
			if err := c.it.handle(ctx, reg, err); err != nil {
				return nil, c.fail(err)
			}
			continue
		}
		c.it.rr = newRegionRetrier(s.opts)
		c.visited += resp.Visited
		switch {
		case resp.Done:
			c.done = true
		case resp.Resume != nil:
			c.lo = resp.Resume
		case atEdge:
			c.lo = reg.End
		default:
			c.done = true
		}
		return resp.Data, nil
	}
	return nil, io.EOF
}

// SetProgram makes the requests after this one evaluate program, which
// must be the walk's program with only its page size changed (a reader
// that may stop early asks for small pages first, copr.RunPaged): a
// program that computed something else would give the rest of the
// range other outputs.
func (c *CoprIter) SetProgram(program []byte) { c.program = program }

// Visited returns how many rows (visible pairs) the store has fed the
// program so far.
func (c *CoprIter) Visited() int64 { return c.visited }

func (c *CoprIter) fail(err error) error {
	c.done = true
	return fmt.Errorf("coprocessor [%q, %q): %w", c.lo, c.end, err)
}
