package compat

import (
	"io"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
)

// GMS's RANK, DENSE_RANK and PERCENT_RANK tell a row's peers (the rows
// of equal ORDER BY values, which share a rank) by comparing the values
// as Go values: two strings equal under a case-insensitive collation
// ('b' and 'B' under utf8mb4_general_ci) were not peers, though the
// window's sort put them side by side in either order, so they got
// different ranks in an order that varied; two equal DECIMALs (each a
// pointer to its digits) were never peers. MySQL's peers are rows whose
// ORDER BY values compare equal as their types compare them (the
// collation's weights, a DECIMAL's value). peerRanked is such a
// function: GMS's, framed by percdb's peer groups.

// peerRankedFunctions are the functions whose rank depends on peers.
var peerRankedFunctions = map[string]gsql.Function{
	"rank":         peerRankedFunction("rank", window.NewRank),
	"dense_rank":   peerRankedFunction("dense_rank", window.NewDenseRank),
	"percent_rank": peerRankedFunction("percent_rank", window.NewPercentRank),
}

// peerRankedFunction returns the function name made by gms, framed by
// percdb's peer groups.
func peerRankedFunction(name string, gms func() gsql.Expression) gsql.Function {
	return gsql.Function0{Name: name, Fn: func() gsql.Expression {
		return &peerRanked{WindowAdaptableExpression: gms().(gsql.WindowAdaptableExpression)}
	}}
}

// peerRanked is a ranking window function of GMS's whose peers are
// told apart by their types' comparison; see the comment above.
type peerRanked struct {
	gsql.WindowAdaptableExpression
}

var _ gsql.WindowAggregation = (*peerRanked)(nil)
var _ gsql.FunctionExpression = (*peerRanked)(nil)
var _ gsql.CollationCoercible = (*peerRanked)(nil)

// FunctionName implements sql.FunctionExpression.
func (p *peerRanked) FunctionName() string {
	return p.WindowAdaptableExpression.(gsql.FunctionExpression).FunctionName()
}

// Description implements sql.FunctionExpression.
func (p *peerRanked) Description() string {
	return p.WindowAdaptableExpression.(gsql.FunctionExpression).Description()
}

// CollationCoercibility implements sql.CollationCoercible.
func (p *peerRanked) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	if c, ok := p.WindowAdaptableExpression.(gsql.CollationCoercible); ok {
		return c.CollationCoercibility(ctx)
	}
	return gsql.Collation_binary, 5
}

// WithChildren implements sql.Expression.
func (p *peerRanked) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	e, err := p.WindowAdaptableExpression.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &peerRanked{WindowAdaptableExpression: e.(gsql.WindowAdaptableExpression)}, nil
}

// WithWindow implements sql.WindowAdaptableExpression.
func (p *peerRanked) WithWindow(w *gsql.WindowDefinition) gsql.WindowAdaptableExpression {
	return &peerRanked{WindowAdaptableExpression: p.WindowAdaptableExpression.WithWindow(w)}
}

// WithId implements sql.IdExpression.
func (p *peerRanked) WithId(id gsql.ColumnId) gsql.IdExpression {
	return &peerRanked{WindowAdaptableExpression: p.WindowAdaptableExpression.WithId(id).(gsql.WindowAdaptableExpression)}
}

// NewWindowFunction implements sql.WindowAdaptableExpression: GMS's
// function, framed by peerFramer.
func (p *peerRanked) NewWindowFunction() (gsql.WindowFunction, error) {
	fn, err := p.WindowAdaptableExpression.NewWindowFunction()
	if err != nil {
		return nil, err
	}
	var orderBy []gsql.Expression
	if w := p.Window(); w != nil {
		orderBy = w.OrderBy.ToExpressions()
	}
	return &peerFramed{WindowFunction: fn, orderBy: orderBy}, nil
}

// peerFramed is a window function whose default frame is the current
// row's peer group, by peerFramer.
type peerFramed struct {
	gsql.WindowFunction
	orderBy []gsql.Expression
}

// DefaultFramer implements sql.WindowFunction.
func (f *peerFramed) DefaultFramer() gsql.WindowFramer {
	return &peerFramer{orderBy: f.orderBy}
}

// peerFramer frames each row of a partition with its peers: the rows
// around it (the partition is sorted by the ORDER BY) whose ORDER BY
// values compare equal to its own by their types' comparison, NULL
// equal to NULL.
type peerFramer struct {
	orderBy []gsql.Expression

	set                          bool // NewFramer made it for a partition
	idx                          int  // the next row
	partitionStart, partitionEnd int
	frameStart, frameEnd         int
}

var _ gsql.WindowFramer = (*peerFramer)(nil)

// NewFramer implements sql.WindowFramer.
func (f *peerFramer) NewFramer(interval gsql.WindowInterval) (gsql.WindowFramer, error) {
	return &peerFramer{
		orderBy:        f.orderBy,
		set:            true,
		idx:            interval.Start,
		partitionStart: interval.Start,
		partitionEnd:   interval.End,
		frameStart:     interval.Start,
		frameEnd:       interval.Start,
	}, nil
}

// Next implements sql.WindowFramer: the frame of the next row.
func (f *peerFramer) Next(ctx *gsql.Context, buf gsql.WindowBuffer) (gsql.WindowInterval, error) {
	// An empty partition (a window over no rows) still gives one empty
	// frame, as GMS's framers do: some functions answer for no rows.
	if !f.set || f.idx != f.partitionStart && f.idx >= f.partitionEnd {
		return gsql.WindowInterval{}, io.EOF
	}
	if f.idx >= f.partitionEnd || f.idx >= len(buf) {
		f.frameStart, f.frameEnd = 0, 0
	} else if f.idx >= f.frameEnd {
		end := f.idx + 1
		for end < f.partitionEnd && end < len(buf) {
			peer, err := f.peers(ctx, buf[f.idx], buf[end])
			if err != nil {
				return gsql.WindowInterval{}, err
			}
			if !peer {
				break
			}
			end++
		}
		f.frameStart, f.frameEnd = f.idx, end
	}
	f.idx++
	return f.Interval()
}

// peers reports whether rows a and b have equal ORDER BY values.
func (f *peerFramer) peers(ctx *gsql.Context, a, b gsql.Row) (bool, error) {
	for _, e := range f.orderBy {
		av, err := e.Eval(ctx, a)
		if err != nil {
			return false, err
		}
		bv, err := e.Eval(ctx, b)
		if err != nil {
			return false, err
		}
		if av == nil || bv == nil {
			if av != nil || bv != nil {
				return false, nil
			}
			continue
		}
		cmp, err := e.Type().Compare(ctx, av, bv)
		if err != nil {
			return false, err
		}
		if cmp != 0 {
			return false, nil
		}
	}
	return true, nil
}

// FirstIdx implements sql.WindowFramer.
func (f *peerFramer) FirstIdx() int { return f.frameStart }

// LastIdx implements sql.WindowFramer.
func (f *peerFramer) LastIdx() int { return f.frameEnd }

// Interval implements sql.WindowFramer.
func (f *peerFramer) Interval() (gsql.WindowInterval, error) {
	if !f.set {
		return gsql.WindowInterval{}, io.EOF
	}
	return gsql.WindowInterval{Start: f.frameStart, End: f.frameEnd}, nil
}
