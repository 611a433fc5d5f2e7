package protocol

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// Status flags, short.
const (
	ac   = wirefuzz.StatusAutocommit
	tx   = wirefuzz.StatusInTrans
	more = wirefuzz.StatusMoreResults
	ro   = wirefuzz.StatusInTransReadOnly
)

// ioTimeout bounds a whole test's exchanges with the server: a generous
// bound against a hang, not a performance assertion.
const ioTimeout = 2 * time.Minute

// servers returns the servers a test runs against, by name: percdb with
// and without its fast path, and MariaDB when PERCDB_TEST_MARIADB asks.
func servers() map[string]func(context.Context) (*testserver.Server, error) {
	out := map[string]func(context.Context) (*testserver.Server, error){
		"fastpath": func(ctx context.Context) (*testserver.Server, error) {
			return testserver.StartPercdb(ctx, testserver.PercdbOptions{})
		},
		"gms": func(ctx context.Context) (*testserver.Server, error) {
			return testserver.StartPercdb(ctx, testserver.PercdbOptions{DisableFastPath: true})
		},
	}
	if m := os.Getenv(testserver.EnvMariaDB); m != "" {
		out["mariadb"] = func(ctx context.Context) (*testserver.Server, error) {
			opts := testserver.MariaDBOptions{}
			if m != "1" {
				opts.Mariadbd = m
			}
			return testserver.StartMariaDB(ctx, opts)
		}
	}
	return out
}

// forEachServer runs fn in a subtest per server.
func forEachServer(t *testing.T, fn func(t *testing.T, s *testserver.Server)) {
	for name, start := range servers() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
			defer cancel()
			s, err := start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("stop server: %v", err)
				}
			})
			fn(t, s)
		})
	}
}

// dial opens a raw connection to s, logged in to its test database, and
// returns it with the greeting.
func dial(t *testing.T, s *testserver.Server) (*wirefuzz.Conn, *wirefuzz.Greeting) {
	t.Helper()
	return dialCollation(t, s, 0)
}

// dialCollation is dial with collation in the handshake (0: the raw
// client's default, utf8mb4_general_ci).
func dialCollation(t *testing.T, s *testserver.Server, collation byte) (*wirefuzz.Conn, *wirefuzz.Greeting) {
	t.Helper()
	return dialWith(t, s, func(c *wirefuzz.Conn) { c.Collation = collation })
}

// dialWith is dial with the client's handshake options set by opts.
func dialWith(t *testing.T, s *testserver.Server, opts func(*wirefuzz.Conn)) (*wirefuzz.Conn, *wirefuzz.Greeting) {
	t.Helper()
	cfg, err := mysql.ParseDSN(s.DSN)
	if err != nil {
		t.Fatal(err)
	}
	c, g, err := wirefuzz.Dial(cfg.Addr, time.Now().Add(ioTimeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	opts(c)
	if err := c.Authenticate(g, cfg.User, cfg.Passwd, cfg.DBName); err != nil {
		t.Fatalf("log in: %v", err)
	}
	return c, g
}

// flags names the status flags this test looks at, for messages.
func flags(f uint16) string {
	var parts []string
	for _, n := range []struct {
		bit  uint16
		name string
	}{{tx, "IN_TRANS"}, {ac, "AUTOCOMMIT"}, {more, "MORE_RESULTS"}, {ro, "IN_TRANS_READONLY"}} {
		if f&n.bit != 0 {
			parts = append(parts, n.name)
		}
	}
	return fmt.Sprintf("%#04x(%s)", f, strings.Join(parts, "|"))
}

// mask is the flags the tests check; others (no index used, ...) are
// left to the server.
const mask = ac | tx | more | ro

// step is one command and what it must answer: the status flags of each
// of its results, or an error code after the results listed, and, when
// rows is set, the rows of its last result (fmt.Sprint).
type step struct {
	sql  string
	want []uint16
	err  uint16
	rows string
}

// run sends each step's query and checks the status flags of its results.
func run(t *testing.T, c *wirefuzz.Conn, steps []step) {
	t.Helper()
	for _, st := range steps {
		res, err := c.QueryAll(st.sql)
		check(t, st, res, err)
	}
}

// check compares the results of st with what it wants.
func check(t *testing.T, st step, res []wirefuzz.Result, err error) {
	t.Helper()
	var se *wirefuzz.ServerError
	switch {
	case st.err != 0 && !errors.As(err, &se):
		t.Fatalf("%s: want error %d, got %v", st.sql, st.err, err)
	case st.err != 0 && se.Code != st.err:
		t.Fatalf("%s: want error %d, got %v", st.sql, st.err, err)
	case st.err == 0 && err != nil:
		t.Fatalf("%s: %v", st.sql, err)
	}
	var got, want []string
	for _, r := range res {
		got = append(got, flags(r.Status&mask))
	}
	for _, w := range st.want {
		want = append(want, flags(w))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: status flags %v, want %v", st.sql, got, want)
	}
	if st.rows != "" && len(res) > 0 {
		if rows := fmt.Sprint(res[len(res)-1].Rows); rows != st.rows {
			t.Errorf("%s: rows %s, want %s", st.sql, rows, st.rows)
		}
	}
}

// committed checks, from another connection, that table t holds rows.
func committed(t *testing.T, s *testserver.Server, rows string) {
	t.Helper()
	c, _ := dial(t, s)
	defer c.Close()
	got, err := c.Query("SELECT id, v FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != rows {
		t.Errorf("committed rows of t: %v, want %s", got, rows)
	}
}

// TestStatusFlagsText follows the status flags through autocommit, explicit
// transactions, errors, implicit commits and multi-statements, in text
// queries.
func TestStatusFlagsText(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, g := dial(t, s)
		if g.Status&mask != ac {
			t.Errorf("greeting status flags %s, want %s", flags(g.Status), flags(ac))
		}
		if c.Status()&mask != ac {
			t.Errorf("login OK status flags %s, want %s", flags(c.Status()), flags(ac))
		}
		run(t, c, []step{
			{sql: "CREATE TABLE t (id INT PRIMARY KEY, v INT)", want: []uint16{ac}},
			{sql: "INSERT INTO t VALUES (1, 10), (2, 20)", want: []uint16{ac}},
			{sql: "SELECT v FROM t WHERE id = 1", want: []uint16{ac}},
			{sql: "SELECT * FROM t", want: []uint16{ac}},
			{sql: "SELECT 1", want: []uint16{ac}},
			// An explicit transaction, committed.
			{sql: "BEGIN", want: []uint16{ac | tx}},
			{sql: "UPDATE t SET v = 11 WHERE id = 1", want: []uint16{ac | tx}},
			{sql: "SELECT v FROM t WHERE id = 1", want: []uint16{ac | tx}},
			{sql: "SELECT * FROM t", want: []uint16{ac | tx}},
			{sql: "COMMIT", want: []uint16{ac}},
			// Rolled back.
			{sql: "START TRANSACTION", want: []uint16{ac | tx}},
			{sql: "UPDATE t SET v = v + 1", want: []uint16{ac | tx}},
			{sql: "ROLLBACK", want: []uint16{ac}},
			// An error inside a transaction leaves it open; outside,
			// autocommit stays.
			{sql: "INSERT INTO t VALUES (1, 0)", err: 1062},
			{sql: "SELECT 1", want: []uint16{ac}},
			{sql: "BEGIN", want: []uint16{ac | tx}},
			{sql: "INSERT INTO t VALUES (1, 0)", err: 1062},
			{sql: "SELECT v FROM t WHERE id = 1", want: []uint16{ac | tx}},
			{sql: "SELECT nosuchcolumn FROM t", err: 1054},
			{sql: "SELECT 1", want: []uint16{ac | tx}},
			{sql: "ROLLBACK", want: []uint16{ac}},
			// DDL commits the open transaction.
			{sql: "BEGIN", want: []uint16{ac | tx}},
			{sql: "INSERT INTO t VALUES (3, 30)", want: []uint16{ac | tx}},
			{sql: "CREATE TABLE t2 (id INT PRIMARY KEY)", want: []uint16{ac}},
			{sql: "SELECT v FROM t WHERE id = 3", want: []uint16{ac}},
			// ... and autocommit is back: this is committed at once.
			{sql: "UPDATE t SET v = 31 WHERE id = 3", want: []uint16{ac}},
		})
		committed(t, s, "[[1 11] [2 20] [3 31]]")
		run(t, c, []step{
			// BEGIN inside a transaction commits it and opens another.
			{sql: "BEGIN", want: []uint16{ac | tx}},
			{sql: "BEGIN", want: []uint16{ac | tx}},
			{sql: "COMMIT", want: []uint16{ac}},
			// Autocommit off: a transaction is open from the first
			// statement that reads or writes a table to COMMIT or
			// ROLLBACK.
			{sql: "SET autocommit = 0", want: []uint16{0}},
			{sql: "SELECT v FROM t WHERE id = 1", want: []uint16{tx}},
			{sql: "UPDATE t SET v = 12 WHERE id = 1", want: []uint16{tx}},
			{sql: "COMMIT", want: []uint16{0}},
			{sql: "UPDATE t SET v = 13 WHERE id = 2", want: []uint16{tx}},
			{sql: "INSERT INTO t VALUES (2, 0)", err: 1062},
			{sql: "SELECT * FROM t", want: []uint16{tx}},
			{sql: "ROLLBACK", want: []uint16{0}},
			{sql: "INSERT INTO t VALUES (4, 40)", want: []uint16{tx}},
			{sql: "SET autocommit = 1", want: []uint16{ac}},
			{sql: "SET @@session.autocommit = OFF", want: []uint16{0}},
			{sql: "SET SESSION autocommit = ON", want: []uint16{ac}},
			// Multi-statements: every result but the last says more
			// follow.
			{sql: "SELECT 1; SELECT 2", want: []uint16{ac | more, ac}},
			{sql: "BEGIN; UPDATE t SET v = 5 WHERE id = 2; SELECT v FROM t WHERE id = 2; COMMIT; SELECT 3",
				want: []uint16{ac | tx | more, ac | tx | more, ac | tx | more, ac | more, ac}},
			// An error ends a multi-statement query: SELECT 4 does not
			// run.
			{sql: "BEGIN; INSERT INTO t VALUES (1, 0); SELECT 4", want: []uint16{ac | tx | more}, err: 1062},
			{sql: "SELECT 5", want: []uint16{ac | tx}, rows: "[[5]]"},
			{sql: "ROLLBACK; SET autocommit = 0; INSERT INTO t VALUES (5, 50); COMMIT; SET autocommit = 1",
				want: []uint16{ac | more, more, tx | more, more, ac}},
		})
		// What the steps committed, and only that.
		committed(t, s, "[[1 12] [2 5] [3 31] [4 40] [5 50]]")
	})
}

// TestStatusFlagsPrepared follows the status flags through the same
// transitions with server-side prepared statements, as sysbench and
// go-sql-driver send them (BEGIN and COMMIT prepared too).
func TestStatusFlagsPrepared(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE t (id INT PRIMARY KEY, v INT)", want: []uint16{ac}},
			{sql: "INSERT INTO t VALUES (1, 10), (2, 20)", want: []uint16{ac}},
		})
		prep := func(q string) uint32 {
			id, _, err := c.Prepare(q)
			if err != nil {
				t.Fatalf("prepare %s: %v", q, err)
			}
			return id
		}
		stmts := map[string]uint32{}
		for _, q := range []string{"BEGIN", "COMMIT", "ROLLBACK", "SELECT v FROM t WHERE id = ?", "SELECT * FROM t",
			"UPDATE t SET v = ? WHERE id = ?", "INSERT INTO t VALUES (?, ?)"} {
			stmts[q] = prep(q)
		}
		exec := func(q string, want []uint16, code uint16, args ...any) {
			t.Helper()
			res, err := c.Execute(stmts[q], args...)
			check(t, step{sql: q, want: want, err: code}, res, err)
		}
		exec("SELECT v FROM t WHERE id = ?", []uint16{ac}, 0, int64(1))
		exec("SELECT * FROM t", []uint16{ac}, 0)
		exec("UPDATE t SET v = ? WHERE id = ?", []uint16{ac}, 0, int64(11), int64(1))
		exec("BEGIN", []uint16{ac | tx}, 0)
		exec("UPDATE t SET v = ? WHERE id = ?", []uint16{ac | tx}, 0, int64(12), int64(1))
		exec("INSERT INTO t VALUES (?, ?)", nil, 1062, int64(1), int64(0))
		exec("SELECT v FROM t WHERE id = ?", []uint16{ac | tx}, 0, int64(1))
		exec("SELECT * FROM t", []uint16{ac | tx}, 0)
		exec("COMMIT", []uint16{ac}, 0)
		exec("BEGIN", []uint16{ac | tx}, 0)
		exec("INSERT INTO t VALUES (?, ?)", []uint16{ac | tx}, 0, int64(3), int64(30))
		exec("ROLLBACK", []uint16{ac}, 0)
		exec("INSERT INTO t VALUES (?, ?)", nil, 1062, int64(1), int64(0))
		exec("SELECT v FROM t WHERE id = ?", []uint16{ac}, 0, int64(1))

		run(t, c, []step{{sql: "SET autocommit = 0", want: []uint16{0}}})
		exec("SELECT v FROM t WHERE id = ?", []uint16{tx}, 0, int64(2))
		exec("UPDATE t SET v = ? WHERE id = ?", []uint16{tx}, 0, int64(21), int64(2))
		exec("COMMIT", []uint16{0}, 0)
		exec("INSERT INTO t VALUES (?, ?)", []uint16{tx}, 0, int64(4), int64(40))
		exec("ROLLBACK", []uint16{0}, 0)
		run(t, c, []step{{sql: "SET autocommit = 1", want: []uint16{ac}}})

		committed(t, s, "[[1 12] [2 21]]")
	})
}

// noIndex is SERVER_QUERY_NO_INDEX_USED.
const noIndex = 0x0020

// TestStatusNoIndexUsed checks SERVER_QUERY_NO_INDEX_USED in the EOF and
// OK packets: set after a statement that read a table by a full scan
// (SELECT, UPDATE, DELETE, as MySQL), clear after one that read through
// the primary key or an index, or read no table. Text and prepared.
func TestStatusNoIndexUsed(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE ni (id INT PRIMARY KEY, k INT, v INT, KEY (k))", want: []uint16{ac}},
			{sql: "INSERT INTO ni VALUES (1, 10, 100), (2, 20, 200), (3, 30, 300)", want: []uint16{ac}},
		})
		for _, c2 := range []struct {
			sql  string
			scan bool
		}{
			{"SELECT * FROM ni", true},
			{"SELECT v FROM ni WHERE id = 2", false},
			{"SELECT v FROM ni WHERE v = 200", true},
			{"SELECT v FROM ni WHERE k = 20", false},
			{"SELECT v FROM ni WHERE id BETWEEN 1 AND 2", false},
			{"SELECT 1", false},
			{"UPDATE ni SET v = v + 1 WHERE v > 1000", true},
			{"UPDATE ni SET v = v + 1 WHERE id = 3", false},
			{"SELECT COUNT(*) FROM ni a JOIN ni b ON a.id = b.id", true},
			{"DELETE FROM ni WHERE v = 0", true},
			{"DELETE FROM ni WHERE id = 9", false},
		} {
			res, err := c.QueryAll(c2.sql)
			if err != nil {
				t.Fatalf("%s: %v", c2.sql, err)
			}
			if got := res[len(res)-1].Status&noIndex != 0; got != c2.scan {
				t.Errorf("%s (text): NO_INDEX_USED %v, want %v", c2.sql, got, c2.scan)
			}
			id, _, err := c.Prepare(c2.sql)
			if err != nil {
				t.Fatal(err)
			}
			res, err = c.Execute(id)
			if err != nil {
				t.Fatalf("%s: %v", c2.sql, err)
			}
			if got := res[len(res)-1].Status&noIndex != 0; got != c2.scan {
				t.Errorf("%s (prepared): NO_INDEX_USED %v, want %v", c2.sql, got, c2.scan)
			}
		}
	})
}
