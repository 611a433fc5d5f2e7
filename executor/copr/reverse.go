package copr

import (
	"context"
	"fmt"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/txn"
)

// Reading backwards. A statement ordered by a key's columns, all
// descending, under a LIMIT (ORDER BY id DESC LIMIT 10, MAX(id) as the
// last entry of a range) wants the last rows of a range first. The store's
// coprocessor walks a range forwards and a request has no direction, so
// RunReverse evaluates the program in process over the transaction's
// descending iterators instead: they page through the regions behind the
// kv.Client contract (txn.Txn.IterReverse, a region's pairs per request
// bounded by the scan page size), and a program with a Limit stops the
// walk once it has its rows, so such a statement ships at most a page of
// rows, not the range. Without a Limit (the SQL node keeps the rows by
// conditions of its own and stops reading when it has enough) the walk
// stops when the caller stops asking for outputs.

// RunReverse evaluates p in process over the rows of t in ranges
// (ascending and disjoint, as RunRanges takes them) in descending key
// order: the last range first, each read backwards. The outputs are
// those RunRanges gives for the same rows fed in that order. p must have
// no OrderBy (a top-N reads the whole range: Run's).
func RunReverse(ctx context.Context, tx *txn.Txn, t *executor.Table, ranges []executor.KeyRange, p *Program) (Outputs, error) {
	if err := reversible(t, p); err != nil {
		return nil, err
	}
	if len(ranges) == 0 || !Disjoint(ranges) {
		return nil, fmt.Errorf("table %s: backward read of %d ranges that are not ascending and disjoint", t.Name, len(ranges))
	}
	e, err := p.Start()
	if err != nil {
		return nil, err
	}
	// The program reads only its Columns of each row: a pessimistic
	// transaction may move its snapshot past changes to the others.
	rd := tx.ReadingWith(executor.ColumnsComparator(t, p.Columns))
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
