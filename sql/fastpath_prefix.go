package sql

import (
	"io"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/fastpath"
)

// rowsForWrite reads, through t, the full rows an UPDATE or DELETE writes:
// the row of its key (none or one), or the rows of its key prefix
// (fastpath.Plan.PrefixArgs), in key order. More rows than the fast path
// keeps (maxScanRows) send the statement to GMS, with nothing written.
func (r *fastRun) rowsForWrite(t *Transaction, pl *fastPlan) ([][]any, fastOutcome) {
	if pl.PrefixArgs == nil {
		row, found, out := r.readForWrite(t, pl)
		if !out.handled || !found {
			return nil, out
		}
		return [][]any{row}, out
	}
	kr, ok := r.prefixRange(pl)
	if !ok {
		return nil, fallThrough(fastpath.ReasonValue)
	}
	k, err := t.txn(r.ctx)
	if err != nil {
		return nil, fallThrough(fastpath.ReasonError)
	}
	dec := pl.Full.Get()
	defer pl.Full.Put(dec)
	var it executor.RowIterator
	if r.locksRowOnly(pl) {
		// The statement locks the rows it writes and nothing else: read
		// with their locks, one request where a read and a lock
		// (lockWritten) were two, as readForWrite's row by its key.
		pairs, ok, err := r.lockRangeReading(t, k, kr, maxScanRows+1)
		if err != nil {
			return nil, r.answer(nil, err)
		}
		if ok {
			it = executor.TableRows(pl.Meta.Exec, dec, pairs)
		}
	}
	if it == nil {
		if it, err = executor.ScanTable(r.ctx, k, pl.Meta.Exec, dec, kr, executor.ScanOptions{Limit: maxScanRows + 1}); err != nil {
			return nil, fallThrough(fastpath.ReasonError)
		}
	}
	defer it.Close()
	var rows [][]any
	for {
		row, err := it.Next(r.ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fallThrough(fastpath.ReasonError)
		}
		if len(rows) == maxScanRows {
			return nil, fallThrough(fastpath.ReasonSize)
		}
		rows = append(rows, row.Values)
	}
	r.s.rowsExamined.Add(uint64(len(rows)))
	return rows, fastOutcome{handled: true}
}

// prefixRange returns the key range of the rows whose leading primary key
// columns hold the statement's values. ok is false for a value the fast
// path does not convert exactly as GMS's lookup does (keyColumnValues;
// NULL, which matches no row, included: GMS answers it).
func (r *fastRun) prefixRange(pl *fastPlan) (executor.KeyRange, bool) {
	vals, ok := r.keyColumnValues(pl, pl.PrefixArgs)
	if !ok {
		return executor.KeyRange{}, false
	}
	b := executor.Bound{Values: vals, Inclusive: true}
	kr, err := pl.Meta.Exec.HandleRange(b, b)
	return kr, err == nil
}

// keyColumnValues returns the values of the first len(args) primary key
// columns, in key order, the value of column i being the statement's
// value args[i] converted to the column's type: integers that fit it,
// the one case where GMS's lookup is an exact match on the value.
func (r *fastRun) keyColumnValues(pl *fastPlan, args []int) ([]any, bool) {
	sch := pl.Meta.Schema.Schema
	vals := make([]any, len(args))
	for i, arg := range args {
		typ := sch[pl.Meta.Primary.Ords[i]].Type
		k, ok := r.intKey(typ, r.shape.Keys[arg])
		if !ok {
			return nil, false
		}
		v, _, err := typ.Convert(r.ctx, k)
		if err != nil {
			return nil, false
		}
		vals[i] = v
	}
	return vals, true
}
