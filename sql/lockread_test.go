package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	percsql "github.com/percdb/percdb/sql"
)

// TestPessimisticLockBeforeRead counts the store requests of a
// pessimistic transaction's statements on a row named by its primary key
// (the kv client's request counters, percdb_kv_requests_total): a SELECT
// ... FOR UPDATE, and an UPDATE or DELETE that locks the row alone (sets
// no indexed column; a table without secondary indexes), lock the row
// first and get it with its lock, one request where a read and a lock
// were two; a later statement on the row asks for nothing. A statement
// that writes index entries too reads first and locks the row with them
// (two requests either way). READ COMMITTED reads first: it locks only
// rows that exist. An absent row locked first keeps an insert of it out
// until the transaction ends, as InnoDB's REPEATABLE READ does with the
// gap. Each statement's answer and the rows committed are checked too.
func TestPessimisticLockBeforeRead(t *testing.T) {
	// No automatic analysis: its reads would be counted with a step's.
	srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0", AutoAnalyzeInterval: time.Hour})
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE lr",
		"CREATE TABLE lr.t (id INT PRIMARY KEY, k INT, c VARCHAR(20), INDEX (k))",
		"CREATE TABLE lr.p (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE lr.q (id INT PRIMARY KEY, k INT, UNIQUE KEY (k))",
		"INSERT INTO lr.q VALUES (1, 10), (2, 20)",
		"INSERT INTO lr.t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c')",
		"INSERT INTO lr.p VALUES (1, 100), (2, 200), (3, 300), (4, 400)")
	a, b := openDB(t, srv, "lr"), openDB(t, srv, "lr")
	a.SetMaxOpenConns(1)
	b.SetMaxOpenConns(1)
	step := requestStep(t, a, func() (reads, locks float64) { return readAndLockRequests(t, srv) })
	// Each statement twice on an absent row, so that the fast path knows
	// it; in each transaction a first read, which reads the catalog too.
	for range 2 {
		for _, q := range []string{"SELECT v FROM p WHERE id = ? FOR UPDATE", "UPDATE p SET v = v + 1 WHERE id = ?", "DELETE FROM p WHERE id = ?",
			"UPDATE t SET c = ? WHERE id = ?", "UPDATE t SET k = k + 1 WHERE id = ?", "DELETE FROM t WHERE id = ?", "UPDATE p SET v = 0 WHERE id = ?",
			"UPDATE q SET k = k + 100 WHERE id = ?", "DELETE FROM q WHERE id = ?"} {
			args := []any{1000}
			if strings.Count(q, "?") == 2 {
				args = []any{"z", 1000}
			}
			if _, err := a.Exec(q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	const first = "SELECT v FROM p WHERE id = 4"

	mustExec(t, a, "BEGIN PESSIMISTIC", first)
	step("SELECT v FROM p WHERE id = ? FOR UPDATE", []any{1}, 0, 1, "100")
	step("UPDATE p SET v = v + 1 WHERE id = ?", []any{1}, 0, 0, "1 row")
	step("UPDATE p SET v = v + 1 WHERE id = ?", []any{2}, 0, 1, "1 row")
	step("DELETE FROM p WHERE id = ?", []any{3}, 0, 1, "1 row")
	step("UPDATE t SET c = ? WHERE id = ?", []any{"x", 1}, 0, 1, "1 row")
	// A non-unique index's entries are covered by the row's lock.
	step("UPDATE t SET k = k + 1 WHERE id = ?", []any{2}, 0, 1, "1 row")
	step("DELETE FROM t WHERE id = ?", []any{3}, 0, 1, "1 row")
	// A unique index's are locked, after the row is read (and the new
	// entry checked for a duplicate).
	step("UPDATE q SET k = k + 100 WHERE id = ?", []any{1}, 2, 1, "1 row")
	step("DELETE FROM q WHERE id = ?", []any{2}, 1, 1, "1 row")
	step("SELECT v FROM p WHERE id = ? FOR UPDATE", []any{9}, 0, 1, "")
	step("UPDATE p SET v = 0 WHERE id = ?", []any{8}, 0, 1, "0 rows")
	// The absent rows are locked: another transaction's insert waits.
	mustExec(t, b, "SET innodb_lock_wait_timeout = 1")
	for _, id := range []int{8, 9} {
		_, err := b.Exec("INSERT INTO p VALUES (?, 0)", id)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1205 {
			t.Errorf("insert of p.id = %d locked by a statement that found no row: %v, want error 1205", id, err)
		}
	}
	mustExec(t, a, "COMMIT")
	if got := strings.Join(queryRowsArgs(t, b, "SELECT id, v FROM p ORDER BY id"), "|"); got != "1 101|2 201|4 400" {
		t.Errorf("p after commit: %q", got)
	}
	if got := strings.Join(queryRowsArgs(t, b, "SELECT id, k, c FROM t ORDER BY id"), "|"); got != "1 10 x|2 21 b" {
		t.Errorf("t after commit: %q", got)
	}
	// The index entries the statements wrote and deleted.
	for q, want := range map[string]string{
		"SELECT id FROM t WHERE k BETWEEN 0 AND 100 ORDER BY k": "1|2",
		"SELECT id FROM t WHERE k = 21":                         "2",
		"SELECT id FROM q WHERE k BETWEEN 0 AND 200 ORDER BY k": "1",
		"SELECT id FROM q WHERE k = 110":                        "1",
	} {
		if got := strings.Join(queryRowsArgs(t, b, q), "|"); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}

	mustExec(t, a, "SET SESSION transaction_isolation = 'READ-COMMITTED'", "BEGIN PESSIMISTIC", first)
	step("UPDATE p SET v = v + 1 WHERE id = ?", []any{4}, 1, 1, "1 row")
	step("UPDATE p SET v = 0 WHERE id = ?", []any{7}, 1, 0, "0 rows")
	mustExec(t, a, "COMMIT")
}

// queryRowsArgs is queryRows with arguments.
func queryRowsArgs(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	return collectRows(t, q, rows, err)
}

// TestCoveredIndexEntriesUnderContention: transactions of four
// connections increment the indexed column of the same two rows at once
// (sysbench's UPDATE ... SET k = k + 1). Each UPDATE locks its row alone
// (the non-unique index's entries are covered by it) and, when the row's
// lock meets another's commit, moves the snapshot to that commit; the
// entries' prewrite then finds nothing newer than the snapshot, so no
// COMMIT fails. Every increment is there at the end, and the index
// agrees with the rows (ADMIN CHECK TABLE, lookups by the final values).
func TestCoveredIndexEntriesUnderContention(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{})
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE ci",
		"CREATE TABLE ci.t (id INT PRIMARY KEY, k INT, c VARCHAR(10), INDEX (k))",
		"INSERT INTO ci.t VALUES (1, 0, 'a'), (2, 1000, 'b')")
	const workers, txns = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := openDB(t, srv, "ci")
			db.SetMaxOpenConns(1)
			for i := 0; i < txns; i++ {
				// A statement's 1213 (the snapshot could not move) is the
				// client's to retry; a COMMIT's would be a conflict the
				// covered entries made.
				for {
					err := func() error {
						for _, q := range []string{"BEGIN PESSIMISTIC", "UPDATE t SET k = k + 1 WHERE id = 1", "UPDATE t SET k = k + 1 WHERE id = 2"} {
							if _, err := db.Exec(q); err != nil {
								_, _ = db.Exec("ROLLBACK")
								return fmt.Errorf("%s: %w", q, err)
							}
						}
						if _, err := db.Exec("COMMIT"); err != nil {
							return fmt.Errorf("COMMIT: %w", err)
						}
						return nil
					}()
					var me *mysql.MySQLError
					if err != nil && errors.As(err, &me) && me.Number == 1213 && !strings.HasPrefix(err.Error(), "COMMIT") {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	b := openDB(t, srv, "ci")
	for q, want := range map[string]string{
		"SELECT id, k FROM t ORDER BY id":                          fmt.Sprintf("1 %d|2 %d", workers*txns, 1000+workers*txns),
		fmt.Sprintf("SELECT id FROM t WHERE k = %d", workers*txns): "1",
		"SELECT count(*) FROM t WHERE k BETWEEN 0 AND 100000":      "2",
	} {
		if got := strings.Join(queryRowsArgs(t, b, q), "|"); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
	mustExec(t, b, "ADMIN CHECK TABLE t")
}

// readAndLockRequests returns the node's store requests so far that read
// (get, batch_get) and that lock (acquire_pessimistic_lock), from its
// metrics: the counting tests difference them around a statement.
func readAndLockRequests(t *testing.T, srv *percsql.Server) (reads, locks float64) {
	t.Helper()
	m := scrape(t, srv)
	for _, cmd := range []string{"get", "batch_get"} {
		reads += metricValue(t, m, "percdb_kv_requests_total", "command="+cmd, "result=ok")
	}
	return reads, metricValue(t, m, "percdb_kv_requests_total", "command=acquire_pessimistic_lock", "result=ok")
}

// TestPessimisticLockRangeRead counts the store requests of a pessimistic
// transaction's statements over a range of the primary key: a range
// SELECT ... FOR UPDATE (TPC-C Delivery's oldest new order of a
// district) and an UPDATE or DELETE by a key prefix read their rows with
// their locks, one request where a read and a lock were two
// (txn.Txn.LockRange), and a later statement on a row so read asks for
// nothing. The rows not read stay free, those read are locked, and the
// answers and the rows committed are those of the statements.
func TestPessimisticLockRangeRead(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0", AutoAnalyzeInterval: time.Hour})
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE lrr",
		"CREATE TABLE lrr.o (w INT, d INT, id INT, v INT, PRIMARY KEY (w, d, id))",
		"INSERT INTO lrr.o VALUES (1, 1, 1, 10), (1, 1, 2, 20), (1, 1, 3, 30), (1, 2, 1, 40), (1, 2, 2, 50), (1, 3, 1, 60)")
	a, b := openDB(t, srv, "lrr"), openDB(t, srv, "lrr")
	a.SetMaxOpenConns(1)
	b.SetMaxOpenConns(1)
	step := requestStep(t, a, func() (reads, locks float64) {
		m := scrape(t, srv)
		for _, cmd := range []string{"get", "batch_get", "scan", "coprocessor"} {
			reads += metricValue(t, m, "percdb_kv_requests_total", "command="+cmd, "result=ok")
		}
		return reads, metricValue(t, m, "percdb_kv_requests_total", "command=acquire_pessimistic_lock", "result=ok")
	})
	const (
		oldest = "SELECT id, v FROM o WHERE w = ? AND d = ? ORDER BY id LIMIT 1 FOR UPDATE"
		first  = "SELECT v FROM o WHERE w = 9 AND d = 9 AND id = 9"
	)
	// Each statement twice on an absent prefix, so that the fast path
	// knows it.
	for range 2 {
		for _, q := range []string{oldest, "UPDATE o SET v = v + 1 WHERE w = ? AND d = ?", "DELETE FROM o WHERE w = ? AND d = ?"} {
			if _, err := a.Exec(q, 7, 7); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if _, err := a.Exec("DELETE FROM o WHERE w = ? AND d = ? AND id = ?", 7, 7, 7); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, a, "BEGIN PESSIMISTIC", first)
	step(oldest, []any{1, 1}, 0, 1, "1 10")
	step("DELETE FROM o WHERE w = ? AND d = ? AND id = ?", []any{1, 1, 1}, 0, 0, "1 row")
	step("UPDATE o SET v = v + 1 WHERE w = ? AND d = ?", []any{1, 2}, 0, 1, "2 rows")
	step("DELETE FROM o WHERE w = ? AND d = ?", []any{1, 3}, 0, 1, "1 row")
	step("DELETE FROM o WHERE w = ? AND d = ?", []any{1, 4}, 0, 1, "0 rows")
	// The rows read are locked; the next row of the LIMIT 1 was not read.
	mustExec(t, b, "SET innodb_lock_wait_timeout = 1")
	for _, key := range [][3]int{{1, 2, 1}, {1, 2, 2}, {1, 3, 1}} {
		_, err := b.Exec("UPDATE o SET v = 0 WHERE w = ? AND d = ? AND id = ?", key[0], key[1], key[2])
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1205 {
			t.Errorf("update of row %v read by the transaction: %v, want error 1205", key, err)
		}
	}
	mustExec(t, b, "UPDATE o SET v = 31 WHERE w = 1 AND d = 1 AND id = 3")
	mustExec(t, a, "COMMIT")
	if got := strings.Join(queryRowsArgs(t, b, "SELECT w, d, id, v FROM o ORDER BY w, d, id"), "|"); got != "1 1 2 20|1 1 3 31|1 2 1 41|1 2 2 51" {
		t.Errorf("o after commit: %q", got)
	}
}

// requestStep returns a check of one statement on a: its answer (the rows
// of a SELECT joined by "|", else "0 rows", "1 row", "n rows") and the
// read and lock requests counts reports it made.
func requestStep(t *testing.T, a *sql.DB, counts func() (reads, locks float64)) func(q string, args []any, wantReads, wantLocks float64, want string) {
	return func(q string, args []any, wantReads, wantLocks float64, want string) {
		t.Helper()
		r0, l0 := counts()
		var got string
		if strings.HasPrefix(q, "SELECT") {
			got = strings.Join(queryRowsArgs(t, a, q, args...), "|")
		} else {
			res, err := a.Exec(q, args...)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			n, _ := res.RowsAffected()
			got = fmt.Sprintf("%d rows", n)
			if n == 1 {
				got = "1 row"
			}
		}
		r1, l1 := counts()
		if got != want {
			t.Errorf("%s %v: %q, want %q", q, args, got, want)
		}
		if r1-r0 != wantReads || l1-l0 != wantLocks {
			t.Errorf("%s %v: %v reads and %v lock requests, want %v and %v", q, args, r1-r0, l1-l0, wantReads, wantLocks)
		}
	}
}
