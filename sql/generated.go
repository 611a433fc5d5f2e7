package sql

import (
	"context"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/tablemeta"
)

// Generated columns (`AS (expr) [VIRTUAL | STORED]`) are GMS's: its
// planner computes STORED and VIRTUAL values on INSERT, UPDATE, REPLACE
// and ON DUPLICATE KEY UPDATE and refuses a value written to one (error
// 3105, errors.go); it reads VIRTUAL ones through a projection over the
// table (plan.VirtualColumnTable). percdb keeps a generated column's
// expression and kind in the catalog (ColumnDef.Generated, .Virtual) and
// stores the computed value of every column in the row, VIRTUAL ones
// included, so that an index on a VIRTUAL column is an ordinary index of
// the row's value. ALTER TABLE ADD COLUMN of a generated column goes
// through the table copy, which computes it for the existing rows.
//
// GMS's SHOW CREATE TABLE finds a table's indexes only on a table that
// offers them itself, which the VirtualColumnTable around a table with
// VIRTUAL columns does not: the indexes were missing from its output.
// withGeneratedTableIndexes gives it the underlying table's.

// GMS's SHOW CREATE TABLE writes a STORED generated column's STORED but
// nothing after a VIRTUAL one's expression; MySQL writes VIRTUAL.
// virtualKeywords puts it in.

// showCreateGenerated builds SHOW CREATE TABLE of a table with generated
// columns: with its indexes (withGeneratedTableIndexes) and the word
// VIRTUAL (virtualKeywords); and of a table with FLOAT(M,D) or
// DOUBLE(M,D) columns, with those types (compat_floatscale.go). It returns
// no iterator for other tables.
func showCreateGenerated(ctx *gsql.Context, n *plan.ShowCreateTable, row gsql.Row) (gsql.RowIter, error) {
	if n.IsView {
		return nil, nil
	}
	scales := resolvedScales(n.Child)
	if scales == nil {
		return showCreateVirtual(ctx, n, row)
	}
	iter, err := showCreateVirtual(ctx, n, row)
	if iter == nil && err == nil {
		iter, err = rowexec.DefaultBuilder.Build(ctx, n, row)
	}
	if err != nil {
		return nil, err
	}
	return &createStatementIter{child: iter, rewrite: func(stmt string) string { return floatScaleCreate(stmt, scales) }}, nil
}

// showCreateVirtual is showCreateGenerated for the generated columns.
func showCreateVirtual(ctx *gsql.Context, n *plan.ShowCreateTable, row gsql.Row) (gsql.RowIter, error) {
	var virtual []*gsql.Column
	for _, c := range n.TargetSchema() {
		if c.Generated != nil && c.Virtual {
			virtual = append(virtual, c)
		}
	}
	m, ok := withGeneratedTableIndexes(ctx, n)
	if !ok && len(virtual) == 0 {
		return nil, nil
	}
	if !ok {
		m = n
	}
	// GMS's own builder: its SHOW CREATE TABLE reads the table, not
	// rows of a child, and percdb's would come back here.
	iter, err := rowexec.DefaultBuilder.Build(ctx, m, row)
	if err != nil || len(virtual) == 0 {
		return iter, err
	}
	// GMS's VirtualColumnTable has no comment: the table's is lost from
	// the statement (and so from dumps) unless written here.
	comment := ""
	if t, ok := virtualColumnsTable(n.Child); ok && t != nil {
		comment = t.Comment()
	}
	return &createStatementIter{child: iter, rewrite: func(stmt string) string {
		return withTableComment(virtualKeywords(stmt, virtual), comment)
	}}, nil
}

// createStatementIter rewrites the statements in the rows of SHOW CREATE
// TABLE (the table's name, then the statement).
type createStatementIter struct {
	child   gsql.RowIter
	rewrite func(stmt string) string
}

// Next implements sql.RowIter.
func (it *createStatementIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := it.child.Next(ctx)
	if err != nil || len(row) < 2 {
		return row, err
	}
	stmt, ok := row[1].(string)
	if !ok {
		return row, nil
	}
	out := append(gsql.Row(nil), row...)
	out[1] = it.rewrite(stmt)
	return out, nil
}

// Close implements sql.RowIter.
func (it *createStatementIter) Close(ctx *gsql.Context) error { return it.child.Close(ctx) }

// virtualKeywords returns a CREATE TABLE statement as GMS writes it with
// VIRTUAL after the expression of each of the virtual columns.
func virtualKeywords(stmt string, virtual []*gsql.Column) string {
	lines := strings.Split(stmt, "\n")
	for _, c := range virtual {
		prefix := "  `" + strings.ReplaceAll(c.Name, "`", "``") + "` "
		gen := "GENERATED ALWAYS AS " + c.Generated.String()
		for i, l := range lines {
			if !strings.HasPrefix(l, prefix) {
				continue
			}
			if at := strings.Index(l, gen); at >= 0 {
				end := at + len(gen)
				lines[i] = l[:end] + " VIRTUAL" + l[end:]
			}
			break
		}
	}
	return strings.Join(lines, "\n")
}

// withGeneratedTableIndexes returns n with the indexes and primary key
// schema of the table under its VirtualColumnTable, when GMS found none
// there.
func withGeneratedTableIndexes(ctx *gsql.Context, n *plan.ShowCreateTable) (*plan.ShowCreateTable, bool) {
	if n.IsView || len(n.Indexes) > 0 {
		return nil, false
	}
	t, virtual := virtualColumnsTable(n.Child)
	if !virtual {
		return nil, false
	}
	idxs, err := t.GetIndexes(ctx)
	if err != nil || len(idxs) == 0 {
		return nil, false
	}
	out := *n
	out.Indexes = idxs
	out.PrimaryKeySchema = t.PrimaryKeySchema()
	return &out, true
}

// virtualColumnsTable returns percdb's table under the wrappers of the
// table child resolves (its process list's, the virtual columns'), and
// whether a VirtualColumnTable is among them.
func virtualColumnsTable(child gsql.Node) (*Table, bool) {
	rt, ok := child.(*plan.ResolvedTable)
	if !ok {
		return nil, false
	}
	virtual := false
	for tab := rt.Table; ; {
		switch w := tab.(type) {
		case *Table:
			return w, virtual
		case *plan.VirtualColumnTable:
			virtual, tab = true, w.Underlying()
		case gsql.TableWrapper:
			tab = w.Underlying()
		default:
			return nil, false
		}
	}
}

// withGeneratedShowIndexes returns n, a SHOW INDEX of a table under a
// VirtualColumnTable, which offers GMS no indexes (SHOW INDEX listed
// none, and mariadb-dump --order-by-primary found no primary key), with
// the indexes of percdb's table under it.
func withGeneratedShowIndexes(ctx *gsql.Context, n *plan.ShowIndexes) (*plan.ShowIndexes, bool, error) {
	if len(n.IndexesToShow) > 0 {
		return nil, false, nil
	}
	t, virtual := virtualColumnsTable(n.Child)
	if !virtual {
		return nil, false, nil
	}
	idxs, err := t.GetIndexes(ctx)
	if err != nil || len(idxs) == 0 {
		return nil, false, err
	}
	out := *n
	out.IndexesToShow = idxs
	return &out, true, nil
}

// withTableComment returns a CREATE TABLE statement as GMS writes it for
// a table under a VirtualColumnTable, which has no comment of its own,
// with the table's comment as GMS writes one (MySQL's COMMENT='…', the
// last clause).
func withTableComment(stmt, comment string) string {
	if comment == "" {
		return stmt
	}
	return stmt + " COMMENT='" + strings.ReplaceAll(comment, "'", "''") + "'"
}

// GMS's INSERT … ON DUPLICATE KEY UPDATE does not compute generated
// columns again for the row it updates (its UPDATE does): a STORED column
// kept the value of the row before, and so did the stored value of a
// VIRTUAL one (and its index entries). withGeneratedOnDup adds to the
// statement's update expressions one per generated column, as GMS's
// UPDATE has, evaluated after the others over the updated row.

// withGeneratedOnDup returns n with an update expression for each
// generated column of its table, when it has ON DUPLICATE KEY UPDATE
// expressions that do not set them yet.
func withGeneratedOnDup(n *plan.InsertInto) (*plan.InsertInto, bool, error) {
	if len(n.OnDupExprs) == 0 || n.Destination == nil {
		return nil, false, nil
	}
	sch := n.Destination.Schema()
	set := map[string]bool{}
	for _, e := range n.OnDupExprs {
		if sf, ok := e.(*expression.SetField); ok {
			if gf, ok := sf.LeftChild.(*expression.GetField); ok {
				set[strings.ToLower(gf.Name())] = true
			}
		}
	}
	var add []gsql.Expression
	for i, col := range sch {
		if col.Generated == nil || set[strings.ToLower(col.Name)] {
			continue
		}
		if !col.Generated.Resolved() {
			return nil, false, fmt.Errorf("generated column %s: expression not resolved for ON DUPLICATE KEY UPDATE", col.Name)
		}
		gf := expression.NewGetFieldWithTable(i, 0, col.Type, col.DatabaseSource, col.Source, col.Name, col.Nullable)
		add = append(add, expression.NewSetField(gf, col.Generated))
	}
	if len(add) == 0 {
		return nil, false, nil
	}
	out := *n
	out.OnDupExprs = append(append([]gsql.Expression(nil), n.OnDupExprs...), add...)
	return &out, true, nil
}

// GMS's planner refuses an INSERT without a column list into a table
// with generated columns outright (3105, "tables with any generated
// column must always supply a column list"), and an UPDATE that sets a
// generated column to DEFAULT; MySQL accepts DEFAULT as the value of a
// generated column in both (any other value is 3105 there too).
// generatedDefaults, called by the parser wrapper on a statement that
// has a DEFAULT value, writes such an INSERT with its table's columns
// listed (GMS takes DEFAULT for a generated column of a column list) and
// drops `col = DEFAULT` of a generated column from such an UPDATE (the
// column is computed anyway; with nothing else assigned, a column is set
// to itself, which changes no row, as in MySQL).
func (p *DatabaseProvider) generatedDefaults(ctx context.Context, stmt ast.Statement) ast.Statement {
	sctx, ok := ctx.(*gsql.Context)
	if !ok || p == nil {
		return stmt
	}
	switch s := stmt.(type) {
	case *ast.Insert:
		if ins, ok := p.ignoreGeneratedValues(sctx, s); ok {
			return ins // compat_genvalues.go
		}
		if len(s.Columns) > 0 || !valuesHaveDefault(s.Rows) {
			return stmt
		}
		sch, ok := p.generatedSchema(sctx, s.Table)
		if !ok {
			return stmt
		}
		cols := make(ast.Columns, len(sch))
		for i, c := range sch {
			cols[i] = ast.NewColIdent(c.Name)
		}
		ins := *s
		ins.Columns = cols
		return &ins
	case *ast.Update:
		if len(s.TableExprs) != 1 {
			return stmt
		}
		at, ok := s.TableExprs[0].(*ast.AliasedTableExpr)
		if !ok {
			return stmt
		}
		tn, ok := at.Expr.(ast.TableName)
		if !ok {
			return stmt
		}
		var sch gsql.Schema
		var out ast.AssignmentExprs
		for _, e := range s.Exprs {
			if _, isDefault := e.Expr.(*ast.Default); isDefault {
				if sch == nil {
					if sch, ok = p.generatedSchema(sctx, tn); !ok {
						return stmt
					}
				}
				if c := sch.IndexOfColName(e.Name.Name.String()); c >= 0 && sch[c].Generated != nil {
					continue
				}
			}
			out = append(out, e)
		}
		if len(out) == len(s.Exprs) {
			return stmt
		}
		if len(out) == 0 {
			// Only generated columns set to DEFAULT: the rows are
			// matched and nothing changes, as a column set to itself.
			for _, c := range sch {
				if c.Generated == nil {
					col := &ast.ColName{Name: ast.NewColIdent(c.Name)}
					out = ast.AssignmentExprs{{Name: col, Expr: &ast.ColName{Name: ast.NewColIdent(c.Name)}}}
					break
				}
			}
		}
		upd := *s
		upd.Exprs = out
		return &upd
	}
	return stmt
}

// valuesHaveDefault reports whether rows are VALUES with a DEFAULT among
// them.
func valuesHaveDefault(rows ast.InsertRows) bool {
	var vals ast.Values
	switch r := rows.(type) {
	case ast.Values:
		vals = r
	case *ast.AliasedValues:
		vals = r.Values
	default:
		return false
	}
	for _, t := range vals {
		for _, e := range t {
			if _, ok := e.(*ast.Default); ok {
				return true
			}
		}
	}
	return false
}

// generatedSchema returns the schema of the table tn names, when it has
// a generated column.
func (p *DatabaseProvider) generatedSchema(ctx *gsql.Context, tn ast.TableName) (gsql.Schema, bool) {
	dbName := tn.DbQualifier.String()
	if dbName == "" {
		dbName = ctx.GetCurrentDatabase()
	}
	if dbName == "" {
		return nil, false
	}
	db, err := p.Database(ctx, dbName)
	if err != nil {
		return nil, false
	}
	t, ok, err := db.GetTableInsensitive(ctx, tn.Name.String())
	if err != nil || !ok {
		return nil, false
	}
	sch := t.Schema()
	for _, c := range sch {
		if c.Generated != nil {
			return sch, true
		}
	}
	return nil, false
}

// columnsTable is GMS's information_schema.COLUMNS with the
// GENERATION_EXPRESSION of generated columns, which GMS leaves empty:
// the expression as SHOW CREATE TABLE writes it inside GENERATED ALWAYS
// AS, as MySQL 8 shows it ((`a` + `b`)).
type columnsTable struct {
	gsql.Table
	provider *DatabaseProvider
}

var (
	_ gsql.CatalogTable        = (*columnsTable)(nil)
	_ gsql.DynamicColumnsTable = (*columnsTable)(nil)
)

// AssignCatalog implements sql.CatalogTable: GMS's table gets the
// catalog it reads.
func (t *columnsTable) AssignCatalog(cat gsql.Catalog) gsql.Table {
	if c, ok := t.Table.(gsql.CatalogTable); ok {
		// mysql's tables too (mysqllisted.go).
		return &columnsTable{Table: c.AssignCatalog(mysqlCatalog{cat}), provider: t.provider}
	}
	return t
}

// AllColumns implements sql.DynamicColumnsTable.
func (t *columnsTable) AllColumns(ctx *gsql.Context) (gsql.Schema, error) {
	if d, ok := t.Table.(gsql.DynamicColumnsTable); ok {
		return d.AllColumns(ctx)
	}
	return nil, nil
}

// WithDefaultsSchema implements sql.DynamicColumnsTable.
func (t *columnsTable) WithDefaultsSchema(sch gsql.Schema) (gsql.Table, error) {
	d, ok := t.Table.(gsql.DynamicColumnsTable)
	if !ok {
		return t, nil
	}
	nt, err := d.WithDefaultsSchema(sch)
	if err != nil {
		return nil, err
	}
	return &columnsTable{Table: nt, provider: t.provider}, nil
}

// HasDynamicColumns implements sql.DynamicColumnsTable.
func (t *columnsTable) HasDynamicColumns() bool {
	d, ok := t.Table.(gsql.DynamicColumnsTable)
	return ok && d.HasDynamicColumns()
}

// PartitionRows implements sql.Table.
func (t *columnsTable) PartitionRows(ctx *gsql.Context, p gsql.Partition) (gsql.RowIter, error) {
	// The columns of views, each bound in its own database
	// (compat_viewdb.go).
	it, err := followViews(ctx, func() (gsql.RowIter, error) { return t.Table.PartitionRows(ctx, p) })
	if err != nil {
		return nil, err
	}
	pos := map[string]int{}
	for i, c := range t.Schema() {
		pos[strings.ToUpper(c.Name)] = i
	}
	return &generationExpressionIter{child: it, provider: t.provider, pos: pos, schemas: map[[2]string]gsql.Schema{}}, nil
}

// generationExpressionIter fills GENERATION_EXPRESSION in the rows of
// information_schema.COLUMNS.
type generationExpressionIter struct {
	child    gsql.RowIter
	provider *DatabaseProvider
	pos      map[string]int            // column positions by name
	schemas  map[[2]string]gsql.Schema // tables' schemas by database and name
	// scales are the tables' FLOAT(M,D) and DOUBLE(M,D) columns
	// (compat_floatscale.go), by database and name.
	scales map[[2]string]map[string]tablemeta.FloatScale
}

// Next implements sql.RowIter.
func (it *generationExpressionIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := it.child.Next(ctx)
	if err != nil {
		return nil, err
	}
	row = mysqlColumnFacts(row, it.pos) // compat_columnfacts.go
	db, _ := row[it.pos["TABLE_SCHEMA"]].(string)
	tbl, _ := row[it.pos["TABLE_NAME"]].(string)
	col, _ := row[it.pos["COLUMN_NAME"]].(string)
	key := [2]string{strings.ToLower(db), strings.ToLower(tbl)}
	sch, seen := it.schemas[key]
	if !seen {
		var scales map[string]tablemeta.FloatScale
		sch, scales = it.tableSchema(ctx, db, tbl)
		it.schemas[key] = sch
		if scales != nil {
			if it.scales == nil {
				it.scales = map[[2]string]map[string]tablemeta.FloatScale{}
			}
			it.scales[key] = scales
		}
	}
	for _, c := range sch {
		if !strings.EqualFold(c.Name, col) {
			continue
		}
		fsp, isTime := compat.TimePrecision(c.Type)
		scale, scaled := it.scales[key][strings.ToLower(c.Name)]
		if c.Generated == nil && !isTime && !scaled {
			break
		}
		out := append(gsql.Row(nil), row...)
		if scaled {
			// GMS says float, 12 and NULL.
			out[it.pos["COLUMN_TYPE"]] = scale.String()
			out[it.pos["NUMERIC_PRECISION"]] = uint64(scale.M)
			out[it.pos["NUMERIC_SCALE"]] = uint64(scale.D)
		}
		if c.Generated != nil {
			out[it.pos["GENERATION_EXPRESSION"]] = oneParenthesis(c.Generated.String())
		}
		if isTime {
			// GMS leaves it NULL (compat_timefsp.go).
			out[it.pos["DATETIME_PRECISION"]] = fsp
		}
		return out, nil
	}
	return row, nil
}

// oneParenthesis returns e with at most one pair of parentheses around
// the whole: GMS writes (a + b) as (((`a` + `b`))), MySQL as (`a` + `b`).
func oneParenthesis(e string) string {
	for len(e) >= 4 && closes(e, 0) == len(e)-1 && e[1] == '(' && closes(e, 1) == len(e)-2 {
		e = e[1 : len(e)-1]
	}
	return e
}

// closes returns the position of the parenthesis that closes the one at
// open in e (quoted names and strings skipped), or -1.
func closes(e string, open int) int {
	depth := 0
	var quote byte
	for i := open; i < len(e); i++ {
		c := e[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '`' || c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// tableSchema returns the schema of a table of percdb's and its
// FLOAT(M,D) and DOUBLE(M,D) columns, nil for any other table
// (information_schema's own, a view).
func (it *generationExpressionIter) tableSchema(ctx *gsql.Context, db, tbl string) (gsql.Schema, map[string]tablemeta.FloatScale) {
	d, err := it.provider.Database(ctx, db)
	if err != nil {
		return nil, nil
	}
	if _, ours := d.(*Database); !ours {
		return nil, nil
	}
	t, ok, err := d.GetTableInsensitive(ctx, tbl)
	if err != nil || !ok {
		return nil, nil
	}
	return t.Schema(), scaledColumns(t)
}

// Close implements sql.RowIter.
func (it *generationExpressionIter) Close(ctx *gsql.Context) error { return it.child.Close(ctx) }
