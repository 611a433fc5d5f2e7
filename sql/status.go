package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// The server status flags SERVER_STATUS_AUTOCOMMIT and
// SERVER_STATUS_IN_TRANS (and SERVER_STATUS_IN_TRANS_READONLY) travel in the greeting and in every OK and EOF
// packet, and drivers act on them: PyMySQL and mysqlclient send SET
// autocommit = 0 for a connection opened with autocommit off only when
// the flag says it is on, and report in_transaction from the other. vitess
// writes whatever the connection's StatusFlags hold when it writes such a
// packet; GMS sets them after a statement from the session's autocommit
// variable and from whether the session holds a transaction object, which
// it does for every statement with autocommit off (even SET) and after a
// DDL's implicit commit. percdb sets them from what MySQL means instead
// (inTransaction): in the greeting (handler.NewConnection), before an OK
// packet (the result callbacks), and after every command (handler.end),
// for the EOF packet vitess writes once the handler returns.

// statusInTransReadOnly is SERVER_STATUS_IN_TRANS_READONLY, which vitess
// does not name: the open transaction is read-only.
const statusInTransReadOnly = 0x2000

// statusNoIndexUsed is SERVER_QUERY_NO_INDEX_USED: the statement read a
// table by a full scan, as MySQL sets it (and its slow log's
// log_queries_not_using_indexes counts); drivers report it (Connector/J's
// usage advisor). percdb sets it when a table was read by a full scan
// rather than an index lookup or range.
const statusNoIndexUsed = 0x0020

// statusKept are the status flags percdb keeps.
const statusKept = uint16(mysql.ServerStatusAutocommit|mysql.ServerInTransaction) | statusInTransReadOnly | statusNoIndexUsed

// withStatusFlags returns flags with SERVER_STATUS_AUTOCOMMIT,
// SERVER_STATUS_IN_TRANS and SERVER_STATUS_IN_TRANS_READONLY set as
// autocommit, inTrans and readOnly (a transaction is open and is
// read-only) say, and its other flags (cursor flags, which vitess keeps
// there) unchanged.
func withStatusFlags(flags uint16, autocommit, inTrans, readOnly bool) uint16 {
	flags &^= statusKept
	if autocommit {
		flags |= mysql.ServerStatusAutocommit
	}
	if inTrans {
		flags |= mysql.ServerInTransaction
		if readOnly {
			flags |= statusInTransReadOnly
		}
	}
	return flags
}

// setStatusFlags sets the status flags of connection c from its session
// s, whose autocommit variable is autocommit.
func setStatusFlags(c *mysql.Conn, s *Session, autocommit bool) {
	in := s.inTransaction(autocommit)
	ro := false
	if in {
		t, ok := s.GetTransaction().(*Transaction)
		ro = ok && t.readOnly
	}
	c.StatusFlags = withStatusFlags(c.StatusFlags, autocommit, in, ro)
	if s.fullScan.Load() {
		c.StatusFlags |= statusNoIndexUsed
	}
}

// defaultAutocommit reports whether a new session starts in autocommit
// mode: the global autocommit variable, on unless SET GLOBAL turned it
// off.
func defaultAutocommit() bool {
	_, v, ok := gsql.SystemVariables.GetGlobal(gsql.AutoCommitSessionVar)
	if !ok {
		return true
	}
	on, err := gsql.ConvertToBool(nil, v)
	return err != nil || on
}

// autocommit reports whether the session's autocommit variable is on,
// from the fast path's cache of the session's variables (read again only
// after a variable changed). A server's provider always has a fast path,
// enabled or not.
func (s *Session) autocommit() bool {
	return s.provider.fast.sessionVars(s).autocommit
}

// inTransaction reports whether a transaction is open in MySQL's sense
// (SERVER_STATUS_IN_TRANS) between statements: from BEGIN or START
// TRANSACTION to its end (COMMIT, ROLLBACK, an implicit commit or a
// failed commit), and, with autocommit off, from the first statement that
// read or wrote a table (which began the Percolator transaction) to
// COMMIT or ROLLBACK. autocommit is the session's autocommit variable.
func (s *Session) inTransaction(autocommit bool) bool {
	if s.GetIgnoreAutoCommit() {
		return true
	}
	if autocommit {
		return false
	}
	t, ok := s.GetTransaction().(*Transaction)
	return ok && !t.finished && t.kv != nil
}
