package compat

import (
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS's planner refuses an UPDATE of joined tables one of which has no
// primary key (1235 "keyless tables unsupported for UPDATE JOIN") in two
// places: when it plans the statement, if the join is the whole of it
// (no WHERE, ORDER BY or LIMIT), and in its analyzer rule
// modifyUpdateExprsForJoin otherwise. percdb replaces the rule (an
// UPDATE of joined tables changes a table without a primary key by its
// rows' hidden row IDs, sql/joinwrites.go); updateJoinWhere gives such a
// statement without a WHERE the WHERE TRUE that sends it down the
// rule's way. The condition is GMS's to drop, and the plan the rule
// makes is the one the planner would have.

// updateJoinWhere returns stmt with WHERE TRUE when it is an UPDATE of
// joined tables with no WHERE, ORDER BY or LIMIT.
func updateJoinWhere(stmt ast.Statement) ast.Statement {
	u, ok := stmt.(*ast.Update)
	if !ok || u.Where != nil || len(u.OrderBy) > 0 || u.Limit != nil || !joinsTables(u.TableExprs) {
		return stmt
	}
	out := *u
	out.Where = &ast.Where{Type: ast.WhereStr, Expr: ast.BoolVal(true)}
	return &out
}

// joinsTables reports whether tables name more than one table.
func joinsTables(tables ast.TableExprs) bool {
	if len(tables) > 1 {
		return true
	}
	if len(tables) == 1 {
		_, ok := tables[0].(*ast.JoinTableExpr)
		return ok
	}
	return false
}
