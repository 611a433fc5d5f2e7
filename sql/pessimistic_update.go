package sql

import (
	"context"
	"errors"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/txn"
)

// An UPDATE of a pessimistic transaction locks every row its WHERE
// matches, whether it changes the row or not, as MySQL's current read
// does: `SET v = v`, or `SET i = i + 1` over a NULL, changes nothing at
// the snapshot, but the row may have a newer commit (where i is 5), and
// MySQL's UPDATE waits for the row's lock and acts on that commit. A
// changed row is locked with the keys it writes (lockWritten); an
// unchanged one, which GMS does not hand to the editor (its update
// iterator skips rows equal to their update), is locked here, by the
// rows of the UPDATE's source (lockUnchangedRows), and by the fast path
// (fastRun.update); an autocommit UPDATE in pessimistic mode makes them
// part of its optimistic commit (locksUnchanged). The lock finds a commit newer than the snapshot as a
// write's lock does: the statement runs again over it once the snapshot
// moves (lockError, retryAfterConflict), or gets 1213.

// lockRows locks rows of table et, found at k's snapshot, in a
// pessimistic transaction (or adds them to an optimistic one's conflict
// set, txn.Txn.LockKeys); the error is the statement's (lockError).
// Under the session's FOR UPDATE NOWAIT a row another transaction has
// locked fails the statement at once with 3572, and under SKIP LOCKED
// lockRows of one row answers errLockedRowSkipped (txn.SetLockNoWait).
func lockRows(ctx *gsql.Context, tx *Transaction, k *txn.Txn, et *executor.Table, handles ...tablecodec.Handle) error {
	return lockRowsWith(ctx, tx, k, et, executor.LockRows, handles)
}

// lockRowsReading is lockRows for rows the statement has not read yet and
// reads next through k, by their handles: the rows come with their locks
// (executor.LockRowsReading), and a handle without a row is locked too.
// The caller checks lockBeforeRead.
func lockRowsReading(ctx *gsql.Context, tx *Transaction, k *txn.Txn, et *executor.Table, handles ...tablecodec.Handle) error {
	return lockRowsWith(ctx, tx, k, et, executor.LockRowsReading, handles)
}

// lockRowsReadingIfExist is lockRowsReading for the rows of a list of
// handles of which some may have no row (an IN list of primary keys):
// the rows there are come with their locks, one request where a read and
// a lock were two, and a handle without a row is not locked (no gap
// lock: another transaction may insert it, as when the list was read
// first). It reports false, with nothing locked, when the transaction
// cannot lock so: the caller reads, then locks what it found. Only for
// a statement that waits for locks (not NOWAIT or SKIP LOCKED, which
// lock what they read row by row), when lockBeforeRead.
func lockRowsReadingIfExist(ctx *gsql.Context, tx *Transaction, k *txn.Txn, et *executor.Table, handles ...tablecodec.Handle) (bool, error) {
	var ok bool
	err := lockRowsWith(ctx, tx, k, et, func(ctx context.Context, k *txn.Txn, ts uint64, et *executor.Table, hs ...tablecodec.Handle) error {
		var err error
		ok, err = executor.LockRowsReadingIfExist(ctx, k, ts, et, hs...)
		return err
	}, handles)
	return ok, err
}

// lockBeforeRead reports whether a statement of tx that writes or locks
// the rows of a key it names (UPDATE, DELETE, SELECT ... FOR UPDATE by
// primary key) locks them before it reads them (lockRowsReading), saving
// the store a read: in a pessimistic REPEATABLE READ transaction. The key
// is then locked whether or not it has a row, as InnoDB's REPEATABLE
// READ locks the gap where the row would be; READ COMMITTED locks only
// the rows it finds, as InnoDB's does, so it reads first.
func lockBeforeRead(tx *Transaction, k *txn.Txn) bool {
	return k.IsPessimistic() && !tx.readCommitted
}

// lockRowsWith is lockRows and lockRowsReading, locking through lock.
func lockRowsWith(ctx *gsql.Context, tx *Transaction, k *txn.Txn, et *executor.Table,
	lock func(context.Context, *txn.Txn, uint64, *executor.Table, ...tablecodec.Handle) error, handles []tablecodec.Handle) error {
	wait := compat.LockWaitDefault
	if s, err := sessionOf(ctx); err == nil {
		wait = s.lockWait
	}
	ts, err := k.SnapshotTS(ctx)
	if err == nil {
		tx.noteLocking(ctx)
		if wait != compat.LockWaitDefault {
			k.SetLockNoWait(true)
		}
		err = lock(ctx, k, ts, et, handles...)
		if wait != compat.LockWaitDefault {
			k.SetLockNoWait(false)
		}
	}
	if errors.Is(err, txn.ErrLockNotWaited) {
		if wait == compat.LockSkipLocked && len(handles) == 1 {
			return errLockedRowSkipped
		}
		// NOWAIT; or SKIP LOCKED over several rows at once, of which
		// none was locked: the statement stops rather than return a row
		// it could not lock (the readers that skip lock row by row).
		return mysql.NewSQLError(codeLockNoWait, stateGeneral, "%s", msgLockNoWait)
	}
	return tx.lockError(ctx, err)
}

// errLockedRowSkipped is lockRows' answer, under SKIP LOCKED, for one row
// another transaction has locked: the caller (rowIter) leaves the row
// out.
var errLockedRowSkipped = errors.New("row locked by another transaction: skipped")

// withUnchangedRowsLocked puts a lockUnchangedRows over the rows of u, an
// UPDATE of one percdb table in a pessimistic transaction; ok is false
// when u needs none (or has one).
func withUnchangedRowsLocked(ctx *gsql.Context, u *plan.Update) (gsql.Node, bool) {
	if u.IsJoin || hasUpdateJoin(u) {
		return u, false
	}
	s, err := sessionOf(ctx)
	if err != nil || !s.lockingTxn() && !s.provider.fast.sessionVars(s).pessimistic {
		return u, false
	}
	src, err := plan.GetUpdatable(u.Child)
	if err != nil {
		return u, false
	}
	if _, done := src.(*lockUnchangedRows); done {
		return u, false
	}
	inner := src
	if b, ok := src.(*bytewiseUpdatable); ok {
		inner = b.UpdatableTable
	}
	t := percdbTable(inner)
	if t == nil || t.meta == nil {
		return u, false
	}
	ret, err := u.WithChildren(&lockUnchangedRows{UnaryNode: plan.UnaryNode{Child: u.Child}, UpdatableTable: src, t: t})
	if err != nil {
		return u, false
	}
	return ret, true
}

// lockUnchangedRows is the source of an UPDATE's rows (each the old row
// followed by the new), and its table for GMS (whose Schema GMS compares
// the two by): it locks each row whose update leaves it equal, which GMS
// then skips.
type lockUnchangedRows struct {
	plan.UnaryNode
	gsql.UpdatableTable
	t *Table
}

var _ gsql.Node = (*lockUnchangedRows)(nil)

// Schema implements sql.Node and sql.Table: the table's, as GMS's UPDATE
// compares rows by it (bytewiseUpdatable's when that is below).
func (n *lockUnchangedRows) Schema() gsql.Schema { return n.UpdatableTable.Schema() }

// String implements sql.Node.
func (n *lockUnchangedRows) String() string { return n.Child.String() }

// Children implements sql.Node.
func (n *lockUnchangedRows) Children() []gsql.Node { return []gsql.Node{n.Child} }

// Resolved implements sql.Node.
func (n *lockUnchangedRows) Resolved() bool { return n.Child.Resolved() }

// IsReadOnly implements sql.Node.
func (n *lockUnchangedRows) IsReadOnly() bool { return false }

// WithChildren implements sql.Node.
func (n *lockUnchangedRows) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(n, len(children), 1)
	}
	ret := *n
	ret.Child = children[0]
	return &ret, nil
}

// build returns the iterator of n's rows over child, its source's.
func (n *lockUnchangedRows) build(child gsql.RowIter) gsql.RowIter {
	return &lockUnchangedIter{child: child, n: n, sch: n.Schema()}
}

// lockUnchangedIter is lockUnchangedRows' iterator.
type lockUnchangedIter struct {
	child gsql.RowIter
	n     *lockUnchangedRows
	sch   gsql.Schema
}

// Next implements sql.RowIter.
func (it *lockUnchangedIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	row, err := it.child.Next(ctx)
	if err != nil || len(row) != 2*len(it.sch) {
		return row, err
	}
	old, updated := row[:len(it.sch)], row[len(it.sch):]
	// GMS's own test (rowexec updateIter): an error there is GMS's to
	// report.
	if same, err := old.Equals(ctx, updated, it.sch); err != nil || !same {
		return row, nil
	}
	tx, err := transactionOf(ctx)
	if err != nil {
		return nil, err
	}
	k, err := tx.txn(ctx)
	if err != nil {
		return nil, toSQLError(err)
	}
	if s, err := sessionOf(ctx); err != nil || !s.locksUnchanged(k) {
		return row, nil
	}
	h, err := it.n.t.editor().handleOfExisting(ctx, tx, k, old)
	if err != nil {
		return nil, toSQLError(err)
	}
	if err := lockRows(ctx, tx, k, it.n.t.meta.Exec, h); err != nil {
		return nil, err
	}
	return row, nil
}

// Close implements sql.RowIter.
func (it *lockUnchangedIter) Close(ctx *gsql.Context) error { return it.child.Close(ctx) }

// lockUnchanged locks, in a pessimistic transaction, the rows of olds the
// fast path's UPDATE leaves unchanged (news[i] nil), in one request.
func (r *fastRun) lockUnchanged(t *Transaction, pl *fastPlan, olds, news [][]any) error {
	var handles []tablecodec.Handle
	for i, row := range news {
		if row != nil {
			continue
		}
		h, err := pl.Meta.Exec.HandleOf(olds[i])
		if err != nil {
			return err
		}
		handles = append(handles, h)
	}
	if len(handles) == 0 {
		return nil
	}
	k, err := t.txn(r.ctx)
	if err != nil {
		return toSQLError(err)
	}
	if !r.s.locksUnchanged(k) {
		return nil
	}
	return lockRows(r.ctx, t, k, pl.Meta.Exec, handles...)
}

// locksUnchanged reports whether an UPDATE of s through k locks the rows
// it leaves unchanged: in a pessimistic transaction, and in an
// autocommit statement of a session in pessimistic mode, which runs
// optimistically first (autocommitRetries): the rows, made part of its
// commit (txn.Txn.LockKeys), make that commit meet the lock another
// transaction holds on one of them, and the statement then runs again
// pessimistically, waiting for it. An explicit optimistic transaction
// does not: nothing of it waits.
func (s *Session) locksUnchanged(k *txn.Txn) bool {
	return k.IsPessimistic() || !s.inExplicitTransaction() && s.provider.fast.sessionVars(s).pessimistic
}
