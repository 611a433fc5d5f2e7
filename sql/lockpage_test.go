package sql_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	percsql "github.com/percdb/percdb/sql"
)

// TestPessimisticLockPages counts the store requests of SELECT ... FOR
// UPDATE shapes in a pessimistic transaction (percdb_kv_requests_total),
// through GMS's path and through the fast path where it serves them: an
// IN list of whole primary keys locks the rows it names that exist with
// their values, one request; GMS's row iterator locks what it reads a
// page at a time (pages of 1, 2, 4, ... rows), where each row was one
// request: an index range of 3 rows 2 lock requests, a scan of 7 rows 3,
// an OR of ranges of 4 rows 3. Then what the locks
// mean: the rows returned are locked (another transaction's NOWAIT fails
// with 3572), a LIMIT 1 streamed by GMS locked its first row only, a
// row locked by another transaction in the middle of a page is waited
// for and read as its newest commit, a wait too long fails with 1205,
// and SKIP LOCKED still leaves the locked row out.
func TestPessimisticLockPages(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0", AutoAnalyzeInterval: time.Hour})
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE lp",
		"CREATE TABLE lp.s (w INT, i INT, q INT, k INT, PRIMARY KEY (w, i), INDEX (k))",
		"INSERT INTO lp.s VALUES (1, 1, 10, 1), (1, 2, 20, 2), (1, 3, 30, 3), (1, 4, 40, 4), (1, 5, 50, 5), (2, 1, 60, 6), (2, 2, 70, 7)",
		"CREATE TABLE lp.p (id INT PRIMARY KEY, v INT)",
		"INSERT INTO lp.p VALUES (1, 1), (2, 2), (3, 3), (4, 4)")
	a, b := openDB(t, srv, "lp"), openDB(t, srv, "lp")
	a.SetMaxOpenConns(1)
	b.SetMaxOpenConns(1)
	// Lock requests only: the server's background work reads too (a
	// get a second), and this is about the locks.
	locks := func() float64 {
		return metricValue(t, scrape(t, srv), "percdb_kv_requests_total", "command=acquire_pessimistic_lock", "result=ok")
	}
	// A transaction's first reads: of the catalog too.
	const (
		first  = "SELECT q FROM s WHERE w = 9 AND i = 9"
		firstP = "SELECT v FROM p WHERE id = 9"
	)
	// locks: through GMS's path, then the fast path's.
	for _, c := range []struct {
		q     string
		locks [2]float64
		want  string
	}{
		// The batched points locked where they have rows, with the
		// rows, in one request (LockKeysReadingIfExist), then read
		// from the transaction. Absent keys are not locked.
		{"SELECT w, i, q FROM s WHERE (w, i) IN ((1, 1), (1, 3), (2, 2), (3, 3)) FOR UPDATE", [2]float64{1, 1}, "1 1 10|1 3 30|2 2 70"},
		{"SELECT w, i, q FROM s WHERE w = 1 AND i IN (1, 3, 5) FOR UPDATE", [2]float64{1, 1}, "1 1 10|1 3 30|1 5 50"},
		{"SELECT id, v FROM p WHERE id IN (1, 3, 7) FOR UPDATE", [2]float64{1, 1}, "1 1|3 3"},
		// An index range: pages of 1 and 2.
		{"SELECT w, i, q FROM s WHERE k BETWEEN 2 AND 4 FOR UPDATE", [2]float64{2, 2}, "1 2 20|1 3 30|1 4 40"},
		// Every row read is locked (the filter is GMS's): 7 rows in
		// pages of 1, 2 and 4.
		{"SELECT w, i, q FROM s WHERE q > 25 FOR UPDATE", [2]float64{3, 3}, "1 3 30|1 4 40|1 5 50|2 1 60|2 2 70"},
		{"SELECT w, i, q FROM s WHERE (w = 1 AND i < 3) OR w = 2 FOR UPDATE", [2]float64{3, 3}, "1 1 10|1 2 20|2 1 60|2 2 70"},
	} {
		for _, fast := range []int{0, 1} {
			if fast == 1 {
				// Once for the fast path to learn the shape.
				mustExec(t, a, "SET @percdb_fastpath = 1", "BEGIN PESSIMISTIC")
				queryRowsArgs(t, a, c.q)
				mustExec(t, a, "ROLLBACK")
			}
			mustExec(t, a, fmt.Sprintf("SET @percdb_fastpath = %d", fast), "BEGIN PESSIMISTIC", first, firstP)
			l0 := locks()
			rows := strings.Join(queryRowsArgs(t, a, c.q), "|")
			l1 := locks()
			mustExec(t, a, "ROLLBACK")
			if rows != c.want {
				t.Errorf("%s (fast path %d): %q, want %q", c.q, fast, rows, c.want)
			}
			if l1-l0 != c.locks[fast] {
				t.Errorf("%s (fast path %d): %v lock requests, want %v", c.q, fast, l1-l0, c.locks[fast])
			}
		}
	}
	mustExec(t, a, "SET @percdb_fastpath = 1")

	nowait := func(q string, wantErr uint16) {
		t.Helper()
		_, err := b.Exec(q)
		var me *mysql.MySQLError
		switch {
		case wantErr == 0 && err != nil:
			t.Errorf("%s: %v, want no error", q, err)
		case wantErr != 0 && (!errors.As(err, &me) || me.Number != wantErr):
			t.Errorf("%s: %v, want error %d", q, err, wantErr)
		}
	}
	// The rows of every page are locked; the rows a LIMIT 1 did not
	// reach are not.
	mustExec(t, a, "BEGIN PESSIMISTIC", first)
	if got := strings.Join(queryRowsArgs(t, a, "SELECT w, i, q FROM s WHERE q > 25 FOR UPDATE"), "|"); got != "1 3 30|1 4 40|1 5 50|2 1 60|2 2 70" {
		t.Errorf("scan FOR UPDATE: %q", got)
	}
	mustExec(t, b, "BEGIN")
	for _, key := range []string{"(1, 1)", "(1, 3)", "(1, 5)", "(2, 2)"} {
		nowait("SELECT q FROM s WHERE (w, i) = "+key+" FOR UPDATE NOWAIT", 3572)
	}
	mustExec(t, b, "ROLLBACK")
	mustExec(t, a, "ROLLBACK", "BEGIN PESSIMISTIC", first)
	if got := strings.Join(queryRowsArgs(t, a, "SELECT w, i, q FROM s WHERE k BETWEEN 2 AND 5 ORDER BY k LIMIT 1 FOR UPDATE"), "|"); got != "1 2 20" {
		t.Errorf("LIMIT 1 FOR UPDATE: %q", got)
	}
	mustExec(t, b, "BEGIN")
	nowait("SELECT q FROM s WHERE (w, i) = (1, 2) FOR UPDATE NOWAIT", 3572)
	nowait("SELECT q FROM s WHERE (w, i) = (1, 3) FOR UPDATE NOWAIT", 0)
	mustExec(t, b, "ROLLBACK")
	mustExec(t, a, "ROLLBACK")

	// Another transaction's lock on the third row of the scan, in its
	// second page: waited for, then the row read as that transaction
	// committed it.
	mustExec(t, b, "BEGIN PESSIMISTIC", "UPDATE s SET q = 33 WHERE w = 1 AND i = 3")
	mustExec(t, a, "BEGIN PESSIMISTIC", first)
	done := make(chan string, 1)
	go func() {
		rows, err := a.QueryContext(context.Background(), "SELECT w, i, q FROM s WHERE k BETWEEN 1 AND 4 FOR UPDATE")
		if err != nil {
			done <- err.Error()
			return
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var w, i, q string
			if err := rows.Scan(&w, &i, &q); err != nil {
				done <- err.Error()
				return
			}
			got = append(got, w+" "+i+" "+q)
		}
		if err := rows.Err(); err != nil {
			done <- err.Error()
			return
		}
		done <- strings.Join(got, "|")
	}()
	select {
	case got := <-done:
		t.Fatalf("FOR UPDATE over a locked row answered before the lock went: %s", got)
	case <-time.After(300 * time.Millisecond):
	}
	mustExec(t, b, "COMMIT")
	if got := <-done; got != "1 1 10|1 2 20|1 3 33|1 4 40" {
		t.Errorf("FOR UPDATE after the lock's commit: %q, want the newest commit", got)
	}
	mustExec(t, a, "ROLLBACK")

	// A wait too long fails the statement with 1205; SKIP LOCKED leaves
	// the row out.
	mustExec(t, b, "BEGIN PESSIMISTIC", "UPDATE s SET q = 34 WHERE w = 1 AND i = 3")
	mustExec(t, a, "SET innodb_lock_wait_timeout = 1", "BEGIN PESSIMISTIC", first)
	_, err := a.Exec("SELECT w, i, q FROM s WHERE k BETWEEN 1 AND 4 FOR UPDATE")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1205 {
		t.Errorf("FOR UPDATE over a row locked past the wait: %v, want 1205", err)
	}
	if got := strings.Join(queryRowsArgs(t, a, "SELECT w, i, q FROM s WHERE k BETWEEN 1 AND 4 FOR UPDATE SKIP LOCKED"), "|"); got != "1 1 10|1 2 20|1 4 40" {
		t.Errorf("SKIP LOCKED: %q", got)
	}
	mustExec(t, a, "ROLLBACK")
	mustExec(t, b, "COMMIT")
}

// TestPessimisticLockPagesJoin: a join's batched lookups under FOR
// UPDATE read their ranges' rows a page ahead of what they hand on, and
// each row still goes to the outer row of its own range (the read it
// came from is the row's, not the last one started): the answer is the
// one the same join gives without FOR UPDATE.
func TestPessimisticLockPagesJoin(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{AutoAnalyzeInterval: time.Hour})
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE lpj",
		"CREATE TABLE lpj.o (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE lpj.i (id INT PRIMARY KEY, k INT, v INT, INDEX (k))",
		"CREATE TABLE lpj.l (w INT, n INT, v INT, PRIMARY KEY (w, n))")
	var orows, irows, lrows []string
	for id := 1; id <= 12; id++ {
		orows = append(orows, fmt.Sprintf("(%d, %d)", id, id*3))
	}
	for id := 1; id <= 40; id++ {
		irows = append(irows, fmt.Sprintf("(%d, %d, %d)", id, id, id*10))
		lrows = append(lrows, fmt.Sprintf("(%d, %d, %d)", id%13*3, id, id))
	}
	mustExec(t, admin, "INSERT INTO lpj.o VALUES "+strings.Join(orows, ", "),
		"INSERT INTO lpj.i VALUES "+strings.Join(irows, ", "),
		"INSERT INTO lpj.l VALUES "+strings.Join(lrows, ", "))
	a := openDB(t, srv, "lpj")
	a.SetMaxOpenConns(1)
	for _, q := range []string{
		"SELECT o.id, i.id, i.v FROM o JOIN i ON i.k = o.k ORDER BY o.id, i.id",
		"SELECT o.id, i.id, i.v FROM o JOIN i ON i.k BETWEEN o.k AND o.k + 1 ORDER BY o.id, i.id",
		"SELECT o.id, l.n, l.v FROM o JOIN l ON l.w = o.k ORDER BY o.id, l.n",
	} {
		want := strings.Join(queryRowsArgs(t, a, q), "|")
		for _, fast := range []int{0, 1} {
			mustExec(t, a, fmt.Sprintf("SET @percdb_fastpath = %d", fast), "BEGIN PESSIMISTIC")
			if got := strings.Join(queryRowsArgs(t, a, q+" FOR UPDATE"), "|"); got != want {
				t.Errorf("%s FOR UPDATE (fast path %d):\n%s\nwant (without FOR UPDATE)\n%s", q, fast, got, want)
			}
			mustExec(t, a, "ROLLBACK")
		}
	}
}

// TestPessimisticLockLimit: a SELECT ... FOR UPDATE under a LIMIT (and
// OFFSET) locks exactly the rows it reads, as InnoDB does over an index
// range: another transaction's NOWAIT of the next row succeeds (a queue
// of workers each taking ORDER BY id LIMIT n FOR UPDATE waits on no row
// nobody took), with one lock request, through GMS's path and the fast
// path, as a text statement and as a prepared one (the plan cache's
// template bounds each execution).
func TestPessimisticLockLimit(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0", AutoAnalyzeInterval: time.Hour})
	admin := openDB(t, srv, "")
	var rows []string
	for id := 1; id <= 12; id++ {
		rows = append(rows, fmt.Sprintf("(%d, %d, %d)", id, id, id*10))
	}
	mustExec(t, admin, "CREATE DATABASE ll",
		"CREATE TABLE ll.q (id INT PRIMARY KEY, k INT, v INT, INDEX (k))",
		"INSERT INTO ll.q VALUES "+strings.Join(rows, ", "))
	a, b := openDB(t, srv, "ll"), openDB(t, srv, "ll")
	a.SetMaxOpenConns(1)
	b.SetMaxOpenConns(1)
	locks := func() float64 {
		return metricValue(t, scrape(t, srv), "percdb_kv_requests_total", "command=acquire_pessimistic_lock", "result=ok")
	}
	const first = "SELECT v FROM q WHERE id = 99"
	for _, c := range []struct {
		q      string
		args   []any
		want   string
		locked []int // the ids locked: the next one is not
	}{
		{q: "SELECT id, v FROM q ORDER BY id LIMIT 4 FOR UPDATE", want: "1 10|2 20|3 30|4 40", locked: []int{1, 2, 3, 4}},
		{q: "SELECT id, v FROM q WHERE id >= 3 ORDER BY id LIMIT 2 FOR UPDATE", want: "3 30|4 40", locked: []int{3, 4}},
		{q: "SELECT id, v FROM q WHERE k BETWEEN 5 AND 11 ORDER BY k LIMIT 3 FOR UPDATE", want: "5 50|6 60|7 70", locked: []int{5, 6, 7}},
		{q: "SELECT q.id FROM q AS q WHERE k >= 2 ORDER BY k DESC LIMIT 2 FOR UPDATE", want: "12|11", locked: []int{12, 11}},
		// The rows an OFFSET skips are read, so locked, as InnoDB does.
		{q: "SELECT id, v FROM q ORDER BY id LIMIT 2 OFFSET 3 FOR UPDATE", want: "4 40|5 50", locked: []int{1, 2, 3, 4, 5}},
		{q: "SELECT id, v FROM q WHERE id >= ? ORDER BY id LIMIT ? FOR UPDATE", args: []any{2, 3}, want: "2 20|3 30|4 40", locked: []int{2, 3, 4}},
	} {
		for _, fast := range []int{0, 1} {
			for run := 0; run < 2; run++ {
				// Twice: the second run from the plan caches (and the
				// fast path's learnt shape).
				mustExec(t, a, fmt.Sprintf("SET @percdb_fastpath = %d", fast), "BEGIN PESSIMISTIC", first)
				l0 := locks()
				got := strings.Join(queryRowsArgs(t, a, c.q, c.args...), "|")
				l1 := locks()
				if got != c.want {
					t.Errorf("%s %v (fast path %d, run %d): %q, want %q", c.q, c.args, fast, run, got, c.want)
				}
				if l1-l0 != 1 {
					t.Errorf("%s %v (fast path %d, run %d): %v lock requests, want 1", c.q, c.args, fast, run, l1-l0)
				}
				mustExec(t, b, "BEGIN")
				next := c.locked[len(c.locked)-1] + 1
				if c.locked[0] > c.locked[len(c.locked)-1] {
					next = c.locked[len(c.locked)-1] - 1
				}
				for _, id := range append(append([]int(nil), c.locked...), next) {
					_, err := b.Exec(fmt.Sprintf("SELECT v FROM q WHERE id = %d FOR UPDATE NOWAIT", id))
					var me *mysql.MySQLError
					switch {
					case id == next && err != nil:
						t.Errorf("%s %v (fast path %d, run %d): row %d, past the LIMIT, locked: %v", c.q, c.args, fast, run, id, err)
					case id != next && (!errors.As(err, &me) || me.Number != 3572):
						t.Errorf("%s %v (fast path %d, run %d): row %d: %v, want 3572", c.q, c.args, fast, run, id, err)
					}
				}
				mustExec(t, b, "ROLLBACK")
				mustExec(t, a, "ROLLBACK")
			}
		}
	}
}
