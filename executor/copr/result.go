package copr

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

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

// The output of a DistinctInts program is a set of integers:
//
//	uvarint(n) { uvarint(delta) }*n
//
// the n values in ascending order, each as its difference from the one
// before (the first from 0), where a value is an integer as
// distinctOrder maps it: a signed one with its sign bit flipped, an
// unsigned one as it is (a column's values are all of one kind). It is
// a few bytes per value where a group row is a few dozen, and the merge
// hashes 8-byte integers rather than encoded keys.

// AppendDistinctInts appends the encoding of a set to b: vals, in
// ascending order without repeats (compactDistinct).
func AppendDistinctInts(b []byte, vals []uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(vals)))
	prev := uint64(0)
	for _, v := range vals {
		b = binary.AppendUvarint(b, v-prev)
		prev = v
	}
	return b
}

// compactDistinct sorts vals and drops their repeats, in place.
func compactDistinct(vals []uint64) []uint64 {
	slices.Sort(vals)
	return slices.Compact(vals)
}

// DecodeDistinctInts calls fn with each value of the sets in data (an
// output may hold several, one per page).
func DecodeDistinctInts(data []byte, fn func(v uint64) error) error {
	for len(data) > 0 {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)) {
			return fmt.Errorf("coprocessor output: bad distinct set size: %w", tablecodec.ErrCorrupt)
		}
		data = data[k:]
		v := uint64(0)
		for i := uint64(0); i < n; i++ {
			d, k := binary.Uvarint(data)
			if k <= 0 || (i > 0 && d == 0) || v+d < v {
				return fmt.Errorf("coprocessor output: bad distinct value: %w", tablecodec.ErrCorrupt)
			}
			v += d
			data = data[k:]
			if err := fn(v); err != nil {
				return err
			}
		}
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
	// distinct is the union of a DistinctInts program's sets so far, in
	// ascending order; pending are the values of the sets added since,
	// merged into it when they are as many (mergeDistinct), so that each
	// value is sorted and merged a logarithmic number of times at most.
	distinct, pending []uint64
}

// NewMerger returns a merger for the outputs of p. reserve, when not nil,
// is called before each new group is kept; its error fails the merge (the
// SQL layer's bound on what a query buffers).
func NewMerger(p *Program, reserve func() error) *Merger {
	return &Merger{p: p, reserve: reserve, groups: map[string]int{}}
}

// Add merges one output.
func (m *Merger) Add(data []byte) error {
	if m.p.DistinctInts {
		err := DecodeDistinctInts(data, func(v uint64) error {
			m.pending = append(m.pending, v)
			return nil
		})
		if err != nil || len(m.pending) < max(len(m.distinct), 1<<12) {
			return err
		}
		return m.mergeDistinct()
	}
	nk := len(m.p.Keep)
	return DecodeRows(data, 1+nk+len(m.p.Aggs), func(row []any) error {
		key, ok := row[0].([]byte)
		if !ok {
			return fmt.Errorf("coprocessor output: group key of type %T: %w", row[0], tablecodec.ErrCorrupt)
		}
		for i, a := range m.p.Aggs {
			v := row[1+nk+i]
			_, isDec := v.(decimal.Decimal)
			if (a.Func == AggCount || a.Func == AggCountStar) && !isInt64(v) || a.Func == AggSum && v != nil && !isInt64(v) && !isDec {
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

// mergeDistinct merges the pending values into the union, calling
// reserve for each value new to it.
func (m *Merger) mergeDistinct() error {
	add := compactDistinct(m.pending)
	out := make([]uint64, 0, len(m.distinct)+len(add))
	i, j := 0, 0
	for i < len(m.distinct) || j < len(add) {
		switch {
		case j == len(add) || i < len(m.distinct) && m.distinct[i] < add[j]:
			out = append(out, m.distinct[i])
			i++
		case i < len(m.distinct) && m.distinct[i] == add[j]:
			out = append(out, m.distinct[i])
			i, j = i+1, j+1
		default:
			if m.reserve != nil {
				if err := m.reserve(); err != nil {
					return err
				}
			}
			out = append(out, add[j])
			j++
		}
	}
	m.distinct, m.pending = out, m.pending[:0]
	return nil
}

// Flush merges what Add has kept aside: call it once every output is
// added, before Len, for its error (a memory bound's).
func (m *Merger) Flush() error {
	if m.p.DistinctInts && len(m.pending) > 0 {
		return m.mergeDistinct()
	}
	return nil
}

// Group returns the kept columns and the merged partial aggregates of
// the group whose key is key (AppendGroupKey of its GroupBy values),
// false when no row made it. They are the merger's: read them, do not
// change them.
func (m *Merger) Group(key []byte) (keep, aggs []any, ok bool) {
	g, ok := m.groups[string(key)]
	if !ok {
		return nil, nil, false
	}
	nk := len(m.p.Keep)
	return m.rows[g][1 : 1+nk], m.rows[g][1+nk:], true
}

// AppendGroupKey appends to key the part of a group's key that a
// GroupBy expression of value v makes (nil for NULL, integers of any Go
// type), as the evaluation keys its groups, so that a caller can find a
// group by values it holds (Merger.Group).
func AppendGroupKey(key []byte, v any) ([]byte, error) {
	return tablecodec.EncodeKey(key, normalize(v))
}

// Len returns the number of groups: of distinct values for a
// DistinctInts program (after Flush).
func (m *Merger) Len() int {
	if m.p.DistinctInts {
		return len(m.distinct)
	}
	return len(m.rows)
}

// Each calls fn with each group's kept columns and final aggregates, in
// the order the groups were first met (none for a DistinctInts program,
// whose groups are only counted: Len). Without GroupBy and without rows
// there is still the one group of an aggregation over nothing (counts 0,
// the rest NULL), as SQL has it.
func (m *Merger) Each(fn func(keep, aggs []any) error) error {
	if m.p.DistinctInts {
		return nil
	}
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
