package kv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// The coprocessor evaluates a program next to the data: a request names a
// key range of one region, a snapshot and a program (a filter, a
// projection, partial aggregates, a top-N or a limit, serialized by the
// layer that knows rows); the store walks the range's visible pairs, feeds
// them to the program and answers with what the program produced, so that
// only results cross to the SQL node. The store knows nothing of rows: it
// is given a Coprocessor at construction (Options.Coprocessor), which
// compiles the request's program bytes. Everything in a request and a
// response is plain bytes and integers, so the command goes over the wire
// as the others do.

// CoprocessorRequest evaluates Program over the visible pairs of [Start,
// End) at Version in one region, in ascending key order; or, when Ranges
// is not empty, over the visible pairs of each of Ranges in turn, as one
// evaluation (TiKV's coprocessor takes a list of ranges alike). Locks are
// those of a Scan at Version: the locks that block the read in the part
// of the ranges the walk covered fail the request with a
// *KeyIsLockedError (then nothing is returned and the client resolves
// them and sends the request again); locks of BypassLocks are skipped.
type CoprocessorRequest struct {
	Region  RegionCtx
	Start   []byte
	End     []byte // empty: to the region's end
	Version uint64
	// Program is the program in the encoding of the store's Coprocessor;
	// opaque to the store.
	Program     []byte
	BypassLocks []uint64
	// Ranges, when not empty, are the request's ranges in place of
	// [Start, End), which must then be empty: ascending and disjoint
	// (each ends at or before the next one starts), each with a
	// non-empty End but the last (empty: to the region's end), all in
	// the region. A batch of lookups (the ranges of a batched join's
	// outer rows, an IN list on a key prefix, an OR of ranges) is so
	// one request to a region, its program compiled once, rather than
	// one request per range. A point is the range [key, key+"\x00").
	Ranges []KeyRange
	// Reverse feeds the program the pairs in descending key order: the
	// last range first, each walked from its end down (ORDER BY ... DESC
	// under a LIMIT, MAX as the last row of a range), so that a program
	// that stops early reads the end of a range, not all of it. A
	// response that stops early then has a Resume below which the rest
	// lies: [Start, Resume) was not evaluated.
	Reverse bool
}

// CoprocessorResponse is a program's output over a prefix of the
// request's range.
type CoprocessorResponse struct {
	// Data is the program's output, in its Coprocessor's encoding.
	Data []byte
	// Resume, when not nil, is where the walk stopped: the program's
	// output filled a response, or it needed no more input (Done). The
	// rest of the range, [Resume, End), was not evaluated (of Ranges:
	// the parts of them at or after Resume); of a Reverse request it is
	// the last key fed, and [Start, Resume) was not evaluated (of
	// Ranges: the parts of them before Resume).
	Resume []byte
	// Done says the program needs no more input (a limit was reached):
	// the client need not send the rest of the range.
	Done bool
	// Visited is the number of visible pairs fed to the program.
	Visited int64
}

// Coprocessor compiles programs for a store. It is given to the store at
// construction (package executor/copr implements it over table rows).
type Coprocessor interface {
	// Compile returns a fresh evaluation of program; an error means the
	// program is malformed or unsupported.
	Compile(program []byte) (CoprocessorProgram, error)
}

// CoprocessorProgram is one evaluation of a program over a stream of
// pairs. It is used by one request at a time.
type CoprocessorProgram interface {
	// Feed takes the next visible pair; key and value are valid only
	// during the call. full says the output is as large as one response
	// should carry, done that the program needs no more input; either
	// stops the walk after this pair.
	Feed(key, value []byte) (full, done bool, err error)
	// Output returns the program's output so far.
	Output() ([]byte, error)
}

// KeyOnlyProgram is a CoprocessorProgram that may say it reads no value
// (a count of rows, or of index entries): the store then walks keys only
// and feeds it nil values, which spares reading values kept in the data
// space (past the short-value limit) and copying the others.
type KeyOnlyProgram interface {
	CoprocessorProgram
	// KeysOnly reports whether the program never looks at a value.
	KeysOnly() bool
}

// ErrNoCoprocessor is returned by Coprocessor on a store opened without
// one.
var ErrNoCoprocessor = errors.New("the store has no coprocessor")

// Coprocessor evaluates req.Program over its range or ranges (see
// CoprocessorRequest). A range reaching past the region is a
// *RegionError, as for Scan. The walk stops early, with ctx's error, when
// ctx ends.
func (s *Store) Coprocessor(ctx context.Context, req *CoprocessorRequest) (*CoprocessorResponse, error) {
	what := func() string {
		if len(req.Ranges) > 0 {
			return fmt.Sprintf("coprocessor of %d ranges [%q, %q)", len(req.Ranges), req.Ranges[0].Start, req.Ranges[len(req.Ranges)-1].End)
		}
		return fmt.Sprintf("coprocessor [%q, %q)", req.Start, req.End)
	}
	if s.copr == nil {
		return nil, fmt.Errorf("%s: %w", what(), ErrNoCoprocessor)
	}
	ranges, err := s.coprRanges(req, what)
	if err != nil {
		return nil, err
	}
	var wait []KeyRange
	if len(req.Ranges) > 0 {
		wait = ranges
	}
	return rangeRead(ctx, s, ranges[0].Start, ranges[len(ranges)-1].End, wait, req.Version, false, what,
		func() (*CoprocessorResponse, bool, error) { return s.coprUnlocked(ctx, req, ranges) },
		func(r *mvccReader) (*CoprocessorResponse, error) { return s.coprLocked(ctx, r, req, ranges) })
}

// coprRanges returns the ranges req reads, checked: in the region, and
// for Ranges ascending and disjoint. The last range's End is nil when it
// reaches the end of the key space.
func (s *Store) coprRanges(req *CoprocessorRequest, what func() string) ([]KeyRange, error) {
	if len(req.Ranges) == 0 {
		end, err := s.readRange(req.Region, req.Start, req.End, req.Version, what)
		if err != nil {
			return nil, err
		}
		return []KeyRange{{Start: req.Start, End: end}}, nil
	}
	if len(req.Start) > 0 || len(req.End) > 0 {
		return nil, fmt.Errorf("%s: both Ranges and [Start, End) given", what())
	}
	return s.checkRanges(req.Region, req.Ranges, req.Version, what)
}

// coprRun is one evaluation of a request's program over a walk.
type coprRun struct {
	prog CoprocessorProgram
	resp CoprocessorResponse
	// last is the last key fed when the walk stopped early, stopped the
	// position in the ranges of the range it is in.
	last    []byte
	stopped int
}

// run walks ranges with r, in turn, feeding the program.
func (s *Store) coprRun(ctx context.Context, r *mvccReader, req *CoprocessorRequest, ranges []KeyRange) (*coprRun, error) {
	prog, err := s.copr.Compile(req.Program)
	if err != nil {
		return nil, fmt.Errorf("compile program: %w", err)
	}
	c := &coprRun{prog: prog}
	keyOnly := false
	if ko, ok := prog.(KeyOnlyProgram); ok {
		keyOnly = ko.KeysOnly()
	}
	feed := func(key, value []byte) (bool, error) {
		c.resp.Visited++
		full, done, err := prog.Feed(key, value)
		if err != nil {
			return true, err
		}
		if full || done {
			c.last = append([]byte(nil), key...)
			c.resp.Done = done
			return true, nil
		}
		return false, nil
	}
	for j := range ranges {
		i := j
		if req.Reverse {
			i = len(ranges) - 1 - j
		}
		kr := ranges[i]
		if len(kr.End) > 0 && bytes.Compare(kr.Start, kr.End) >= 0 {
			continue
		}
		if err := r.visit(ctx, kr.Start, kr.End, req.Version, req.Reverse, keyOnly, feed); err != nil {
			return nil, err
		}
		if c.last != nil {
			c.stopped = i
			break
		}
	}
	if c.resp.Data, err = prog.Output(); err != nil {
		return nil, err
	}
	switch {
	case c.last != nil && req.Reverse:
		c.resp.Resume = c.last // the rest is below last
	case c.last != nil:
		c.resp.Resume = append(c.last, 0) // just past last
	}
	return c, nil
}

// coprUnlocked is Coprocessor without looking at the lock space, as
// scanUnlocked is Scan: done is false when the lock set was not empty or
// changed during the walk, and then the caller evaluates again with locks.
func (s *Store) coprUnlocked(ctx context.Context, req *CoprocessorRequest, ranges []KeyRange) (*CoprocessorResponse, bool, error) {
	return unlockedRead(s, false, func(r *mvccReader) (*CoprocessorResponse, error) {
		c, err := s.coprRun(ctx, r, req, ranges)
		if err != nil {
			return nil, err
		}
		return &c.resp, nil
	})
}

// coprLocked is Coprocessor on a snapshot: the walk, then the locks of the
// part of the ranges it covered, as scan does.
func (s *Store) coprLocked(ctx context.Context, r *mvccReader, req *CoprocessorRequest, ranges []KeyRange) (*CoprocessorResponse, error) {
	c, err := s.coprRun(ctx, r, req, ranges)
	if err != nil {
		return nil, err
	}
	// The locks of the part of the ranges the walk covered: going up,
	// the ranges up to the one it stopped in, that one up to Resume;
	// going down, those from it, that one from Resume (its last key).
	first, last := 0, len(ranges)-1
	if c.resp.Resume != nil && req.Reverse {
		first = c.stopped
	} else if c.resp.Resume != nil {
		last = c.stopped
	}
	for i := first; i <= last; i++ {
		lo, hi := ranges[i].Start, ranges[i].End
		if i == c.stopped && c.resp.Resume != nil {
			if req.Reverse {
				lo = c.resp.Resume
			} else {
				hi = c.resp.Resume
			}
		}
		if len(hi) > 0 && bytes.Compare(lo, hi) >= 0 {
			continue
		}
		if err := r.blockingLocks(lo, hi, req.Version, req.BypassLocks, req.Reverse); err != nil {
			return nil, err
		}
	}
	return &c.resp, nil
}
