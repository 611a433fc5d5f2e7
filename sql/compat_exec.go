package sql

import (
	"reflect"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// compatBuilder builds the row iterators of percdb's own plan nodes and
// leaves every other node to GMS's builder.
type compatBuilder struct {
	// gms is the builder that calls this one first; children are built
	// through it.
	gms gsql.NodeExecBuilder
	// a is the analyzer whose ExecBuilder this is (see
	// finalizeSubqueries).
	a *analyzer.Analyzer
}

// newExecBuilder returns GMS's row iterator builder with percdb's nodes
// added.
func newExecBuilder(a *analyzer.Analyzer) gsql.NodeExecBuilder {
	b := &compatBuilder{a: a}
	b.gms = rowexec.NewOverrideBuilder(b)
	return b.gms
}

// Build implements sql.NodeExecBuilder. It returns no iterator and no
// error for the nodes GMS builds.
func (b *compatBuilder) Build(ctx *gsql.Context, n gsql.Node, row gsql.Row) (gsql.RowIter, error) {
	switch n := n.(type) {
	case *collatedDistinct:
		child, err := b.gms.Build(ctx, n.Child, row)
		if err != nil {
			return nil, err
		}
		return newCollatedDistinctIter(ctx, n.Schema(), child), nil
	case *plan.Update, *plan.DeleteFrom:
		if d, ok, err := b.finalizeSubqueries(ctx, n); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return b.gms.Build(ctx, d, row)
		}
		// GMS analyzes an UPDATE or DELETE of one table with a short
		// list of rules of its own (analyzer.getBatchesForNode), not
		// the analyzer's batches where percdb puts its rules: integer
		// arithmetic is put in here, once the plan is final. The second
		// time here the plan is the same, and GMS builds it.
		m, same, err := integerArithmetic(ctx, nil, n, nil, nil, nil)
		if err != nil || same {
			return nil, err
		}
		return b.gms.Build(ctx, m, row)
	}
	return nil, nil
}

// finalizeSubqueries works around a GMS defect: GMS analyzes an UPDATE
// or DELETE of one table with a short list of rules of its own when its
// planner found no subquery in it, and the planner does not count an
// EXISTS: the subquery is never analyzed, and the statement failed with
// "attempted to evaluate uninitialized subquery". The subqueries GMS has
// not prepared to run are analyzed here, as GMS's finalizeSubqueries
// would (in the scope of the node that holds them), and the statement is
// built with them.
func (b *compatBuilder) finalizeSubqueries(ctx *gsql.Context, n gsql.Node) (gsql.Node, bool, error) {
	if b.a == nil || !hasUnpreparedSubquery(n) {
		return n, false, nil
	}
	qFlags := &gsql.QueryFlags{}
	qFlags.Set(gsql.QFlagRelSubquery)
	ret, _, err := transform.Node(n, func(node gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		return transform.OneNodeExprsWithNode(node, func(node gsql.Node, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			return transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
				sq, ok := e.(*plan.Subquery)
				if !ok || !unprepared(sq) {
					return e, transform.SameTree, nil
				}
				scope := (*plan.Scope)(nil).NewScopeFromSubqueryExpression(node, sq.Correlated())
				q, err := b.a.Analyze(ctx, sq.Query, scope, qFlags)
				if err != nil {
					return e, transform.SameTree, err
				}
				return sq.WithQuery(q).WithExecBuilder(b.a.ExecBuilder), transform.NewTree, nil
			})
		})
	})
	if err != nil {
		return nil, false, err
	}
	return ret, true, nil
}

// hasUnpreparedSubquery reports whether a subquery expression of n's tree
// is unprepared.
func hasUnpreparedSubquery(n gsql.Node) bool {
	found := false
	transform.InspectExpressions(n, func(e gsql.Expression) bool {
		if sq, ok := e.(*plan.Subquery); ok && unprepared(sq) {
			found = true
		}
		return !found
	})
	return found
}

// unprepared reports whether sq has no row iterator builder: the analyzer
// sets one when it finalizes the subquery, and GMS's Subquery does not
// export it, so it is read by reflection.
func unprepared(sq *plan.Subquery) bool {
	b := reflect.ValueOf(sq).Elem().FieldByName("b")
	return b.IsValid() && b.IsNil()
}
