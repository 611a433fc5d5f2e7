package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// GMS binds a view read by a statement from the view's stored CREATE VIEW
// statement, with the planner of the statement that reads it
// (planbuilder's resolveView), and binding any CREATE statement flags
// the whole query as DDL (sql.QFlagDDL). A DDL query commits the
// session's transaction when it ends (rowexec's TransactionCommittingIter),
// so a SELECT from a view, SHOW CREATE TABLE or SHOW COLUMNS of a view, or
// an INSERT … SELECT from one, inside a transaction, committed the
// transaction and left the session in autocommit: a later ROLLBACK undid
// nothing, and mariadb-dump --single-transaction failed at its ROLLBACK
// TO SAVEPOINT after the first view (1305). MySQL commits only for DDL
// statements, never for reads.
//
// Database.GetViewDefinition notes the statement it hands out
// (planDatabases.handOut), and when the planner parses that very
// statement (planParser) it is marked TEMPORARY, the one case in which
// GMS's binder does not set the DDL flag; nothing else reads the mark on
// a CREATE VIEW. A CREATE VIEW the client sends is parsed before its
// statement binds any view, so it is never the statement handed out.

// handOut records stmt as the stored statement of the view the planner
// is about to bind.
func (p *planDatabases) handOut(stmt string) {
	p.mu.Lock()
	p.handedOut = stmt
	p.mu.Unlock()
}

// takeHandedOut reports whether stmt is the view statement handed out
// last, and forgets it.
func (p *planDatabases) takeHandedOut(stmt string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.handedOut == "" || p.handedOut != stmt {
		return false
	}
	p.handedOut = ""
	return true
}

// markStoredView marks ddl, the parsed CREATE VIEW query, as not a DDL of
// the statement being planned when it is the stored statement of a view
// that statement reads.
func markStoredView(ctx *gsql.Context, query string, ddl *ast.DDL) {
	s, ok := ctx.Session.(*Session)
	if ok && s.planDBs.takeHandedOut(query) {
		ddl.Temporary = true
	}
}
