package copr

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/percdb/percdb/executor"
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
		if err == nil {
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
