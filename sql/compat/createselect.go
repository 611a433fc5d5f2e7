package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// CREATE TABLE ... AS SELECT takes its columns from the SELECT's result
// (GMS's resolveCreateSelect), and two of GMS's column facts there are
// not MySQL's:
//
//   - SUM, AVG's siblings MIN and MAX, GROUP_CONCAT and the other
//     aggregates but COUNT and the BIT_ ones say they are never NULL,
//     so the column was NOT NULL and an aggregate over no rows (CREATE
//     TABLE c AS SELECT SUM(a) FROM empty) failed 1048 on its NULL. In
//     MySQL such a column is NULL, and so is any expression over one
//     (SUM(a) + 1), unless a function that replaces NULL (COALESCE,
//     IFNULL) stands between;
//   - a bare NULL has GMS's NULL type, which no column has ('parse type
//     "null"', 1105); MySQL makes it BINARY(0) NULL.
//
// And GMS's planner fills the new table's columns from the SELECT as it
// built it, before any analysis (planbuilder's buildCreateTable), and
// resolveCreateSelect keeps those over the analyzed SELECT's of the same
// name (mergeSchemas): the table's types were GMS's expression types
// where percdb's rules retype the SELECT (SUM of an INT a DOUBLE, where
// percdb's exact aggregate and the wire's column definition of the same
// SELECT are DECIMAL(32,0)). When the statement defines no columns of
// its own, the new table's columns take the analyzed SELECT's types,
// the schema the wire's column definitions are read from: the result
// types are worked out in one place, for both.
//
// CreateSelectTypes wraps that rule and corrects the new table's columns
// in place; a CREATE TABLE with columns of its own beside the SELECT's
// is left as GMS built it.
func CreateSelectTypes(apply analyzer.RuleFunc) analyzer.RuleFunc {
	return func(ctx *gsql.Context, a *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, sel analyzer.RuleSelector, qFlags *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
		out, same, err := apply(ctx, a, n, scope, sel, qFlags)
		if err != nil || same == transform.SameTree {
			return out, same, err
		}
		tc, ok := out.(*plan.TableCopier)
		if !ok {
			return out, same, nil
		}
		ct, ok := tc.Destination.(*plan.CreateTable)
		if !ok {
			return out, same, nil
		}
		dest, src := ct.PkSchema().Schema, tc.Source.Schema()
		if len(dest) != len(src) {
			return out, same, nil
		}
		for i := range dest {
			if dest[i].Name != src[i].Name {
				return out, same, nil
			}
		}
		ownColumns := definesColumns(ctx.Query())
		nullable := nullableColumns(tc.Source)
		for i, c := range dest {
			if !ownColumns {
				c.Type = src[i].Type
				if sv, ok := c.Type.(gsql.SystemVariableType); ok {
					c.Type = sv.UnderlyingType()
				}
			}
			if c.Type == types.Null {
				c.Type = types.MustCreateBinary(sqltypes.Binary, 0)
				c.Nullable = true
			}
			if nullable[i] || !ownColumns {
				c.Nullable = nullable[i]
			}
		}
		return out, same, nil
	}
}

// replacingNode is a node of percdb's that stands for a plan of GMS's it
// replaced and runs in its place (sql's coprocessor reads).
type replacingNode interface {
	Replaced() gsql.Node
}

// nullableColumns returns, for each column of n's result, whether MySQL
// holds it may be NULL: GMS's word, or an expression that reads an
// aggregate that may be NULL, or such a column of the node below.
func nullableColumns(n gsql.Node) []bool {
	sch := n.Schema()
	out := make([]bool, len(sch))
	for i, c := range sch {
		out[i] = c.Nullable
	}
	var exprs []gsql.Expression
	var below []bool
	switch n := n.(type) {
	case *plan.Project:
		exprs, below = n.Projections, nullableColumns(n.Child)
	case *plan.GroupBy:
		exprs, below = n.SelectedExprs, nullableColumns(n.Child)
	case *plan.Window:
		exprs, below = n.SelectExprs, nullableColumns(n.Child)
	case *plan.SetOp:
		for _, side := range []gsql.Node{n.Left(), n.Right()} {
			if s := nullableColumns(side); len(s) == len(out) {
				for i := range out {
					out[i] = out[i] || s[i]
				}
			}
		}
		return out
	case replacingNode:
		// percdb's coprocessor read: the plan it stands for says.
		if s := nullableColumns(n.Replaced()); len(s) == len(out) {
			for i := range out {
				out[i] = out[i] || s[i]
			}
		}
		return out
	case gsql.Projector:
		return out
	default:
		// A node that passes its child's rows on (a filter, sort,
		// limit, DISTINCT, alias of a derived table).
		if children := n.Children(); len(children) == 1 {
			if s := nullableColumns(children[0]); len(s) == len(out) {
				for i := range out {
					out[i] = out[i] || s[i]
				}
			}
		}
		return out
	}
	if len(exprs) != len(out) {
		return out
	}
	for i, e := range exprs {
		out[i] = out[i] || readsNullable(e, below)
	}
	return out
}

// readsNullable reports whether e reads an aggregate that may be NULL, or a
// column of below (the columns of the node e reads) that may, outside
// the arguments of a function that replaces NULL.
func readsNullable(e gsql.Expression, below []bool) bool {
	switch x := e.(type) {
	case *aggregation.Count, *aggregation.CountDistinct, *aggregation.BitAnd, *aggregation.BitOr, *aggregation.BitXor:
		return false
	case gsql.Aggregation:
		return true
	case *notNullResult:
		return false
	case *expression.GetField:
		i := x.Index()
		return i >= 0 && i < len(below) && below[i]
	case gsql.FunctionExpression:
		switch strings.ToLower(x.FunctionName()) {
		case "coalesce", "ifnull":
			return false
		}
	}
	for _, c := range e.Children() {
		if readsNullable(c, below) {
			return true
		}
	}
	return false
}

// definesColumns reports whether query, a CREATE TABLE … SELECT, defines
// columns (or keys) of its own, and true when it cannot tell.
func definesColumns(query string) bool {
	stmt, err := sqlparser.Parse(query)
	if err != nil {
		return true
	}
	ddl, ok := stmt.(*sqlparser.DDL)
	return !ok || ddl.OptSelect == nil || ddl.TableSpec != nil
}

// NullableResults makes the plan's columns nullable where MySQL holds
// they may be NULL (nullableColumns) and GMS says they may not: GMS's
// MIN, MAX, SUM, AVG, GROUP_CONCAT say they are never NULL, so the
// wire's column definition of SELECT MAX(a) FROM t carried the NOT_NULL
// flag, though an aggregate over no rows is NULL. The rule rebuilds each
// projection's GetFields of such a column of the node below as
// nullable, and the expressions over them (SUM(a) + 1) follow; the wire
// (the result's schema) and CREATE TABLE … AS SELECT (CreateSelectTypes)
// then read the one answer. It runs once the plan's column indexes are
// final.
func NullableResults(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		p, ok := n.(*plan.Project)
		if !ok {
			return n, transform.SameTree, nil
		}
		// What the child says of its columns' NULLs, read once a
		// projection needs it: most plans have no NOT NULL field to check.
		var below []bool
		projections, same, err := transform.Exprs(p.Projections, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			if a, ok := e.(*expression.Alias); ok && a.IsNullable() && !replacedNullable(a.Child) {
				// GMS's COALESCE says it may be NULL when its first
				// argument may, IFNULL when its first may: MySQL's
				// when every argument may, when the second may.
				return expression.NewAlias(a.Name(), &notNullResult{UnaryExpression: expression.UnaryExpression{Child: a.Child}}).WithId(a.Id()), transform.NewTree, nil
			}
			gf, ok := e.(*expression.GetField)
			if !ok || gf.IsNullable() {
				return e, transform.SameTree, nil
			}
			if below == nil {
				below = nullableColumns(p.Child)
			}
			i := gf.Index()
			if i < 0 || i >= len(below) || !below[i] {
				return e, transform.SameTree, nil
			}
			return expression.NewGetFieldWithTable(i, int(gf.TableId()), gf.Type(), gf.Database(), gf.Table(), gf.Name(), true).WithId(gf.Id()).(*expression.GetField), transform.NewTree, nil
		})
		if err != nil || same {
			return n, transform.SameTree, err
		}
		out, err := p.WithExpressions(projections...)
		return out, transform.NewTree, err
	})
}

// replacedNullable reports whether e, a COALESCE or IFNULL, may be NULL
// as MySQL holds (Item_func_coalesce: every argument may; Item_func_ifnull:
// the second may), and true for any other expression.
func replacedNullable(e gsql.Expression) bool {
	switch f := e.(type) {
	case *function.Coalesce:
		for _, arg := range f.Children() {
			if arg != nil && !replacedNullable(arg) {
				return false
			}
		}
		return true
	case *function.IfNull:
		return replacedNullable(f.RightChild)
	case *decimalCoalesce:
		// A COALESCE or IFNULL of numbers in MySQL's DECIMAL type
		// (rows.go).
		return replacedNullable(f.orig)
	}
	return e.IsNullable()
}

// notNullResult is a result column that is never NULL where GMS's
// expression says it may be (a COALESCE whose last argument is a
// constant): it evaluates its child and says so (NullableResults).
type notNullResult struct {
	expression.UnaryExpression
}

var _ gsql.CollationCoercible = (*notNullResult)(nil)

// Type implements sql.Expression.
func (n *notNullResult) Type() gsql.Type { return n.Child.Type() }

// IsNullable implements sql.Expression.
func (n *notNullResult) IsNullable() bool { return false }

// Eval implements sql.Expression.
func (n *notNullResult) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	return n.Child.Eval(ctx, row)
}

// String implements sql.Expression: the child's text, which names the
// column.
func (n *notNullResult) String() string { return n.Child.String() }

// WithChildren implements sql.Expression.
func (n *notNullResult) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	return &notNullResult{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// CollationCoercibility implements sql.CollationCoercible: the child's.
func (n *notNullResult) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, n.Child)
}
