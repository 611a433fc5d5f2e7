package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/txn"
)

// A statement that writes several rows through one editor may take the
// pessimistic locks of all of them in one request at its end instead of
// one request per row (each a round trip to the store, and a Pebble
// write there). What is locked is the same: every key the statement wrote
// since its first write, at the statement's snapshot; its writes are in
// the transaction's buffer, invisible to others, until the commit, and a
// lock that fails fails the statement (its writes undone by the handler,
// statementFailed), as a row's lock does. The fast path's UPDATE and
// DELETE by a key prefix use it (fastpath_prefix.go).

// lockBatch is the pessimistic locks an editor has deferred.
type lockBatch struct {
	// on defers the locks; pending is set once a write deferred its
	// locks, mark being the statement's writes before the first of them.
	on, pending bool
	mark        txn.WriteMark
}

// lockWritten locks the keys k's statement wrote since mark, now, or at
// flushLocks when the editor defers its locks.
func (e *tableEditor) lockWritten(ctx *gsql.Context, tx *Transaction, k *txn.Txn, mark txn.WriteMark) error {
	if !e.batch.on {
		return lockWritten(ctx, tx, k, mark)
	}
	if !e.batch.pending {
		e.batch.pending, e.batch.mark = true, mark
	}
	return nil
}

// flushLocks takes the locks the editor deferred, in one request.
func (e *tableEditor) flushLocks(ctx *gsql.Context) error {
	if !e.batch.pending {
		return nil
	}
	e.batch.pending = false
	tx, err := transactionOf(ctx)
	if err != nil {
		return err
	}
	k, err := tx.txn(ctx)
	if err != nil {
		return toSQLError(err)
	}
	return lockWritten(ctx, tx, k, e.batch.mark)
}
