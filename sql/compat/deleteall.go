package compat

import (
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// wholeTableDeletes gives a DELETE of one table with no WHERE, ORDER BY or
// LIMIT the condition WHERE TRUE. GMS's analyzer (processTruncate's
// deleteToTruncate) runs such a DELETE as a TRUNCATE, which MySQL never
// does: it looks for the table and its DELETE triggers in the current
// database rather than the table's, so `DELETE FROM db.t` answered 1049
// with no current database and skipped the triggers of db.t when the
// current database has a t of its own; and a TRUNCATE reports 0 rows
// affected where MySQL reports the rows deleted (applications and ORMs
// read that count). A filtered DELETE is never converted, and a TRUE
// filter keeps every row. sql/testdata/values/deleteall.txt.
func wholeTableDeletes(stmt ast.Statement) ast.Statement {
	d, ok := stmt.(*ast.Delete)
	if !ok || d.Where != nil || len(d.Targets) > 0 || len(d.OrderBy) > 0 || d.Limit != nil || len(d.TableExprs) != 1 {
		return stmt
	}
	d.Where = &ast.Where{Type: ast.WhereStr, Expr: ast.BoolVal(true)}
	return stmt
}
