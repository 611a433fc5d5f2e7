package compat

import (
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// INSERT … SELECT … ON DUPLICATE KEY UPDATE c = o.x: MySQL's assignment
// values may read the columns of the SELECT's tables, from the selected
// row that met the duplicate (the manual, INSERT … ON DUPLICATE KEY
// UPDATE). Its name resolution (Sql_cmd_insert_select::prepare_inner)
// puts the inserted table first and, unless the SELECT groups (GROUP BY
// or an aggregate), has window functions or is a UNION, the SELECT's
// FROM tables after it, derived tables by their alias:
//
//   - a name found in one of them is that column; in two or more it is
//     1052 (`Column 'c' in field list is ambiguous`, a qualified name
//     too when the SELECT reads the inserted table under its own name),
//     unless qualified with a database, when the first wins;
//   - a name found in none is 1054, as are the SELECT's aliases (they
//     are no table's columns);
//   - VALUES(c) is the value the row would have inserted, a column of
//     the inserted table only.
//
// GMS's planner resolves the values against the inserted table and the
// SELECT's output columns only: `c = o.x` was 1054 or 1105 ambiguous.
// percdb carries the SELECT's columns beside the inserted row:
//
//  1. selectedColumnRefs writes each column name of an assignment value
//     (outside subqueries) of such a statement as
//     percdb_odku_column('db', 'table', 'column'), and each VALUES(c) as
//     percdb_odku_values(…), which the planner takes as they are;
//  2. the SelectedColumns rule (run after GMS's assignExecIndexes, before
//     resolveInsertRows analyzes the SELECT) resolves each by the rules
//     above: a column of the inserted table becomes the GetField of the
//     old row's value GMS would have made; a column of the SELECT's
//     tables is appended to the SELECT's own projection (so pruning and
//     index fixing keep it) and becomes a SelectedColumn reading that
//     slot;
//  3. at execution (BindSelectedColumns, from the row-iterator builder)
//     a SelectedRows node over the SELECT keeps each row's appended
//     values in a holder made for that execution, and the statement's
//     SelectedColumns read them. The INSERT takes one row of its source
//     and inserts or updates it before it asks for the next (GMS's
//     insertIter; every node between the two streams), so the holder has
//     the row that met the duplicate.
//
// Subqueries in an assignment value keep GMS's resolution (a reference
// to the SELECT's tables there is 1054); their outer scope is the row
// that met the duplicate (ScopedUpsertSubqueries below). A DISTINCT
// SELECT whose assignments read a column it does not return is 1235: the
// column would change which rows are distinct.

// selectedColumnFunction is the stand-in of a column name in an
// assignment value, between the parser and the SelectedColumns rule;
// insertedValueFunction that of VALUES(c), which GMS's planner resolves
// for an INSERT of VALUES only (1105 "expected ON DUPLICATE KEY ...
// VALUES() to reference a column" after a SELECT).
const (
	selectedColumnFunction = "percdb_odku_column"
	insertedValueFunction  = "percdb_odku_values"
)

// Error codes of the column names of an assignment value.
const (
	codeBadField  = 1054 // ER_BAD_FIELD_ERROR
	stateBadField = "42S22"
	codeNonUniq   = 1052 // ER_NON_UNIQ_ERROR
	stateNonUniq  = "23000"
)

// selectedColumnRefs rewrites the column names of stmt's ON DUPLICATE KEY
// UPDATE values, when stmt is an INSERT … SELECT, in place (step 1 at
// the top of the file).
func selectedColumnRefs(stmt ast.Statement) ast.Statement {
	ins, ok := stmt.(*ast.Insert)
	if !ok || len(ins.OnDup) == 0 {
		return stmt
	}
	if _, ok := ins.Rows.(ast.SelectStatement); !ok {
		return stmt
	}
	for _, ue := range ins.OnDup {
		var refs []ast.Expr
		_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
			switch n := node.(type) {
			case *ast.Subquery:
				return false, nil
			case *ast.ValuesFuncExpr:
				if n.Name != nil && n.Name.StoredProcVal == nil {
					refs = append(refs, n)
				}
				return false, nil
			case *ast.ColName:
				if n.StoredProcVal == nil {
					refs = append(refs, n)
				}
				return false, nil
			}
			return true, nil
		}, ue.Expr)
		for _, r := range refs {
			name, c := selectedColumnFunction, r
			if v, ok := r.(*ast.ValuesFuncExpr); ok {
				name, c = insertedValueFunction, v.Name
			}
			col := c.(*ast.ColName)
			ue.Expr = ast.ReplaceExpr(ue.Expr, r, &ast.FuncExpr{Name: ast.NewColIdent(name), Exprs: ast.SelectExprs{
				&ast.AliasedExpr{Expr: ast.NewStrVal([]byte(col.Qualifier.DbQualifier.String()))},
				&ast.AliasedExpr{Expr: ast.NewStrVal([]byte(col.Qualifier.Name.String()))},
				&ast.AliasedExpr{Expr: ast.NewStrVal([]byte(col.Name.String()))},
			}})
		}
	}
	return stmt
}

// selectedColumnFunctions holds percdb_odku_column by name. It is not
// changed after the package is initialized.
var selectedColumnFunctions = map[string]gsql.Function{
	selectedColumnFunction: gsql.FunctionN{Name: selectedColumnFunction, Fn: newColumnRef},
	insertedValueFunction: gsql.FunctionN{Name: insertedValueFunction, Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		e, err := newColumnRef(args...)
		if err != nil {
			return nil, err
		}
		c := e.(*columnRef)
		c.inserted = true
		return c, nil
	}},
}

// columnRef is a column name of an assignment value, not yet resolved
// (percdb_odku_column(db, table, column)), or, inserted, the argument
// of its VALUES() (percdb_odku_values).
type columnRef struct {
	db, table, col string
	inserted       bool
}

var _ gsql.FunctionExpression = (*columnRef)(nil)

// newColumnRef builds a columnRef from its three string literals.
func newColumnRef(args ...gsql.Expression) (gsql.Expression, error) {
	if len(args) != 3 {
		return nil, gsql.ErrInvalidArgumentNumber.New(selectedColumnFunction, 3, len(args))
	}
	var parts [3]string
	for i, e := range args {
		l, ok := e.(*expression.Literal)
		if !ok {
			return nil, fmt.Errorf("%s: %s is not a literal", selectedColumnFunction, e)
		}
		s, ok := l.Value().(string)
		if !ok {
			return nil, fmt.Errorf("%s: %s is not a string", selectedColumnFunction, e)
		}
		parts[i] = s
	}
	return &columnRef{db: parts[0], table: parts[1], col: parts[2]}, nil
}

// written is the name as the statement wrote it, for error messages.
func (c *columnRef) written() string {
	s := c.col
	if c.table != "" {
		s = c.table + "." + s
	}
	if c.db != "" {
		s = c.db + "." + s
	}
	return s
}

// names reports whether c's qualifiers, where written, name the table
// of database db.
func (c *columnRef) names(db, table string) bool {
	return (c.table == "" || strings.EqualFold(c.table, table)) && (c.db == "" || strings.EqualFold(c.db, db))
}

// FunctionName implements sql.FunctionExpression.
func (c *columnRef) FunctionName() string { return selectedColumnFunction }

// Description implements sql.FunctionExpression.
func (c *columnRef) Description() string {
	return "a column name of an ON DUPLICATE KEY UPDATE value (percdb, internal)"
}

// Resolved implements sql.Expression.
func (c *columnRef) Resolved() bool { return true }

// String implements sql.Expression.
func (c *columnRef) String() string { return c.written() }

// Type implements sql.Expression: unknown until resolved.
func (c *columnRef) Type() gsql.Type { return types.Null }

// IsNullable implements sql.Expression.
func (c *columnRef) IsNullable() bool { return true }

// Eval implements sql.Expression. The SelectedColumns rule replaces every
// columnRef of an INSERT; one met elsewhere (the function called by
// name) is the unknown column it names.
func (c *columnRef) Eval(*gsql.Context, gsql.Row) (any, error) {
	return nil, unknownColumn(c.written())
}

// Children implements sql.Expression.
func (c *columnRef) Children() []gsql.Expression { return nil }

// WithChildren implements sql.Expression.
func (c *columnRef) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), 0)
	}
	return c, nil
}

// unknownColumn is MySQL's 1054 for a column name of an assignment value.
func unknownColumn(name string) error {
	return mysql.NewSQLError(codeBadField, stateBadField, "Unknown column '%s' in 'field list'", name)
}

// SelectedColumn is a column of an INSERT … SELECT's tables read by an ON
// DUPLICATE KEY UPDATE value: slot Slot of the values the SELECT's rows
// carry after the inserted ones, read from the holder BindSelectedColumns
// gives it.
type SelectedColumn struct {
	// Slot is the value's place among the carried ones.
	Slot int
	// Name is the column as the statement wrote it.
	Name     string
	typ      gsql.Type
	nullable bool
	// row is the execution's holder; nil in the analyzed plan.
	row *selectedRow
}

var _ gsql.Expression = (*SelectedColumn)(nil)

// selectedRow holds the carried values of the row an INSERT is taking.
// Its SelectedRows iterator writes it, the statement's SelectedColumns
// read it, all on the INSERT's goroutine.
type selectedRow struct {
	values gsql.Row
}

// Resolved implements sql.Expression.
func (s *SelectedColumn) Resolved() bool { return true }

// String implements sql.Expression.
func (s *SelectedColumn) String() string { return s.Name }

// Type implements sql.Expression.
func (s *SelectedColumn) Type() gsql.Type { return s.typ }

// IsNullable implements sql.Expression.
func (s *SelectedColumn) IsNullable() bool { return s.nullable }

// CollationCoercibility implements sql.CollationCoercible: a column's.
func (s *SelectedColumn) CollationCoercibility(*gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(nil, s.typ)
}

// Eval implements sql.Expression.
func (s *SelectedColumn) Eval(*gsql.Context, gsql.Row) (any, error) {
	if s.row == nil || s.Slot >= len(s.row.values) {
		return nil, fmt.Errorf("%s: no selected row to read %s from", selectedColumnFunction, s.Name)
	}
	return s.row.values[s.Slot], nil
}

// Children implements sql.Expression.
func (s *SelectedColumn) Children() []gsql.Expression { return nil }

// WithChildren implements sql.Expression.
func (s *SelectedColumn) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(s, len(children), 0)
	}
	return s, nil
}

// selectTable is a table of an INSERT … SELECT's FROM clause, as its
// assignment values may name it.
type selectTable struct {
	db, name string
	sch      gsql.Schema
	tableID  gsql.TableId
	colIDs   []gsql.ColumnId
}

// SelectedColumns is the analyzer rule of step 2 at the top of the file.
func SelectedColumns(_ *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		ii, ok := n.(*plan.InsertInto)
		if !ok || len(ii.OnDupExprs) == 0 || !hasColumnRef(ii.OnDupExprs) {
			return n, transform.SameTree, nil
		}
		return resolveSelectedColumns(ii)
	})
}

// hasColumnRef reports whether an expression of exprs holds a columnRef.
func hasColumnRef(exprs []gsql.Expression) bool {
	for _, e := range exprs {
		if transform.InspectExpr(e, func(e gsql.Expression) bool {
			_, ok := e.(*columnRef)
			return ok
		}) {
			return true
		}
	}
	return false
}

// resolveSelectedColumns resolves the columnRefs of ii's assignment values.
func resolveSelectedColumns(ii *plan.InsertInto) (gsql.Node, transform.TreeIdentity, error) {
	dest := ii.Destination.Schema()
	destName, destDB := "", ""
	if nm, ok := ii.Destination.(gsql.Nameable); ok {
		destName = nm.Name()
	}
	if ii.Database() != nil {
		destDB = ii.Database().Name()
	}
	proj, path, tables, visible := selectProjection(ii.Source)
	var extras []gsql.Expression
	slots := map[string]*SelectedColumn{}
	resolve := func(ref *columnRef) (gsql.Expression, error) {
		type match struct {
			target bool
			t      *selectTable
			idx    int
		}
		if ref.inserted {
			// VALUES(c): the inserted table's column only, the new
			// row's value, after the old row's.
			if ref.names(destDB, destName) {
				if i := dest.IndexOfColName(ref.col); i >= 0 {
					c := dest[i]
					return expression.NewGetFieldWithTable(len(dest)+i, 0, c.Type, destDB, c.Source, c.Name, c.Nullable), nil
				}
			}
			return nil, unknownColumn(ref.written())
		}
		var found []match
		if ref.names(destDB, destName) {
			if i := dest.IndexOfColName(ref.col); i >= 0 {
				found = append(found, match{target: true, idx: i})
			}
		}
		if visible {
			for _, t := range tables {
				if ref.names(t.db, t.name) {
					if i := t.sch.IndexOfColName(ref.col); i >= 0 {
						found = append(found, match{t: t, idx: i})
					}
				}
			}
		}
		switch {
		case len(found) == 0:
			return nil, unknownColumn(ref.written())
		case len(found) > 1 && ref.db == "":
			name := ref.col
			if ref.table != "" {
				name = ref.table + "." + ref.col
			}
			return nil, mysql.NewSQLError(codeNonUniq, stateNonUniq, "Column '%s' in field list is ambiguous", name)
		}
		m := found[0]
		if m.target {
			c := dest[m.idx]
			return expression.NewGetFieldWithTable(m.idx, 0, c.Type, destDB, c.Source, c.Name, c.Nullable), nil
		}
		key := fmt.Sprintf("%d/%d", m.t.tableID, m.idx)
		if s, ok := slots[key]; ok {
			return s, nil
		}
		c := m.t.sch[m.idx]
		gf := expression.NewGetFieldWithTable(int(m.t.colIDs[m.idx]), int(m.t.tableID), c.Type, m.t.db, m.t.name, c.Name, c.Nullable)
		if proj.distinct && !selectsColumn(proj.node.Projections, m.t.colIDs[m.idx]) {
			return nil, errNotSupportedYet("ON DUPLICATE KEY UPDATE reading a column a SELECT DISTINCT does not return")
		}
		// Nullable whatever the column: an outer join's side reads
		// NULL too.
		s := &SelectedColumn{Slot: len(extras), Name: ref.written(), typ: c.Type, nullable: true}
		extras = append(extras, gf)
		slots[key] = s
		return s, nil
	}
	exprs, err := mapLeaves(ii.OnDupExprs, func(e gsql.Expression) (gsql.Expression, error) {
		if ref, ok := e.(*columnRef); ok {
			return resolve(ref)
		}
		return nil, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	out := *ii
	out.OnDupExprs = exprs
	if len(extras) > 0 {
		src, err := withExtraProjections(ii.Source, path, proj.node, extras)
		if err != nil {
			return nil, transform.SameTree, err
		}
		out.Source = src
	}
	return &out, transform.NewTree, nil
}

// mapLeaves returns exprs with each expression f returns a replacement
// for (not nil) replaced.
func mapLeaves(exprs []gsql.Expression, f func(gsql.Expression) (gsql.Expression, error)) ([]gsql.Expression, error) {
	out := make([]gsql.Expression, len(exprs))
	for i, e := range exprs {
		ne, _, err := transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			r, err := f(e)
			if err != nil || r == nil {
				return e, transform.SameTree, err
			}
			return r, transform.NewTree, nil
		})
		if err != nil {
			return nil, err
		}
		out[i] = ne
	}
	return out, nil
}

// selectsColumn reports whether projections return the column id as it
// is.
func selectsColumn(projections []gsql.Expression, id gsql.ColumnId) bool {
	for _, p := range projections {
		if a, ok := p.(*expression.Alias); ok {
			p = a.Child
		}
		if gf, ok := p.(*expression.GetField); ok && gf.Id() == id {
			return true
		}
	}
	return false
}

// selectProj is the projection of a SELECT's list, as the planner built
// it.
type selectProj struct {
	node     *plan.Project
	distinct bool
}

// selectProjection finds the projection of source's select list below
// its LIMIT, OFFSET and DISTINCT (path: the nodes above it, outermost
// first), the tables of its FROM clause, and whether an assignment value
// may read them (not under a GROUP BY, an aggregate or a window
// function, not a UNION).
func selectProjection(source gsql.Node) (selectProj, []gsql.Node, []*selectTable, bool) {
	var sp selectProj
	var path []gsql.Node
	n := source
	for {
		switch m := n.(type) {
		case *plan.Limit, *plan.Offset:
			path = append(path, m)
			n = m.Children()[0]
			continue
		case *plan.Distinct:
			sp.distinct = true
			path = append(path, m)
			n = m.Child
			continue
		}
		break
	}
	from := n
	if p, ok := n.(*plan.Project); ok {
		sp.node = p
		from = p.Child
	}
	var tables []*selectTable
	visible := true
	var walk func(n gsql.Node)
	walk = func(n gsql.Node) {
		if !visible {
			return
		}
		switch m := n.(type) {
		case *plan.GroupBy, *plan.Window, *plan.SetOp:
			visible = false
			return
		case plan.TableIdNode:
			t := &selectTable{name: m.Name(), sch: m.Schema(), tableID: m.Id()}
			m.Columns().ForEach(func(id gsql.ColumnId) { t.colIDs = append(t.colIDs, id) })
			if len(t.colIDs) != len(t.sch) {
				visible = false // not a table as the planner builds one
				return
			}
			if db, ok := m.(gsql.Databaser); ok && db.Database() != nil {
				t.db = db.Database().Name()
			} else if ta, ok := m.(*plan.TableAlias); ok {
				if db, ok := ta.Child.(gsql.Databaser); ok && db.Database() != nil {
					t.db = db.Database().Name()
				}
			}
			tables = append(tables, t)
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(from)
	if visible && sp.node == nil {
		// SELECT * of the FROM clause: the planner made no projection;
		// its rows are the tables' columns in order.
		var all []gsql.Expression
		for _, t := range tables {
			for i, c := range t.sch {
				all = append(all, expression.NewGetFieldWithTable(int(t.colIDs[i]), int(t.tableID), c.Type, t.db, t.name, c.Name, c.Nullable))
			}
		}
		if len(all) != len(from.Schema()) {
			return sp, nil, nil, false
		}
		sp.node = plan.NewProject(all, from)
	}
	return sp, path, tables, visible
}

// withExtraProjections returns source with extras appended to proj, the
// select list's projection, and the nodes of path above it rebuilt.
func withExtraProjections(source gsql.Node, path []gsql.Node, proj *plan.Project, extras []gsql.Expression) (gsql.Node, error) {
	var n gsql.Node = plan.NewProject(append(append([]gsql.Expression(nil), proj.Projections...), extras...), proj.Child)
	for i := len(path) - 1; i >= 0; i-- {
		m, err := path[i].WithChildren(n)
		if err != nil {
			return nil, err
		}
		n = m
	}
	return n, nil
}

// SelectedRows is an INSERT … SELECT's source under its destination's
// projection when its ON DUPLICATE KEY UPDATE reads the SELECT's
// columns: its rows are the child's, whose last Carried values it keeps
// in the execution's holder as each row passes.
type SelectedRows struct {
	plan.UnaryNode
	// Carried is how many values the child's rows carry after the
	// selected ones.
	Carried int
	row     *selectedRow
}

var _ gsql.Node = (*SelectedRows)(nil)

// String implements sql.Node.
func (s *SelectedRows) String() string {
	p := gsql.NewTreePrinter()
	_ = p.WriteNode("SelectedRows(%d carried)", s.Carried)
	_ = p.WriteChildren(s.Child.String())
	return p.String()
}

// WithChildren implements sql.Node.
func (s *SelectedRows) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(s, len(children), 1)
	}
	out := *s
	out.Child = children[0]
	return &out, nil
}

// IsReadOnly implements sql.Node.
func (s *SelectedRows) IsReadOnly() bool { return s.Child.IsReadOnly() }

// CollationCoercibility implements sql.CollationCoercible.
func (s *SelectedRows) CollationCoercibility(*gsql.Context) (gsql.CollationID, byte) {
	return gsql.Collation_binary, 7
}

// BindSelectedColumns returns ii with its SelectedColumns bound to a new
// holder and its SELECT under a SelectedRows that fills it (step 3 at the
// top of the file), and whether ii has any SelectedColumn still unbound.
func BindSelectedColumns(ii *plan.InsertInto) (*plan.InsertInto, bool, error) {
	carried := -1
	for _, e := range ii.OnDupExprs {
		transform.InspectExpr(e, func(e gsql.Expression) bool {
			if s, ok := e.(*SelectedColumn); ok && s.row == nil && s.Slot+1 > carried {
				carried = s.Slot + 1
			}
			return false
		})
	}
	if carried < 0 {
		return ii, false, nil
	}
	proj, ok := ii.Source.(*plan.Project)
	if !ok || len(proj.Child.Schema()) < carried {
		return nil, false, fmt.Errorf("%s: the INSERT's source is not its projection over the SELECT", selectedColumnFunction)
	}
	h := &selectedRow{}
	exprs, err := mapLeaves(ii.OnDupExprs, func(e gsql.Expression) (gsql.Expression, error) {
		if s, ok := e.(*SelectedColumn); ok {
			b := *s
			b.row = h
			return &b, nil
		}
		return nil, nil
	})
	if err != nil {
		return nil, false, err
	}
	src, err := proj.WithChildren(&SelectedRows{UnaryNode: plan.UnaryNode{Child: proj.Child}, Carried: carried, row: h})
	if err != nil {
		return nil, false, err
	}
	out := ii.WithSource(src)
	out.OnDupExprs = exprs
	return out, true, nil
}

// NewSelectedRowsIter returns the iterator of s over child's rows.
func NewSelectedRowsIter(s *SelectedRows, child gsql.RowIter) gsql.RowIter {
	return &selectedRowsIter{child: child, carried: s.Carried, row: s.row}
}

// selectedRowsIter is SelectedRows' iterator.
type selectedRowsIter struct {
	child   gsql.RowIter
	carried int
	row     *selectedRow
}

// Next implements sql.RowIter.
func (it *selectedRowsIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	r, err := it.child.Next(ctx)
	if err != nil {
		return r, err
	}
	if len(r) < it.carried {
		return nil, fmt.Errorf("%s: a selected row of %d values carries %d", selectedColumnFunction, len(r), it.carried)
	}
	it.row.values = append(it.row.values[:0], r[len(r)-it.carried:]...)
	return r, nil
}

// Close implements sql.RowIter.
func (it *selectedRowsIter) Close(ctx *gsql.Context) error {
	return it.child.Close(ctx)
}

// A subquery in an ON DUPLICATE KEY UPDATE value is analyzed by GMS as
// if no row came before its own, and evaluated after the old and new
// rows of the update: `b = (SELECT MIN(y) FROM p)` read the old row's
// first column for y (a wrong answer, in every form of INSERT), and
// `b = (SELECT y FROM p WHERE p.k = t.a)` had both columns at index 0
// (1242, or a wrong answer); after VALUES its subqueries were not given
// their row-iterator builder (1105 "attempted to evaluate uninitialized
// subquery"); IN and EXISTS failed to evaluate. MySQL evaluates such a
// subquery with the row that met the duplicate as its outer scope.
//
// ScopedUpsertSubqueries keeps the subqueries' own plans as GMS built
// them, with no row before their own, and gives them the old row
// another way: each value with a subquery becomes an upsertScope, which
// keeps the row it is evaluated on (GMS's [old row][new row]) in a
// holder and evaluates its value with no row; in the value, a column of
// that row outside the subqueries, and a column of the inserted table
// inside them (a correlated reference: the subquery's own tables,
// the inserted one under another alias too, have their own column ids),
// becomes an upsertColumn reading the holder, as does a reference to
// the values an INSERT … VALUES would have inserted (its row alias, `AS
// nw`, MySQL 8.0.19's, and VALUES(c), odkuvalues.go), read from the
// holder's new row. A correlated reference to anything else (a column
// of an INSERT … SELECT's tables, which MySQL reads from the selected
// row) stays 1235.

// ScopedUpsertSubqueries returns ii with the values of its ON DUPLICATE
// KEY UPDATE that hold a subquery evaluated as the comment above says,
// and whether it changed ii; b builds the subqueries' rows where GMS
// left them without a builder.
func ScopedUpsertSubqueries(ii *plan.InsertInto, b gsql.NodeExecBuilder) (*plan.InsertInto, bool, error) {
	var exprs []gsql.Expression
	for i, e := range ii.OnDupExprs {
		set, ok := e.(*expression.SetField)
		if !ok || !hasSubquery(set.RightChild) {
			continue
		}
		held := &upsertRow{}
		value, err := outerToHeld(set.RightChild, held, ii.Destination.Schema(), destinationName(ii.Destination), insertedValues(ii), b)
		if err != nil {
			return nil, false, err
		}
		if exprs == nil {
			exprs = append([]gsql.Expression(nil), ii.OnDupExprs...)
		}
		exprs[i] = expression.NewSetField(set.LeftChild, &upsertScope{UnaryExpression: expression.UnaryExpression{Child: value}, held: held})
	}
	if exprs == nil {
		return ii, false, nil
	}
	out := *ii
	out.OnDupExprs = exprs
	return &out, true, nil
}

// hasSubquery reports whether e holds a subquery not yet under an
// upsertScope (later rewrites wrap the value: FitUpsert).
func hasSubquery(e gsql.Expression) bool {
	found, done := false, false
	transform.InspectExpr(e, func(e gsql.Expression) bool {
		switch e.(type) {
		case *upsertScope:
			done = true
			return true
		case *plan.Subquery, *plan.InSubquery, *plan.ExistsSubquery:
			found = true
		}
		return false
	})
	return found && !done
}

// outerToHeld returns e, an assignment's value, with its columns of the
// update's row read from held: outside subqueries every GetField (its
// index is into GMS's [old row][new row]), inside them each reference
// out of the subquery (its Correlated columns) to a column of dest, the
// inserted table named name; and each subquery given b. GMS's planner
// gave the inserted table of the assignments' scope column ids of its
// own, so a reference is matched by its table's and its column's names;
// a reference to anything else (the new row's alias, the SELECT's
// tables) is 1235.
func outerToHeld(e gsql.Expression, held *upsertRow, dest gsql.Schema, name string, values newRowTable, b gsql.NodeExecBuilder) (gsql.Expression, error) {
	var subquery func(s *plan.Subquery, outer gsql.ColSet) (*plan.Subquery, error)
	subquery = func(s *plan.Subquery, outer gsql.ColSet) (*plan.Subquery, error) {
		q, _, err := transform.NodeExprsWithOpaque(s.Query, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			switch x := e.(type) {
			case *expression.GetField:
				if !outer.Contains(x.Id()) {
					break
				}
				ord := dest.IndexOfColName(x.Name())
				if strings.EqualFold(x.Table(), name) && ord >= 0 {
					return &upsertColumn{held: held, index: ord, typ: x.Type(), nullable: x.IsNullable(), name: x.String()}, transform.NewTree, nil
				}
				// The row the INSERT would have inserted: GMS's row is
				// [old row][new row], each of dest's columns.
				if ord, ok := values.ordinal(x.Table(), x.Name()); ok {
					return &upsertColumn{held: held, index: len(dest) + ord, typ: x.Type(), nullable: x.IsNullable(), name: x.String()}, transform.NewTree, nil
				}
				return nil, transform.SameTree, errNotSupportedYet("a subquery in ON DUPLICATE KEY UPDATE reading a column not of the inserted table")
			case *plan.Subquery:
				ns, err := subquery(x, outer)
				if err != nil {
					return nil, transform.SameTree, err
				}
				return ns, transform.NewTree, nil
			}
			return e, transform.SameTree, nil
		})
		if err != nil {
			return nil, err
		}
		return s.WithQuery(q).WithExecBuilder(b), nil
	}
	out, _, err := transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch x := e.(type) {
		case *expression.GetField:
			return &upsertColumn{held: held, index: x.Index(), typ: x.Type(), nullable: x.IsNullable(), name: x.String()}, transform.NewTree, nil
		case *plan.Subquery:
			ns, err := subquery(x, x.Correlated())
			if err != nil {
				return nil, transform.SameTree, err
			}
			return ns, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
	return out, err
}

// destinationName is the name of the table dest inserts into.
func destinationName(dest gsql.Node) string {
	if n, ok := dest.(gsql.Nameable); ok {
		return n.Name()
	}
	return ""
}

// upsertRow holds the row an upsertScope is evaluated on.
type upsertRow struct {
	row gsql.Row
}

// upsertScope is an assignment value with a subquery: evaluated with no
// row, its upsertColumns reading the update's row from held.
type upsertScope struct {
	expression.UnaryExpression
	held *upsertRow
}

var _ gsql.Expression = (*upsertScope)(nil)

// Type implements sql.Expression.
func (u *upsertScope) Type() gsql.Type { return u.Child.Type() }

// String implements sql.Expression: the value's own text.
func (u *upsertScope) String() string { return u.Child.String() }

// Eval implements sql.Expression.
func (u *upsertScope) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	u.held.row = row
	defer func() { u.held.row = nil }()
	return u.Child.Eval(ctx, nil)
}

// WithChildren implements sql.Expression.
func (u *upsertScope) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(u, len(children), 1)
	}
	ret := *u
	ret.Child = children[0]
	return &ret, nil
}

// upsertColumn is a column of the update's row, read from held.
type upsertColumn struct {
	held     *upsertRow
	index    int
	typ      gsql.Type
	nullable bool
	name     string
}

var _ gsql.Expression = (*upsertColumn)(nil)

// Resolved implements sql.Expression.
func (c *upsertColumn) Resolved() bool { return true }

// IsNullable implements sql.Expression.
func (c *upsertColumn) IsNullable() bool { return c.nullable }

// Type implements sql.Expression.
func (c *upsertColumn) Type() gsql.Type { return c.typ }

// Children implements sql.Expression.
func (c *upsertColumn) Children() []gsql.Expression { return nil }

// String implements sql.Expression: the column's name.
func (c *upsertColumn) String() string { return c.name }

// Eval implements sql.Expression.
func (c *upsertColumn) Eval(_ *gsql.Context, _ gsql.Row) (any, error) {
	if c.index < 0 || c.index >= len(c.held.row) {
		return nil, fmt.Errorf("ON DUPLICATE KEY UPDATE: column %s at %d of a row of %d", c.name, c.index, len(c.held.row))
	}
	return c.held.row[c.index], nil
}

// WithChildren implements sql.Expression.
func (c *upsertColumn) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 0 {
		return nil, gsql.ErrInvalidChildrenNumber.New(c, len(children), 0)
	}
	return c, nil
}

// newRowTable names the values an INSERT … VALUES would insert in the
// scope of its ON DUPLICATE KEY UPDATE: GMS's planner gives them a
// table, the row alias (`AS nw`) or planbuilder.OnDupValuesPrefix, and
// the alias's column names (`AS nw(x, y)`) or the destination's.
type newRowTable struct {
	table string
	// ordinals are the destination's ordinals by the lowered names of
	// the table's columns.
	ordinals map[string]int
}

// insertedValues returns the newRowTable of ii; its table is empty when
// ii inserts no VALUES.
func insertedValues(ii *plan.InsertInto) newRowTable {
	// GMS projects the VALUES onto the destination's columns (and
	// percdb may fit them, fit.go).
	src := ii.Source
	for {
		switch n := src.(type) {
		case *plan.Project:
			src = n.Child
			continue
		case *FitRows:
			src = n.Child
			continue
		}
		break
	}
	v, ok := src.(*plan.Values)
	if !ok {
		return newRowTable{}
	}
	dest := ii.Destination.Schema()
	t := newRowTable{table: v.AliasName, ordinals: make(map[string]int, len(dest))}
	if t.table == "" {
		t.table = planbuilder.OnDupValuesPrefix
	}
	for i, c := range dest {
		name := strings.ToLower(c.Name)
		if len(v.ColumnNames) > 0 {
			alias, ok := v.ColumnNames[name]
			if !ok {
				continue
			}
			name = strings.ToLower(alias)
		}
		t.ordinals[name] = i
	}
	return t
}

// ordinal returns the destination's ordinal of column col of table, when
// table is t's.
func (t newRowTable) ordinal(table, col string) (int, bool) {
	if t.table == "" || !strings.EqualFold(table, t.table) {
		return 0, false
	}
	ord, ok := t.ordinals[strings.ToLower(col)]
	return ord, ok
}
