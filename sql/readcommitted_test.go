package sql

import (
	"context"
	dbsql "database/sql"
	"fmt"
	"testing"
)

// rcConn is a connection at READ COMMITTED in pessimistic mode.
func rcConn(t *testing.T, pool *dbsql.DB) *dbsql.Conn {
	t.Helper()
	c := pessimisticConn(t, pool)
	if _, err := c.ExecContext(context.Background(), "set session transaction isolation level read committed"); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReadCommittedCounterSQL: the counter without FOR UPDATE, "BEGIN;
// SELECT v ...; UPDATE c SET v = v + 1; COMMIT", from 16 connections at
// READ COMMITTED, no client retries: the read of the counter changes
// under nearly every transaction (which at REPEATABLE READ refuses the
// UPDATE with 1213), yet no statement fails and no increment is lost:
// the UPDATE waits for the row's lock and adds to the latest commit. With
// autocommit off too, and with the fast path off (GMS's path).
func TestReadCommittedCounterSQL(t *testing.T) {
	_, pool := openInternal(t, t.TempDir(), "")
	pool.SetMaxIdleConns(0)
	execAll(t, pool, "create database d", "create table d.c (id int primary key, v int)", "insert into d.c values (1, 0)")
	const clients, rounds = 16, 10
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		setup []string
		begin string
	}{
		{name: "begin", begin: "begin"},
		{name: "autocommit off", setup: []string{"set autocommit = 0"}},
		{name: "gms path", setup: []string{"set @percdb_fastpath = 0"}, begin: "begin"},
		{name: "tx_isolation", setup: []string{"set session transaction isolation level repeatable read", "set session tx_isolation = 'READ-UNCOMMITTED'"}, begin: "begin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want int
			if err := pool.QueryRow("select v from d.c where id = 1").Scan(&want); err != nil {
				t.Fatal(err)
			}
			conns := make([]*dbsql.Conn, clients)
			for i := range conns {
				conns[i] = rcConn(t, pool)
				for _, q := range c.setup {
					if _, err := conns[i].ExecContext(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
			}
			runRounds(t, conns, rounds, func(conn *dbsql.Conn) error {
				if c.begin != "" {
					if _, err := conn.ExecContext(ctx, c.begin); err != nil {
						return err
					}
				}
				var v int
				if err := conn.QueryRowContext(ctx, "select v from d.c where id = 1").Scan(&v); err != nil {
					return fmt.Errorf("select: %w", err)
				}
				if _, err := conn.ExecContext(ctx, "update d.c set v = v + 1 where id = 1"); err != nil {
					return fmt.Errorf("update after reading %d: %w", v, err)
				}
				_, err := conn.ExecContext(ctx, "commit")
				return err
			})
			want += clients * rounds
			var v int
			if err := pool.QueryRow("select v from d.c where id = 1").Scan(&v); err != nil || v != want {
				t.Fatalf("v = %d, %v; want %d", v, err, want)
			}
		})
	}
}

// TestReadCommittedLevels: which transactions are READ COMMITTED. Each
// case reads the row, lets another connection commit a change, and reads
// again in the same transaction: a READ COMMITTED one sees the change, a
// snapshot-isolation one does not.
func TestReadCommittedLevels(t *testing.T) {
	_, pool := openInternal(t, t.TempDir(), "")
	// Each case's session settings end with its connection.
	pool.SetMaxIdleConns(0)
	execAll(t, pool, "create database d", "create table d.t (id int primary key, v int)", "insert into d.t values (1, 0)")
	ctx := context.Background()
	n := 0
	for _, c := range []struct {
		name     string
		setup    []string // on a fresh pessimistic-mode connection
		begin    string
		sees     bool   // the second read sees the other's commit
		reported string // @@transaction_isolation inside the transaction
	}{
		{name: "default", begin: "begin", reported: "REPEATABLE-READ"},
		{name: "session read committed", setup: []string{"set session transaction isolation level read committed"}, begin: "begin", sees: true, reported: "READ-COMMITTED"},
		{name: "session read uncommitted", setup: []string{"set session transaction isolation level read uncommitted"}, begin: "start transaction", sees: true, reported: "READ-UNCOMMITTED"},
		{name: "transaction_isolation", setup: []string{"set transaction_isolation = 'READ-COMMITTED'"}, begin: "begin", sees: true, reported: "READ-COMMITTED"},
		{name: "tx_isolation", setup: []string{"set tx_isolation = 'READ-COMMITTED'"}, begin: "begin", sees: true, reported: "READ-COMMITTED"},
		{name: "next transaction", setup: []string{"set transaction isolation level read committed"}, begin: "begin", sees: true, reported: "READ-COMMITTED"},
		{name: "serializable", setup: []string{"set session transaction isolation level serializable"}, begin: "begin", reported: "SERIALIZABLE"},
		{name: "optimistic", setup: []string{"set session transaction isolation level read committed"}, begin: "begin optimistic", reported: "READ-COMMITTED"},
		{name: "autocommit off, level set after", setup: []string{"set autocommit = 0", "set session transaction isolation level read committed"}, sees: true, reported: "READ-COMMITTED"},
		{name: "gms path", setup: []string{"set @percdb_fastpath = 0", "set session transaction isolation level read committed"}, begin: "begin", sees: true, reported: "READ-COMMITTED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn := pessimisticConn(t, pool)
			for _, q := range c.setup {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if c.begin != "" {
				if _, err := conn.ExecContext(ctx, c.begin); err != nil {
					t.Fatal(err)
				}
			}
			var first, second int
			if err := conn.QueryRowContext(ctx, "select v from d.t where id = 1").Scan(&first); err != nil {
				t.Fatal(err)
			}
			n++
			if _, err := pool.Exec("update d.t set v = ? where id = 1", n); err != nil {
				t.Fatal(err)
			}
			var level string
			if err := conn.QueryRowContext(ctx, "select @@transaction_isolation").Scan(&level); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRowContext(ctx, "select v from d.t where id = 1").Scan(&second); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(ctx, "commit"); err != nil {
				t.Fatal(err)
			}
			if sees := second != first; sees != c.sees || c.sees && second != n {
				t.Errorf("read %d, then %d after a commit of %d; want the commit seen: %v", first, second, n, c.sees)
			}
			if level != c.reported {
				t.Errorf("@@transaction_isolation = %s, want %s", level, c.reported)
			}
		})
	}
	// SET TRANSACTION applies to the next transaction only.
	conn := pessimisticConn(t, pool)
	if _, err := conn.ExecContext(ctx, "set transaction isolation level read committed"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"begin", "commit", "begin"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var first, second int
	if err := conn.QueryRowContext(ctx, "select v from d.t where id = 1").Scan(&first); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec("update d.t set v = v + 1 where id = 1"); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, "select v from d.t where id = 1").Scan(&second); err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Errorf("the transaction after the next one read %d, then %d: READ COMMITTED outlived SET TRANSACTION's one transaction", first, second)
	}
}
