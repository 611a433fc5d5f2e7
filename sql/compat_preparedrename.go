package sql

import (
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// planDatabaseForExecution sets, for one execution of the prepared
// statement query, the planning database planParser sets when a RENAME
// TABLE is parsed (compat_viewdb.go): GMS executes a prepared statement
// from what it made of it when it was prepared, without parsing it again,
// so the planning database, dropped when the COM_STMT_PREPARE command
// ended, was not there for the execution, and a prepared RENAME TABLE
// pr.u TO pr.u2 renamed the current database's u. Session.CommandEnd
// drops it again.
func (h *handler) planDatabaseForExecution(c *mysql.Conn, query string) {
	if !mayRename(query) {
		return
	}
	s := h.sessions.get(c.ConnectionID)
	if s == nil {
		return
	}
	stmt, err := ast.Parse(query)
	if err != nil {
		return
	}
	if rename, ok := renameOf(stmt); ok {
		s.planRename(rename)
	}
}

// planDatabaseForText is planDatabaseForExecution for a text query whose
// text is that of one of the session's prepared statements: GMS then
// plans it from the prepared statement's parse, not parsing it again
// (Engine.preparedStatement), so planParser did not see it either.
func (h *handler) planDatabaseForText(c *mysql.Conn, query string) {
	// Every text query GMS runs comes here: the leading word first, the
	// cache (under its lock) only for a statement that may rename.
	if !mayRename(query) || h.engine == nil || h.engine.PreparedDataCache == nil {
		return
	}
	if _, ok := h.engine.PreparedDataCache.GetCachedStmt(c.ConnectionID, query); ok {
		h.planDatabaseForExecution(c, query)
	}
}

// mayRename reports whether query is a RENAME TABLE or an ALTER TABLE,
// which may rename (renameOf decides).
func mayRename(query string) bool {
	return startsWithWord(query, "rename") || startsWithWord(query, "alter")
}
