package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// A rollup's select list with * or t.*: the rewrite (rollup.go) needs
// each select item as an expression, to NULL the rolled-up columns in
// each level, and * names no column until the tables are known.
// expandStars writes * as the columns of the FROM clause, in MySQL's
// order, and t.* as t's, each read through the name the query gives its
// table and named as the column is:
//
//   - a table's columns in order (the catalog gives them; a view's are
//     the names of its select list, or its column list);
//   - a derived table's and a common table expression's: its column
//     list, or the names of its (first) SELECT's items;
//   - a join with ON: the left side's, then the right side's;
//   - a join with USING or NATURAL: the join columns once, first, in the
//     left side's order, then the left side's other columns, then the
//     right side's (MySQL 8 reference manual, "JOIN Clause": "coalesced
//     common columns of the two joined tables, in the order in which
//     they occur in the first table"); a RIGHT JOIN is the LEFT JOIN of
//     its sides swapped, as MySQL makes it, so its right side comes
//     first; a join column is read from the side that comes first,
//     whose rows always have it. t.* of either table of such a join is
//     all of that table's columns.
//
// It needs the catalog (columns), so a rollup of * the parser alone
// sees (no session) stays 1235, as do a table function and a select
// item whose name it cannot tell.

// starColumn is a column * reads: its name, and the expression of the
// select list that reads it.
type starColumn struct {
	name string
	expr ast.Expr
}

// starTable is a table of a FROM clause as t.* reads it.
type starTable struct {
	qualifier ast.TableName // how the query names it
	columns   []starColumn
}

// starSource is what a FROM clause gives * and t.*: the columns of *,
// and the tables t.* can name.
type starSource struct {
	columns []starColumn
	tables  []starTable
}

// expandStars rewrites the stars of s's select list in place; an error
// is MySQL's 1235 for a star it cannot expand, 1051 for t.* of no table
// of the FROM clause, or the catalog's (1146).
func expandStars(s *ast.Select, columns func(db, table string) ([]string, error)) error {
	hasStar := false
	for _, se := range s.SelectExprs {
		if _, ok := se.(*ast.StarExpr); ok {
			hasStar = true
		}
	}
	if !hasStar {
		return nil
	}
	if columns == nil {
		return errNotSupportedYet("WITH ROLLUP and *")
	}
	src, err := fromColumns(s.From, ctesOf(s.With, nil), columns)
	if err != nil {
		return err
	}
	var out ast.SelectExprs
	for _, se := range s.SelectExprs {
		star, ok := se.(*ast.StarExpr)
		if !ok {
			out = append(out, se)
			continue
		}
		cols, err := src.star(star)
		if err != nil {
			return err
		}
		for _, c := range cols {
			out = append(out, &ast.AliasedExpr{Expr: c.expr, InputExpression: c.name})
		}
	}
	s.SelectExprs = out
	return nil
}

// star returns the columns star reads: all of src's, or those of the
// table t.* names (1051 when none).
func (src starSource) star(star *ast.StarExpr) ([]starColumn, error) {
	if star.TableName.IsEmpty() {
		return src.columns, nil
	}
	var cols []starColumn
	matched := false
	for _, t := range src.tables {
		if starNames(star.TableName, t) {
			matched = true
			cols = append(cols, t.columns...)
		}
	}
	if !matched {
		// MySQL's 1051 (errors.go maps GMS's message).
		return nil, gsql.ErrUnknownTable.New(star.TableName.Name.String())
	}
	return cols, nil
}

// ctesOf returns the common table expressions w names, by lower-case
// name, over those of an enclosing query (outer).
func ctesOf(w *ast.With, outer map[string]*ast.CommonTableExpr) map[string]*ast.CommonTableExpr {
	if w == nil || len(w.Ctes) == 0 {
		return outer
	}
	m := make(map[string]*ast.CommonTableExpr, len(outer)+len(w.Ctes))
	for k, v := range outer {
		m[k] = v
	}
	for _, c := range w.Ctes {
		if c.AliasedTableExpr != nil {
			m[strings.ToLower(c.As.String())] = c
		}
	}
	return m
}

// fromColumns returns what the FROM clause from gives * and t.*, the
// tables listed by commas one after another.
func fromColumns(from ast.TableExprs, ctes map[string]*ast.CommonTableExpr, columns func(db, table string) ([]string, error)) (starSource, error) {
	var src starSource
	for _, te := range from {
		part, err := tableExprColumns(te, ctes, columns)
		if err != nil {
			return starSource{}, err
		}
		src.columns = append(src.columns, part.columns...)
		src.tables = append(src.tables, part.tables...)
	}
	return src, nil
}

// tableExprColumns returns what one table expression gives * and t.*.
func tableExprColumns(te ast.TableExpr, ctes map[string]*ast.CommonTableExpr, columns func(db, table string) ([]string, error)) (starSource, error) {
	unsupported := errNotSupportedYet("WITH ROLLUP and *")
	switch t := te.(type) {
	case *ast.AliasedTableExpr:
		if t.AsOf != nil {
			return starSource{}, unsupported
		}
		var q ast.TableName
		var names []string
		switch e := t.Expr.(type) {
		case ast.TableName:
			q = e
			q.SchemaQualifier = ast.TableIdent{}
			var err error
			if cte, ok := ctes[strings.ToLower(e.Name.String())]; ok && e.DbQualifier.IsEmpty() {
				sq, _ := cte.AliasedTableExpr.Expr.(*ast.Subquery)
				if sq == nil {
					return starSource{}, unsupported
				}
				names, err = derivedNames(sq.Select, cte.Columns, ctes, columns)
			} else {
				names, err = columns(e.DbQualifier.String(), e.Name.String())
			}
			if err != nil {
				return starSource{}, err
			}
		case *ast.Subquery:
			if t.As.IsEmpty() {
				return starSource{}, unsupported
			}
			var err error
			if names, err = derivedNames(e.Select, e.Columns, ctes, columns); err != nil {
				return starSource{}, err
			}
		default:
			return starSource{}, unsupported
		}
		if names == nil {
			return starSource{}, unsupported
		}
		if !t.As.IsEmpty() {
			q = ast.TableName{Name: t.As}
		}
		table := starTable{qualifier: q}
		for _, n := range names {
			table.columns = append(table.columns, starColumn{name: n, expr: &ast.ColName{Name: ast.NewColIdent(n), Qualifier: q}})
		}
		return starSource{columns: table.columns, tables: []starTable{table}}, nil
	case *ast.ParenTableExpr:
		return fromColumns(t.Exprs, ctes, columns)
	case *ast.JoinTableExpr:
		left, err := tableExprColumns(t.LeftExpr, ctes, columns)
		if err != nil {
			return starSource{}, err
		}
		right, err := tableExprColumns(t.RightExpr, ctes, columns)
		if err != nil {
			return starSource{}, err
		}
		src := starSource{tables: append(left.tables, right.tables...)}
		natural := strings.HasPrefix(t.Join, "natural")
		if t.Condition.Using == nil && !natural {
			src.columns = append(left.columns, right.columns...)
			return src, nil
		}
		first, second := left.columns, right.columns
		if t.Join == ast.RightJoinStr || t.Join == ast.NaturalRightJoinStr {
			// MySQL makes a RIGHT JOIN the LEFT JOIN of its sides
			// swapped, and * of USING or NATURAL follows that order.
			first, second = second, first
		}
		src.columns, err = joinedColumns(first, second, t.Condition.Using, natural)
		if err != nil {
			return starSource{}, err
		}
		return src, nil
	}
	return starSource{}, unsupported
}

// joinedColumns returns the columns * reads of a join with USING (using)
// or NATURAL of first and second (the sides, swapped in a RIGHT JOIN):
// the join columns first, in first's order and read from first, whose
// rows always have them, then first's others, then second's. A USING
// column missing on a side is MySQL's 1054.
func joinedColumns(first, second []starColumn, using ast.Columns, natural bool) ([]starColumn, error) {
	find := func(cols []starColumn, name string) int {
		for i, c := range cols {
			if strings.EqualFold(c.name, name) {
				return i
			}
		}
		return -1
	}
	common := map[string]bool{}
	if natural {
		for _, c := range first {
			if find(second, c.name) >= 0 {
				common[strings.ToLower(c.name)] = true
			}
		}
	} else {
		for _, u := range using {
			if find(first, u.String()) < 0 || find(second, u.String()) < 0 {
				return nil, gsql.ErrUnknownColumn.New(u.String(), "from clause")
			}
			common[u.Lowered()] = true
		}
	}
	out := make([]starColumn, 0, len(first)+len(second))
	for _, c := range first {
		if common[strings.ToLower(c.name)] {
			out = append(out, c)
		}
	}
	for _, c := range first {
		if !common[strings.ToLower(c.name)] {
			out = append(out, c)
		}
	}
	for _, c := range second {
		if !common[strings.ToLower(c.name)] {
			out = append(out, c)
		}
	}
	return out, nil
}

// derivedNames returns the names of the columns of a derived table,
// common table expression or view whose query is sel: its column list
// when it has one, else the names of its first SELECT's items. nil for
// an item whose name it cannot tell.
func derivedNames(sel ast.SelectStatement, list ast.Columns, ctes map[string]*ast.CommonTableExpr, columns func(db, table string) ([]string, error)) ([]string, error) {
	if len(list) > 0 {
		names := make([]string, len(list))
		for i, c := range list {
			names[i] = c.String()
		}
		return names, nil
	}
	for {
		switch s := sel.(type) {
		case *ast.ParenSelect:
			sel = s.Select
			continue
		case *ast.SetOp:
			ctes = ctesOf(s.With, ctes)
			sel = s.Left
			continue
		case *ast.Select:
			return selectNames(s, ctes, columns)
		}
		return nil, nil
	}
}

// selectNames returns the names of s's select items, a star's as the
// columns it reads; nil for an item whose name it cannot tell.
func selectNames(s *ast.Select, ctes map[string]*ast.CommonTableExpr, columns func(db, table string) ([]string, error)) ([]string, error) {
	ctes = ctesOf(s.With, ctes)
	var names []string
	var src *starSource
	for _, se := range s.SelectExprs {
		switch e := se.(type) {
		case *ast.AliasedExpr:
			switch {
			case !e.As.IsEmpty():
				names = append(names, e.As.String())
			case isColName(e.Expr):
				names = append(names, e.Expr.(*ast.ColName).Name.String())
			case e.InputExpression != "":
				names = append(names, e.InputExpression)
			default:
				return nil, nil
			}
		case *ast.StarExpr:
			if src == nil {
				from, err := fromColumns(s.From, ctes, columns)
				if err != nil {
					return nil, err
				}
				src = &from
			}
			cols, err := src.star(e)
			if err != nil {
				return nil, err
			}
			for _, c := range cols {
				names = append(names, c.name)
			}
		default:
			return nil, nil
		}
	}
	return names, nil
}

// isColName reports whether e is a column reference.
func isColName(e ast.Expr) bool {
	_, ok := e.(*ast.ColName)
	return ok
}

// starNames reports whether the qualifier of a t.* names table t: its
// alias, or its name (and database, when the star gives one).
func starNames(q ast.TableName, t starTable) bool {
	if !strings.EqualFold(q.Name.String(), t.qualifier.Name.String()) {
		return false
	}
	if q.DbQualifier.IsEmpty() {
		return true
	}
	return strings.EqualFold(q.DbQualifier.String(), t.qualifier.DbQualifier.String())
}

// ViewColumns returns the names of the columns of the view whose CREATE
// VIEW statement is create: its column list, or the names of its select
// list's items; nil when it cannot tell them. columns gives the columns
// of the tables the view reads, unqualified names in the view's
// database.
func ViewColumns(create string, columns func(db, table string) ([]string, error)) ([]string, error) {
	stmt, err := ast.Parse(create)
	if err != nil {
		return nil, nil
	}
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.ViewSpec == nil || ddl.ViewSpec.ViewExpr == nil {
		return nil, nil
	}
	return derivedNames(ddl.ViewSpec.ViewExpr, ddl.ViewSpec.Columns, nil, columns)
}
