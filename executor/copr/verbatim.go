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
// columns' encoded values, found by the same walk of the row as the
// filter's, into the output row: the same bytes the decode
// and encode would have given. Any other row takes the general way
// (Feed), so the output does not depend on which way a row took.
//
// Only programs that output rows as they come use it: an aggregation, a
// top-N (which keeps decoded rows to compare), a distinct set and a
// sample need the values.

// verbatim is what an evaluation needs to output rows verbatim.
type verbatim struct {
	// spans receives the encoded values of the output columns, in output
	// order; trim says, by output column, that the column's value is
	// trimmed on read (Program.Trim).
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
		spans: make([][]byte, len(p.Output)),
		trim:  make([]bool, len(p.Output)),
	}
	for i, c := range p.Output {
		v.trim[i] = trimmed[c]
	}
	return v
}

// verbatimSpans sets the verbatim output's spans to the encoded values of
// the current row's output columns, which readRow has found: the program's
// Columns include its Output ones, so the row is walked once, for the
// filter and the output both (a second walk for the output columns
// alone, before the filter, was a quarter of a selective scan's cost:
// the self-join of issue 13's scan section reads 100 rows per row it
// keeps). It reports false when one of them must take the general way.
func (e *Evaluation) verbatimSpans() bool {
	v := e.verbatim
	for i, c := range e.p.Output {
		s := e.spans[c]
		if !tablecodec.IsVerbatimSpan(s) || (v.trim[i] && s[len(s)-1] == ' ') {
			return false
		}
		v.spans[i] = s
	}
	return true
}

// outputVerbatim appends the current row, which passed the filter, to the
// output the verbatim way, and reports false, with nothing done, when the
// row must take the general way (decodeAll and emit).
func (e *Evaluation) outputVerbatim() bool {
	if !e.verbatimSpans() {
		return false
	}
	v := e.verbatim
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
	return true
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
