package sql

import (
	"context"
	dbsql "database/sql"
	"runtime"
	"testing"
)

// TestPessimisticUpdateLocksUnchangedRows: an UPDATE of a pessimistic
// transaction locks the rows its WHERE matches even where it changes
// nothing (SET v = v; SET i = i + 1 over a NULL), on the fast path and
// through GMS, a point and a scan: a writer of the row waits for it
// (here until its lock wait timeout, 1205); and it acts on the latest
// commit of the row, as MySQL's current read does, not on the snapshot's
// NULL: i = i + 1 over another transaction's later 5 makes 6.
func TestPessimisticUpdateLocksUnchangedRows(t *testing.T) {
	_, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.t (id int primary key, i int, v int)")
	ctx := context.Background()
	a, b := pessimisticConn(t, pool), pessimisticConn(t, pool)
	mustExec := func(c *dbsql.Conn, q string) { t.Helper(); connExec(t, c, q) }
	mustExec(b, "set session innodb_lock_wait_timeout = 1")
	for _, c := range []struct {
		stmt string
		// increments: the statement adds 1 to i.
		increments bool
	}{
		{stmt: "update d.t set i = i + 1 where id = 1", increments: true},
		{stmt: "update d.t set v = v where id = 1"},
		{stmt: "update d.t set i = i + 1 where id = 1 and v > 0", increments: true},
		{stmt: "update d.t set i = i + 1 where v = 10", increments: true},
		{stmt: "update d.t set v = v where v >= 10"},
	} {
		execAll(t, pool, "delete from d.t where id > 0", "insert into d.t values (1, null, 10), (2, 0, 20)")
		// The row is locked: b's write waits for it and times out.
		mustExec(a, "begin")
		mustExec(a, c.stmt)
		if _, err := b.ExecContext(ctx, "update d.t set v = 11 where id = 1"); mysqlErrNum(err) != 1205 {
			t.Fatalf("%s: another transaction's write of the row: got %v, want 1205 (the row locked)", c.stmt, err)
		}
		mustExec(a, "rollback")
		if !c.increments {
			continue
		}
		// Current read: the statement adds to b's commit made after a's
		// snapshot (taken by a's read of row 2).
		mustExec(a, "begin")
		var v int
		if err := a.QueryRowContext(ctx, "select v from d.t where id = 2").Scan(&v); err != nil {
			t.Fatal(err)
		}
		mustExec(b, "update d.t set i = 5 where id = 1")
		mustExec(a, c.stmt)
		mustExec(a, "commit")
		var i dbsql.NullInt64
		if err := pool.QueryRow("select i from d.t where id = 1").Scan(&i); err != nil {
			t.Fatal(err)
		}
		if !i.Valid || i.Int64 != 6 {
			t.Fatalf("%s over a later commit of i = 5: i = %v, want 6", c.stmt, i)
		}
	}
	// A table without a primary key (rows keyed by a hidden row id).
	execAll(t, pool, "create table d.k (i int, v int)", "insert into d.k values (null, 10), (0, 20)")
	mustExec(a, "begin")
	mustExec(a, "update d.k set i = i + 1 where v = 10")
	if _, err := b.ExecContext(ctx, "update d.k set v = 11 where v = 10"); mysqlErrNum(err) != 1205 {
		t.Fatalf("keyless table: another transaction's write of the row: got %v, want 1205", err)
	}
	mustExec(a, "commit")
}

// connExec runs q on c, failing t on an error.
func connExec(t *testing.T, c *dbsql.Conn, q string) {
	t.Helper()
	if _, err := c.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestPessimisticAutocommitUpdateWaitsForUnchangedRow: an autocommit
// UPDATE in pessimistic mode that leaves a row unchanged at its snapshot
// (i = i + 1 over a NULL) waits for the transaction that holds the row's
// lock, as MySQL's does, then adds to that transaction's commit, on the
// fast path and through GMS.
func TestPessimisticAutocommitUpdateWaitsForUnchangedRow(t *testing.T) {
	srv, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.t (id int primary key, i int, v int)")
	ctx := context.Background()
	a, b := pessimisticConn(t, pool), pessimisticConn(t, pool)
	for _, stmt := range []string{
		"update d.t set i = i + 1 where id = 1",
		"update d.t set i = i + 1 where id = 1 and v > 0",
	} {
		execAll(t, pool, "delete from d.t where id > 0", "insert into d.t values (1, null, 10)")
		connExec(t, a, "begin")
		connExec(t, a, "update d.t set i = 5 where id = 1")
		done := make(chan error, 1)
		go func() {
			_, err := b.ExecContext(ctx, stmt)
			done <- err
		}()
		// b must wait for a's lock: finishing first is the failure.
		for len(srv.kvStore.LockWaits()) != 1 {
			select {
			case err := <-done:
				t.Fatalf("%s finished (%v) without waiting for the row's lock", stmt, err)
			default:
				runtime.Gosched()
			}
		}
		connExec(t, a, "commit")
		if err := <-done; err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		var i int
		if err := pool.QueryRow("select i from d.t where id = 1").Scan(&i); err != nil {
			t.Fatal(err)
		}
		if i != 6 {
			t.Fatalf("%s after a's i = 5: i = %d, want 6", stmt, i)
		}
	}
}
