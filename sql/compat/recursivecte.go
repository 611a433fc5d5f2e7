package compat

import (
	"errors"
	"io"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/iters"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// A recursive CTE's UNION (DISTINCT) drops the rows it has already
// given. GMS's iterator finds them by a hash of the values as they are
// (sql.HashOf), so under a case-insensitive or PAD SPACE collation 'a'
// and 'A ' were two rows where MySQL keeps one (and a recursion that
// only changes a string's case or trailing spaces never ended before
// GMS's iteration limit). percdb runs such a CTE itself: the anchor's
// rows, then the recursive part over the rows the previous round added
// (the working table) until a round adds none, each row kept only when
// its key by the columns' collations (rowKeys, as percdb's DISTINCT) is
// new.

// recursionRounds is the rounds a recursive CTE may take, GMS's limit.
const recursionRounds = 10001

// CollatedRecursiveCte reports whether n is a recursive CTE with UNION
// (DISTINCT) over a column whose collation compares strings that differ
// in bytes as equal: one percdb runs (NewRecursiveCteIter).
func CollatedRecursiveCte(n *plan.RecursiveCte) bool {
	if n.Union() == nil || !n.Union().Distinct {
		return false
	}
	for _, c := range n.Schema() {
		if _, ok := collatedStringType(c.Type); ok {
			return true
		}
	}
	return false
}

// NewRecursiveCteIter returns the rows of n, whose parts build makes
// iterators of, with the CTE's own ORDER BY and LIMIT applied.
func NewRecursiveCteIter(ctx *gsql.Context, n *plan.RecursiveCte, build func(gsql.Node) (gsql.RowIter, error)) (gsql.RowIter, error) {
	var it gsql.RowIter = &recursiveCteIter{n: n, build: build, keys: newRowKeys(n.Schema())}
	u := n.Union()
	switch {
	case u.Limit != nil:
		limit, err := iters.GetInt64Value(ctx, u.Limit)
		if err != nil {
			return nil, err
		}
		if len(u.SortFields) > 0 {
			return iters.NewTopRowsIter(u.SortFields, limit, false, it, len(u.Schema())), nil
		}
		return &iters.LimitIter{Limit: limit, ChildIter: it}, nil
	case len(u.SortFields) > 0:
		return iters.NewSortIter(u.SortFields, it), nil
	}
	return it, nil
}

// recursiveCteIter gives the rows of a recursive CTE with UNION
// (DISTINCT), by collation.
type recursiveCteIter struct {
	n     *plan.RecursiveCte
	build func(gsql.Node) (gsql.RowIter, error)
	keys  *rowKeys
	seen  gsql.KeyValueCache
	// dispose frees seen.
	dispose func()
	// part is the iterator of the anchor or of this round's recursion.
	part gsql.RowIter
	// added are the rows this round added: the next round's working
	// table.
	added  []gsql.Row
	rounds int
}

// Next implements sql.RowIter.
func (it *recursiveCteIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	if it.part == nil {
		it.seen, it.dispose = ctx.Memory.NewHistoryCache()
		part, err := it.build(it.n.Left())
		if err != nil {
			return nil, err
		}
		it.part = part
	}
	for {
		row, err := it.part.Next(ctx)
		switch {
		case errors.Is(err, io.EOF):
			err = it.nextRound(ctx)
		case err == nil:
			var fresh bool
			if fresh, err = it.keys.firstSeen(ctx, it.seen, row); err == nil && fresh {
				it.added = append(it.added, row)
				return row, nil
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

// nextRound starts the recursive part over the rows the round before
// added; io.EOF when it added none.
func (it *recursiveCteIter) nextRound(ctx *gsql.Context) error {
	if len(it.added) == 0 {
		return io.EOF
	}
	it.rounds++
	if it.rounds > recursionRounds {
		return gsql.ErrCteRecursionLimitExceeded.New()
	}
	if w := it.n.Working; w != nil {
		w.Buf = it.added
	}
	it.added = nil
	if err := it.part.Close(ctx); err != nil {
		return err
	}
	it.part = nil
	part, err := it.build(it.n.Right())
	if err != nil {
		return err
	}
	it.part = part
	return nil
}

// Close implements sql.RowIter.
func (it *recursiveCteIter) Close(ctx *gsql.Context) error {
	if it.dispose != nil {
		it.dispose()
		it.dispose = nil
	}
	if it.part != nil {
		err := it.part.Close(ctx)
		it.part = nil
		return err
	}
	return nil
}
