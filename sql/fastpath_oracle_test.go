package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/txn"
)

// Markers of the commits the crash hook stops: before the commit point
// (the writes never become visible) and just after it (they are
// committed, though the client hears of an error).
const (
	crashBeforeCommit = "injected crash before commit"
	crashAfterCommit  = "injected crash after primary commit"
)

// TestFastPathPointReadNoOracle checks that autocommit point and batch
// point selects on the fast path take no timestamp, and that they are
// linearizable against concurrent two-phase writers, some of which die
// with their locks in place: a read never returns a value that was not
// committed, never misses a commit acknowledged before it started, and a
// batch read of two keys written together sees both or neither.
func TestFastPathPointReadNoOracle(t *testing.T) {
	var crashing atomic.Bool
	hooks := &txn.CommitHooks{
		AfterPrewrite: func(startTS uint64) error {
			if crashing.Load() && startTS%7 == 0 {
				return errors.New(crashBeforeCommit)
			}
			return nil
		},
		AfterPrimaryCommit: func(startTS, _ uint64) error {
			if crashing.Load() && startTS%7 == 1 {
				return errors.New(crashAfterCommit)
			}
			return nil
		},
	}
	srv := startServerConfig(t, percsql.Config{
		// Two phases, so that readers meet locks; short-lived locks, so
		// that those of dead writers are soon rolled back.
		Txn: txn.Options{EnableOnePC: new(false), LockTTL: 300 * time.Millisecond, Hooks: hooks},
	})

	const pairs = 4 // keys k and k+100 are written together
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)")
	for k := 1; k <= pairs; k++ {
		mustExec(t, admin, fmt.Sprintf("INSERT INTO d.t VALUES (%d, 0), (%d, 0)", k, k+100))
	}
	db := openDB(t, srv, "d")
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)

	// Quiet: no oracle call for point or batch point reads.
	point, err := db.Prepare("SELECT v FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer point.Close()
	batch, err := db.Prepare("SELECT id, v FROM t WHERE id IN (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer batch.Close()
	var v int
	// The first executions teach the fast path the result's columns.
	if err := point.QueryRow(1).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if _, err := readPair(batch, 1); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT v FROM t WHERE id = 101").Scan(&v); err != nil {
		t.Fatal(err)
	}
	// Point reads roll forward the locks that two-phase commits leave on
	// secondaries until their background commit lands; a batch read that
	// met one would take a timestamp.
	for k := 1; k <= pairs; k++ {
		for _, id := range []int{k, k + 100} {
			if err := point.QueryRow(id).Scan(&v); err != nil {
				t.Fatal(err)
			}
		}
	}
	// SHOW STATUS goes through GMS, which takes a timestamp for it: the
	// cost of one is measured and discounted, as the least of three
	// measurements. A background round of the server (the delete-range
	// stamper, statistics) may take a timestamp during a round of reads
	// or a measurement: the round is tried again, up to three times. A
	// fast path that took timestamps would take one for every read, in
	// every round.
	const quiet = 50
	var extra int64
	var ran uint64
	for attempt := 0; attempt < 3; attempt++ {
		quiesce(t, srv)
		own := uint64(1 << 62)
		for i := 0; i < 3; i++ {
			c0 := serverStatus(t, admin, "Percdb_oracle_calls")
			c1 := serverStatus(t, admin, "Percdb_oracle_calls")
			own = min(own, c1-c0)
		}
		calls := serverStatus(t, admin, "Percdb_oracle_calls")
		hits := serverStatus(t, admin, "Percdb_fastpath_hits")
		for i := 0; i < quiet; i++ {
			if err := point.QueryRow(1 + i%pairs).Scan(&v); err != nil {
				t.Fatal(err)
			}
			if _, err := readPair(batch, 1+i%pairs); err != nil {
				t.Fatal(err)
			}
			if err := db.QueryRow(fmt.Sprintf("SELECT v FROM t WHERE id = %d", 101+i%pairs)).Scan(&v); err != nil {
				t.Fatal(err)
			}
		}
		got := serverStatus(t, admin, "Percdb_oracle_calls")
		ran = serverStatus(t, admin, "Percdb_fastpath_hits") - hits
		extra = int64(got) - int64(calls) - int64(2*own)
		if extra == 0 && ran == 3*quiet {
			break
		}
		t.Logf("round %d: %d timestamps beyond the SHOW STATUS ones, %d fast path reads of %d", attempt+1, extra, ran, 3*quiet)
	}
	if extra != 0 {
		t.Errorf("%d autocommit point reads took %d timestamps, want none", 3*quiet, extra)
	}
	if ran != 3*quiet {
		t.Errorf("fast path ran %d of %d point reads", ran, 3*quiet)
	}

	// Concurrent: one writer per pair sets both keys to 1, 2, 3, ... in
	// one transaction; readers check what they see.
	states := make([]*keyState, pairs+1)
	for k := 1; k <= pairs; k++ {
		states[k] = &keyState{failed: map[int64]bool{}, settled: map[int64]bool{0: true}}
	}
	run := 3 * time.Second
	if testing.Short() {
		run = time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	hits := serverStatus(t, admin, "Percdb_fastpath_hits")
	crashing.Store(true)
	var wg sync.WaitGroup
	var commits, crashes atomic.Int64
	errs := make(chan error, 64)
	for k := 1; k <= pairs; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			st := states[k]
			conn, err := db.Conn(context.Background())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			for n := int64(1); ctx.Err() == nil; n++ {
				st.mu.Lock()
				st.settled[n] = true // from now on it may become visible
				st.mu.Unlock()
				err := writePair(conn, k, n)
				switch {
				case err == nil:
					st.acked.Store(n)
					commits.Add(1)
				case strings.Contains(err.Error(), crashBeforeCommit):
					st.mu.Lock()
					st.failed[n] = true
					delete(st.settled, n)
					st.mu.Unlock()
					crashes.Add(1)
				default:
					// Committed or not: either is a correct read.
					crashes.Add(1)
				}
			}
		}(k)
	}
	var reads atomic.Int64
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				k := 1 + (r+i)%pairs
				st := states[k]
				floor := st.acked.Load()
				if i%2 == 0 {
					var v int64
					if err := point.QueryRow(k + 100*(i/2%2)).Scan(&v); err != nil {
						errs <- fmt.Errorf("point read %d: %w", k, err)
						return
					}
					if err := st.check(v, floor); err != nil {
						errs <- fmt.Errorf("point read of key %d: %w", k, err)
						return
					}
				} else {
					vs, err := readPair(batch, k)
					if err != nil {
						errs <- fmt.Errorf("batch read %d: %w", k, err)
						return
					}
					if vs[0] != vs[1] {
						errs <- fmt.Errorf("batch read of keys %d and %d: %d and %d, written together", k, k+100, vs[0], vs[1])
						return
					}
					if err := st.check(vs[0], floor); err != nil {
						errs <- fmt.Errorf("batch read of key %d: %w", k, err)
						return
					}
				}
				reads.Add(1)
			}
		}(r)
	}
	wg.Wait()
	crashing.Store(false)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d reads, %d commits, %d crashed or failed commits", reads.Load(), commits.Load(), crashes.Load())
	if commits.Load() == 0 || reads.Load() == 0 {
		t.Fatalf("no progress: %d commits, %d reads", commits.Load(), reads.Load())
	}
	// The writers' UPDATEs, BEGINs and COMMITs run there too.
	if got := serverStatus(t, admin, "Percdb_fastpath_hits") - hits; got < uint64(reads.Load()) {
		t.Errorf("fast path ran %d statements, fewer than the %d reads", got, reads.Load())
	}
}

// keyState is what a writer has done to one pair of keys.
type keyState struct {
	acked   atomic.Int64 // the largest value whose COMMIT returned OK
	mu      sync.Mutex
	failed  map[int64]bool // values whose commit died before its commit point
	settled map[int64]bool // values that are or may be committed
}

// check verifies a read of value v that started when floor was the
// largest acknowledged commit.
func (st *keyState) check(v, floor int64) error {
	if v < floor {
		return fmt.Errorf("read %d after the commit of %d was acknowledged", v, floor)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.failed[v] {
		return fmt.Errorf("read %d, whose commit died before its commit point", v)
	}
	if !st.settled[v] {
		return fmt.Errorf("read %d, never written", v)
	}
	return nil
}

// readPair reads keys k and k+100 with one batch point select.
func readPair(batch *sql.Stmt, k int) ([2]int64, error) {
	var out [2]int64
	rows, err := batch.Query(k, k+100)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id int
		var v int64
		if err := rows.Scan(&id, &v); err != nil {
			return out, err
		}
		if id == k {
			out[0] = v
		} else {
			out[1] = v
		}
		n++
	}
	if n != 2 {
		return out, fmt.Errorf("%d rows, want 2", n)
	}
	return out, rows.Err()
}

// writePair sets keys k and k+100 to n in one explicit transaction.
func writePair(conn *sql.Conn, k int, n int64) error {
	ctx := context.Background()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, id := range []int{k, k + 100} {
		if _, err := tx.ExecContext(ctx, "UPDATE t SET v = ? WHERE id = ?", n, id); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// mustExec runs statements that must succeed.
func mustExec(t testing.TB, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestFastPathOracleCallsPerStatement checks what each statement on the
// fast path costs in timestamps with one region: an autocommit write one
// (the start_ts its reads need; the one-phase commit calculates its
// commit timestamp), a transaction one, a point read none, nor a range
// read by primary key, which one request to the one region answers
// (txn.Store.BeginLatest), nor a read of an index whose entries hold
// every column it reads (ORDER BY ... DESC LIMIT, MIN), while a lookup
// of the rows besides takes one; and that
// @percdb_fastpath = 0 sends a session's statements to GMS.
func TestFastPathOracleCallsPerStatement(t *testing.T) {
	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL, w INT, KEY (v))", "INSERT INTO d.t (id, v) VALUES (1, 0), (2, 0)")
	db := openDB(t, srv, "d")
	db.SetMaxOpenConns(1)
	// Learn the SELECT's columns, and measure what SHOW STATUS itself
	// costs.
	var v int
	ranges := []string{
		"SELECT v FROM t WHERE id BETWEEN 1 AND 2",
		"SELECT v FROM t WHERE id > 0 ORDER BY id DESC LIMIT 1",
		"SELECT max(id) FROM t WHERE id < 5",
		"SELECT count(*) FROM t WHERE id >= 1",
		// Covering reads of the index on v.
		"SELECT id FROM t ORDER BY v DESC, id DESC LIMIT 1",
		"SELECT min(v) FROM t",
		"SELECT max(v) FROM t WHERE v < 5",
	}
	// A lookup of the rows (w) after the index: two requests.
	lookup := "SELECT w FROM t WHERE v >= 0 ORDER BY v DESC, id DESC LIMIT 1"
	var w sql.NullInt64
	if err := db.QueryRow(lookup).Scan(&w); err != nil {
		t.Fatal(err)
	}
	for _, q := range append([]string{"SELECT v FROM t WHERE id = 1", "SELECT v FROM t WHERE id IN (1, 2)"}, ranges...) {
		if err := db.QueryRow(q).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	quiesce(t, srv)
	s0 := serverStatus(t, admin, "Percdb_oracle_calls")
	own := serverStatus(t, admin, "Percdb_oracle_calls") - s0
	cost := func(stmts ...string) (calls, hits uint64) {
		t.Helper()
		c0, h0 := serverStatus(t, admin, "Percdb_oracle_calls"), serverStatus(t, admin, "Percdb_fastpath_hits")
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, q := range stmts {
			if strings.HasPrefix(q, "SELECT") {
				if err := conn.QueryRowContext(context.Background(), q).Scan(&w); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			} else if _, err := conn.ExecContext(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		c1, h1 := serverStatus(t, admin, "Percdb_oracle_calls"), serverStatus(t, admin, "Percdb_fastpath_hits")
		return c1 - c0 - 2*own, h1 - h0
	}
	// An autocommit write fetches its start_ts once: after a one-phase
	// commit whose calculated commit_ts may be the oracle's next
	// timestamp (the previous write's), txn asks the oracle for one above
	// it in the same call (txn.AboveOracle), where it asked twice. The
	// commit itself fetches nothing.
	for _, tc := range []struct {
		stmts    []string
		maxCalls uint64
		hits     uint64
	}{
		{[]string{"SELECT v FROM t WHERE id = 1"}, 0, 1},
		{[]string{"SELECT v FROM t WHERE id IN (1, 2)"}, 0, 1},
		{ranges[:1], 0, 1},
		{ranges[1:2], 0, 1},
		{ranges[2:3], 0, 1},
		{ranges[3:4], 0, 1},
		{ranges[4:5], 0, 1},
		{ranges[5:6], 0, 1},
		{ranges[6:], 0, 1},
		{[]string{lookup}, 1, 1},
		{[]string{"UPDATE t SET v = v + 1 WHERE id = 1"}, 1, 1},
		{[]string{"INSERT INTO t (id, v) VALUES (3, 3)"}, 1, 1},
		{[]string{"DELETE FROM t WHERE id = 3"}, 1, 1},
		{[]string{"UPDATE t SET v = v + 1 WHERE id = 1", "UPDATE t SET v = v + 1 WHERE id = 2", "UPDATE t SET v = v + 1 WHERE id = 1"}, 3, 3},
		{[]string{"BEGIN", "UPDATE t SET v = v + 1 WHERE id = 1", "UPDATE t SET v = v + 1 WHERE id = 2", "SELECT v FROM t WHERE id = 1", "COMMIT"}, 2, 5},
		{[]string{"BEGIN", "ROLLBACK"}, 0, 2},
	} {
		calls, hits := cost(tc.stmts...)
		if calls > tc.maxCalls || hits != tc.hits {
			t.Errorf("%q: %d timestamps and %d fast-path statements, want at most %d and %d", tc.stmts, calls, hits, tc.maxCalls, tc.hits)
		}
	}
	// The session switch sends the point select to GMS.
	if _, hits := cost("SET @percdb_fastpath = 0", "SELECT v FROM t WHERE id = 1", "SET @percdb_fastpath = 1"); hits != 0 {
		t.Errorf("@percdb_fastpath = 0: %d statements ran on the fast path", hits)
	}
	if _, hits := cost("SELECT v FROM t WHERE id = 1"); hits != 1 {
		t.Errorf("@percdb_fastpath = 1: %d statements ran on the fast path, want 1", hits)
	}
	if got := serverStatus(t, admin, "Percdb_oracle_calls_avoided"); got < 2+uint64(len(ranges)) {
		t.Errorf("Percdb_oracle_calls_avoided = %d after two autocommit point reads and %d range reads", got, len(ranges))
	}
}

// TestFastPathSchemaChanges checks that fast point selects follow DDL: a
// read that starts after a DDL returned sees its effect, byte for byte as
// GMS answers (column added, type changed, table dropped and created
// again), and concurrently with a connection that drops and re-creates the
// table, never an older generation than the last one acknowledged.
func TestFastPathSchemaChanges(t *testing.T) {
	d := newDiff(t, "USE d", "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 10), (2, 20)")
	for _, prepared := range []bool{false, true} {
		step := d.step
		if prepared {
			step = d.stepPrepared
		}
		step("SELECT * FROM t WHERE id = ?", 1)
		step("SELECT * FROM t WHERE id = ?", 2)
		d.step("ALTER TABLE t ADD COLUMN x INT DEFAULT 7")
		step("SELECT * FROM t WHERE id = ?", 1)
		step("SELECT * FROM t WHERE id = ?", 1)
		d.step("ALTER TABLE t MODIFY v VARCHAR(10)")
		step("SELECT * FROM t WHERE id = ?", 2)
		step("SELECT * FROM t WHERE id = ?", 2)
		d.step("DROP TABLE t")
		step("SELECT * FROM t WHERE id = ?", 1)
		d.step("CREATE TABLE t (id INT PRIMARY KEY, v INT)")
		d.step("INSERT INTO t VALUES (1, 11), (2, 22)")
		step("SELECT * FROM t WHERE id = ?", 1)
		step("SELECT * FROM t WHERE id = ?", 2)
	}
	d.finish("t")

	srv := startServer(t, true)
	admin := openDB(t, srv, "")
	mustExec(t, admin, "CREATE DATABASE d", "CREATE TABLE d.g (id INT PRIMARY KEY, v INT)", "INSERT INTO d.g VALUES (1, 0)")
	gens := 20
	if testing.Short() {
		gens = 8
	}
	var acked atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= gens; i++ {
			for _, q := range []string{"DROP TABLE d.g", "CREATE TABLE d.g (id INT PRIMARY KEY, v INT)", fmt.Sprintf("INSERT INTO d.g VALUES (1, %d)", i)} {
				if _, err := admin.Exec(q); err != nil {
					t.Errorf("%s: %v", q, err)
					return
				}
			}
			acked.Store(int64(i))
		}
	}()
	db := openDB(t, srv, "d")
	db.SetMaxOpenConns(1)
	reads, fast := 0, 0
	hits0 := serverStatus(t, admin, "Percdb_fastpath_hits")
	for running := true; running; reads++ {
		select {
		case <-done:
			running = false
		default:
		}
		floor := acked.Load()
		var v int64
		err := db.QueryRow("SELECT v FROM g WHERE id = 1").Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows), errCode(err) == 1146:
			// Between the DROP and the INSERT of a generation.
		case err != nil:
			t.Fatalf("read: %v", err)
		case v < floor:
			t.Fatalf("read generation %d after generation %d was acknowledged", v, floor)
		}
	}
	fast = int(serverStatus(t, admin, "Percdb_fastpath_hits") - hits0)
	t.Logf("%d reads during %d generations, %d on the fast path", reads, gens, fast)
}

// quiesce waits until no background round of srv takes timestamps (the
// delete-range stamper that the start and each DDL wake), so that the
// oracle calls counted are the statements' own.
func quiesce(t *testing.T, srv *percsql.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.QuiesceBackground(ctx); err != nil {
		t.Fatalf("wait for the background rounds: %v", err)
	}
}
