package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/sql/sqltest"
	"github.com/percdb/percdb/tests/crash"
	"github.com/percdb/percdb/txn"
)

// envKillRows sets the rows of the dead transaction of TestKillStopsWork
// (default 200,000, two keys each).
const envKillRows = "PERCDB_E2E_KILL_ROWS"

// lockTTL is the lock TTL of the server of TestKillStopsWork.
const lockTTL = time.Second

// errAbandon is the failpoint error of a commit whose client "dies" after
// prewrite, leaving its locks.
var errAbandon = errors.New("test: the client died after prewrite")

// TestKillStopsWork: a transaction of many rows died after prewriting
// them, and a reader of its table must resolve every lock (after waiting
// out their TTL). KILL QUERY, KILL CONNECTION, the client going away and
// max_execution_time each stop that reader; the resolution work stops
// with it (no goroutine of the server's is left resolving or scanning),
// and the server stays healthy: a last reader finishes the resolution and
// counts the table, which holds none of the dead transaction's rows. The
// time each stop took is logged (go test -v), not asserted.
func TestKillStopsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a transaction of 200,000 rows")
	}
	rows := 200_000
	if s := os.Getenv(envKillRows); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive integer", envKillRows, s)
		}
		rows = n
	}
	s, abandon := abandoningServer(t, txn.Options{LockTTL: lockTTL})
	db := s.Open("")
	ctx := context.Background()
	mustExec(t, db, "CREATE DATABASE k", "CREATE TABLE k.t (id INT PRIMARY KEY, v VARCHAR(100), KEY (v))",
		"INSERT INTO k.t VALUES (-1, 'committed before')")

	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, conn, "BEGIN")
	for _, q := range crash.LargeTxnInserts("k.t", rows) {
		mustExec(t, conn, q)
	}
	abandon.Store(true)
	if _, err := conn.ExecContext(ctx, "COMMIT"); err == nil {
		t.Fatal("the abandoned commit succeeded")
	}
	abandon.Store(false)
	_ = conn.Close()
	// While the primary's TTL runs (the heartbeat extended it until the
	// commit gave up), readers read past the locks; then they must
	// resolve them.
	time.Sleep(lockTTL + 200*time.Millisecond)

	// Each reader is stopped a moment after it began: it is then
	// resolving the locks, and must not have resolved them all, for the
	// readers after it.
	const after = 150 * time.Millisecond
	kill := func(what string) func(*testing.T, string, context.CancelFunc) {
		return func(t *testing.T, id string, _ context.CancelFunc) { mustExec(t, db, what+" "+id) }
	}
	// go-sql-driver closes the connection when the query's context ends.
	disconnect := func(_ *testing.T, _ string, cancel context.CancelFunc) { cancel() }
	const (
		count  = "SELECT count(*) FROM k.t"
		update = "UPDATE k.t SET v = 'changed' WHERE id + 0 = -5"
	)
	for _, tc := range []struct {
		name, stmt string
		// stop stops the reader on connection id (whose statement runs
		// under cancel's context); nil: max_execution_time does.
		stop func(t *testing.T, id string, cancel context.CancelFunc)
		// code is the error the reader gets; 0 when it cannot get one
		// (its connection is gone).
		code uint16
	}{
		{"kill-query", count, kill("KILL QUERY"), 1317},
		{"kill-query-update", update, kill("KILL QUERY"), 1317},
		{"kill-connection", count, kill("KILL CONNECTION"), 0},
		{"max-execution-time", count, nil, 3024},
		// GMS itself notices a client gone only while it streams rows;
		// an UPDATE's scan is noticed by percdb's watch (sql/stmtctx.go).
		{"client-disconnect", count, disconnect, 0},
		{"client-disconnect-update", update, disconnect, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reader, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer reader.Close()
			id := queryRows(t, reader, "SELECT CONNECTION_ID()")[0][0]
			if tc.stop == nil {
				mustExec(t, reader, fmt.Sprintf("SET max_execution_time = %d", 2*after.Milliseconds())) // after it was seen at work
			}
			stop := tc.stop
			if stop == nil {
				stop = func(*testing.T, string, context.CancelFunc) {} // the deadline stops it
			}
			runStopped(t, reader, tc.stmt, after, func(cancel context.CancelFunc) { stop(t, id, cancel) }, tc.code, true)
		})
	}
	if got := queryRows(t, db, "SELECT count(*) FROM k.t"); got[0][0] != "1" {
		t.Fatalf("count after the dead transaction = %v, want 1", got)
	}
	if got := queryRows(t, db, "SELECT count(*) FROM k.t WHERE v > 'v'"); got[0][0] != "0" {
		t.Fatalf("index scan after the dead transaction = %v, want 0", got)
	}
	var used syscall.Rusage
	before := cpuTime(t, &used)
	time.Sleep(time.Second)
	t.Logf("the server used %v of CPU in the second after the last reader", cpuTime(t, &used)-before)
}

// TestKillStopsLongScan: a query over a committed table of 20,000 rows
// that compares each row with every other (hours of work) is stopped by
// KILL QUERY, max_execution_time and its client going away; the CPU the
// server used in the second after is logged.
func TestKillStopsLongScan(t *testing.T) {
	s := startServer(t, "")
	db := s.Open("")
	ctx := context.Background()
	mustExec(t, db, "CREATE DATABASE k", "CREATE TABLE k.t (id INT PRIMARY KEY, v VARCHAR(100), KEY (v))")
	for _, q := range crash.LargeTxnInserts("k.t", 20_000) {
		mustExec(t, db, q)
	}
	const long = "SELECT count(*) FROM k.t a WHERE (SELECT count(*) FROM k.t b WHERE b.id + 0 > a.id) >= 0"
	for _, tc := range []struct {
		name string
		stop func(t *testing.T, id string, cancel context.CancelFunc)
		code uint16
	}{
		{"kill-query", func(t *testing.T, id string, _ context.CancelFunc) { mustExec(t, db, "KILL QUERY "+id) }, 1317},
		{"max-execution-time", func(*testing.T, string, context.CancelFunc) {}, 3024},
		{"client-disconnect", func(_ *testing.T, _ string, cancel context.CancelFunc) { cancel() }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			id := queryRows(t, conn, "SELECT CONNECTION_ID()")[0][0]
			const after = 300 * time.Millisecond
			if tc.code == 3024 {
				mustExec(t, conn, fmt.Sprintf("SET max_execution_time = %d", 2*after.Milliseconds())) // after it was seen at work
			}
			// GMS may read the inner table into memory once and join
			// from there: the work is then GMS's, not in busyFrames.
			runStopped(t, conn, long, after, func(cancel context.CancelFunc) { tc.stop(t, id, cancel) }, tc.code, false)
			var used syscall.Rusage
			before := cpuTime(t, &used)
			time.Sleep(time.Second)
			t.Logf("the server used %v of CPU in the second after", cpuTime(t, &used)-before)
		})
	}
	if got := queryRows(t, db, "SELECT count(*) FROM k.t"); got[0][0] != "20000" {
		t.Fatalf("count after the stopped scans = %v", got)
	}
}

// TestKillStopsLockWait: a statement waits for the lock of a younger
// transaction that died after prewrite and whose locks live for ten
// minutes, as long as the lock wait timeout: in optimistic mode the
// COMMIT, in pessimistic mode (the default) the INSERT, whose pessimistic
// lock waits. KILL QUERY and the client going away stop the wait (a
// goroutine left waiting a minute later fails the test), and the server
// stays healthy.
func TestKillStopsLockWait(t *testing.T) {
	const long = 10 * time.Minute
	s, abandon := abandoningServer(t, txn.Options{LockTTL: long, LockWaitTimeout: long})
	db := s.Open("")
	ctx := context.Background()
	mustExec(t, db, "CREATE DATABASE k", "CREATE TABLE k.u (id INT PRIMARY KEY, v VARCHAR(100))")
	// Each case's transactions write keys of their own: the locks of the
	// case before stay.
	c := 0
	for _, mode := range []string{"optimistic", "pessimistic"} {
		for _, tc := range []struct {
			name string
			stop func(t *testing.T, id string, cancel context.CancelFunc)
			code uint16
		}{
			{"kill-query", func(t *testing.T, id string, _ context.CancelFunc) { mustExec(t, db, "KILL QUERY "+id) }, 1317},
			{"client-disconnect", func(_ *testing.T, _ string, cancel context.CancelFunc) { cancel() }, 0},
		} {
			c++
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				waiter, err := db.Conn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer waiter.Close()
				id := queryRows(t, waiter, "SELECT CONNECTION_ID()")[0][0]
				// The waiter's snapshot comes first: it is the older.
				mustExec(t, waiter, "BEGIN "+mode)
				queryRows(t, waiter, "SELECT count(*) FROM k.u")
				// The younger transaction: more than one-phase commit takes,
				// so that it leaves locks.
				var b strings.Builder
				b.WriteString("INSERT INTO k.u VALUES ")
				for i := range 500 {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, "(%d, '%s row %d, sixty bytes or so of a value to pass 16 KiB')", 1000*c+i, tc.name, i)
				}
				abandon.Store(true)
				if _, err := db.ExecContext(ctx, b.String()); err == nil {
					t.Fatal("the abandoned commit succeeded")
				}
				abandon.Store(false)
				insert := fmt.Sprintf("INSERT INTO k.u VALUES (%d, 'the waiter''s')", 1000*c+7)
				if mode == "optimistic" {
					mustExec(t, waiter, insert)
					runStopped(t, waiter, "COMMIT", 300*time.Millisecond, func(cancel context.CancelFunc) { tc.stop(t, id, cancel) }, tc.code, true)
				} else {
					runStopped(t, waiter, insert, 300*time.Millisecond, func(cancel context.CancelFunc) { tc.stop(t, id, cancel) }, tc.code, true)
				}
				if got := queryRows(t, db, "SELECT count(*) FROM k.u"); got[0][0] != "0" {
					t.Fatalf("rows after both transactions failed: %v", got)
				}
			})
		}
	}
}

// abandoningServer starts a server with opts whose two-phase commits stop
// after prewrite, leaving their locks, while the returned flag is set.
func abandoningServer(t *testing.T, opts txn.Options) (*sqltest.Server, *atomic.Bool) {
	t.Helper()
	abandon := new(atomic.Bool)
	opts.Hooks = &txn.CommitHooks{AfterPrewrite: func(uint64) error {
		if abandon.Load() {
			return errAbandon
		}
		return nil
	}}
	return sqltest.StartConfig(t, percsql.Config{Txn: opts}), abandon
}

// runStopped runs stmt on conn, under a context that stop may cancel,
// and calls stop once the statement has run for after (and, with
// inStore, is at work in busyFrames). The statement must
// fail (with MySQL error code, unless 0) and the server's work for it end
// (waitIdle); how long each took is logged.
func runStopped(t *testing.T, conn *sql.Conn, stmt string, after time.Duration, stop func(cancel context.CancelFunc), code uint16, inStore bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := conn.ExecContext(ctx, stmt)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("%s finished before it was stopped: %v", stmt, err)
	case <-time.After(after):
	}
	if inStore {
		// The statement is at work in percdb's store layers (else
		// stopping it there would prove nothing).
		waitBusy(t, true, "while the statement runs")
		select {
		case err := <-done:
			t.Fatalf("%s finished before it was stopped: %v", stmt, err)
		default:
		}
	}
	stop(cancel)
	stopped := time.Now()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s was not stopped within a minute", stmt)
	}
	took := time.Since(stopped)
	if err == nil {
		t.Fatalf("the stopped %s succeeded", stmt)
	}
	if code != 0 {
		wantError(t, err, code, "")
	}
	idle := waitIdle(t)
	t.Logf("%s stopped %v after the stop (%v); the server's work for it ended %v after that", stmt, took, err, idle)
}

// busyFrames are the functions of the server's that read or resolve; a
// goroutine in one of them is still working for a stopped statement.
var busyFrames = []string{
	"percdb/txn.(*committer)",
	"percdb/txn.(*lockWaiter)",
	"percdb/txn.(*LockResolver)",
	"percdb/txn.(*Txn).acquire",
	"percdb/kv.(*Store).AcquirePessimisticLock",
	"percdb/txn.(*scanIter)",
	"percdb/kv.(*Store).ResolveLock",
	"percdb/kv.(*Store).Scan",
}

// waitIdle waits until no goroutine is in busyFrames and returns how long
// that took; it fails the test after a minute.
func waitIdle(t *testing.T) time.Duration {
	t.Helper()
	return waitBusy(t, false, "a minute after the statement stopped")
}

// waitBusy waits until a goroutine is in one of busyFrames (busy) or none
// is (!busy), and returns how long that took; it fails the test, saying
// when, after a minute.
func waitBusy(t *testing.T, busy bool, when string) time.Duration {
	t.Helper()
	began := time.Now()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		for n == len(buf) {
			buf = make([]byte, 2*len(buf))
			n = runtime.Stack(buf, true)
		}
		in := ""
		for _, f := range busyFrames {
			if strings.Contains(string(buf[:n]), f) {
				in = f
				break
			}
		}
		if (in != "") == busy {
			return time.Since(began)
		}
		if time.Since(began) > time.Minute {
			if busy {
				t.Fatalf("no goroutine of the server's scans, resolves or waits %s", when)
			}
			t.Fatalf("a goroutine is still in %s %s:\n%s", in, when, buf[:n])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cpuTime returns the CPU time the process has used.
func cpuTime(t *testing.T, ru *syscall.Rusage) time.Duration {
	t.Helper()
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
