package e2e

import (
	"context"
	"database/sql"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// startMariaDB starts a private MariaDB, stopped when the test ends, and
// returns the configuration of a connection to it as root.
func startMariaDB(t *testing.T) *mysql.Config {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := testserver.StartMariaDB(ctx, testserver.MariaDBOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	cfg, err := mysql.ParseDSN(m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// lockTestSessions starts percdb, or with PERCDB_TEST_MARIADB a private
// MariaDB as the reference, with tables lt.t (one row) and lt.u (none),
// and returns two sessions and how to open a new pool of the server.
func lockTestSessions(t *testing.T) (open func() *sql.DB, a, b *sql.Conn) {
	t.Helper()
	if os.Getenv(testserver.EnvMariaDB) == "" {
		s := startServer(t, "")
		open = func() *sql.DB { return s.Open("") }
	} else {
		cfg := startMariaDB(t)
		cfg.DBName = ""
		open = func() *sql.DB {
			db, err := sql.Open("mysql", cfg.FormatDSN())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}
	}
	db := open()
	mustExec(t, db,
		"CREATE DATABASE lt",
		"CREATE TABLE lt.t (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE lt.u (id INT PRIMARY KEY, v INT)",
		"INSERT INTO lt.t VALUES (1, 10)",
	)
	cs := conns(t, db, 2)
	return open, cs[0], cs[1]
}

// conns returns n connections of db, each its own session, closed when the
// test ends.
func conns(t *testing.T, db *sql.DB, n int) []*sql.Conn {
	t.Helper()
	out := make([]*sql.Conn, n)
	for i := range out {
		c, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		out[i] = c
	}
	return out
}

// execError runs q on c and returns its error.
func execError(c *sql.Conn, q string) error {
	_, err := c.ExecContext(context.Background(), q)
	return err
}

// The session holding LOCK TABLES may use only the tables it locked, under
// the names it locked them by (1100), and write only those locked WRITE
// (1099); its temporary tables and information_schema are exempt; UNLOCK
// TABLES ends it. As MySQL 8 and MariaDB 10.11 (PERCDB_TEST_MARIADB=1 runs
// these tests against MariaDB).
func TestLockTablesHolder(t *testing.T) {
	_, a, _ := lockTestSessions(t)
	mustExec(t, a, "CREATE TABLE lt.w (id INT PRIMARY KEY, v INT)", "INSERT INTO lt.u VALUES (1, 100)")
	mustExec(t, a, "USE lt", "CREATE TEMPORARY TABLE tmp (id INT)", "LOCK TABLES t READ, u AS x WRITE")
	if got := queryRows(t, a, "SELECT v FROM t"); !reflect.DeepEqual(got, [][]string{{"10"}}) {
		t.Fatalf("read of the READ-locked table = %v", got)
	}
	queryRows(t, a, "SELECT v FROM u AS x")
	queryRows(t, a, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'lt'")
	mustExec(t, a, "INSERT INTO tmp VALUES (1)", "UPDATE u AS x SET v = 101", "UPDATE u AS x JOIN t ON x.id = t.id SET x.v = t.v")
	for _, c := range []struct {
		q    string
		code uint16
	}{
		{"SELECT * FROM w", 1100},
		{"SELECT * FROM lt.w", 1100},
		{"SELECT * FROM t AS a", 1100},
		{"SELECT * FROM u", 1100},
		{"SELECT * FROM t WHERE id IN (SELECT id FROM w)", 1100},
		{"INSERT INTO t VALUES (2, 20)", 1099},
		{"UPDATE t JOIN u AS x ON x.id = t.id SET t.v = 0", 1099},
		{"DELETE FROM t", 1099},
		{"INSERT INTO w VALUES (1, 1)", 1100},
		{"LOCK TABLES t READ, t READ", 1066},
	} {
		wantError(t, execError(a, c.q), c.code, "")
	}
	// The failed LOCK TABLES released the session's locks.
	mustExec(t, a, "LOCK TABLES t WRITE")
	mustExec(t, a, "INSERT INTO t VALUES (2, 20)")
	wantError(t, execError(a, "SELECT * FROM u"), 1100, "")
	mustExec(t, a, "UNLOCK TABLES", "INSERT INTO w VALUES (1, 1)")
	if got := queryRows(t, a, "SELECT v FROM u"); !reflect.DeepEqual(got, [][]string{{"10"}}) {
		t.Fatalf("u after the locked session's updates = %v", got)
	}
}

// A READ lock makes other sessions' writes of the table wait and lets their
// reads through; a WRITE lock makes both wait; a wait ends with the
// holder's UNLOCK TABLES, or after lock_wait_timeout with 1205.
func TestLockTablesOtherSessions(t *testing.T) {
	open, a, b := lockTestSessions(t)
	db := open()
	mustExec(t, a, "LOCK TABLES lt.t READ")
	mustExec(t, b, "SET SESSION lock_wait_timeout = 1")
	queryRows(t, b, "SELECT * FROM lt.t")
	mustExec(t, b, "INSERT INTO lt.u VALUES (1, 1)")
	for _, q := range []string{"INSERT INTO lt.t VALUES (2, 20)", "UPDATE lt.t SET v = 0", "DELETE FROM lt.t", "TRUNCATE TABLE lt.t", "ALTER TABLE lt.t ADD COLUMN w INT", "LOCK TABLES lt.t WRITE"} {
		wantError(t, execError(b, q), 1205, "")
	}
	mustExec(t, b, "LOCK TABLES lt.t READ", "UNLOCK TABLES")
	mustExec(t, a, "LOCK TABLES lt.t WRITE")
	wantError(t, execError(b, "SELECT * FROM lt.t"), 1205, "")
	queryRows(t, b, "SELECT * FROM lt.u")

	// A write that waits goes on when the lock is released.
	mustExec(t, b, "SET SESSION lock_wait_timeout = 31536000")
	done := make(chan error, 1)
	go func() { done <- execError(b, "INSERT INTO lt.t VALUES (3, 30)") }()
	if got := queryRows(t, a, "SELECT COUNT(*) FROM lt.t"); !reflect.DeepEqual(got, [][]string{{"1"}}) {
		t.Fatalf("rows while the WRITE lock is held = %v", got)
	}
	mustExec(t, a, "UNLOCK TABLES")
	if err := <-done; err != nil {
		t.Fatalf("insert after UNLOCK TABLES: %v", err)
	}
	if got := queryRows(t, a, "SELECT id FROM lt.t ORDER BY id"); !reflect.DeepEqual(got, [][]string{{"1"}, {"3"}}) {
		t.Fatalf("rows after the wait = %v", got)
	}

	// KILL QUERY ends a wait (1317), the session goes on.
	mustExec(t, a, "LOCK TABLES lt.t WRITE")
	id := queryRows(t, b, "SELECT CONNECTION_ID()")[0][0]
	go func() { done <- execError(b, "INSERT INTO lt.t VALUES (5, 50)") }()
	for waiting := false; !waiting; {
		for _, p := range queryRows(t, db, "SHOW PROCESSLIST") {
			waiting = waiting || p[0] == id && strings.HasPrefix(p[7], "INSERT")
		}
	}
	mustExec(t, db, "KILL QUERY "+id)
	wantError(t, <-done, 1317, "")
	mustExec(t, a, "UNLOCK TABLES")

	// The end of a session releases its locks (a pool that keeps no idle
	// connection closes the connection with the *sql.Conn).
	closing := open()
	closing.SetMaxIdleConns(0)
	c := conns(t, closing, 1)[0]
	mustExec(t, c, "LOCK TABLES lt.t WRITE")
	mustExec(t, b, "SET SESSION lock_wait_timeout = 1")
	wantError(t, execError(b, "SELECT * FROM lt.t"), 1205, "")
	c.Close()
	mustExec(t, b, "SET SESSION lock_wait_timeout = 31536000", "INSERT INTO lt.t VALUES (4, 40)")
}

// FLUSH TABLES WITH READ LOCK makes every write of other sessions wait
// (1205 after lock_wait_timeout) and fails the holder's own with 1223;
// reads go on; UNLOCK TABLES ends it. FLUSH TABLES t WITH READ LOCK locks t
// only.
func TestFlushTablesWithReadLock(t *testing.T) {
	_, a, b := lockTestSessions(t)
	mustExec(t, a, "FLUSH TABLES WITH READ LOCK")
	queryRows(t, a, "SELECT * FROM lt.u")
	wantError(t, execError(a, "INSERT INTO lt.t VALUES (2, 20)"), 1223, "")
	mustExec(t, b, "SET SESSION lock_wait_timeout = 1")
	queryRows(t, b, "SELECT * FROM lt.t")
	for _, q := range []string{"INSERT INTO lt.u VALUES (1, 1)", "CREATE TABLE lt.n (id INT PRIMARY KEY)", "DROP TABLE lt.u"} {
		wantError(t, execError(b, q), 1205, "")
	}
	mustExec(t, a, "UNLOCK TABLES")
	mustExec(t, b, "INSERT INTO lt.u VALUES (1, 1)")

	mustExec(t, a, "FLUSH TABLES lt.t WITH READ LOCK")
	wantError(t, execError(b, "INSERT INTO lt.t VALUES (2, 20)"), 1205, "")
	mustExec(t, b, "INSERT INTO lt.u VALUES (2, 2)")
	wantError(t, execError(a, "SELECT * FROM lt.u"), 1100, "")
	mustExec(t, a, "UNLOCK TABLES")
	mustExec(t, b, "INSERT INTO lt.t VALUES (2, 20)")
}
