package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
)

// compatBuilder builds the row iterators of percdb's own plan nodes and
// leaves every other node to GMS's builder.
type compatBuilder struct {
	// gms is the builder that calls this one first; children are built
	// through it.
	gms gsql.NodeExecBuilder
}

// newExecBuilder returns GMS's row iterator builder with percdb's nodes
// added.
func newExecBuilder() gsql.NodeExecBuilder {
	b := &compatBuilder{}
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
