package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// A result column read from a table says where it comes from in its
// column definition: MySQL's Field::make_send_field gives the table by
// the query's alias (table), the table's own name (org_table), the
// column's own name (org_name) and the database, whatever alias the
// column has in the result (Item_field::make_field keeps them and puts
// the alias in name); an expression has them empty (Item::init_make_field).
// Drivers read them: JDBC's ResultSetMetaData.getTableName and
// getColumnName, SQLAlchemy and Rails' type mapping. GMS's schemaToFields
// gives table and org_table the column's Source (the table's alias, so
// `SELECT s FROM t e` said org_table e) and org_name the result's name,
// and an aliased column (`SELECT s AS c FROM t e`) has no Source at all
// (transform.ExpressionToColumn takes it only from a Tableable, which
// an Alias is not): it said table and org_table empty, org_name c, and
// a number's column BINARY.
//
// ResultOrigins finds, for each result column of a query's top
// projection that is a column of a table in its FROM (bare or aliased),
// the table it reads and the column's own name, and wraps the
// projection in an originColumn, whose Source carries all three to the
// column definitions, where FixOrigins reads them back. A column of a
// derived table or a view names the derived table or view as its
// org_table, as MariaDB 10.11 does (MySQL 8 names the base table of a
// derived table it merges; see docs/compatibility.md).

// originSep separates the parts of an originColumn's Source: no
// identifier holds a NUL.
const originSep = "\x00"

// ResultOrigins is the analyzer rule above. It runs on a query's own
// plan only (an empty scope), not on its subqueries, derived tables or
// a procedure's statements, analyzed apart.
func ResultOrigins(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	if !scope.IsEmpty() {
		return n, transform.SameTree, nil
	}
	return withResultOrigins(ctx, n)
}

// withResultOrigins rewrites the top projection of n, found below the
// nodes that keep their child's columns (ORDER BY, LIMIT, DISTINCT,
// HAVING).
func withResultOrigins(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	switch x := n.(type) {
	case *plan.Project:
		return projectionOrigins(ctx, x)
	case *plan.Sort, *plan.TopN, *plan.Limit, *plan.Offset, *plan.Distinct, *plan.OrderedDistinct, *plan.Having, *plan.Filter:
		children := n.Children()
		if len(children) != 1 {
			return n, transform.SameTree, nil
		}
		child, same, err := withResultOrigins(ctx, children[0])
		if err != nil || same {
			return n, transform.SameTree, err
		}
		out, err := n.WithChildren(child)
		if err != nil {
			return n, transform.SameTree, err
		}
		return out, transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

// projectionOrigins wraps p's projections that are columns of its
// tables in originColumns.
func projectionOrigins(ctx *gsql.Context, p *plan.Project) (gsql.Node, transform.TreeIdentity, error) {
	changed := false
	projections := make([]gsql.Expression, len(p.Projections))
	for i, e := range p.Projections {
		projections[i] = e
		gf, name := originField(e)
		if gf == nil || gf.Table() == "" {
			continue
		}
		table, column, db, ok := columnOrigin(ctx, p.Child, gf.Table(), gf.Name())
		if !ok {
			continue
		}
		if db == "" {
			db = gf.Database()
		}
		projections[i] = &originColumn{
			UnaryExpression: expression.UnaryExpression{Child: e},
			name:            name,
			source:          strings.Join([]string{gf.Table(), table, column}, originSep),
			db:              db,
		}
		changed = true
	}
	if !changed {
		return p, transform.SameTree, nil
	}
	out, err := p.WithExpressions(projections...)
	if err != nil {
		return p, transform.SameTree, err
	}
	return out, transform.NewTree, nil
}

// originField returns the table column e projects, under an alias or
// a result column's wrapper (NullableResults), with the result's name;
// nil for any other expression.
func originField(e gsql.Expression) (*expression.GetField, string) {
	name := ""
	if a, ok := e.(*expression.Alias); ok {
		name, e = a.Name(), a.Child
	}
	if rc, ok := e.(*resultColumn); ok {
		e = rc.Child
	}
	gf, ok := e.(*expression.GetField)
	if !ok {
		return nil, ""
	}
	if name == "" {
		name = gf.Name()
	}
	return gf, name
}

// columnOrigin finds the relation called alias among n's (not inside a
// derived table or view: the columns above name those) and returns its
// own name, the own name of its column called column and its database:
// a table's, or a derived table's or view's name as it is given.
func columnOrigin(ctx *gsql.Context, n gsql.Node, alias, column string) (table, orgColumn, db string, ok bool) {
	transform.Inspect(n, func(c gsql.Node) bool {
		if ok {
			return false
		}
		switch x := c.(type) {
		case *plan.TableAlias:
			if !strings.EqualFold(x.Name(), alias) {
				return true
			}
			var isTable bool
			if table, db, isTable = underlyingTable(x.Child); !isTable {
				table, db = x.Name(), ctx.GetCurrentDatabase()
			}
			orgColumn, ok = schemaColumn(x.Schema(), column)
			return false
		case *plan.SubqueryAlias:
			if strings.EqualFold(x.Name(), alias) {
				table, db = x.Name(), ctx.GetCurrentDatabase()
				orgColumn, ok = schemaColumn(x.Schema(), column)
			}
			return false
		case *plan.SetOp:
			return false
		}
		if tn, isTable := c.(gsql.TableNode); isTable && tn.UnderlyingTable() != nil {
			if nn, named := c.(gsql.Nameable); named && strings.EqualFold(nn.Name(), alias) {
				table, db, _ = underlyingTable(c)
				orgColumn, ok = schemaColumn(c.Schema(), column)
			}
			return false
		}
		return true
	})
	return table, orgColumn, db, ok
}

// underlyingTable returns the table n reads, when n is one (maybe
// behind an index access or percdb's wrappers of one table), and its
// database's name.
func underlyingTable(n gsql.Node) (table, db string, ok bool) {
	transform.Inspect(n, func(c gsql.Node) bool {
		if ok {
			return false
		}
		switch c.(type) {
		case *plan.SubqueryAlias, *plan.TableAlias, *plan.SetOp:
			return false
		}
		tn, isTable := c.(gsql.TableNode)
		if !isTable || tn.UnderlyingTable() == nil {
			return true
		}
		table, ok = tn.UnderlyingTable().Name(), true
		if d, isDB := c.(gsql.Databaser); isDB && d.Database() != nil {
			db = d.Database().Name()
		}
		return false
	})
	return table, db, ok
}

// schemaColumn returns the name of schema's column called name, as the
// schema spells it.
func schemaColumn(schema gsql.Schema, name string) (string, bool) {
	for _, c := range schema {
		if strings.EqualFold(c.Name, name) {
			return c.Name, true
		}
	}
	return "", false
}

// originColumn is a result column read from a table: its child's value
// and type, named as its child, with a Source (Table) that carries the
// table's alias, the table's own name and the column's own name to the
// column definitions (FixOrigins).
type originColumn struct {
	expression.UnaryExpression
	name   string
	source string
	db     string
}

var (
	_ gsql.Nameable           = (*originColumn)(nil)
	_ gsql.Tableable          = (*originColumn)(nil)
	_ gsql.Databaseable       = (*originColumn)(nil)
	_ gsql.CollationCoercible = (*originColumn)(nil)
)

// Name implements sql.Nameable: the result column's name.
func (o *originColumn) Name() string { return o.name }

// Table implements sql.Tableable: the origin, for FixOrigins.
func (o *originColumn) Table() string { return o.source }

// Database implements sql.Databaseable.
func (o *originColumn) Database() string { return o.db }

// Type implements sql.Expression.
func (o *originColumn) Type() gsql.Type { return o.Child.Type() }

// IsNullable implements sql.Expression.
func (o *originColumn) IsNullable() bool { return o.Child.IsNullable() }

// Eval implements sql.Expression.
func (o *originColumn) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	return o.Child.Eval(ctx, row)
}

// String implements sql.Expression: the child's, which EXPLAIN shows.
func (o *originColumn) String() string { return o.Child.String() }

// WithChildren implements sql.Expression.
func (o *originColumn) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(o, len(children), 1)
	}
	return &originColumn{UnaryExpression: expression.UnaryExpression{Child: children[0]}, name: o.name, source: o.source, db: o.db}, nil
}

// CollationCoercibility implements sql.CollationCoercible: the child's.
func (o *originColumn) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, o.Child)
}

// FixOrigins gives the column definitions among fields that carry an
// originColumn's Source their table, org_table and org_name, as MySQL
// sends them (see ResultOrigins). Any other field is left as it is.
func FixOrigins(fields []*querypb.Field) {
	for _, f := range fields {
		if !strings.Contains(f.Table, originSep) {
			continue
		}
		parts := strings.SplitN(f.Table, originSep, 3)
		f.Table, f.OrgTable = parts[0], parts[0]
		if len(parts) == 3 {
			f.OrgTable, f.OrgName = parts[1], parts[2]
		}
	}
}
