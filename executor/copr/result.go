package copr

import (
	"encoding/binary"
	"fmt"

	"github.com/percdb/percdb/executor/tablecodec"
)

// DecodeRows calls fn with each row of an output of n columns; the row
// is fn's to keep.
func DecodeRows(data []byte, n int, fn func(row []any) error) error {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	present := make([]bool, n)
	var slab []any // rows are cut from it, a few allocations in all
	for len(data) > 0 {
		l, k := binary.Uvarint(data)
		if k <= 0 || l > uint64(len(data)-k) {
			return fmt.Errorf("coprocessor output: bad row length: %w", tablecodec.ErrCorrupt)
		}
		if len(slab) < n {
			slab = make([]any, max(n, 256*n))
		}
		row := slab[:n:n]
		slab = slab[n:]
		if err := tablecodec.DecodeRow(data[k:k+int(l)], ids, row, present); err != nil {
			return fmt.Errorf("coprocessor output: %w", err)
		}
		for i, ok := range present {
			if !ok {
				return fmt.Errorf("coprocessor output: column %d missing: %w", i, tablecodec.ErrCorrupt)
			}
		}
		if err := fn(row); err != nil {
			return err
		}
		data = data[k+int(l):]
	}
	return nil
}

// Merger merges the partial groups of an aggregating program's outputs
// (from every region, and every page of one) into final groups.
type Merger struct {
	p *Program
	// reserve is asked before each new group is kept (a memory bound).
	reserve func() error
	// groups maps a group's key to its row in rows: [key, Keep...,
	// Aggs...], the first partial met, merged into.
	groups map[string]int
	rows   [][]any
}

// NewMerger returns a merger for the outputs of p. reserve, when not nil,
// is called before each new group is kept; its error fails the merge (the
// SQL layer's bound on what a query buffers).
func NewMerger(p *Program, reserve func() error) *Merger {
	return &Merger{p: p, reserve: reserve, groups: map[string]int{}}
}

// Add merges one output.
func (m *Merger) Add(data []byte) error {
	nk := len(m.p.Keep)
	return DecodeRows(data, 1+nk+len(m.p.Aggs), func(row []any) error {
		key, ok := row[0].([]byte)
		if !ok {
			return fmt.Errorf("coprocessor output: group key of type %T: %w", row[0], tablecodec.ErrCorrupt)
		}
		for i, a := range m.p.Aggs {
			if v := row[1+nk+i]; (a.Func == AggCount || a.Func == AggCountStar) && !isInt64(v) {
				return fmt.Errorf("coprocessor output: partial %s of type %T: %w", a.Func, v, tablecodec.ErrCorrupt)
			}
		}
		g, ok := m.groups[string(key)]
		if !ok {
			if m.reserve != nil {
				if err := m.reserve(); err != nil {
					return err
				}
			}
			m.groups[string(key)] = len(m.rows)
			m.rows = append(m.rows, row)
			return nil
		}
		aggs := m.rows[g][1+nk:]
		for i, a := range m.p.Aggs {
			aggs[i] = Accumulate(a.Func, aggs[i], row[1+nk+i], true)
		}
		return nil
	})
}

func isInt64(v any) bool {
	_, ok := v.(int64)
	return ok
}

// Len returns the number of groups.
func (m *Merger) Len() int { return len(m.rows) }

// Each calls fn with each group's kept columns and final aggregates, in
// the order the groups were first met. Without GroupBy and without rows
// there is still the one group of an aggregation over nothing (counts 0,
// the rest NULL), as SQL has it.
func (m *Merger) Each(fn func(keep, aggs []any) error) error {
	if len(m.rows) == 0 && len(m.p.GroupBy) == 0 {
		aggs := make([]any, len(m.p.Aggs))
		for i, a := range m.p.Aggs {
			if a.Func == AggCount || a.Func == AggCountStar {
				aggs[i] = int64(0)
			}
		}
		return fn(make([]any, len(m.p.Keep)), aggs)
	}
	nk := len(m.p.Keep)
	for _, row := range m.rows {
		if err := fn(row[1:1+nk], row[1+nk:]); err != nil {
			return err
		}
	}
	return nil
}
