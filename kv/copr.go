package kv

import (
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
// End) at Version in one region, in ascending key order. Locks are those
// of a Scan at Version: the locks that block the read in the part of the
// range the walk covered fail the request with a *KeyIsLockedError (then
// nothing is returned and the client resolves them and sends the request
// again); locks of BypassLocks are skipped.
type CoprocessorRequest struct {
	Region  RegionCtx
	Start   []byte
	End     []byte // empty: to the region's end
	Version uint64
	// Program is the program in the encoding of the store's Coprocessor;
	// opaque to the store.
	Program     []byte
	BypassLocks []uint64
}

// CoprocessorResponse is a program's output over a prefix of the
// request's range.
type CoprocessorResponse struct {
	// Data is the program's output, in its Coprocessor's encoding.
	Data []byte
	// Resume, when not nil, is where the walk stopped: the program's
	// output filled a response, or it needed no more input (Done). The
	// rest of the range, [Resume, End), was not evaluated.
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

// Coprocessor evaluates req.Program over its range (see
// CoprocessorRequest). A range reaching past the region is a
// *RegionError, as for Scan. The walk stops early, with ctx's error, when
// ctx ends.
func (s *Store) Coprocessor(ctx context.Context, req *CoprocessorRequest) (*CoprocessorResponse, error) {
	what := func() string { return fmt.Sprintf("coprocessor [%q, %q)", req.Start, req.End) }
	if s.copr == nil {
		return nil, fmt.Errorf("%s: %w", what(), ErrNoCoprocessor)
	}
	end, err := s.readRange(req.Region, req.Start, req.End, req.Version, what)
	if err != nil {
		return nil, err
	}
	return rangeRead(ctx, s, req.Start, end, req.Version, false, what,
		func() (*CoprocessorResponse, bool, error) { return s.coprUnlocked(ctx, req, end) },
		func(r *mvccReader) (*CoprocessorResponse, error) { return s.coprLocked(ctx, r, req, end) })
}

// coprRun is one evaluation of a request's program over a walk.
type coprRun struct {
	prog CoprocessorProgram
	resp CoprocessorResponse
	// last is the last key fed when the walk stopped early.
	last []byte
}

// run walks [req.Start, end) with r, feeding the program.
func (s *Store) coprRun(ctx context.Context, r *mvccReader, req *CoprocessorRequest, end []byte) (*coprRun, error) {
	prog, err := s.copr.Compile(req.Program)
	if err != nil {
		return nil, fmt.Errorf("compile program: %w", err)
	}
	c := &coprRun{prog: prog}
	keyOnly := false
	if ko, ok := prog.(KeyOnlyProgram); ok {
		keyOnly = ko.KeysOnly()
	}
	err = r.visit(ctx, req.Start, end, req.Version, false, keyOnly, func(key, value []byte) (bool, error) {
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
	})
	if err != nil {
		return nil, err
	}
	if c.resp.Data, err = prog.Output(); err != nil {
		return nil, err
	}
	if c.last != nil {
		c.resp.Resume = append(c.last, 0) // just past last
	}
	return c, nil
}

// coprUnlocked is Coprocessor without looking at the lock space, as
// scanUnlocked is Scan: done is false when the lock set was not empty or
// changed during the walk, and then the caller evaluates again with locks.
func (s *Store) coprUnlocked(ctx context.Context, req *CoprocessorRequest, end []byte) (*CoprocessorResponse, bool, error) {
	return unlockedRead(s, false, func(r *mvccReader) (*CoprocessorResponse, error) {
		c, err := s.coprRun(ctx, r, req, end)
		if err != nil {
			return nil, err
		}
		return &c.resp, nil
	})
}

// coprLocked is Coprocessor on a snapshot: the walk, then the locks of the
// part of the range it covered, as scan does.
func (s *Store) coprLocked(ctx context.Context, r *mvccReader, req *CoprocessorRequest, end []byte) (*CoprocessorResponse, error) {
	c, err := s.coprRun(ctx, r, req, end)
	if err != nil {
		return nil, err
	}
	hi := end
	if c.resp.Resume != nil {
		hi = c.resp.Resume
	}
	if err := r.blockingLocks(req.Start, hi, req.Version, req.BypassLocks, false); err != nil {
		return nil, err
	}
	return &c.resp, nil
}
