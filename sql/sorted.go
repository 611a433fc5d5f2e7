package sql

import (
	"io"
	"sort"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/tablemeta"
)

// sortedIter returns the rows of a prefix-index lookup sorted by the
// index's whole column values: the keys of such an index order rows by
// the prefixes only, and GMS expects index order.
type sortedIter struct {
	src  *rowIter
	im   *tablemeta.Index
	cols []int // positions of the index's columns in the returned rows
	rows []gsql.Row
	done bool
	err  error
}

func newSortedIter(ctx *gsql.Context, src *rowIter, im *tablemeta.Index, projection []int) gsql.RowIter {
	cols := make([]int, len(im.Ords))
	for i, ord := range im.Ords {
		cols[i] = -1
		if projection == nil {
			cols[i] = ord
			continue
		}
		for j, p := range projection {
			if p == ord {
				cols[i] = j
			}
		}
	}
	return &sortedIter{src: src, im: im, cols: cols}
}

// Next implements sql.RowIter.
func (s *sortedIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	if !s.done {
		s.done = true
		if s.err = s.fill(ctx); s.err != nil {
			return nil, s.err
		}
	}
	if s.err != nil {
		return nil, s.err
	}
	if len(s.rows) == 0 {
		return nil, io.EOF
	}
	row := s.rows[0]
	s.rows = s.rows[1:]
	return row, nil
}

func (s *sortedIter) fill(ctx *gsql.Context) error {
	for {
		row, err := s.src.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		s.rows = append(s.rows, row)
	}
	var cmpErr error
	sort.SliceStable(s.rows, func(a, b int) bool {
		for i, c := range s.cols {
			if c < 0 {
				continue // not returned: GMS cannot sort by it either
			}
			cmp, err := compareNullsFirst(ctx, s.im.Types[i], s.rows[a][c], s.rows[b][c])
			if err != nil && cmpErr == nil {
				cmpErr = err
			}
			if cmp != 0 {
				if s.src.reverse {
					return cmp > 0
				}
				return cmp < 0
			}
		}
		return false
	})
	return cmpErr
}

// Close implements sql.RowIter.
func (s *sortedIter) Close(ctx *gsql.Context) error { return s.src.Close(ctx) }

// compareNullsFirst compares as an index orders: NULL before every value.
func compareNullsFirst(ctx *gsql.Context, typ gsql.Type, a, b any) (int, error) {
	switch {
	case a == nil && b == nil:
		return 0, nil
	case a == nil:
		return -1, nil
	case b == nil:
		return 1, nil
	}
	return typ.Compare(ctx, a, b)
}
