package sql

import (
	"context"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// Transaction characteristics: access mode (READ ONLY / READ WRITE) and
// isolation level, which MySQL sets four ways. percdb runs a pessimistic
// transaction at READ COMMITTED or READ UNCOMMITTED as READ COMMITTED
// (readcommitted.go) and every other under snapshot isolation
// (docs/transactions.md), and refuses writes in a read-only one with
// error 1792 (Transaction.writable, and GMS's analyzer, which asks
// Transaction.IsReadOnly):
//
//   - START TRANSACTION READ ONLY | READ WRITE: this transaction. GMS hands
//     StartTransaction READ ONLY, and READ WRITE as it does a plain BEGIN,
//     so the handler notes READ WRITE in the statement's text (readWrite);
//   - SET SESSION TRANSACTION ..., SET SESSION transaction_read_only /
//     transaction_isolation: the session's later transactions
//     (StartTransaction reads transaction_read_only);
//   - SET TRANSACTION ... (no GLOBAL or SESSION): the next transaction
//     only. GMS sets the session's variables instead; the handler saves
//     them before the statement (nextTransaction) and puts them back once
//     the next transaction has ended;
//   - SET GLOBAL TRANSACTION ...: sessions that start later (GMS).

// Session variables of the transaction characteristics.
const (
	varTxReadOnly  = "transaction_read_only"
	varTxIsolation = "transaction_isolation"
)

// savedCharacteristics are a session's characteristics before a SET
// TRANSACTION that changed them for the next transaction only.
type savedCharacteristics struct {
	readOnly, isolation any
	// armed: the SET TRANSACTION succeeded, and the next transaction
	// runs with its characteristics.
	armed bool
}

// StartTransaction implements sql.TransactionSession. The Percolator
// transaction begins lazily, on first use. It is read-only when the
// statement says READ ONLY, or says nothing about the access mode and the
// session's transaction_read_only is on.
func (s *Session) StartTransaction(ctx *gsql.Context, chr gsql.TransactionCharacteristic) (gsql.Transaction, error) {
	ro := chr == gsql.ReadOnly || !s.readWrite && s.provider.fast.sessionVars(s).txReadOnly
	t := &Transaction{provider: s.provider, readOnly: ro}
	s.setPessimistic(ctx, t)
	s.started = t
	return t, nil
}

// isStartReadWrite reports whether query is START TRANSACTION ... READ
// WRITE.
func isStartReadWrite(query string) bool {
	return startsWithWord(query, "start") && indexFold(query, "write") > 0 &&
		strings.Contains(strings.Join(strings.Fields(strings.ToLower(query)), " "), "read write")
}

// isSetTransactionNext reports whether query is SET TRANSACTION ... with
// neither GLOBAL nor SESSION: characteristics of the next transaction.
func isSetTransactionNext(query string) bool {
	q := lexical.TrimLeading(query, " \t\r\n")
	if len(q) < 4 || !strings.EqualFold(q[:3], "set") || !lexical.IsSpaceByte(q[3]) {
		return false
	}
	q = lexical.TrimLeading(q[3:], " \t\r\n")
	const w = "transaction"
	return len(q) > len(w) && strings.EqualFold(q[:len(w)], w) && !lexical.IsWordByte(q[len(w)])
}

// beginCharacteristics prepares s for statement query: notes READ WRITE,
// and saves the characteristics a SET TRANSACTION is about to change for
// the next transaction only (once: a second SET TRANSACTION before that
// transaction changes the same saved ones).
func (s *Session) beginCharacteristics(query string) {
	s.setNext = isSetTransactionNext(query)
	s.readWrite = !s.setNext && isStartReadWrite(query)
	if s.setNext && s.saved == nil {
		ro, _ := s.GetSessionVariable(nil, varTxReadOnly)
		iso, _ := s.GetSessionVariable(nil, varTxIsolation)
		s.saved = &savedCharacteristics{readOnly: ro, isolation: iso}
	}
}

// endCharacteristics ends the statement beginCharacteristics prepared,
// whose outcome is err: it arms the saved characteristics after SET
// TRANSACTION, and puts them back once the transaction that used them has
// ended (after the statement, when no transaction is open). With
// autocommit off, GMS keeps a transaction from statement to statement
// even before one reads or writes a table (SET autocommit = 0 itself
// starts it); until one does, MySQL has not started it, so it takes the
// access mode the session has now.
func (s *Session) endCharacteristics(ctx context.Context, err error, autocommit bool) {
	s.readWrite = false
	if t, ok := s.GetTransaction().(*Transaction); ok && t.kv == nil && !t.finished && !s.GetIgnoreAutoCommit() {
		t.readOnly = s.provider.fast.sessionVars(s).txReadOnly
		// So do its mode and isolation level: SET autocommit = 0 starts
		// the transaction while autocommit is still on (so it would be
		// optimistic), and a SET TRANSACTION ISOLATION LEVEL may follow.
		t.pessimistic, t.readCommitted = false, false
		s.setPessimistic(gsql.NewContext(ctx, gsql.WithSession(s)), t)
	}
	sv := s.saved
	switch {
	case sv == nil:
	case s.setNext:
		s.setNext = false
		if err == nil {
			sv.armed = true
		} else if !sv.armed {
			s.saved = nil
		}
	case sv.armed && !s.inTransaction(autocommit):
		s.saved = nil
		gctx := gsql.NewContext(ctx, gsql.WithSession(s))
		_ = s.SetSessionVariable(gctx, varTxReadOnly, sv.readOnly)
		_ = s.SetSessionVariable(gctx, varTxIsolation, sv.isolation)
	}
}
