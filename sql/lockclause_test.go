package sql_test

import (
	"context"
	"testing"

	"github.com/percdb/percdb/sql/sqltest"
)

// TestSelectForUpdateNoWaitSkipLocked: in pessimistic transactions FOR
// UPDATE NOWAIT fails at once with 3572 on a row another transaction has
// locked, and SKIP LOCKED leaves such rows out (below a LIMIT too: the
// next free row is returned), as in MySQL 8; FOR UPDATE OF t and FOR
// SHARE with its options parse. Before, NOWAIT, OF and FOR SHARE were
// 1064, and SKIP LOCKED waited for the lock.
func TestSelectForUpdateNoWaitSkipLocked(t *testing.T) {
	s := sqltest.Start(t, "")
	a := connect(t, s, "")
	a.exec("CREATE DATABASE q", "USE q", "CREATE TABLE jobs (id INT PRIMARY KEY, state VARCHAR(10))",
		"INSERT INTO jobs VALUES (1, 'new'), (2, 'new'), (3, 'new'), (4, 'done')")
	a.exec("BEGIN")
	a.want("SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE", "1")

	b := connect(t, s, "q")
	// Were NOWAIT ignored, the test would fail after a second, not hang.
	b.exec("SET innodb_lock_wait_timeout = 1", "BEGIN")
	b.want("SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED", "2")
	b.want("SELECT id FROM jobs WHERE id IN (1, 2, 3) ORDER BY id FOR UPDATE OF jobs SKIP LOCKED", "2", "3")
	b.fails("SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT", 3572,
		"Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
	b.fails("SELECT id, state FROM jobs FOR UPDATE OF `jobs` NOWAIT", 3572,
		"Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
	rows, err := b.c.QueryContext(context.Background(), "SELECT id FROM jobs WHERE id = ? FOR UPDATE NOWAIT", 1)
	if err == nil {
		rows.Close()
	}
	if got, _ := mysqlError(err); got == nil || got.Number != 3572 {
		t.Fatalf("prepared FOR UPDATE NOWAIT of a locked row: %v, want 3572", err)
	}
	// Rows the transaction locked itself are not skipped; FOR SHARE takes
	// no lock.
	b.want("SELECT id FROM jobs WHERE id IN (2, 3) FOR UPDATE NOWAIT", "2", "3")
	b.want("SELECT id FROM jobs WHERE id = 1 FOR SHARE", "1")
	b.want("SELECT id FROM jobs WHERE id = 1 FOR SHARE OF jobs SKIP LOCKED", "1")
	b.want("SELECT id FROM jobs WHERE id = 1 FOR SHARE NOWAIT", "1")

	// The other way round: a's NOWAIT meets b's locks.
	a.fails("SELECT id FROM jobs WHERE id = 2 FOR UPDATE NOWAIT", 3572,
		"Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set.")
	a.want("SELECT id FROM jobs ORDER BY id FOR UPDATE SKIP LOCKED", "1", "4")
	a.exec("COMMIT")
	b.want("SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT", "1")
	b.exec("COMMIT")
}
