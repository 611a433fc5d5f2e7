package sql

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// READ COMMITTED (docs/transactions.md, "Isolation levels"). A
// pessimistic transaction started while the session's
// transaction_isolation is READ-COMMITTED or READ-UNCOMMITTED (which
// percdb runs as READ COMMITTED, as TiDB does: nothing uncommitted is
// ever visible) is made READ COMMITTED in the store
// (txn.Txn.SetReadCommitted): each statement reads the latest committed
// data, and a write that meets a newer commit runs again over it instead
// of failing. The level is taken when the Percolator transaction begins
// (its first read or write, as MySQL's transaction starts at its first
// statement that reads a table), so SET TRANSACTION ISOLATION LEVEL after
// SET autocommit = 0 applies. REPEATABLE READ and SERIALIZABLE stay
// snapshot isolation, and so does an optimistic transaction at any
// level: it has no locks to keep the rows it wrote from being written
// between its statements' snapshots, so READ COMMITTED would let its
// updates be lost (TiDB likewise ignores READ COMMITTED in optimistic
// mode).

// varTxIsolationOld is MySQL 5.7's and MariaDB's name of
// transaction_isolation. GMS has both as separate variables; a session
// that sets one sets the other too (Session.SetSessionVariable).
const varTxIsolationOld = "tx_isolation"

// isReadCommitted reports whether v, a value of transaction_isolation, is
// a level percdb runs as READ COMMITTED.
func isReadCommitted(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	s = strings.ReplaceAll(strings.ToUpper(s), " ", "-")
	return s == "READ-COMMITTED" || s == "READ-UNCOMMITTED"
}

// isolationAlias returns the other name of the isolation variable name,
// or "" when name is neither.
func isolationAlias(name string) string {
	switch strings.ToLower(name) {
	case varTxIsolation:
		return varTxIsolationOld
	case varTxIsolationOld:
		return varTxIsolation
	}
	return ""
}

// setIsolationAlias gives the other isolation variable the value a SET
// gave name (nothing when name is not one of them), as converted by it.
func (s *Session) setIsolationAlias(ctx *gsql.Context, name string) error {
	alias := isolationAlias(name)
	if alias == "" {
		return nil
	}
	v, err := s.GetSessionVariable(ctx, name)
	if err != nil {
		return err
	}
	return s.BaseSession.SetSessionVariable(ctx, alias, v)
}

// readCommittedTxn reports whether a pessimistic transaction the session
// begins now is READ COMMITTED.
func (s *Session) readCommittedTxn() bool {
	return s.provider.fast.sessionVars(s).readCommitted
}
