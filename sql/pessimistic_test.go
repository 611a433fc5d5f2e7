package sql

import (
	"context"
	dbsql "database/sql"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// pessimisticConn opens a connection of pool in pessimistic mode.
func pessimisticConn(t *testing.T, pool *dbsql.DB) *dbsql.Conn {
	t.Helper()
	c, err := pool.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.ExecContext(context.Background(), "set session percdb_txn_mode = 'pessimistic'"); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitForLockWaits waits until n lock requests wait in srv's store.
func waitForLockWaits(srv *Server, n int) {
	for len(srv.kvStore.LockWaits()) != n {
		runtime.Gosched()
	}
}

func mysqlErrNum(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// TestPessimisticCounterSQL: the classic MySQL counter, "BEGIN; SELECT v
// ... FOR UPDATE; UPDATE ... v+1; COMMIT", from 16 connections without
// client retries: no error, no increment lost; in a session set to
// pessimistic mode and in the default mode, and with autocommit
// increments of other connections mixed in (which run again inside the
// server when they lose a write conflict).
func TestPessimisticCounterSQL(t *testing.T) {
	_, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.c (id int primary key, v int)")
	const clients, rounds = 16, 10
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		setMode    bool
		autocommit bool
	}{{"session in pessimistic mode", true, false}, {"default mode", false, false}, {"default mode with autocommit increments", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			execAll(t, pool, "replace into d.c values (1, 0)")
			conns := make([]*dbsql.Conn, clients)
			for i := range conns {
				if c.setMode {
					conns[i] = pessimisticConn(t, pool)
					continue
				}
				conn, err := pool.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { conn.Close() })
				conns[i] = conn
			}
			var n atomic.Int64
			runRounds(t, conns, rounds, func(conn *dbsql.Conn) error {
				if c.autocommit && n.Add(1)%2 == 0 {
					_, err := conn.ExecContext(ctx, "update d.c set v = v + 1 where id = 1")
					return err
				}
				return increment(ctx, conn)
			})
			var v int
			if err := pool.QueryRow("select v from d.c where id = 1").Scan(&v); err != nil {
				t.Fatal(err)
			}
			if v != clients*rounds {
				t.Fatalf("v = %d, want %d", v, clients*rounds)
			}
		})
	}
}

// TestPessimisticAutocommitWriteRetries: in pessimistic mode an
// autocommit UPDATE that meets another transaction's lock waits for it,
// and when its commit then loses the write conflict it runs again
// inside the server instead of returning 1213: it applies after the
// other transaction, as a pessimistic statement would. In optimistic mode
// the same history returns 1213.
func TestPessimisticAutocommitWriteRetries(t *testing.T) {
	_, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.c (id int primary key, v int)", "insert into d.c values (1, 1)")
	ctx := context.Background()
	for _, mode := range []string{"pessimistic", "optimistic"} {
		t.Run(mode, func(t *testing.T) {
			execAll(t, pool, "update d.c set v = 1 where id = 1")
			locker := pessimisticConn(t, pool)
			writer, err := pool.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer writer.Close()
			if _, err := writer.ExecContext(ctx, "set session percdb_txn_mode = '"+mode+"'"); err != nil {
				t.Fatal(err)
			}
			if _, err := locker.ExecContext(ctx, "begin"); err != nil {
				t.Fatal(err)
			}
			var v int
			if err := locker.QueryRowContext(ctx, "select v from d.c where id = 1 for update").Scan(&v); err != nil {
				t.Fatal(err)
			}
			alive := statusValue(t, pool, "Percdb_locks_resolved_alive")
			done := make(chan error, 1)
			go func() {
				_, err := writer.ExecContext(ctx, "update d.c set v = v * 10 where id = 1")
				done <- err
			}()
			// The writer has met the lock (its resolver found the locker
			// alive) before the locker commits: its snapshot is older
			// than the locker's commit.
			for statusValue(t, pool, "Percdb_locks_resolved_alive") == alive {
				runtime.Gosched()
			}
			if _, err := locker.ExecContext(ctx, "update d.c set v = v + 1 where id = 1"); err != nil {
				t.Fatal(err)
			}
			if _, err := locker.ExecContext(ctx, "commit"); err != nil {
				t.Fatal(err)
			}
			err = <-done
			if err := pool.QueryRow("select v from d.c where id = 1").Scan(&v); err != nil {
				t.Fatal(err)
			}
			if mode == "optimistic" {
				if mysqlErrNum(err) != 1213 || v != 2 {
					t.Fatalf("optimistic autocommit update over a newer commit: %v, v = %d; want 1213 and 2", err, v)
				}
				return
			}
			if err != nil || v != 20 {
				t.Fatalf("autocommit update after the lock: %v, v = %d; want no error and 20", err, v)
			}
		})
	}
}

// runRounds runs fn rounds times on each connection, the connections at
// once, and fails t with the errors (a connection stops at its first, and
// rolls back).
func runRounds(t *testing.T, conns []*dbsql.Conn, rounds int, fn func(c *dbsql.Conn) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	for _, c := range conns {
		wg.Go(func() {
			for r := 0; r < rounds; r++ {
				if err := fn(c); err != nil {
					errs <- err
					_, _ = c.ExecContext(context.Background(), "rollback")
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func increment(ctx context.Context, c *dbsql.Conn) error {
	if _, err := c.ExecContext(ctx, "begin"); err != nil {
		return err
	}
	var v int
	if err := c.QueryRowContext(ctx, "select v from d.c where id = 1 for update").Scan(&v); err != nil {
		return fmt.Errorf("select for update: %w", err)
	}
	if _, err := c.ExecContext(ctx, "update d.c set v = v + 1 where id = 1"); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if _, err := c.ExecContext(ctx, "commit"); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// TestPessimisticLockWaitSQL: a second SELECT ... FOR UPDATE waits for the
// first transaction; innodb_lock_wait_timeout ends a wait with 1205 and
// rolls back the statement only; a cycle of waits is 1213 for exactly one.
func TestPessimisticLockWaitSQL(t *testing.T) {
	srv, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.t (id int primary key, v int)", "insert into d.t values (1, 10), (2, 20)")
	ctx := context.Background()
	a, b := pessimisticConn(t, pool), pessimisticConn(t, pool)
	mustExec := func(c *dbsql.Conn, q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Lock wait: b's FOR UPDATE waits until a commits, then sees a's write.
	mustExec(a, "begin")
	mustExec(a, "update d.t set v = 11 where id = 1")
	mustExec(b, "begin")
	got := make(chan int, 1)
	go func() {
		var v int
		if err := b.QueryRowContext(ctx, "select v from d.t where id = 1 for update").Scan(&v); err != nil {
			t.Error(err)
		}
		got <- v
	}()
	waitForLockWaits(srv, 1)
	mustExec(a, "commit")
	if v := <-got; v != 11 {
		t.Fatalf("b's FOR UPDATE read %d after a's commit, want 11", v)
	}
	mustExec(b, "commit")

	// Lock wait timeout: 1205; the transaction goes on without the
	// statement's writes.
	mustExec(a, "begin")
	mustExec(a, "update d.t set v = 12 where id = 1")
	mustExec(b, "set session innodb_lock_wait_timeout = 1")
	mustExec(b, "begin")
	mustExec(b, "update d.t set v = 21 where id = 2")
	_, err := b.ExecContext(ctx, "update d.t set v = v + 100 where id in (2, 1)")
	if mysqlErrNum(err) != 1205 {
		t.Fatalf("got %v, want 1205", err)
	}
	mustExec(b, "commit")
	mustExec(a, "commit")
	var v1, v2 int
	if err := pool.QueryRow("select (select v from d.t where id = 1), (select v from d.t where id = 2)").Scan(&v1, &v2); err != nil {
		t.Fatal(err)
	}
	if v1 != 12 || v2 != 21 {
		t.Fatalf("rows = %d, %d, want 12, 21 (the timed-out statement rolled back, the one before it kept)", v1, v2)
	}

	// Deadlock: a holds 1 and wants 2, b holds 2 and wants 1.
	mustExec(b, "set session innodb_lock_wait_timeout = 50")
	mustExec(a, "begin")
	mustExec(b, "begin")
	mustExec(a, "update d.t set v = 13 where id = 1")
	mustExec(b, "update d.t set v = 22 where id = 2")
	aDone := make(chan error, 1)
	go func() {
		_, err := a.ExecContext(ctx, "update d.t set v = 23 where id = 2")
		aDone <- err
	}()
	waitForLockWaits(srv, 1)
	_, errB := b.ExecContext(ctx, "update d.t set v = 14 where id = 1")
	if mysqlErrNum(errB) != 1213 {
		t.Fatalf("b closing the cycle: got %v, want 1213", errB)
	}
	if err := <-aDone; err != nil {
		t.Fatalf("a, after b's rollback: %v", err)
	}
	mustExec(a, "commit")
	// b was rolled back: its commit commits nothing.
	mustExec(b, "commit")
	if err := pool.QueryRow("select (select v from d.t where id = 1), (select v from d.t where id = 2)").Scan(&v1, &v2); err != nil {
		t.Fatal(err)
	}
	if v1 != 13 || v2 != 23 {
		t.Fatalf("rows = %d, %d, want a's 13, 23", v1, v2)
	}
}

// TestPessimisticClientGone: a client holding pessimistic locks blocks no
// reader, and when its connection goes away its locks go with it, so a
// writer waiting for them goes on.
func TestPessimisticClientGone(t *testing.T) {
	srv, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.t (id int primary key, v int)", "insert into d.t values (1, 10)")
	ctx := context.Background()
	other, err := dbsql.Open("mysql", "root@tcp("+srv.Addr().String()+")/")
	if err != nil {
		t.Fatal(err)
	}
	a := pessimisticConn(t, other)
	for _, q := range []string{"begin", "update d.t set v = 11 where id = 1"} {
		if _, err := a.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// A reader is not blocked by the lock.
	var v int
	if err := pool.QueryRow("select v from d.t where id = 1").Scan(&v); err != nil || v != 10 {
		t.Fatalf("read under the lock: %d, %v", v, err)
	}
	b := pessimisticConn(t, pool)
	if _, err := b.ExecContext(ctx, "begin"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(ctx, "update d.t set v = v + 100 where id = 1")
		done <- err
	}()
	waitForLockWaits(srv, 1)
	// The client goes away without a word: its session ends, its
	// transaction rolls back.
	a.Raw(func(dc any) error { return dc.(interface{ Close() error }).Close() })
	other.Close()
	if err := <-done; err != nil {
		t.Fatalf("the waiting writer: %v", err)
	}
	if _, err := b.ExecContext(ctx, "commit"); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow("select v from d.t where id = 1").Scan(&v); err != nil || v != 110 {
		t.Fatalf("v = %d, %v; want 110", v, err)
	}
}

// TestPessimisticDeadlockOfThreeSQL: three sessions each hold a row and
// want the next one's: exactly the one whose wait closes the cycle gets
// 1213, and the other two commit.
func TestPessimisticDeadlockOfThreeSQL(t *testing.T) {
	srv, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.t (id int primary key, v int)", "insert into d.t values (0, 0), (1, 0), (2, 0)")
	ctx := context.Background()
	conns := []*dbsql.Conn{pessimisticConn(t, pool), pessimisticConn(t, pool), pessimisticConn(t, pool)}
	for i, c := range conns {
		for _, q := range []string{"begin", fmt.Sprintf("update d.t set v = v + 1 where id = %d", i)} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("session %d: %s: %v", i, q, err)
			}
		}
	}
	errs := make([]chan error, 2)
	for i := 0; i < 2; i++ {
		errs[i] = make(chan error, 1)
		go func() {
			_, err := conns[i].ExecContext(ctx, fmt.Sprintf("update d.t set v = v + 1 where id = %d", i+1))
			errs[i] <- err
		}()
		waitForLockWaits(srv, i+1)
	}
	if _, err := conns[2].ExecContext(ctx, "update d.t set v = v + 1 where id = 0"); mysqlErrNum(err) != 1213 {
		t.Fatalf("the session closing the cycle: got %v, want 1213", err)
	}
	// Session 1 waited for session 2, which rolled back: it goes on.
	if err := <-errs[1]; err != nil {
		t.Fatalf("session 1: %v", err)
	}
	if _, err := conns[1].ExecContext(ctx, "commit"); err != nil {
		t.Fatal(err)
	}
	// Session 0 waited for session 1, which committed row 1 after session
	// 0's snapshot: its earlier read (its own row 0, locked) did not
	// change, so it moves its snapshot past that commit and goes on.
	if err := <-errs[0]; err != nil {
		t.Fatalf("session 0 after session 1's commit: %v", err)
	}
	if _, err := conns[0].ExecContext(ctx, "commit"); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query("select v from d.t order by id")
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1 2 1]" {
		t.Fatalf("rows %v; want [1 2 1]: sessions 0 and 1 committed, session 2 rolled back", got)
	}
}

func TestTxnModeStatements(t *testing.T) {
	for q, want := range map[string]bool{"begin": true, " BEGIN ;": true, "begin work": true, "start transaction read write": true,
		"begin pessimistic": true, "beginning": false, "select 1": false, "start": false, "Begin Optimistic": true} {
		if got := isBegin(q); got != want {
			t.Errorf("isBegin(%q) = %v", q, got)
		}
	}
	if m, b, ok := beginMode("BEGIN  Pessimistic;"); !ok || m != modePessimistic || b != "BEGIN" {
		t.Errorf("beginMode: %q %q %v", m, b, ok)
	}
	if _, _, ok := beginMode("begin"); ok {
		t.Error("plain begin has no mode")
	}
	if !isShowLockWaits("admin show lock waits;") || isShowLockWaits("admin show ddl jobs") {
		t.Error("isShowLockWaits")
	}
}

// TestPessimisticLaterStatementSQL: a pessimistic transaction whose
// writing statement is not its first read still waits instead of failing
// when nothing it read before changed: 8 connections x 5 rounds of "BEGIN;
// read another table (a point read and a scan); UPDATE the hot row;
// COMMIT" end without error and lose no increment. When something read
// before did change, the statement that meets the newer commit gets 1213
// and the transaction is rolled back: the read-modify-write from a
// client-side value (a lost update if the snapshot simply moved) and a
// scanned range that gained a row (read skew) are both refused.
func TestPessimisticLaterStatementSQL(t *testing.T) {
	_, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.c (id int primary key, v int)", "insert into d.c values (1, 0)",
		"create table d.o (id int primary key, v int)", "insert into d.o values (1, 0)")
	ctx := context.Background()
	const clients, rounds = 8, 5
	conns := make([]*dbsql.Conn, clients)
	for i := range conns {
		conns[i] = pessimisticConn(t, pool)
	}
	runRounds(t, conns, rounds, func(c *dbsql.Conn) error {
		var v, n int
		if _, err := c.ExecContext(ctx, "begin"); err != nil {
			return err
		}
		if err := c.QueryRowContext(ctx, "select v from d.o where id = 1").Scan(&v); err != nil {
			return err
		}
		if err := c.QueryRowContext(ctx, "select count(*) from d.o").Scan(&n); err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, "update d.c set v = v + 1 where id = 1"); err != nil {
			return fmt.Errorf("update: %w", err)
		}
		_, err := c.ExecContext(ctx, "commit")
		return err
	})
	var v int
	if err := pool.QueryRow("select v from d.c where id = 1").Scan(&v); err != nil || v != clients*rounds {
		t.Fatalf("v = %d, %v; want %d", v, err, clients*rounds)
	}

	a := pessimisticConn(t, pool)
	mustExec := func(c interface {
		ExecContext(context.Context, string, ...any) (dbsql.Result, error)
	}, q string, args ...any) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Lost update: a reads v, another commit changes it, a writes v+1.
	mustExec(a, "begin")
	if err := a.QueryRowContext(ctx, "select v from d.c where id = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	mustExec(pool, "update d.c set v = v + 10 where id = 1")
	_, err := a.ExecContext(ctx, "update d.c set v = ? where id = 1", v+1)
	if mysqlErrNum(err) != 1213 {
		t.Fatalf("write over a changed read: got %v, want 1213", err)
	}
	// The message says why, unlike a deadlock's: the snapshot could not
	// move, an earlier read having changed.
	if msg := err.Error(); !strings.Contains(msg, "snapshot could not move") || !strings.Contains(msg, "write conflict") {
		t.Fatalf("write over a changed read: %q does not say the snapshot could not move past a changed read", msg)
	}
	// The transaction is gone: what follows runs on its own.
	mustExec(a, "rollback")
	var got int
	if err := pool.QueryRow("select v from d.c where id = 1").Scan(&got); err != nil || got != v+10 {
		t.Fatalf("v = %d, %v; want %d (the other commit kept)", got, err, v+10)
	}
	// Read skew through a range: a counts d.o, another transaction adds
	// a row to d.o and changes the hot row; a's update is refused.
	var n int
	mustExec(a, "begin")
	if err := a.QueryRowContext(ctx, "select count(*) from d.o").Scan(&n); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(tx, "insert into d.o values (2, 0)")
	mustExec(tx, "update d.c set v = v + 1 where id = 1")
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ExecContext(ctx, "update d.c set v = v + ? where id = 1", n); mysqlErrNum(err) != 1213 {
		t.Fatalf("write after a scan that gained a row: got %v, want 1213", err)
	}
	mustExec(a, "rollback")
}

// TestPessimisticFastPathWrites: point UPDATE, DELETE and INSERT of an
// explicit pessimistic transaction run on the fast path (its hit counter
// moves) and lock their rows there: another transaction's write of the
// row waits until the first commits, then sees its write.
func TestPessimisticFastPathWrites(t *testing.T) {
	srv, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.t (id int primary key, v int)", "insert into d.t values (1, 10), (2, 20)")
	ctx := context.Background()
	a, b := pessimisticConn(t, pool), pessimisticConn(t, pool)
	hits := func() int {
		t.Helper()
		var name string
		var n int
		if err := a.QueryRowContext(ctx, "show status like 'Percdb_fastpath_hits'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	mustExec := func(c *dbsql.Conn, q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Each write of a, and a write of b to the same row, which waits until
	// a commits, then goes on over a's write (or fails on a's new row).
	for _, c := range []struct {
		a, b string
		bErr uint16
	}{
		{a: "update d.t set v = v + 1 where id = 1", b: "update d.t set v = v + 100 where id = 1"},
		{a: "delete from d.t where id = 2", b: "update d.t set v = v + 100 where id = 2"},
		{a: "insert into d.t (id, v) values (3, 30)", b: "insert into d.t (id, v) values (3, 99)", bErr: 1062},
	} {
		mustExec(a, "begin")
		before := hits()
		mustExec(a, c.a)
		// The SHOW STATUS itself goes to GMS.
		if got := hits(); got != before+1 {
			t.Fatalf("%s: fast path hits %d -> %d, want one more", c.a, before, got)
		}
		mustExec(b, "begin")
		done := make(chan error, 1)
		go func() {
			_, err := b.ExecContext(ctx, c.b)
			done <- err
		}()
		waitForLockWaits(srv, 1)
		mustExec(a, "commit")
		if err := <-done; mysqlErrNum(err) != c.bErr {
			t.Fatalf("after %s: %s: got %v, want error %d", c.a, c.b, err, c.bErr)
		}
		mustExec(b, "commit")
	}
	rows, err := pool.Query("select id, v from d.t order by id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, v int
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%d", id, v))
	}
	// Row 1: a's +1, then b's +100; row 2 deleted (b updated nothing);
	// row 3 a's.
	if fmt.Sprint(got) != "[1:111 3:30]" {
		t.Fatalf("rows %v", got)
	}
}

// TestDataLockWaits: while a connection waits for a row another holds,
// information_schema.DATA_LOCK_WAITS and ADMIN SHOW LOCK WAITS show the
// wait with both connections and transactions; once it ends, neither
// shows anything.
func TestDataLockWaits(t *testing.T) {
	srv, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.t (id int primary key, v int)", "insert into d.t values (1, 10)")
	ctx := context.Background()
	a, b := pessimisticConn(t, pool), pessimisticConn(t, pool)
	var aID, bID uint64
	if err := a.QueryRowContext(ctx, "select connection_id()").Scan(&aID); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRowContext(ctx, "select connection_id()").Scan(&bID); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"begin", "update d.t set v = 11 where id = 1"} {
		if _, err := a.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.ExecContext(ctx, "begin"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(ctx, "update d.t set v = v + 1 where id = 1")
		done <- err
	}()
	waitForLockWaits(srv, 1)
	const q = "select engine, requesting_thread_id, blocking_thread_id, requesting_engine_transaction_id, blocking_engine_transaction_id, " +
		"requesting_engine_lock_id = concat(requesting_engine_transaction_id, ':', `key`), `key` from information_schema.data_lock_waits"
	var (
		engine, key          string
		reqThread, blkThread uint64
		reqTxn, blkTxn       uint64
		lockIDsNameTheKey    bool
	)
	if err := pool.QueryRowContext(ctx, q).Scan(&engine, &reqThread, &blkThread, &reqTxn, &blkTxn, &lockIDsNameTheKey, &key); err != nil {
		t.Fatal(err)
	}
	if engine != "percdb" || reqThread != bID || blkThread != aID || reqTxn <= blkTxn || !lockIDsNameTheKey || key == "" {
		t.Fatalf("data_lock_waits: %s %d %d %d %d %v %q; want b (%d) waiting for a (%d)", engine, reqThread, blkThread, reqTxn, blkTxn, lockIDsNameTheKey, key, bID, aID)
	}
	var conn, txnID, adminKey, holdConn, holdTxn string
	if err := pool.QueryRowContext(ctx, "admin show lock waits").Scan(&conn, &txnID, &adminKey, &holdConn, &holdTxn); err != nil {
		t.Fatal(err)
	}
	if conn != strconv.FormatUint(bID, 10) || holdConn != strconv.FormatUint(aID, 10) || adminKey != key {
		t.Fatalf("admin show lock waits: %s %s %s %s %s", conn, txnID, adminKey, holdConn, holdTxn)
	}
	if _, err := a.ExecContext(ctx, "commit"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRowContext(ctx, "select count(*) from information_schema.data_lock_waits").Scan(&n); err != nil || n != 0 {
		t.Fatalf("waits after the commit: %d, %v", n, err)
	}
	if _, err := b.ExecContext(ctx, "commit"); err != nil {
		t.Fatal(err)
	}
}

// TestPessimisticRetryAfterKeptWrites: a CALL whose first statement kept
// its write and whose second then meets a newer commit is not run again
// (its first write would be made twice): it fails with 1213 and its
// transaction rolls back, leaving nothing of it. (Two rules refuse the
// retry here: a part of the statement kept its writes, and GMS answered
// the CALL's first statement before the second ran.)
func TestPessimisticRetryAfterKeptWrites(t *testing.T) {
	srv, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.c (id int primary key, v int)", "insert into d.c values (1, 0)",
		"create table d.log (id int primary key auto_increment, note int)",
		"create procedure d.p() begin insert into d.log (note) values (1); update d.c set v = v + 1 where id = 1; end")
	ctx := context.Background()
	a, b := pessimisticConn(t, pool), pessimisticConn(t, pool)
	for _, q := range []string{"begin", "update d.c set v = v + 10 where id = 1"} {
		if _, err := b.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	if _, err := a.ExecContext(ctx, "begin"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.ExecContext(ctx, "call d.p()")
		done <- err
	}()
	waitForLockWaits(srv, 1)
	if _, err := b.ExecContext(ctx, "commit"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; mysqlErrNum(err) != 1213 {
		t.Fatalf("call after its insert was kept: got %v, want 1213", err)
	}
	_, _ = a.ExecContext(ctx, "rollback")
	var logged, v int
	if err := pool.QueryRow("select count(*) from d.log").Scan(&logged); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow("select v from d.c where id = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if logged != 0 || v != 10 {
		t.Fatalf("log rows %d, v %d; want 0, 10", logged, v)
	}
}

// TestBeginPessimisticAsFirstCommand: BEGIN PESSIMISTIC as a connection's
// very first command starts a pessimistic transaction (its session did not
// exist yet, and the mode was dropped: the transaction was optimistic).
// The second writer's UPDATE then waits for the first's lock, where an
// optimistic one would buffer its write and return at once.
func TestBeginPessimisticAsFirstCommand(t *testing.T) {
	srv, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d", "create table d.t (id int primary key, v int)", "insert into d.t values (1, 10)")
	ctx := context.Background()
	fresh := func() *dbsql.Conn {
		c, err := pool.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// A pool may hand back the connection that ran the statements above:
	// hold it so that the two below are new.
	_ = fresh()
	a, b := fresh(), fresh()
	for _, c := range []*dbsql.Conn{a, b} {
		if _, err := c.ExecContext(ctx, "BEGIN PESSIMISTIC"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.ExecContext(ctx, "update d.t set v = 11 where id = 1"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(ctx, "update d.t set v = 12 where id = 1")
		done <- err
	}()
	// Either b waits for a's lock, or (optimistic) its UPDATE returns.
	for len(srv.kvStore.LockWaits()) == 0 {
		select {
		case err := <-done:
			t.Fatalf("the second writer's UPDATE returned (%v) without waiting for the first's lock", err)
		default:
			runtime.Gosched()
		}
	}
	if _, err := a.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the second writer after the first rolled back: %v", err)
	}
	if _, err := b.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}

// TestPessimisticReadColumns: a pessimistic transaction that read some
// columns of a row moves its snapshot past a commit that changed only
// other columns of it (its statement that met a newer commit runs again
// instead of failing), and not past one that changed a column it read,
// whether in its select list, in a filter, in an index it looked up or in
// an aggregate, nor past rows appearing in a range it read. Each case:
// a begins and reads; another transaction commits change and increments
// the hot row; a increments the hot row too (moved: no error and no lost
// increment; refused: 1213).
func TestPessimisticReadColumns(t *testing.T) {
	_, pool := openInternal(t, t.TempDir(), "")
	execAll(t, pool, "create database d",
		"create table d.w (id int primary key, tax int, ytd int, name varchar(10), key (name))",
		"create table d.r (id int primary key, k int, c varchar(10))",
		"create table d.h (id int primary key, v int)",
		"insert into d.h values (1, 0)")
	ctx := context.Background()
	cases := []struct {
		name, read, change string
		refused            bool
	}{
		{name: "point select, other column", read: "select tax from d.w where id = 1", change: "update d.w set ytd = ytd + 1 where id = 1"},
		{name: "point select, column read", read: "select tax from d.w where id = 1", change: "update d.w set tax = tax + 1 where id = 1", refused: true},
		{name: "point select, row deleted", read: "select tax from d.w where id = 1", change: "delete from d.w where id = 1", refused: true},
		{name: "point select of a missing row, inserted", read: "select tax from d.w where id = 9", change: "insert into d.w values (9, 1, 1, 'z')", refused: true},
		{name: "filter column", read: "select tax from d.w where id = 1 and ytd = 0", change: "update d.w set ytd = ytd + 1 where id = 1", refused: true},
		{name: "filter column of a scan", read: "select name from d.w where tax = 5", change: "update d.w set tax = 6 where id = 1", refused: true},
		{name: "scan, other column", read: "select name from d.w where tax = 5", change: "update d.w set ytd = 7 where id = 1"},
		{name: "index lookup, other column", read: "select tax from d.w where name = 'a'", change: "update d.w set ytd = 7 where id = 1"},
		{name: "index lookup, indexed column", read: "select tax from d.w where name = 'a'", change: "update d.w set name = 'b' where id = 1", refused: true},
		{name: "range sum, other column", read: "select sum(k) from d.r where id between 1 and 3", change: "update d.r set c = 'x' where id = 2"},
		{name: "range sum, column summed", read: "select sum(k) from d.r where id between 1 and 3", change: "update d.r set k = k + 1 where id = 2", refused: true},
		{name: "range, row inserted", read: "select c from d.r where id between 1 and 5", change: "insert into d.r values (4, 4, 'd')", refused: true},
		{name: "count, other column", read: "select count(*) from d.r", change: "update d.r set c = 'y' where id = 3"},
		{name: "count, row deleted", read: "select count(*) from d.r", change: "delete from d.r where id = 3", refused: true},
		{name: "select star", read: "select * from d.w where id = 1", change: "update d.w set ytd = ytd + 1 where id = 1", refused: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			execAll(t, pool, "delete from d.w where id > 0", "delete from d.r where id > 0",
				"insert into d.w values (1, 5, 0, 'a')",
				"insert into d.r values (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')")
			var before int
			if err := pool.QueryRow("select v from d.h where id = 1").Scan(&before); err != nil {
				t.Fatal(err)
			}
			a := pessimisticConn(t, pool)
			if _, err := a.ExecContext(ctx, "begin"); err != nil {
				t.Fatal(err)
			}
			rows, err := a.QueryContext(ctx, c.read)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			tx, err := pool.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{c.change, "update d.h set v = v + 1 where id = 1"} {
				if _, err := tx.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			_, err = a.ExecContext(ctx, "update d.h set v = v + 1 where id = 1")
			if c.refused {
				if mysqlErrNum(err) != 1213 {
					t.Fatalf("update after a changed read: got %v, want 1213", err)
				}
				_, _ = a.ExecContext(ctx, "rollback")
				return
			}
			if err != nil {
				t.Fatalf("update after a change to what was not read: %v", err)
			}
			if _, err := a.ExecContext(ctx, "commit"); err != nil {
				t.Fatal(err)
			}
			var after int
			if err := pool.QueryRow("select v from d.h where id = 1").Scan(&after); err != nil || after != before+2 {
				t.Fatalf("v = %d, %v; want %d", after, err, before+2)
			}
		})
	}
}
