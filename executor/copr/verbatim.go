package copr

import (
	"encoding/binary"

	"github.com/percdb/percdb/executor/tablecodec"
)

// Rows output verbatim. A program that outputs rows used to decode every
// column it reads of each row (a string column's bytes copied into a Go
// string) and encode the output columns again: in sysbench's 100-row
// range read of a CHAR(120) column that was a quarter of the store's
// work. When every output column of a row holds a value that decodes and
// encodes to the same bytes (tablecodec.IsVerbatimSpan: NULL, booleans,
// integers, strings), is present in the row (not taken from Defaults) and
// is not a CHAR value with trailing spaces to trim, the evaluation
// decodes only the columns the filter reads (and of those only as many
// as it takes to decide) and copies the output
// columns' encoded values into the output row: the same bytes the decode
// and encode would have given. Any other row takes the general way
// (Feed), so the output does not depend on which way a row took.
//
// Only programs that output rows as they come use it: an aggregation, a
// top-N (which keeps decoded rows to compare), a distinct set and a
// sample need the values.

// verbatim is what an evaluation needs to output rows verbatim.
type verbatim struct {
	// outIDs are the column IDs of the output columns, in output order;
	// spans receives their encoded values; trim says, by output column,
	// that the column's value is trimmed on read (Program.Trim).
	outIDs  []int64
	spans   [][]byte
	trim    []bool
	scratch []byte
}

// newVerbatim returns the verbatim output of p, nil when p does not
// output rows as they come.
func newVerbatim(p *Program) *verbatim {
	if p.Aggregate || p.Sample != nil || p.DistinctInts || len(p.OrderBy) > 0 || len(p.Output) == 0 {
		return nil
	}
	trimmed := make(map[int]bool, len(p.Trim))
	for _, i := range p.Trim {
		trimmed[i] = true
	}
	v := &verbatim{
		outIDs: make([]int64, len(p.Output)),
		spans:  make([][]byte, len(p.Output)),
		trim:   make([]bool, len(p.Output)),
	}
	for i, c := range p.Output {
		v.outIDs[i] = p.Columns[c]
		v.trim[i] = trimmed[c]
	}
	return v
}

// feedVerbatim feeds the row value to the evaluation the verbatim way.
// handled is false, with nothing done, when the row must take the
// general way; else full, done and err are Feed's.
func (e *Evaluation) feedVerbatim(value []byte) (handled, full, done bool, err error) {
	v := e.verbatim
	if tablecodec.RowColumnSpans(value, v.outIDs, v.spans) != nil {
		return false, false, false, nil
	}
	for i, s := range v.spans {
		if !tablecodec.IsVerbatimSpan(s) || (v.trim[i] && s[len(s)-1] == ' ') {
			return false, false, false, nil
		}
	}
	// The filter decodes the columns it reads (Evaluation.column).
	if len(e.p.Filter) > 0 && len(e.p.Columns) > 0 {
		if e.readRow(value) != nil {
			return false, false, false, nil
		}
	}
	// A filter that reads no column (WHERE 67 BETWEEN 46 AND NULL) is
	// evaluated too: it may reject every row.
	for i := range e.p.Filter {
		t, err := e.truth(&e.p.Filter[i])
		if err != nil || t != isTrue {
			return true, false, false, err
		}
	}
	b := append(v.scratch[:0], tablecodec.RowFormatV1)
	for i, s := range v.spans {
		b = binary.AppendUvarint(b, uint64(i))
		b = append(b, s...)
	}
	v.scratch = b
	if e.out == nil {
		e.out = make([]byte, 0, e.outputCapacity(len(b)))
	}
	e.out = binary.AppendUvarint(e.out, uint64(len(b)))
	e.out = append(e.out, b...)
	e.outRows++
	e.emitted++
	return true, e.outRows >= e.page, e.p.Limit > 0 && e.emitted >= e.p.Limit, nil
}

// Output buffer sizing. An output grew by doubling from nothing, row by
// row: in sysbench's 100-row range reads the copies and the buffers
// thrown away were nearly half of the verbatim output's cost. The first
// row's size times the rows the page may still take (at most
// initialOutputRows, and within initialOutputBytes) sizes it once.
const (
	initialOutputRows  = 128
	initialOutputBytes = 64 << 10
)

// outputCapacity returns the capacity of a new output buffer whose first
// row is rowLen bytes.
func (e *Evaluation) outputCapacity(rowLen int) int {
	n := min(e.page, initialOutputRows)
	if e.p.Limit > 0 {
		n = int(min(int64(n), e.p.Limit-e.emitted))
	}
	per := rowLen + binary.MaxVarintLen32
	return max(per, min(n*per, initialOutputBytes))
}
