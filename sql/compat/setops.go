package compat

import (
	"errors"
	"fmt"
	"io"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS's INTERSECT and EXCEPT (and the DISTINCT of EXCEPT) tell rows
// apart by a hash of their Go values printed with %v: under a
// case-insensitive collation 'b' and 'B' were two rows (EXCEPT kept
// both), and two values of one DATE column, a time.Time and the string
// GMS's DATE() returns, never matched ('2020-02-29' EXCEPT DATE(d) kept
// the date). percdb runs them itself (KeyedSetOp) over rowKeys, which
// hash a collated string by its collation key and a temporal value as
// its column's type holds it, with MySQL's meaning of each form:
//
//	INTERSECT           the distinct rows of the left side found on the right
//	INTERSECT ALL       each row as many times as on the side where it is fewer
//	EXCEPT              the distinct rows of the left side not found on the right
//	EXCEPT ALL          each row as many times as on the left, less those on the right
//
// NULLs are equal to NULLs here, as in every set operation. The
// operation's ORDER BY, OFFSET and LIMIT are GMS's nodes over it.

// KeyedSetOp is an INTERSECT or EXCEPT without ORDER BY, OFFSET or
// LIMIT, run by percdb's row-iterator builder (sql/compat_exec.go). It is
// made at execution, not planned: EXPLAIN shows GMS's SetOp.
type KeyedSetOp struct {
	op *plan.SetOp
}

var _ gsql.Node = (*KeyedSetOp)(nil)

// KeyedSetOpPlan returns the plan percdb runs for n, an INTERSECT or
// EXCEPT: a KeyedSetOp under GMS's nodes for its ORDER BY, OFFSET and
// LIMIT; false for another set operation.
func KeyedSetOpPlan(n *plan.SetOp) (gsql.Node, bool) {
	if n.SetOpType != plan.IntersectType && n.SetOpType != plan.ExceptType {
		return n, false
	}
	core := *n
	core.Limit, core.Offset, core.SortFields = nil, nil, nil
	return withSetOpTail(n, &KeyedSetOp{op: &core}), true
}

// withSetOpTail returns core, which does what n does short of its ORDER
// BY, OFFSET and LIMIT, under GMS's nodes for those.
func withSetOpTail(n *plan.SetOp, core gsql.Node) gsql.Node {
	if len(n.SortFields) > 0 {
		core = plan.NewSort(n.SortFields, core)
	}
	if n.Offset != nil {
		core = plan.NewOffset(n.Offset, core)
	}
	if n.Limit != nil {
		core = plan.NewLimit(n.Limit, core)
	}
	return core
}

// Resolved implements sql.Node.
func (k *KeyedSetOp) Resolved() bool { return k.op.Resolved() }

// String implements sql.Node.
func (k *KeyedSetOp) String() string { return k.op.String() }

// Schema implements sql.Node.
func (k *KeyedSetOp) Schema() gsql.Schema { return k.op.Schema() }

// Children implements sql.Node: the two sides.
func (k *KeyedSetOp) Children() []gsql.Node { return k.op.Children() }

// SetOp is the INTERSECT or EXCEPT k runs.
func (k *KeyedSetOp) SetOp() *plan.SetOp { return k.op }

// IsReadOnly implements sql.Node.
func (k *KeyedSetOp) IsReadOnly() bool { return k.op.IsReadOnly() }

// WithChildren implements sql.Node.
func (k *KeyedSetOp) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	op, err := k.op.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &KeyedSetOp{op: op.(*plan.SetOp)}, nil
}

// keyedSetOpIter runs a KeyedSetOp: the right side's rows counted by
// key first, then the left side's filtered by them.
type keyedSetOpIter struct {
	intersect, distinct bool
	left, right         gsql.RowIter
	keys                *rowKeys
	counts              map[uint64]int  // right rows by key, until read
	emitted             map[uint64]bool // keys returned, for the DISTINCT forms
}

// NewKeyedSetOpIter returns the iterator of k over its sides' rows.
func NewKeyedSetOpIter(k *KeyedSetOp, left, right gsql.RowIter) gsql.RowIter {
	return &keyedSetOpIter{
		intersect: k.op.SetOpType == plan.IntersectType,
		distinct:  k.op.Distinct,
		left:      left,
		right:     right,
		keys:      newRowKeys(k.op.Schema()),
	}
}

// Next implements sql.RowIter.
func (it *keyedSetOpIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	if it.counts == nil {
		if err := it.readRight(ctx); err != nil {
			return nil, err
		}
	}
	for {
		row, err := it.left.Next(ctx)
		if err != nil {
			return nil, err
		}
		k, err := it.keys.key(ctx, row)
		if err != nil {
			return nil, err
		}
		found := it.counts[k] > 0
		if it.distinct {
			if it.emitted[k] || found != it.intersect {
				continue
			}
			it.emitted[k] = true
			return row, nil
		}
		// ALL: a row of the right side matches one of the left.
		if found {
			it.counts[k]--
		}
		if found == it.intersect {
			return row, nil
		}
	}
}

// readRight counts the right side's rows by key.
func (it *keyedSetOpIter) readRight(ctx *gsql.Context) error {
	it.counts, it.emitted = map[uint64]int{}, map[uint64]bool{}
	for {
		row, err := it.right.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		k, err := it.keys.key(ctx, row)
		if err != nil {
			return err
		}
		it.counts[k]++
	}
}

// Close implements sql.RowIter.
func (it *keyedSetOpIter) Close(ctx *gsql.Context) error {
	lerr := it.left.Close(ctx)
	if rerr := it.right.Close(ctx); rerr != nil && lerr == nil {
		return fmt.Errorf("set operation: %w", rerr)
	}
	return lerr
}

// hasTemporalColumn reports whether sch has a DATE, DATETIME, TIMESTAMP
// or TIME column, whose values GMS may give as strings.
func hasTemporalColumn(sch gsql.Schema) bool {
	for _, c := range sch {
		if types.IsTime(c.Type) || c.Type == types.Time {
			return true
		}
	}
	return false
}
