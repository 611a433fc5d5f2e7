package copr

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
)

// Outputs walks the outputs of a program over a table range (see Run).
type Outputs interface {
	// Next returns the next output, or io.EOF after the last.
	Next(ctx context.Context) ([]byte, error)
	// Examined returns how many rows the program was fed so far.
	Examined() int64
	// Close releases the walk.
	Close()
}

// Run starts p over the rows of t in r at tx's snapshot, evaluated next
// to the data (txn.Txn.Coprocessor), its outputs in key order. When tx
// has buffered writes in r, which the store cannot see, p is evaluated in
// process over tx's iterator, which merges them: the outputs are the
// same. local reports which it was.
func Run(ctx context.Context, tx *txn.Txn, t *executor.Table, r executor.KeyRange, p *Program) (out Outputs, local bool, err error) {
	enc, err := p.Encode()
	if err != nil {
		return nil, false, fmt.Errorf("table %s: %w", t.Name, err)
	}
	// The program reads only its Columns of each row: a pessimistic
	// transaction may move its snapshot past changes to the others.
	rd := tx.ReadingWith(executor.ColumnsComparator(t, p.Columns))
	c, err := rd.Coprocessor(ctx, r.Start, r.End, enc)
	if err == nil {
		return remote{c}, false, nil
	}
	if !errors.Is(err, txn.ErrBufferedWrites) {
		return nil, false, fmt.Errorf("table %s: %w", t.Name, err)
	}
	e, err := p.Start()
	if err != nil {
		return nil, false, err
	}
	it, err := rd.Iter(ctx, r.Start, r.End)
	if err != nil {
		return nil, false, fmt.Errorf("table %s: %w", t.Name, err)
	}
	return &localRun{e: e, it: it}, true, nil
}

// RunPairs is Run over pairs already read (a locking range read's,
// txn.Txn.LockRange), rows of one table in key order: p is evaluated in
// process, its outputs those Run gives over a range holding exactly
// these rows.
func RunPairs(pairs []kv.KvPair, p *Program) (Outputs, error) {
	e, err := p.Start()
	if err != nil {
		return nil, err
	}
	return &localRun{e: e, it: executor.NewPairsIterator(pairs)}, nil
}

// remote is Outputs from the store.
type remote struct{ c *txn.CoprIter }

func (r remote) Next(ctx context.Context) ([]byte, error) { return r.c.Next(ctx) }
func (r remote) Examined() int64                          { return r.c.Visited() }
func (r remote) Close()                                   {}

// localRun is Outputs evaluated in process over a transaction's iterator.
type localRun struct {
	e    *Evaluation
	it   txn.Iterator
	done bool
	fed  int64
}

// Next implements Outputs: it feeds rows until the evaluation's output is
// full, done, or the range ends.
func (l *localRun) Next(ctx context.Context) ([]byte, error) {
	if l.done {
		return nil, io.EOF
	}
	for l.it.Valid() {
		full, done, err := l.e.Feed(l.it.Key(), l.it.Value())
		l.fed++
		if err == nil && !done {
			// Not past the last row wanted: moving on may read a
			// page or a batch of rows (a lookup's) for nothing.
			err = l.it.Next(ctx)
		}
		if err != nil {
			l.done = true
			return nil, err
		}
		if done {
			l.done = true
		}
		if full || done {
			return l.e.Output()
		}
	}
	l.done = true
	return l.e.Output()
}

func (l *localRun) Examined() int64 { return l.fed }
func (l *localRun) Close()          { l.it.Close() }

// RunPaged is Run for a reader that may stop before the end of r (a join
// under a LIMIT reads its outer side until it has the rows it wants):
// the first response carries at most first rows and each one after it
// twice as many as the one before, up to p's page size, so that a reader
// that stops early has had at most about twice the rows it used read for
// it, where whole pages of a selective filter would read far ahead (a
// page of 4,096 rows that pass 1 in 100 reads 409,600). p must output
// rows (no aggregation, top-N, limit or sample), whose pages differ only
// in where they end; otherwise, or with first < 1, it is Run.
func RunPaged(ctx context.Context, tx *txn.Txn, t *executor.Table, r executor.KeyRange, p *Program, first int) (Outputs, error) {
	last := p.PageRows
	if last == 0 {
		last = DefaultPageRows
	}
	if first < 1 || first >= last || p.Aggregate || p.DistinctInts || len(p.OrderBy) > 0 || p.Limit > 0 || p.Sample != nil {
		out, _, err := Run(ctx, tx, t, r, p)
		return out, err
	}
	pp := *p
	pp.PageRows = first
	out, local, err := Run(ctx, tx, t, r, &pp)
	if err != nil {
		return nil, err
	}
	if local {
		l := out.(*localRun)
		return &growingLocal{localRun: l, last: last}, nil
	}
	return &growingRemote{remote: out.(remote), p: pp, last: last}, nil
}

// growingRemote is RunPaged's Outputs from the store: after each
// response it asks for pages twice as large.
type growingRemote struct {
	remote
	p    Program // the program of the next request
	last int
}

// Next implements Outputs.
func (g *growingRemote) Next(ctx context.Context) ([]byte, error) {
	data, err := g.remote.Next(ctx)
	if err != nil || g.p.PageRows >= g.last {
		return data, err
	}
	g.p.PageRows = min(2*g.p.PageRows, g.last)
	enc, err := g.p.Encode()
	if err != nil {
		return nil, err
	}
	g.c.SetProgram(enc)
	return data, nil
}

// PageBound is implemented by RunPaged's Outputs: a reader that knows it
// wants few more rows (a join under a LIMIT) bounds the next page.
type PageBound interface {
	// BoundNextPage makes the next page ask for at most rows rows (at
	// least one); the pages after it grow from there again.
	BoundNextPage(rows int) error
}

// BoundNextPage implements PageBound.
func (g *growingRemote) BoundNextPage(rows int) error {
	rows = max(rows, 1)
	if rows >= g.p.PageRows {
		return nil
	}
	g.p.PageRows = rows
	enc, err := g.p.Encode()
	if err != nil {
		return err
	}
	g.c.SetProgram(enc)
	return nil
}

// BoundNextPage implements PageBound.
func (g *growingLocal) BoundNextPage(rows int) error {
	g.e.page = min(g.e.page, max(rows, 1))
	return nil
}

// growingLocal is RunPaged's Outputs evaluated in process.
type growingLocal struct {
	*localRun
	last int
}

// Next implements Outputs.
func (g *growingLocal) Next(ctx context.Context) ([]byte, error) {
	data, err := g.localRun.Next(ctx)
	g.e.page = min(2*g.e.page, g.last)
	return data, err
}
