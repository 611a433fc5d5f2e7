package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// The ORDER BY of a set operation is a field of the union's row that
// GMS's assignExecIndexes finds by its column id, else by its name,
// taking the last column of that name. The ids of the left side's
// select items are lost on the way (any rule that rewrites an item
// through GMS's Alias.WithChildren drops its id, and the conversion
// projection of a union's side has none), so when the first side names
// two columns alike, ORDER BY 1 sorted by the last of them:
// SELECT x AS a, a FROM t UNION SELECT 1, 2 ORDER BY 1 was ordered by
// the second column, and its type was the first's.
//
// UnionOrderColumns, run before GMS resolves the unions, while the ids
// of the planner's select items are still there, finds each ORDER BY
// field's position among the left side's columns and makes it a
// unionColumn: a field of that name and no id, which assignExecIndexes
// finds at the last column of the name (after the outer scope's
// columns a union's rows in a subquery begin with), read that many
// columns before it.
// Only set operations whose columns repeat a name are touched; with
// unique names GMS finds the column by name.

// UnionOrderColumns is the analyzer rule; see the comment above. It
// rewrites the set operations n holds without entering their sides or
// subqueries: the caller applies it in every scope.
func UnionOrderColumns(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		s, ok := n.(*plan.SetOp)
		if !ok || len(s.SortFields) == 0 {
			return n, transform.SameTree, nil
		}
		sch := s.Left().Schema()
		if _, repeats := repeatedName(schemaNames(sch)); !repeats {
			return n, transform.SameTree, nil
		}
		items := leftItems(s.Left(), len(sch))
		ids := make([]gsql.ColumnId, len(sch))
		for j, e := range items {
			if ide, ok := e.(gsql.IdExpression); ok {
				ids[j] = ide.Id()
			}
		}
		sf := make(gsql.SortFields, len(s.SortFields))
		copy(sf, s.SortFields)
		changed := false
		for i, f := range sf {
			gf, ok := f.Column.(*expression.GetField)
			if !ok || gf.Id() == 0 {
				continue
			}
			// The planner's field for a position is the select item
			// itself when that is a column (two items of one column
			// share its id: SELECT c, c ... ORDER BY 2), else a field
			// of the item's id.
			found := false
			for j, e := range items {
				if e == gsql.Expression(gf) {
					sf[i].Column = newUnionColumn(sch, j)
					sf[i].Column2 = nil
					changed, found = true, true
					break
				}
			}
			if found {
				continue
			}
			for j, id := range ids {
				if id == gf.Id() {
					sf[i].Column = newUnionColumn(sch, j)
					sf[i].Column2 = nil
					changed = true
					break
				}
			}
		}
		if !changed {
			return n, transform.SameTree, nil
		}
		u := *s
		u.SortFields = sf
		return &u, transform.NewTree, nil
	})
}

// leftItems returns the select items of the n columns of side, a set
// operation's left side (nil where it has none): through the left sides
// of nested set operations and their conversions of the columns' types,
// and the nodes of one child with the same columns above a select list.
func leftItems(side gsql.Node, n int) []gsql.Expression {
	for {
		if s, ok := side.(*plan.SetOp); ok {
			side = s.Left()
			continue
		}
		raw, conv := unionSide(side)
		if conv != nil {
			side = raw
			continue
		}
		if p, ok := side.(*plan.Project); ok {
			items := make([]gsql.Expression, n)
			copy(items, p.Projections)
			return items
		}
		if c := side.Children(); len(c) == 1 && len(c[0].Schema()) == n {
			side = c[0]
			continue
		}
		return make([]gsql.Expression, n)
	}
}

// unionColumn is column pos of a set operation's columns: its field,
// the column of its name that assignExecIndexes finds, is column last.
type unionColumn struct {
	pos, last int
	field     *expression.GetField
}

var _ gsql.Expression = (*unionColumn)(nil)

// newUnionColumn returns the unionColumn of column pos of sch.
func newUnionColumn(sch gsql.Schema, pos int) *unionColumn {
	c := sch[pos]
	last := pos
	for j := range sch {
		if strings.EqualFold(sch[j].Name, c.Name) {
			last = j
		}
	}
	field := expression.NewGetFieldWithTable(0, 0, c.Type, "", "", c.Name, c.Nullable)
	return &unionColumn{pos: pos, last: last, field: field}
}

// withType returns c of type t (RetypeUnions types the union again).
func (c *unionColumn) withType(t gsql.Type) *unionColumn {
	r := *c
	r.field = fieldOfType(c.field, t, c.field.IsNullable())
	return &r
}

// Resolved implements sql.Expression.
func (c *unionColumn) Resolved() bool { return true }

// String implements sql.Expression.
func (c *unionColumn) String() string { return c.field.Name() }

// Type implements sql.Expression.
func (c *unionColumn) Type() gsql.Type { return c.field.Type() }

// IsNullable implements sql.Expression.
func (c *unionColumn) IsNullable() bool { return c.field.IsNullable() }

// Eval implements sql.Expression.
func (c *unionColumn) Eval(_ *gsql.Context, row gsql.Row) (interface{}, error) {
	i := c.field.Index() - c.last + c.pos
	if i < 0 || i >= len(row) {
		return nil, fmt.Errorf("union ORDER BY: column %d read at %d of a row of %d", c.pos+1, i, len(row))
	}
	return row[i], nil
}

// Children implements sql.Expression: the field.
func (c *unionColumn) Children() []gsql.Expression { return []gsql.Expression{c.field} }

// WithChildren implements sql.Expression.
func (c *unionColumn) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), 1)
	}
	gf, ok := children[0].(*expression.GetField)
	if !ok {
		return nil, fmt.Errorf("union ORDER BY: %T for a field", children[0])
	}
	r := *c
	r.field = gf
	return &r, nil
}
