package copr

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/big"
	"sync"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/txn"
)

// Parallel evaluation. Locally a table is one region, so a program over a
// whole table would use one core. A range can be cut into sub-ranges
// (Split) whose outputs, concatenated in key order, are the range's: each
// sub-range is evaluated by a goroutine of its own (RunParallel) while the
// caller reads the outputs in order, so rows still come in key order and
// groups are met in the order one walk meets them. Each goroutine runs at
// most a few outputs ahead of the reader, which bounds the memory held.

// parallelAhead is how many outputs a sub-range's goroutine may hold
// before the reader takes them.
const parallelAhead = 4

// Split cuts r into at most n sub-ranges of about equal key spans between
// the first and the last key tx sees in r (a table's keys spread over its
// handles: even spans are about even row counts for integer handles). It
// returns r alone when n < 2 or r holds fewer than two keys.
func Split(ctx context.Context, tx *txn.Txn, r executor.KeyRange, n int) ([]executor.KeyRange, error) {
	whole := []executor.KeyRange{r}
	if n < 2 {
		return whole, nil
	}
	edge := func(reverse bool) ([]byte, error) {
		var it txn.Iterator
		var err error
		if reverse {
			it, err = tx.IterReverse(ctx, r.Start, r.End)
		} else {
			it, err = tx.Iter(ctx, r.Start, r.End)
		}
		if err != nil {
			return nil, err
		}
		defer it.Close()
		if !it.Valid() {
			return nil, nil
		}
		return bytes.Clone(it.Key()), nil
	}
	first, err := edge(false)
	if err != nil || first == nil {
		return whole, err
	}
	last, err := edge(true)
	if err != nil || bytes.Compare(first, last) >= 0 {
		return whole, err
	}
	out := make([]executor.KeyRange, 0, n)
	lo := r.Start
	for _, b := range splitKeys(first, last, n) {
		out = append(out, executor.KeyRange{Start: lo, End: b})
		lo = b
	}
	return append(out, executor.KeyRange{Start: lo, End: r.End}), nil
}

// splitKeys returns up to n-1 increasing keys in (first, last], cutting
// the span between them into n about equal parts: the keys are read as
// big-endian numbers over the bytes after their common prefix (8 of them
// at most: enough to spread a table's handles).
func splitKeys(first, last []byte, n int) [][]byte {
	p := 0
	for p < len(first) && p < len(last) && first[p] == last[p] {
		p++
	}
	const width = 8
	num := func(k []byte) *big.Int {
		b := make([]byte, width)
		copy(b, k[min(p, len(k)):])
		return new(big.Int).SetBytes(b)
	}
	f, l := num(first), num(last)
	span := new(big.Int).Sub(l, f)
	var keys [][]byte
	for i := 1; i < n; i++ {
		v := new(big.Int).Mul(span, big.NewInt(int64(i)))
		v.Div(v, big.NewInt(int64(n)))
		v.Add(v, f)
		b := v.FillBytes(make([]byte, width))
		k := append(append(make([]byte, 0, p+width), last[:p]...), b...)
		if bytes.Compare(k, first) <= 0 || bytes.Compare(k, last) > 0 || len(keys) > 0 && bytes.Compare(k, keys[len(keys)-1]) <= 0 {
			continue
		}
		keys = append(keys, k)
	}
	return keys
}

// RunParallel starts p over each of ranges (consecutive, in key order) at
// tx's snapshot and returns their outputs in that order, each range
// evaluated by a goroutine of its own. A range with buffered writes of
// tx is evaluated in process by the reader (Run). The program must not
// stop early (a Limit without OrderBy): the ranges after the one that
// stopped would be read for nothing.
func RunParallel(ctx context.Context, tx *txn.Txn, t *executor.Table, ranges []executor.KeyRange, p *Program) (Outputs, error) {
	if p.Limit > 0 && len(p.OrderBy) == 0 {
		return nil, fmt.Errorf("table %s: a limit is not evaluated in parallel", t.Name)
	}
	wctx, cancel := context.WithCancel(ctx)
	par := &parallelRun{cancel: cancel, parts: make([]*part, len(ranges))}
	for i, r := range ranges {
		// Started here, one by one: starting reads the transaction.
		out, local, err := Run(ctx, tx, t, r, p)
		if err != nil {
			par.Close()
			return nil, err
		}
		pt := &part{out: out}
		par.parts[i] = pt
		if local {
			continue // the reader walks it (the transaction's iterator)
		}
		pt.ch = make(chan []byte, parallelAhead)
		par.wg.Add(1)
		go pt.run(wctx, &par.wg)
	}
	return par, nil
}

// part is one sub-range's outputs.
type part struct {
	out Outputs
	// ch carries the outputs of a goroutine's walk (nil: the reader
	// walks out itself); err is the walk's error, set before ch closes.
	ch  chan []byte
	err error
}

func (pt *part) run(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	defer close(pt.ch)
	for {
		data, err := pt.out.Next(ctx)
		if err == io.EOF {
			return
		}
		if err != nil {
			pt.err = err
			return
		}
		select {
		case pt.ch <- data:
		case <-ctx.Done():
			pt.err = context.Cause(ctx)
			return
		}
	}
}

// parallelRun is the Outputs of RunParallel.
type parallelRun struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	parts  []*part
	cur    int
	closed bool
}

// Next implements Outputs.
func (r *parallelRun) Next(ctx context.Context) ([]byte, error) {
	for r.cur < len(r.parts) {
		pt := r.parts[r.cur]
		if pt.ch == nil {
			data, err := pt.out.Next(ctx)
			if err != io.EOF {
				return data, err
			}
			r.cur++
			continue
		}
		select {
		case data, ok := <-pt.ch:
			if ok {
				return data, nil
			}
			if pt.err != nil {
				return nil, pt.err
			}
			r.cur++
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	return nil, io.EOF
}

// Examined implements Outputs: the rows fed in every sub-range. It ends
// the walks (their counters are theirs while they run): call it once
// the outputs are read.
func (r *parallelRun) Examined() int64 {
	r.stop()
	var n int64
	for _, pt := range r.parts {
		if pt != nil {
			n += pt.out.Examined()
		}
	}
	return n
}

// Close implements Outputs: it stops the walks and waits for them.
func (r *parallelRun) Close() {
	r.stop()
	for _, pt := range r.parts {
		if pt != nil {
			pt.out.Close()
		}
	}
}

// stop cancels the walks and waits for their goroutines, once.
func (r *parallelRun) stop() {
	if r.closed {
		return
	}
	r.closed = true
	r.cancel()
	r.wg.Wait()
}
