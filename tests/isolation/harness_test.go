package isolation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// server is the one server all cases of this package run against.
var server testserver.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	if err := server.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stop server:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// rows is the content of table test as a transaction saw it: id -> value.
type rows map[int]int

func (r rows) String() string {
	if r == nil {
		return "(no result)"
	}
	if len(r) == 0 {
		return "(no rows)"
	}
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(r)) {
		parts = append(parts, fmt.Sprintf("%d => %d", id, r[id]))
	}
	return strings.Join(parts, ", ")
}

func (r rows) equal(o rows) bool { return r != nil && maps.Equal(r, o) }

// hasValue reports whether some row holds v.
func (r rows) hasValue(v int) bool {
	for _, x := range r {
		if x == v {
			return true
		}
	}
	return false
}

// harness runs one Hermitage case: it sets up table test and hands out
// sessions.
type harness struct {
	t      *testing.T
	ctx    context.Context
	db     *sql.DB
	flavor testserver.Flavor
}

func newHarness(t *testing.T) *harness {
	srv := server.Get(t)
	// A bound on the whole case, so that a statement blocked for good
	// fails the test instead of hanging it. It is a safety net, not a
	// timing assertion: no case waits on time.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	db, err := sql.Open("mysql", srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{
		"drop table if exists test",
		"create table test (id int primary key, value int)",
		"insert into test (id, value) values (1, 10), (2, 20)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("setup %q: %v", q, err)
		}
	}
	return &harness{t: t, ctx: ctx, db: db, flavor: srv.Flavor}
}

// twoTransactions sets up a case with sessions T1 and T2, each of which
// has begun a transaction, as most of Hermitage's scripts start.
func twoTransactions(t *testing.T) (*harness, *session, *session) {
	h := newHarness(t)
	t1, t2 := h.session("T1"), h.session("T2")
	t1.begin()
	t2.begin()
	return h, t1, t2
}

// expect checks a behaviour percdb promises. innodb, when not empty, says
// how InnoDB's REPEATABLE READ is documented to differ: against MariaDB
// such a check is logged, not asserted. A check with an empty innodb holds
// for both and is asserted for both.
func (h *harness) expect(ok bool, innodb, format string, args ...any) {
	h.t.Helper()
	msg := fmt.Sprintf(format, args...)
	switch {
	case ok:
	case h.flavor == testserver.MariaDB && innodb != "":
		h.t.Logf("InnoDB REPEATABLE READ differs from percdb, as documented (%s): %s", innodb, msg)
	default:
		h.t.Error(msg)
	}
	if ok && h.flavor == testserver.MariaDB && innodb != "" {
		h.t.Logf("note: InnoDB behaved as percdb does here, though documented to differ (%s)", innodb)
	}
}

// firstStatementWaits reports whether percdb runs the cases in
// pessimistic mode, where a transaction whose first reading statement
// waits for another's row lock runs that statement, once the other has
// committed, at a snapshot taken after that commit (docs/transactions.md):
// the two commit one after the other, a serial history, where the
// optimistic mode refuses the second with 1213. A transaction that read
// before it waits still gets 1213, as in optimistic mode.
func (h *harness) firstStatementWaits() bool {
	return h.flavor == testserver.Percdb && os.Getenv(testserver.EnvTxnMode) != "optimistic"
}

// final reads table test outside any transaction.
func (h *harness) final() rows {
	h.t.Helper()
	r, err := queryRows(h.ctx, h.db, "select * from test")
	if err != nil {
		h.t.Fatalf("read final state: %v", err)
	}
	h.t.Logf("final: %v", r)
	return r
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func queryRows(ctx context.Context, q querier, query string) (rows, error) {
	rs, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	r := rows{}
	for rs.Next() {
		var id, v int
		if err := rs.Scan(&id, &v); err != nil {
			return nil, err
		}
		r[id] = v
	}
	return r, rs.Err()
}

// result is what one statement returned.
type result struct {
	rows     rows  // for a select
	affected int64 // for anything else
	err      error
	skipped  bool // not run: the session's transaction had already failed
}

func (r result) String() string {
	switch {
	case r.skipped:
		return "skipped (transaction already failed)"
	case r.err != nil:
		return "error: " + r.err.Error()
	case r.rows != nil:
		return r.rows.String()
	}
	return fmt.Sprintf("ok, %d rows affected", r.affected)
}

// session is one connection of a case, holding one transaction at a time.
type session struct {
	h    *harness
	name string
	conn *sql.Conn
	id   int64 // CONNECTION_ID(), to ask the server whether it waits
	// pending is a started statement not yet collected.
	pending *started
	// failed is the error that ended the current transaction before its
	// COMMIT or ROLLBACK step: later statements are skipped.
	failed error
}

func (h *harness) session(name string) *session {
	h.t.Helper()
	conn, err := h.db.Conn(h.ctx)
	if err != nil {
		h.t.Fatalf("%s: connect: %v", name, err)
	}
	s := &session{h: h, name: name, conn: conn}
	h.t.Cleanup(func() {
		s.collect()
		conn.Close()
	})
	// REPEATABLE READ is percdb's snapshot isolation; InnoDB's default.
	if _, err := conn.ExecContext(h.ctx, "set session transaction isolation level repeatable read"); err != nil {
		h.t.Fatalf("%s: set isolation level: %v", name, err)
	}
	if mode := os.Getenv(testserver.EnvTxnMode); mode != "" && h.flavor == testserver.Percdb {
		if _, err := conn.ExecContext(h.ctx, "set session percdb_txn_mode = ?", mode); err != nil {
			h.t.Fatalf("%s: set percdb_txn_mode: %v", name, err)
		}
	}
	if err := conn.QueryRowContext(h.ctx, "select connection_id()").Scan(&s.id); err != nil {
		h.t.Fatalf("%s: connection id: %v", name, err)
	}
	return s
}

// run executes one statement on the connection, a select as a query.
func (s *session) run(q string) result {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(q)), "select") {
		r, err := queryRows(s.h.ctx, s.conn, q)
		return result{rows: r, err: err}
	}
	res, err := s.conn.ExecContext(s.h.ctx, q)
	if err != nil {
		return result{err: err}
	}
	n, err := res.RowsAffected()
	return result{affected: n, err: err}
}

// settle records a finished statement: after an error the transaction is
// over, so roll it back (MySQL keeps it open after most errors, and a
// later statement would otherwise run in it or outside any transaction).
func (s *session) settle(q string, r result) result {
	s.h.t.Helper()
	s.h.t.Logf("%s: %s -> %v", s.name, q, r)
	if r.err != nil && !r.skipped && s.failed == nil {
		s.failed = r.err
		if _, err := s.conn.ExecContext(s.h.ctx, "rollback"); err != nil {
			s.h.t.Logf("%s: rollback after error: %v", s.name, err)
		}
	}
	return r
}

// collect waits for the started statement, if any, and settles it.
func (s *session) collect() {
	st := s.pending
	if st == nil {
		return
	}
	s.pending = nil
	st.r, st.done = s.settle(st.q+" (finished)", <-st.ch), true
}

// exec runs a statement and waits for it.
func (s *session) exec(q string) result {
	s.h.t.Helper()
	s.collect()
	if s.failed != nil {
		return s.settle(q, result{err: s.failed, skipped: true})
	}
	return s.settle(q, s.run(q))
}

// query runs a select and returns its rows (nil if it failed).
func (s *session) query(q string) rows { return s.exec(q).rows }

func (s *session) begin() { s.exec("begin") }

// start runs a statement Hermitage marks "BLOCKS" without waiting for it:
// it returns once the statement has finished or the server reports the
// session waiting for a lock. Its result is collected by the session's next
// statement, or by wait.
func (s *session) start(q string) *started {
	s.h.t.Helper()
	s.collect()
	if s.failed != nil {
		r := s.settle(q, result{err: s.failed, skipped: true})
		return &started{s: s, done: true, r: r}
	}
	ch := make(chan result, 1)
	go func() { ch <- s.run(q) }()
	for {
		select {
		case r := <-ch:
			return &started{s: s, done: true, r: s.settle(q, r)}
		default:
		}
		waiting, err := s.waiting()
		if err != nil {
			s.h.t.Fatalf("%s: is %q waiting: %v", s.name, q, err)
		}
		if waiting {
			s.h.t.Logf("%s: %s -> BLOCKS", s.name, q)
			s.pending = &started{s: s, ch: ch, q: q}
			return s.pending
		}
		select {
		case r := <-ch:
			return &started{s: s, done: true, r: s.settle(q, r)}
		case <-time.After(lockPollInterval):
		}
	}
}

// lockPollInterval spaces the questions to InnoDB: it answers from a cache
// that it refreshes only when nobody read it for 100 ms, so asking more
// often would get the same stale answer forever.
const lockPollInterval = 150 * time.Millisecond

// waiting asks the server whether the session waits for a row lock.
// percdb lists the waits of pessimistic transactions in ADMIN SHOW LOCK
// WAITS (an optimistic one takes no locks before COMMIT, so the statement
// finishes); InnoDB lists lock waits in information_schema.innodb_trx.
func (s *session) waiting() (bool, error) {
	if s.h.flavor != testserver.MariaDB {
		rows, err := s.h.db.QueryContext(s.h.ctx, "admin show lock waits")
		if err != nil {
			return false, err
		}
		defer rows.Close()
		for rows.Next() {
			var conn, trx, key, holder, holderTrx string
			if err := rows.Scan(&conn, &trx, &key, &holder, &holderTrx); err != nil {
				return false, err
			}
			if conn == strconv.FormatInt(s.id, 10) {
				return true, nil
			}
		}
		return false, rows.Err()
	}
	var n int
	err := s.h.db.QueryRowContext(s.h.ctx,
		"select count(*) from information_schema.innodb_trx where trx_mysql_thread_id = ? and trx_state = 'LOCK WAIT'",
		s.id).Scan(&n)
	return n > 0, err
}

// commit commits the session's transaction and returns the error that
// ended it instead, if any: from COMMIT, or from an earlier statement.
func (s *session) commit() error {
	s.h.t.Helper()
	s.collect()
	if err := s.failed; err != nil {
		s.failed = nil
		s.h.t.Logf("%s: commit -> not run, the transaction failed earlier: %v", s.name, err)
		return err
	}
	return s.settle("commit", s.run("commit")).err
}

// rollback ends the session's transaction without committing.
func (s *session) rollback() {
	s.h.t.Helper()
	s.collect()
	if s.failed != nil {
		s.failed = nil
		return
	}
	s.settle("rollback", s.run("rollback"))
}

// started is a statement started by session.start.
type started struct {
	s    *session
	ch   chan result
	q    string
	done bool
	r    result
}

// wait returns the statement's result, waiting for it if it blocked.
func (st *started) wait() result {
	if !st.done {
		st.s.collect() // st is the session's pending statement
	}
	return st.r
}

// isConflict reports whether err is the error percdb gives the second
// committer of a write-write conflict: MySQL 1213, SQLSTATE 40001.
func isConflict(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1213
}
