package compat

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// VALUES(c) inside a subquery of an ON DUPLICATE KEY UPDATE value is, in
// MySQL 8, the value the row would have inserted into c, as outside one
// (`INSERT INTO t VALUES (1, 5) ON DUPLICATE KEY UPDATE b = (SELECT y
// FROM p WHERE p.k = VALUES(b))`; MariaDB refuses it with a syntax
// error). GMS's planner names VALUES(c) by the scope's table of the
// inserted values (planbuilder.OnDupValuesPrefix, or the row alias of
// `AS nw`), which only the assignments' own scope has: in a subquery's
// it failed with 1105 "expected ON DUPLICATE KEY ... VALUES() to
// reference a column" (it looks a VALUES(c) up in the scope it is in,
// not in the scopes around it). subqueryInsertedValues writes each such
// VALUES(c) of an INSERT … VALUES as that table's column (by the row
// alias's name of the column), which the planner resolves as a
// reference out of the subquery to the inserted values, as it does the
// row alias's columns; ScopedUpsertSubqueries reads it from the new
// row. (After a SELECT, whose selected values have no such
// table, it stays GMS's error.)

// subqueryInsertedValues rewrites stmt's VALUES(c) in subqueries of its
// ON DUPLICATE KEY UPDATE values, in place, as the comment above says.
func subqueryInsertedValues(stmt ast.Statement) ast.Statement {
	ins, ok := stmt.(*ast.Insert)
	if !ok || len(ins.OnDup) == 0 {
		return stmt
	}
	av, ok := ins.Rows.(*ast.AliasedValues)
	if !ok {
		return stmt
	}
	table := av.As.String()
	if table == "" {
		table = planbuilder.OnDupValuesPrefix
	}
	var aliases map[string]string // a column of the INSERT -> its name in the row alias
	if len(av.Columns) > 0 {
		if len(av.Columns) != len(ins.Columns) {
			return stmt // the columns are the table's, which the planner knows
		}
		aliases = make(map[string]string, len(av.Columns))
		for i, c := range ins.Columns {
			aliases[c.Lowered()] = av.Columns[i].String()
		}
	}
	// column is the new row's column named by v, nil when v names none.
	column := func(v *ast.ValuesFuncExpr) *ast.ColName {
		if v.Name == nil || v.Name.StoredProcVal != nil || !v.Name.Qualifier.DbQualifier.IsEmpty() {
			return nil
		}
		if q := v.Name.Qualifier.Name.String(); q != "" && !strings.EqualFold(q, ins.Table.Name.String()) {
			return nil
		}
		name := v.Name.Name.String()
		if aliases != nil {
			a, ok := aliases[strings.ToLower(name)]
			if !ok {
				return nil
			}
			name = a
		}
		return &ast.ColName{Name: ast.NewColIdent(name), Qualifier: ast.TableName{Name: ast.NewTableIdent(table)}}
	}
	for _, ue := range ins.OnDup {
		_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
			sq, ok := node.(*ast.Subquery)
			if !ok {
				return true, nil
			}
			replaceValuesFuncs(sq.Select, column)
			return false, nil
		}, ue.Expr)
	}
	return stmt
}

// replaceValuesFuncs replaces, in place, each VALUES(c) in sel for which
// column gives a column with that column. The parser's own replacement
// (ast.ReplaceExpr) stops at a subquery and at the nodes that hold an
// expression without being one, so it is applied from each node.
func replaceValuesFuncs(sel ast.SelectStatement, column func(*ast.ValuesFuncExpr) *ast.ColName) {
	found := map[*ast.ValuesFuncExpr]*ast.ColName{}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if v, ok := node.(*ast.ValuesFuncExpr); ok {
			if c := column(v); c != nil {
				found[v] = c
			}
			return false, nil
		}
		return true, nil
	}, sel)
	if len(found) == 0 {
		return
	}
	swap := func(e ast.Expr) ast.Expr {
		if v, ok := e.(*ast.ValuesFuncExpr); ok {
			if c, ok := found[v]; ok {
				return c
			}
			return e
		}
		for v, c := range found {
			e = ast.ReplaceExpr(e, v, c)
		}
		return e
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.AliasedExpr:
			n.Expr = swap(n.Expr)
		case *ast.Where:
			if n != nil && n.Expr != nil {
				n.Expr = swap(n.Expr)
			}
		case *ast.Order:
			n.Expr = swap(n.Expr)
		case ast.GroupBy:
			for i := range n {
				n[i] = swap(n[i])
			}
		case *ast.JoinTableExpr:
			if n.Condition.On != nil {
				n.Condition.On = swap(n.Condition.On)
			}
		case ast.Expr:
			swap(n)
		}
		return true, nil
	}, sel)
}
