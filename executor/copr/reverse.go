package copr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// Reading backwards. A statement ordered by a key's columns, all
// descending, under a LIMIT (ORDER BY id DESC LIMIT 10, MAX(id) as the
// last entry of a range) wants the last rows of a range first. RunReverse
// evaluates the program next to the data over the ranges walked
// backwards (txn.Txn.CoprocessorReverse: the regions from the last, each
// request's range from its end down, kv.CoprocessorRequest.Reverse), so
// that a program with a Limit stops the walk in the store once it has its
// rows and only its outputs cross to the SQL node, as a forward Run's do.
// Without a Limit (the SQL node keeps the rows by conditions of its own
// and stops reading when it has enough) the walk goes a page of outputs
// at a time and stops when the caller stops asking for them. Where the
// transaction has buffered writes in the ranges, which the store cannot
// see, the program is evaluated in process over the transaction's
// descending iterators, which merge them.

// RunReverse evaluates p over the rows of t in ranges (ascending and
// disjoint, as RunRanges takes them) in descending key order: the last
// range first, each read backwards. The outputs are those RunRanges
// gives for the same rows fed in that order. p must have no OrderBy (a
// top-N reads the whole range: Run's).
func RunReverse(ctx context.Context, tx *txn.Txn, t *executor.Table, ranges []executor.KeyRange, p *Program) (Outputs, error) {
	if err := reversible(t, p); err != nil {
		return nil, err
	}
	if len(ranges) == 0 || !Disjoint(ranges) {
		return nil, fmt.Errorf("table %s: backward read of %d ranges that are not ascending and disjoint", t.Name, len(ranges))
	}
	c, rd, err := coprWalk(ctx, tx, t, ranges, p, true)
	if err == nil {
		if wantedRows(p) > 0 {
			return &limitedRemote{remote: remote{c}, p: *p, left: p.Limit}, nil
		}
		return remote{c}, nil
	}
	if !errors.Is(err, txn.ErrBufferedWrites) {
		return nil, err
	}
	e, err := p.Start()
	if err != nil {
		return nil, err
	}
	it := &rangesIter{rd: rd, ranges: ranges, reverse: true, first: wantedRows(p)}
	if err := it.open(ctx); err != nil {
		it.Close()
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return &localRun{e: e, it: it}, nil
}

// RunLookupReverse is RunLookupRanges in descending index order: the
// last range first, each read backwards, the rows of its entries read by
// primary key in batches as RunLookupRanges reads them. p must have no
// OrderBy, as for RunReverse.
func RunLookupReverse(ctx context.Context, tx *txn.Txn, t *executor.Table, ix *executor.Index, ranges []executor.KeyRange, p *Program) (Outputs, error) {
	if err := reversible(t, p); err != nil {
		return nil, err
	}
	return runLookup(ctx, tx, t, ix, ranges, p, LookupOptions{Reverse: true})
}

// reversible checks that p is one a backward read serves: its output
// depends on the order rows are met in, which a top-N's does not.
func reversible(t *executor.Table, p *Program) error {
	if len(p.OrderBy) > 0 {
		return fmt.Errorf("table %s: a backward read of a top-N (%d order keys)", t.Name, len(p.OrderBy))
	}
	return nil
}

// limitedRemote is the Outputs of a walk next to the data of a program
// whose Limit bounds its rows: each region evaluates the program afresh,
// so after each response the requests after it ask for the rows still
// wanted, and the walk ends when it has them all. A walk of many regions
// so outputs at most Limit rows, as the evaluation in process does.
type limitedRemote struct {
	remote
	p    Program // the program of the next request
	left int64   // the rows still wanted
	done bool
}

// Next implements Outputs.
func (l *limitedRemote) Next(ctx context.Context) ([]byte, error) {
	if l.done {
		return nil, io.EOF
	}
	data, err := l.remote.Next(ctx)
	if err != nil {
		return nil, err
	}
	n, err := countRows(data)
	if err != nil {
		return nil, err
	}
	if l.left -= n; l.left <= 0 {
		l.done = true
		return data, nil
	}
	if n > 0 {
		l.p.Limit = l.left
		enc, err := l.p.Encode()
		if err != nil {
			return nil, err
		}
		l.c.SetProgram(enc)
	}
	return data, nil
}

// countRows returns how many rows an output of rows holds (DecodeRows's
// layout: each a uvarint length and a row value).
func countRows(data []byte) (int64, error) {
	n := int64(0)
	for len(data) > 0 {
		l, k := binary.Uvarint(data)
		if k <= 0 || l > uint64(len(data)-k) {
			return n, fmt.Errorf("coprocessor output: bad row length: %w", tablecodec.ErrCorrupt)
		}
		data = data[k+int(l):]
		n++
	}
	return n, nil
}
