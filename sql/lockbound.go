package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// A SELECT ... FOR UPDATE through GMS's row iterator locks its rows a
// page at a time (rowIter.readLockedPage), pages of 1, 2, 4 ... rows:
// a LIMIT above the read, which stops it early, left up to as many rows
// again as it returned locked that nobody took (a LIMIT 4 locked 7), and
// a queue of workers each taking ORDER BY id LIMIT n FOR UPDATE waited
// on rows none of them had. MySQL's InnoDB locks the rows it reads, and
// an index range under a LIMIT reads exactly the rows returned.
//
// boundLockedReads tells the table read under a LIMIT how many rows its
// reader takes at most when nothing between them drops or reorders rows
// (only projections and aliases): the first page of a locking read is
// then that many rows, one lock request for a LIMIT n and exactly n rows
// locked. A filter GMS evaluates above the read, a sort, a join or a
// grouping leave the read unbounded (pages as before). The bound is a
// hint of how many rows to read ahead, never of how many to return: a
// reader that asks for more gets them, locked in pages as before.

// boundLockedReadsRule is boundLockedReads as an analyzer rule.
func boundLockedReadsRule(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return boundLockedReads(ctx, n)
}

// boundLockedReads gives each table read directly under a literal LIMIT
// (and OFFSET) of a SELECT ... FOR UPDATE its row bound (see above).
func boundLockedReads(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	if s, ok := ctx.Session.(*Session); !ok || !s.forUpdate {
		return n, transform.SameTree, nil
	}
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		l, ok := n.(*plan.Limit)
		if !ok || l.CalcFoundRows {
			return n, transform.SameTree, nil
		}
		bound, ok := limitOf(l.Limit)
		if !ok {
			return n, transform.SameTree, nil
		}
		child, err := withReadBound(l.Child, bound)
		if err != nil || child == nil {
			return n, transform.SameTree, err
		}
		out, err := l.WithChildren(child)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return out, transform.NewTree, nil
	})
}

// withReadBound returns n with the table read at its bottom bounded to
// bound rows, through projections, aliases and offsets (an offset adds
// its rows), or nil when n is not such a read of a percdb table.
func withReadBound(n gsql.Node, bound int64) (gsql.Node, error) {
	switch n := n.(type) {
	case *plan.Offset:
		off, ok := limitOf(n.Offset)
		if !ok {
			return nil, nil
		}
		return withChildBound(n, n.Child, bound+off)
	case *plan.Project:
		return withChildBound(n, n.Child, bound)
	case *plan.TableAlias:
		return withChildBound(n, n.Child, bound)
	case *plan.IndexedTableAccess:
		var t gsql.IndexedTable
		switch it := n.Table.(type) {
		case *IndexedTable:
			t = &IndexedTable{Table: it.Table.withLockBound(bound), lookup: it.lookup}
		case *Table:
			t = it.withLockBound(bound)
		default:
			return nil, nil
		}
		out := *n
		out.Table = t
		return &out, nil
	case *plan.ResolvedTable:
		t, ok := n.Table.(*Table)
		if !ok {
			return nil, nil
		}
		out := *n
		out.Table = t.withLockBound(bound)
		return &out, nil
	}
	return nil, nil
}

// withChildBound returns n with its one child c bounded, or nil when c
// is not a bounded read.
func withChildBound(n, c gsql.Node, bound int64) (gsql.Node, error) {
	nc, err := withReadBound(c, bound)
	if err != nil || nc == nil {
		return nil, err
	}
	return n.WithChildren(nc)
}

// withLockBound returns a copy of t whose locking reads read ahead at
// most bound rows at first (Table.lockBound).
func (t *Table) withLockBound(bound int64) *Table {
	n := *t
	n.lockBound = int(min(bound, maxLockPage))
	return &n
}
