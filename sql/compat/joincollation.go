package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL compares two strings of one character set under the collation
// their coercibilities resolve to: a utf8mb4_bin column against a
// utf8mb4_general_ci one compares under utf8mb4_bin. GMS's join planner
// turns a join's equality into the key of a lookup into an index on
// either column and drops the equality from the join
// (analyzer.addLookupJoins keeps only the conditions the key did not
// match): a lookup into the _general_ci index found 'B' for 'b', and
// nothing compared them again, so `SELECT a FROM t0 WHERE bin_col IN
// (SELECT ci_col FROM t1)` returned the rows of either letter case
// (difftest, application seed 12010). A lookup into the other column's
// index compares under the comparison's own collation and stays exact.
//
// JoinKeysByCollation wraps, before GMS plans the joins, each column of
// a join's string equality whose collation is not the one the equality
// compares under, so that GMS cannot take it for an index's column; the
// equality then stays a condition of its join (or a key into the other
// column's index). The wrapper changes nothing else: type, value and
// coercibility are the column's.

// JoinKeysByCollation wraps GMS's optimizeJoins; see above.
func JoinKeysByCollation(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		if ctx == nil || ctx.Session == nil {
			return apply(ctx, a, n, scope, sel, qFlags)
		}
		wrapped, same, err := transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
			j, ok := n.(*plan.JoinNode)
			if !ok || j.Filter == nil {
				return n, transform.SameTree, nil
			}
			f, same, err := transform.Expr(j.Filter, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
				return foreignCollationKeys(ctx, e)
			})
			if err != nil || same == transform.SameTree {
				return n, transform.SameTree, err
			}
			out, err := j.WithExpressions(f)
			return out, transform.NewTree, err
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		out, planned, err := apply(ctx, a, wrapped, scope, sel, qFlags)
		if same == transform.NewTree && err == nil {
			planned = transform.NewTree
		}
		return out, planned, err
	}
}

// foreignCollationKeys returns e, an equality of two string columns,
// with each column whose collation is not the comparison's wrapped in
// foreignCollation.
func foreignCollationKeys(ctx *gsql.Context, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	var l, r gsql.Expression
	switch eq := e.(type) {
	case *expression.Equals:
		l, r = eq.Left(), eq.Right()
	case *expression.NullSafeEquals:
		l, r = eq.Left(), eq.Right()
	default:
		return e, transform.SameTree, nil
	}
	if !types.IsText(l.Type()) || !types.IsText(r.Type()) {
		return e, transform.SameTree, nil
	}
	cmp := comparisonCollation(ctx, []gsql.Expression{l, r})
	changed := false
	side := func(s gsql.Expression) gsql.Expression {
		gf, ok := s.(*expression.GetField)
		if !ok {
			return s
		}
		if c, _ := coercibility(ctx, gf); c == cmp {
			return s
		}
		changed = true
		return &foreignCollation{UnaryExpression: expression.UnaryExpression{Child: gf}}
	}
	nl, nr := side(l), side(r)
	if !changed {
		return e, transform.SameTree, nil
	}
	out, err := e.WithChildren(nl, nr)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return out, transform.NewTree, nil
}

// foreignCollation is a column compared under another collation than
// its own; see above. It is the column in every other respect.
type foreignCollation struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*foreignCollation)(nil)
var _ gsql.CollationCoercible = (*foreignCollation)(nil)

// Type implements sql.Expression.
func (f *foreignCollation) Type() gsql.Type { return f.Child.Type() }

// IsNullable implements sql.Expression.
func (f *foreignCollation) IsNullable() bool { return f.Child.IsNullable() }

// String implements sql.Expression: the column's own text, so that
// plans and KeepJoinConditions see the condition as written.
func (f *foreignCollation) String() string { return f.Child.String() }

// Eval implements sql.Expression.
func (f *foreignCollation) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	return f.Child.Eval(ctx, row)
}

// CollationCoercibility implements sql.CollationCoercible: the column's.
func (f *foreignCollation) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, f.Child)
}

// WithChildren implements sql.Expression.
func (f *foreignCollation) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(f, len(children), 1)
	}
	return &foreignCollation{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}
