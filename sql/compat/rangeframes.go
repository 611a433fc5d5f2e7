package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/vitess/go/mysql"
)

// GMS's RANGE frames find a row's peers by the first ORDER BY expression
// alone, compare its values as if it were ascending and, with two ORDER
// BY columns, could panic (index out of range, failed as the statement's
// error): MAX(c) OVER (ORDER BY a, b RANGE BETWEEN UNBOUNDED PRECEDING
// AND CURRENT ROW) was not MySQL's. And a window with an ORDER BY and no
// frame gets no frame from GMS's planner, so its aggregates fall back to
// their default ROWS frame: SUM(x) OVER (ORDER BY p) stopped at the
// current row, where MySQL's default frame (RANGE BETWEEN UNBOUNDED
// PRECEDING AND CURRENT ROW) takes in the current row's peers.
//
// rangeFrames, an analyzer rule, gives the windows of such functions a
// peerRangeFrame: a RANGE frame whose bounds are UNBOUNDED PRECEDING,
// CURRENT ROW and UNBOUNDED FOLLOWING, computed from peer groups over
// every ORDER BY expression as its type compares it (peerRangeFramer).
// A RANGE frame with a value offset (N PRECEDING or FOLLOWING) needs
// exactly one ORDER BY expression, MySQL's error 3587 otherwise; with
// one it stays GMS's. Functions that ignore frames (ROW_NUMBER, RANK,
// DENSE_RANK, PERCENT_RANK, CUME_DIST, NTILE, LEAD, LAG) keep theirs.

// codeRangeFrameOrder is ER_WINDOW_RANGE_FRAME_ORDER_TYPE.
const codeRangeFrameOrder = 3587

// peerRangeFrame is a RANGE frame computed by peer groups; see the
// comment above. It answers the bound questions as the frame it stands
// for (nil for the default frame).
type peerRangeFrame struct {
	gsql.WindowFrame
	fromPartitionStart, toPartitionEnd bool
}

var _ gsql.WindowFrame = (*peerRangeFrame)(nil)

// String implements fmt.Stringer: the frame's text, MySQL's default
// frame's for the default.
func (f *peerRangeFrame) String() string {
	if f.WindowFrame == nil {
		return "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
	}
	return f.WindowFrame.String()
}

// NewFramer implements sql.WindowFrame.
func (f *peerRangeFrame) NewFramer(w *gsql.WindowDefinition) (gsql.WindowFramer, error) {
	return &peerRangeFramer{peers: peerFramer{orderBy: w.OrderBy.ToExpressions()}, fromPartitionStart: f.fromPartitionStart, toPartitionEnd: f.toPartitionEnd}, nil
}

// UnboundedFollowing implements sql.WindowFrame.
func (f *peerRangeFrame) UnboundedFollowing() bool { return f.toPartitionEnd }

// UnboundedPreceding implements sql.WindowFrame.
func (f *peerRangeFrame) UnboundedPreceding() bool { return f.fromPartitionStart }

// StartCurrentRow implements sql.WindowFrame.
func (f *peerRangeFrame) StartCurrentRow() bool { return !f.fromPartitionStart }

// EndCurrentRow implements sql.WindowFrame.
func (f *peerRangeFrame) EndCurrentRow() bool { return !f.toPartitionEnd }

// StartNPreceding implements sql.WindowFrame.
func (f *peerRangeFrame) StartNPreceding() gsql.Expression { return nil }

// StartNFollowing implements sql.WindowFrame.
func (f *peerRangeFrame) StartNFollowing() gsql.Expression { return nil }

// EndNPreceding implements sql.WindowFrame.
func (f *peerRangeFrame) EndNPreceding() gsql.Expression { return nil }

// EndNFollowing implements sql.WindowFrame.
func (f *peerRangeFrame) EndNFollowing() gsql.Expression { return nil }

// RangeFrames is the analyzer rule; see the comment at the top of the
// file.
func RangeFrames(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		w, ok := n.(*plan.Window)
		if !ok {
			return n, transform.SameTree, nil
		}
		return windowFunctionsRewritten(w, "window frames", framedByPeers)
	})
}

// windowFunctionsRewritten returns w with each window function of its
// expressions (one of GMS's, or exactAggregates' retyping of one)
// given the window rewrite returns for it; rewrite returns nil for a
// window it leaves as it is. what names the rewrite in an error.
func windowFunctionsRewritten(w *plan.Window, what string, rewrite func(gsql.WindowAdaptableExpression, *gsql.WindowDefinition) (*gsql.WindowDefinition, error)) (gsql.Node, transform.TreeIdentity, error) {
	exprs := w.Expressions()
	var out []gsql.Expression
	for i, e := range exprs {
		ne, same, err := transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			return rewindowed(e, rewrite)
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		if same == transform.SameTree {
			continue
		}
		if out == nil {
			out = append([]gsql.Expression(nil), exprs...)
		}
		out[i] = ne
	}
	if out == nil {
		return w, transform.SameTree, nil
	}
	ret, err := w.WithExpressions(out...)
	if err != nil {
		return nil, transform.SameTree, fmt.Errorf("%s: %w", what, err)
	}
	return ret, transform.NewTree, nil
}

// rewindowed returns e, when it is a window function, with the window
// rewrite returns for it in place of its own.
func rewindowed(e gsql.Expression, rewrite func(gsql.WindowAdaptableExpression, *gsql.WindowDefinition) (*gsql.WindowDefinition, error)) (gsql.Expression, transform.TreeIdentity, error) {
	var wrapped *typedAgg
	var fn gsql.WindowAdaptableExpression
	switch x := e.(type) {
	case *typedAgg:
		// exactAggregates' retyping, whose WithWindow (its
		// aggregate's) would drop it
		wrapped = x
		fn = x.Aggregation
	case gsql.WindowAdaptableExpression:
		fn = x
	default:
		return e, transform.SameTree, nil
	}
	w := fn.Window()
	if w == nil {
		return e, transform.SameTree, nil
	}
	nw, err := rewrite(fn, w)
	if err != nil || nw == nil {
		return e, transform.SameTree, err
	}
	framed := fn.WithWindow(nw)
	if wrapped != nil {
		agg, ok := framed.(gsql.Aggregation)
		if !ok {
			return e, transform.SameTree, nil
		}
		return &typedAgg{Aggregation: agg, typ: wrapped.typ}, transform.NewTree, nil
	}
	return framed, transform.NewTree, nil
}

// framedByPeers returns the window of fn with a peerRangeFrame in
// place of its RANGE frame (or of its missing frame) where fn needs
// one, else nil; the error 3587 for a RANGE frame with a value offset
// and other than one ORDER BY expression.
func framedByPeers(fn gsql.WindowAdaptableExpression, w *gsql.WindowDefinition) (*gsql.WindowDefinition, error) {
	if err := checkRangeFrame(w); err != nil {
		return nil, err
	}
	if !usesFrame(fn) {
		return nil, nil
	}
	frame, ok := peerFrameOf(w)
	if !ok {
		return nil, nil
	}
	nw := *w
	nw.Frame = frame
	return &nw, nil
}

// usesFrame reports whether fn computes over its window's frame: the
// aggregates, FIRST_VALUE, LAST_VALUE and NTH_VALUE.
func usesFrame(fn gsql.WindowAdaptableExpression) bool {
	switch fn.(type) {
	case gsql.Aggregation, *window.FirstValue, *window.LastValue, *nthValue:
		return true
	}
	return false
}

// isRangeFrame reports whether f is a RANGE frame (GMS's frame types
// say so only in their text).
func isRangeFrame(f gsql.WindowFrame) bool {
	return f != nil && strings.HasPrefix(f.String(), "RANGE")
}

// hasValueOffset reports whether a bound of f is N PRECEDING or N
// FOLLOWING.
func hasValueOffset(f gsql.WindowFrame) bool {
	return f.StartNPreceding() != nil || f.StartNFollowing() != nil || f.EndNPreceding() != nil || f.EndNFollowing() != nil
}

// checkRangeFrame returns MySQL's error for a RANGE frame with a value
// offset whose window has other than one ORDER BY expression.
func checkRangeFrame(w *gsql.WindowDefinition) error {
	if _, done := w.Frame.(*peerRangeFrame); done || !isRangeFrame(w.Frame) || !hasValueOffset(w.Frame) || len(w.OrderBy) == 1 {
		return nil
	}
	name := w.Name
	if name == "" {
		name = "<unnamed window>"
	}
	return mysql.NewSQLError(codeRangeFrameOrder, "HY000", "Window '%s' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type", name)
}

// peerFrameOf returns the peerRangeFrame w's frame stands for: its
// RANGE frame without value offsets, or MySQL's default frame for a
// window with an ORDER BY and no frame.
func peerFrameOf(w *gsql.WindowDefinition) (*peerRangeFrame, bool) {
	switch f := w.Frame; {
	case f == nil:
		if len(w.OrderBy) == 0 {
			return nil, false
		}
		return &peerRangeFrame{fromPartitionStart: true}, true
	case !isRangeFrame(f) || hasValueOffset(f):
		return nil, false
	default:
		if _, done := f.(*peerRangeFrame); done {
			return nil, false
		}
		return &peerRangeFrame{WindowFrame: f, fromPartitionStart: f.UnboundedPreceding(), toPartitionEnd: f.UnboundedFollowing()}, true
	}
}
