package compat

import (
	"reflect"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS's planner types a query's references to a derived table's columns
// (SELECT v FROM (SELECT AVG(c) AS v ...) z) when it builds the plan,
// from the derived table's select list as it then stood. percdb's rules
// that change a column's type run later, when the derived table is
// analyzed on its own (exact AVG, integer DATE + 0, a UNION typed again
// by RetypeUnions), so the outer query's references kept the old type:
// an ORDER BY v sorted a UNION column of DECIMALs as the first side's
// integers, and the result column was announced as DOUBLE though its
// values were DECIMALs. DerivedColumnTypes, run once the derived tables
// of a scope are analyzed (after GMS's finalizeSubqueries), gives each
// reference the type its derived table's column has now.

// DerivedColumnTypes is the analyzer rule; see the comment above.
func DerivedColumnTypes(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	cols := derivedColumns(n)
	if len(cols) == 0 {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprs(n, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return e, transform.SameTree, nil
		}
		c, ok := cols[derivedColumn{gf.TableId(), gf.Id()}]
		if !ok || reflect.DeepEqual(c.Type, gf.Type()) {
			return e, transform.SameTree, nil
		}
		return fieldOfType(gf, c.Type, gf.IsNullable()), transform.NewTree, nil
	})
}

// derivedColumn names a column of a derived table: the table's id and
// the column's.
type derivedColumn struct {
	table gsql.TableId
	col   gsql.ColumnId
}

// derivedColumns returns the columns of the derived tables in n's scope
// (not inside other opaque nodes), by table and column id. A derived
// table's column ids follow its schema's order, as GMS's planner gives
// them.
func derivedColumns(n gsql.Node) map[derivedColumn]*gsql.Column {
	var cols map[derivedColumn]*gsql.Column
	transform.Inspect(n, func(n gsql.Node) bool {
		sa, ok := n.(*plan.SubqueryAlias)
		if !ok {
			if o, ok := n.(gsql.OpaqueNode); ok && o.Opaque() {
				return false
			}
			return true
		}
		sch := sa.Schema()
		ids := sa.Columns()
		if ids.Len() != len(sch) {
			return false
		}
		i := 0
		ids.ForEach(func(id gsql.ColumnId) {
			if cols == nil {
				cols = map[derivedColumn]*gsql.Column{}
			}
			cols[derivedColumn{sa.Id(), id}] = sch[i]
			i++
		})
		return false
	})
	return cols
}

// GMS types a recursive CTE's columns with the anchor's types promoted
// (planbuilder's buildRecursiveCte: Type.Promote, "the recursive part
// may produce wider types"), so a DATE column came back as a DATETIME(6)
// ('2020-01-01 00:00:00.000000') and a DATETIME with six zero digits.
// MySQL types them by the anchor alone (a recursive part's value is
// converted to the anchor's type). RecursiveCteTypes gives a recursive
// CTE's temporal columns the anchor's types again, before
// DerivedColumnTypes gives its readers those types; a number or a
// string keeps GMS's wider type, which writes its values as MySQL does.

// RecursiveCteTypes is the analyzer rule; see the comment above.
func RecursiveCteTypes(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		rc, ok := n.(*plan.RecursiveCte)
		if !ok {
			return n, transform.SameTree, nil
		}
		sch, anchor := rc.Schema(), rc.Left().Schema()
		if len(sch) != len(anchor) {
			return n, transform.SameTree, nil
		}
		var out gsql.Schema
		for i, c := range sch {
			t := anchor[i].Type
			if !(types.IsTime(t) || isTimeType(t)) || reflect.DeepEqual(c.Type, t) {
				continue
			}
			if out == nil {
				out = make(gsql.Schema, len(sch))
				copy(out, sch)
			}
			nc := c.Copy()
			nc.Type = t
			out[i] = nc
		}
		if out == nil {
			return n, transform.SameTree, nil
		}
		return rc.WithSchema(out), transform.NewTree, nil
	})
}
