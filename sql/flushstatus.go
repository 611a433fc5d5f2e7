package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
)

// flushStatus is FLUSH STATUS (mariadb-admin flush-status, COM_REFRESH
// with REFRESH_STATUS): as in MySQL, the session's status counters
// (Com_select, Questions, Handler_*, …) go back to zero. Values that are
// not counters (Ssl_cipher) are left alone, and so are percdb's node
// counters (Percdb_*), which are the node's, not the session's, and feed
// /metrics. GMS v0.20.0 refuses the statement (1105 "status not
// supported").
func (s *Session) flushStatus() {
	for _, v := range s.BaseSession.GetAllStatusVariables(nil) {
		if c, ok := v.(*gsql.MutableStatusVarValue); ok && c.Variable().GetScope() != gsql.StatusVariableScope_Global {
			_ = c.Set(uint64(0))
		}
	}
}
