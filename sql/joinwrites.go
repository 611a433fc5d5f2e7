package sql

import (
	"io"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// An UPDATE or DELETE of several tables (UPDATE t JOIN o ... SET t.c =
// ..., o.d = ...; DELETE t, o FROM t JOIN o ...) changes the rows the
// join of its tables finds in the tables as they were when the
// statement began: MySQL changes the rows of the first table of its
// join order as it reads them and keeps the others' row ids in temporary
// tables until the join is read (sql_update.cc, Multi_update;
// sql_delete.cc, Multi_delete), and no row it changes is read again.
// GMS changes each row as the join returns it, and a nested-loop join
// reads its inner table again for each outer row, through the
// transaction, which sees the statement's own writes: a row of t deleted
// for the first row of o it joined was missing for the next one, whose
// row was then not deleted (DELETE t0, t1 FROM t0 JOIN t1 ON t0.c9 =
// t1.c9 deleted t0's row and one of the two t1 rows joined to it), and
// an UPDATE that changed a join column joined the changed rows again
// (UPDATE t0 JOIN t1 ON t0.c9 = t1.c9 SET t1.c9 = 5 counted a row of t0
// whose c9 became 5). The difftest's application shapes found both.
//
// joinReadFirst puts a readAllFirst under such a statement's join: the
// join's rows are all read before the first is changed, as MySQL's are
// in effect. It holds the joined rows in memory, as MySQL's temporary
// tables hold the row ids of the tables it does not change as it reads.

// readAllFirst is its child's rows, every one read before the first is
// returned.
type readAllFirst struct {
	plan.UnaryNode
}

var _ gsql.Node = (*readAllFirst)(nil)

// String implements sql.Node.
func (n *readAllFirst) String() string { return n.Child.String() }

// IsReadOnly implements sql.Node.
func (n *readAllFirst) IsReadOnly() bool { return n.Child.IsReadOnly() }

// WithChildren implements sql.Node.
func (n *readAllFirst) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return &readAllFirst{UnaryNode: plan.UnaryNode{Child: children[0]}}, nil
}

// readAllFirstIter reads its child to the end at its first Next: the
// first Next comes once the statement has begun (its editors'
// StatementBegin), before any of its writes.
type readAllFirstIter struct {
	child gsql.RowIter
	rows  []gsql.Row
	read  bool
}

// Next implements sql.RowIter.
func (i *readAllFirstIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	if !i.read {
		for {
			row, err := i.child.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			i.rows = append(i.rows, row.Copy())
		}
		i.read = true
	}
	if len(i.rows) == 0 {
		return nil, io.EOF
	}
	row := i.rows[0]
	i.rows[0] = nil
	i.rows = i.rows[1:]
	return row, nil
}

// Close implements sql.RowIter.
func (i *readAllFirstIter) Close(ctx *gsql.Context) error {
	i.rows = nil
	return i.child.Close(ctx)
}

// joinsTables reports whether n joins tables (an inner, outer or cross
// join, not a semi or anti join GMS made of a subquery: a subquery of an
// UPDATE or DELETE does not read a table it changes, 1093).
func joinsTables(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		if j, ok := n.(*plan.JoinNode); ok {
			if t := j.JoinType(); !t.IsSemi() && !t.IsAnti() {
				found = true
			}
		}
		return !found
	})
	return found
}

// updateSourceReadFirst returns the source of an UPDATE's rows with its
// join read first (see joinReadFirst); false when it joins no tables or
// is so already.
func updateSourceReadFirst(src *plan.UpdateSource) (gsql.Node, bool) {
	if _, done := src.Child.(*readAllFirst); done || !joinsTables(src.Child) {
		return src, false
	}
	ret, err := src.WithChildren(&readAllFirst{UnaryNode: plan.UnaryNode{Child: src.Child}})
	if err != nil {
		return src, false
	}
	return ret, true
}

// deleteReadFirst returns a DELETE of several tables with its join read
// first (see joinReadFirst); false when it is no such DELETE or is so
// already.
func deleteReadFirst(d *plan.DeleteFrom) (*plan.DeleteFrom, bool) {
	if !d.HasExplicitTargets() {
		return d, false
	}
	if _, done := d.Child.(*readAllFirst); done || !joinsTables(d.Child) {
		return d, false
	}
	ret := *d
	ret.UnaryNode = plan.UnaryNode{Child: &readAllFirst{UnaryNode: plan.UnaryNode{Child: d.Child}}}
	return &ret, true
}

// A DELETE of one table whose WHERE has subqueries GMS unnests into
// joins (DELETE FROM t WHERE EXISTS (SELECT ... o ...) AND t.c IN
// (SELECT ...)) lost its table: GMS finds a DELETE's table in the rows
// it deletes from, and a join there is no table, so its foreign-key rule
// failed the statement with 1105 "table doesn't support DELETE FROM"
// (the difftest's application shapes). deleteTargetRule names the
// table, before the subqueries are unnested, as the DELETE's explicit
// target, as DELETE t FROM t ... names it; the statement then deletes
// as a DELETE of joined tables does (each row once, by its values). Not
// for a table without a primary key with a LIMIT, whose equal rows such
// a DELETE deletes together (keylessjoin.go).
func deleteTargetRule(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		d, ok := n.(*plan.DeleteFrom)
		if !ok || d.HasExplicitTargets() || !hasSubquery(d.Child) {
			return n, transform.SameTree, nil
		}
		del, err := plan.GetDeletable(d.Child)
		if err != nil {
			return n, transform.SameTree, nil
		}
		if t, ok := del.(*Table); ok && t.isKeyless() && hasLimit(d.Child) {
			return n, transform.SameTree, nil
		}
		var target gsql.Node
		transform.Inspect(d.Child, func(n gsql.Node) bool {
			switch n.(type) {
			case *plan.TableAlias, *plan.ResolvedTable:
				if target == nil {
					target = n
				}
			}
			return target == nil
		})
		if target == nil {
			return n, transform.SameTree, nil
		}
		return d.WithExplicitTargets([]gsql.Node{target}), transform.NewTree, nil
	})
}

// hasSubquery reports whether an expression of n's tree is a subquery.
func hasSubquery(n gsql.Node) bool {
	found := false
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		if _, ok := e.(*plan.Subquery); ok {
			found = true
		}
		return !found
	})
	return found
}

// hasLimit reports whether n's tree has a LIMIT.
func hasLimit(n gsql.Node) bool {
	found := false
	transform.Inspect(n, func(n gsql.Node) bool {
		if _, ok := n.(*plan.Limit); ok {
			found = true
		}
		return !found
	})
	return found
}
