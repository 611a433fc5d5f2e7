package copr

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
)

// RunRanges is Run over ranges, ascending and disjoint (each ends at or
// before the next starts; only the last may be unbounded): p is
// evaluated as one program over the rows of all of them in key order,
// and the ranges of one region go to it in one coprocessor request
// (txn.Txn.CoprocessorRanges), where one Run per range cost a request,
// an encoding and a compilation of p each. The outputs are those Run
// gives for one range holding exactly the rows of ranges. When tx has
// buffered writes in one of the ranges, p is evaluated in process over
// tx's iterators of the ranges, one after the other, as Run does.
func RunRanges(ctx context.Context, tx *txn.Txn, t *executor.Table, ranges []executor.KeyRange, p *Program) (Outputs, error) {
	if len(ranges) == 1 {
		out, _, err := Run(ctx, tx, t, ranges[0], p)
		return out, err
	}
	c, rd, err := coprWalk(ctx, tx, t, ranges, p, false)
	if err == nil {
		return remote{c}, nil
	}
	if !errors.Is(err, txn.ErrBufferedWrites) {
		return nil, err
	}
	e, err := p.Start()
	if err != nil {
		return nil, err
	}
	it := &rangesIter{rd: rd, ranges: ranges, first: wantedRows(p)}
	if err := it.open(ctx); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return &localRun{e: e, it: it}, nil
}

// coprWalk starts p next to the data over ranges of t through tx, in
// key order or, when reverse, in descending key order
// (txn.ReadView.CoprocessorRanges, CoprocessorReverse), and returns the
// view of tx it reads through, by which a caller evaluates p in process
// when the error is txn.ErrBufferedWrites.
func coprWalk(ctx context.Context, tx *txn.Txn, t *executor.Table, ranges []executor.KeyRange, p *Program, reverse bool) (*txn.CoprIter, *txn.ReadView, error) {
	// The program reads only its Columns of each row: a pessimistic
	// transaction may move its snapshot past changes to the others.
	rd := tx.ReadingWith(executor.ColumnsComparator(t, p.Columns))
	enc, err := p.Encode()
	if err != nil {
		return nil, rd, fmt.Errorf("table %s: %w", t.Name, err)
	}
	krs := make([]kv.KeyRange, len(ranges))
	for i, r := range ranges {
		krs[i] = kv.KeyRange{Start: r.Start, End: r.End}
	}
	var c *txn.CoprIter
	if reverse {
		c, err = rd.CoprocessorReverse(ctx, krs, enc)
	} else {
		c, err = rd.CoprocessorRanges(ctx, krs, enc)
	}
	if err != nil {
		return nil, rd, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return c, rd, nil
}

// Disjoint reports whether ranges are ascending and disjoint, each
// ending at or before the next starts, as RunRanges takes them.
func Disjoint(ranges []executor.KeyRange) bool {
	for i := 1; i < len(ranges); i++ {
		if end := ranges[i-1].End; end == nil || bytes.Compare(end, ranges[i].Start) > 0 {
			return false
		}
	}
	return true
}

// rangesIter is a txn.Iterator over ranges, one transaction iterator
// after the other.
type rangesIter struct {
	rd     *txn.ReadView
	ranges []executor.KeyRange
	cur    txn.Iterator
	// reverse walks the ranges from the last, each backwards.
	reverse bool
	// first is the first page each range's iterator asks for
	// (txn.IterOptions.FirstPage; 0: a scan page).
	first int
}

// open moves to the first range, from the current one on, that has a
// pair.
func (r *rangesIter) open(ctx context.Context) error {
	for {
		if r.cur != nil {
			if r.cur.Valid() {
				return nil
			}
			r.cur.Close()
			r.cur = nil
		}
		if len(r.ranges) == 0 {
			return nil
		}
		if r.reverse {
			last := r.ranges[len(r.ranges)-1]
			it, err := r.rd.IterWith(ctx, last.Start, last.End, txn.IterOptions{Reverse: true, FirstPage: r.first})
			if err != nil {
				return err
			}
			r.cur, r.ranges = it, r.ranges[:len(r.ranges)-1]
			continue
		}
		it, err := r.rd.IterWith(ctx, r.ranges[0].Start, r.ranges[0].End, txn.IterOptions{FirstPage: r.first})
		if err != nil {
			return err
		}
		r.cur, r.ranges = it, r.ranges[1:]
	}
}

func (r *rangesIter) Valid() bool   { return r.cur != nil && r.cur.Valid() }
func (r *rangesIter) Key() []byte   { return r.cur.Key() }
func (r *rangesIter) Value() []byte { return r.cur.Value() }

// Next implements txn.Iterator.
func (r *rangesIter) Next(ctx context.Context) error {
	if err := r.cur.Next(ctx); err != nil {
		return err
	}
	return r.open(ctx)
}

// Close implements txn.Iterator.
func (r *rangesIter) Close() {
	if r.cur != nil {
		r.cur.Close()
		r.cur = nil
	}
}
