package compat

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// A rollup's select list with * or t.*: the rewrite (rollup.go) needs
// each select item as an expression, to NULL the rolled-up columns in
// each level, and * names no column until the tables are known.
// expandStars writes * as the columns of the FROM clause's tables, in
// MySQL's order (the tables left to right, each table's columns in
// order), and t.* as t's, each qualified by the name the query gives its
// table and named as the column is. It needs the catalog (columns), so
// a rollup of * the parser alone sees (no session) stays 1235, as do a
// join with USING or NATURAL (whose * merges the joined columns), a
// derived table, a table function and a view or table the session does
// not see (whose columns columns does not give).

// starTable is a table of a FROM clause as * reads it.
type starTable struct {
	qualifier ast.TableName // how a column of it is qualified
	db, name  string
}

// expandStars rewrites the stars of s's select list in place; an error
// is MySQL's 1235 for a star it cannot expand.
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
	unsupported := errNotSupportedYet("WITH ROLLUP and *")
	if columns == nil {
		return unsupported
	}
	var tables []starTable
	var collect func(te ast.TableExpr) bool
	collect = func(te ast.TableExpr) bool {
		switch t := te.(type) {
		case *ast.AliasedTableExpr:
			tn, ok := t.Expr.(ast.TableName)
			if !ok || t.AsOf != nil {
				return false
			}
			q := tn
			q.SchemaQualifier = ast.TableIdent{}
			if !t.As.IsEmpty() {
				q = ast.TableName{Name: t.As}
			}
			tables = append(tables, starTable{qualifier: q, db: tn.DbQualifier.String(), name: tn.Name.String()})
			return true
		case *ast.ParenTableExpr:
			for _, e := range t.Exprs {
				if !collect(e) {
					return false
				}
			}
			return true
		case *ast.JoinTableExpr:
			if t.Condition.Using != nil || strings.HasPrefix(t.Join, "natural") {
				return false
			}
			return collect(t.LeftExpr) && collect(t.RightExpr)
		}
		return false
	}
	for _, te := range s.From {
		if !collect(te) {
			return unsupported
		}
	}
	var out ast.SelectExprs
	for _, se := range s.SelectExprs {
		star, ok := se.(*ast.StarExpr)
		if !ok {
			out = append(out, se)
			continue
		}
		matched := false
		for _, t := range tables {
			if !star.TableName.IsEmpty() && !starNames(star.TableName, t) {
				continue
			}
			cols, err := columns(t.db, t.name)
			if err != nil {
				return err
			}
			if cols == nil {
				return unsupported
			}
			matched = true
			for _, c := range cols {
				out = append(out, &ast.AliasedExpr{
					Expr:            &ast.ColName{Name: ast.NewColIdent(c), Qualifier: t.qualifier},
					InputExpression: c,
				})
			}
		}
		if !matched {
			// t.* of no table of the FROM clause: MySQL's 1051
			// (errors.go maps GMS's message).
			return gsql.ErrUnknownTable.New(star.TableName.Name.String())
		}
	}
	s.SelectExprs = out
	return nil
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
