package sql_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	percsql "github.com/percdb/percdb/sql"
)

// TestPessimisticInsertLocksFirst counts the store requests of INSERTs in
// a pessimistic REPEATABLE READ transaction (percdb_kv_requests_total):
// the new row's keys (its row key and index entries) are locked with
// their values before the duplicate check reads them, one request where
// a read and a lock were two, whether the row is new or a duplicate
// (1062, its existing row read from the value the lock returned). The
// duplicate's row stays locked, as InnoDB's duplicate check keeps its
// lock: another transaction's UPDATE of it waits. A row committed by
// another transaction after the snapshot is a duplicate all the same (the
// lock meets the newer commit and the statement runs again above it),
// through the primary key and through a unique index. READ COMMITTED
// reads first. Each statement's answer and the rows committed are
// checked too.
func TestPessimisticInsertLocksFirst(t *testing.T) {
	// No automatic analysis: its reads would be counted with a step's.
	srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0", AutoAnalyzeInterval: time.Hour})
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE li",
		"CREATE TABLE li.p (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE li.t (id INT PRIMARY KEY, k INT, INDEX (k))",
		"CREATE TABLE li.u (id INT PRIMARY KEY, k INT, UNIQUE KEY (k))",
		"INSERT INTO li.p VALUES (1, 100), (2, 200)",
		"INSERT INTO li.u VALUES (1, 10)")
	a, b := openDB(t, srv, "li"), openDB(t, srv, "li")
	a.SetMaxOpenConns(1)
	b.SetMaxOpenConns(1)
	counts := func() (reads, locks float64) { return readAndLockRequests(t, srv) }
	step := func(q string, args []any, wantReads, wantLocks float64, want string) {
		t.Helper()
		r0, l0 := counts()
		got := "ok"
		if _, err := a.Exec(q, args...); err != nil {
			var me *mysql.MySQLError
			if !errors.As(err, &me) {
				t.Fatalf("%s %v: %v", q, args, err)
			}
			got = fmt.Sprint(me.Number)
		}
		r1, l1 := counts()
		if got != want {
			t.Errorf("%s %v: %s, want %s", q, args, got, want)
		}
		if r1-r0 != wantReads || l1-l0 != wantLocks {
			t.Errorf("%s %v: %v reads and %v lock requests, want %v and %v", q, args, r1-r0, l1-l0, wantReads, wantLocks)
		}
	}
	// Each statement once before, so that its plan is known; in each
	// transaction a first read, which reads the catalog too.
	mustExec(t, a, "INSERT INTO p VALUES (1000, 0)", "INSERT INTO t VALUES (1000, 0)", "INSERT INTO u VALUES (1000, 1000)",
		"DELETE FROM p WHERE id = 1000", "DELETE FROM t WHERE id = 1000", "DELETE FROM u WHERE id = 1000")
	const first = "SELECT v FROM p WHERE id = 2"

	mustExec(t, a, "BEGIN PESSIMISTIC", first)
	step("INSERT INTO p VALUES (?, ?)", []any{3, 300}, 0, 1, "ok")
	step("INSERT INTO t VALUES (?, ?)", []any{3, 30}, 0, 1, "ok")
	step("INSERT INTO u VALUES (?, ?)", []any{3, 30}, 0, 1, "ok")
	step("INSERT INTO p VALUES (?, ?)", []any{1, 0}, 0, 1, "1062")
	step("INSERT INTO p VALUES (?, ?)", []any{3, 0}, 0, 0, "1062")
	// Committed by another transaction after a's snapshot.
	mustExec(t, b, "INSERT INTO p VALUES (4, 400)", "INSERT INTO u VALUES (4, 40)")
	step("INSERT INTO p VALUES (?, ?)", []any{4, 0}, 0, 1, "1062")
	// The existing row of a unique index's duplicate is read for the
	// error (it is not locked).
	step("INSERT INTO u VALUES (?, ?)", []any{5, 40}, 1, 1, "1062")
	// The duplicate's row is locked.
	mustExec(t, b, "SET innodb_lock_wait_timeout = 1")
	_, err := b.Exec("UPDATE p SET v = 0 WHERE id = 1")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1205 {
		t.Errorf("update of the row an insert found a duplicate: %v, want error 1205", err)
	}
	mustExec(t, a, "COMMIT")
	for q, want := range map[string]string{
		"SELECT id, v FROM p ORDER BY id": "1 100|2 200|3 300|4 400",
		"SELECT id, k FROM t ORDER BY id": "3 30",
		"SELECT id, k FROM u ORDER BY id": "1 10|3 30|4 40",
		"SELECT id FROM t WHERE k = 30":   "3",
		"SELECT id FROM u WHERE k = 30":   "3",
	} {
		if got := strings.Join(queryRowsArgs(t, b, q), "|"); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}

	mustExec(t, a, "SET SESSION transaction_isolation = 'READ-COMMITTED'", "BEGIN PESSIMISTIC", first)
	step("INSERT INTO p VALUES (?, ?)", []any{6, 600}, 1, 1, "ok")
	// The check's read, then the existing row's for the error.
	step("INSERT INTO p VALUES (?, ?)", []any{1, 0}, 2, 0, "1062")
	mustExec(t, a, "COMMIT")
}
