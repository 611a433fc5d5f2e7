package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/testproc"
)

// Short leases and DDL waits, so that the tests see them end.
var leaseArgs = []string{"--schema-lease", "1s", "--ddl-wait-timeout", "2s"}

// startSQLWith starts another SQL node of c with extra flags.
func (c *cluster) startSQLWith(t *testing.T, name string, args ...string) *member {
	t.Helper()
	m := &member{t: t, name: name, bin: c.sql.bin, ready: c.sql.ready,
		args: append([]string{"sql", "--data-dir", filepath.Join(t.TempDir(), name), "--host", "127.0.0.1", "--port", "0",
			"--status-port", "0", "--pd", c.pd.addr}, args...)}
	m.start()
	return m
}

// errCode returns the MySQL error number of err, 0 if it has none.
func errCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// adminCheck runs ADMIN CHECK TABLE on db and fails the test if it finds
// the table's indexes inconsistent with its rows.
func adminCheck(t *testing.T, db *sql.DB, table string, logs func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	if _, err := db.ExecContext(ctx, "ADMIN CHECK TABLE "+table); err != nil {
		t.Fatalf("ADMIN CHECK TABLE %s: %v\n%s", table, err, logs())
	}
}

// twoNodes is a cluster of one KV node and two SQL nodes, A (c.sql) and
// B, both with leaseArgs, and a database d.
type twoNodes struct {
	c        *cluster
	b        *member
	dbA, dbB *sql.DB
}

func startTwoNodes(t *testing.T) *twoNodes {
	t.Helper()
	c := startCluster(t, testproc.BuildPercdb(t), 1, leaseArgs...)
	b := c.startSQLWith(t, "sql2", leaseArgs...)
	n := &twoNodes{c: c, b: b, dbA: openDB(t, c.sql.addr, "", true), dbB: openDB(t, b.addr, "", true)}
	n.exec(t, n.dbA, "CREATE DATABASE d")
	return n
}

// logs returns every member's log tail.
func (n *twoNodes) logs() string { return n.c.logs() + "--- sql2 ---\n" + n.b.log.String() }

// exec runs q on db, failing the test on an error.
func (n *twoNodes) exec(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	mustExec(t, db, q, n.logs)
}

// mustExec runs q on db, failing the test with logs() on an error.
func mustExec(t *testing.T, db *sql.DB, q string, logs func() string) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v\n%s", q, err, logs())
	}
}

// openTxn runs stmts (a BEGIN and writes) on a connection of its own,
// left open with its transaction: the caller commits it.
func openTxn(t *testing.T, db *sql.DB, logs func() string, stmts ...string) *sql.Conn {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, q := range stmts {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, logs())
		}
	}
	return conn
}

// TestAddIndexWhileOtherNodeWrites: node B holds an open transaction with
// writes and runs writers (inserts and updates) while node A adds an
// index online, through its delete-only, write-only, backfill and public
// steps. Each step waits until B has loaded it, so no write of B lands
// under a schema two steps behind: afterwards ADMIN CHECK TABLE finds the
// index consistent with the rows, and every acknowledged commit is there
// with its last acknowledged value. B's open transaction outlives the
// wait: its commit fails with 8028 (or, if it did not use the table's
// older schema, succeeds and is checked like the others).
func TestAddIndexWhileOtherNodeWrites(t *testing.T) {
	n := startTwoNodes(t)
	dbA, dbB, logs := n.dbA, n.dbB, n.logs
	ctx := context.Background()
	exec := func(db *sql.DB, q string) { t.Helper(); n.exec(t, db, q) }
	exec(dbA, "CREATE TABLE d.t (id INT PRIMARY KEY, k INT NOT NULL, v INT NOT NULL)")
	for i := 0; i < 300; i += 50 {
		q := "INSERT INTO d.t VALUES "
		for j := i; j < i+50; j++ {
			if j > i {
				q += ","
			}
			q += fmt.Sprintf("(%d, %d, 0)", j, j%17)
		}
		exec(dbA, q)
	}

	// The open transaction on B, begun under the schema without the index.
	open := openTxn(t, dbB, logs, "BEGIN", "INSERT INTO d.t VALUES (100000, 5, 1)", "UPDATE d.t SET k = 99 WHERE id = 1")

	// Writers on B: each inserts its own rows and updates them; acked
	// holds the last acknowledged k of every row a writer committed.
	const writers = 3
	var (
		mu     sync.Mutex
		acked  = map[int]int{}
		failed = map[uint16]int{}
		wg     sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := 200000 + w*100000
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var q string
				id, k := base+i/2, (i*7+w)%23
				if i%2 == 0 {
					q = fmt.Sprintf("INSERT INTO d.t VALUES (%d, %d, %d)", id, k, i)
				} else {
					q = fmt.Sprintf("UPDATE d.t SET k = %d, v = %d WHERE id = %d", k, i, id)
				}
				_, err := dbB.ExecContext(ctx, q)
				mu.Lock()
				switch {
				case err == nil:
					acked[id] = k
				case i%2 == 0:
					// An insert that failed: the update of the row is
					// skipped, as the row may not exist.
					failed[errCode(err)]++
					i++
				default:
					failed[errCode(err)]++
				}
				mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	exec(dbA, "ALTER TABLE d.t ADD INDEX ik (k)")
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()

	// The open transaction: written under the schema before the index,
	// it outlived the DDL's wait on B.
	_, commitErr := open.ExecContext(ctx, "COMMIT")
	switch code := errCode(commitErr); {
	case commitErr == nil:
		acked[100000] = 5
		acked[1] = 99
	case code == 8028:
	default:
		t.Fatalf("COMMIT of sql2's transaction open across the schema change: %v, want success or 8028\n%s", commitErr, logs())
	}

	adminCheck(t, dbA, "d.t", logs)
	adminCheck(t, dbB, "d.t", logs)
	ids := make([]int, 0, len(acked))
	for id := range acked {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		var k int
		if err := dbA.QueryRowContext(ctx, "SELECT k FROM d.t WHERE id = ?", id).Scan(&k); err != nil {
			t.Fatalf("acknowledged row %d: %v\n%s", id, err, logs())
		}
		if k != acked[id] {
			t.Fatalf("row %d: k = %d, want the last acknowledged %d", id, k, acked[id])
		}
		var n int
		if err := dbA.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t FORCE INDEX (ik) WHERE k = ? AND id = ?", k, id).Scan(&n); err != nil || n != 1 {
			t.Fatalf("row %d through index ik: count %d, err %v", id, n, err)
		}
	}
	t.Logf("ADD INDEX took %v with sql2 writing (loaded machine); %d rows acknowledged by sql2's writers; failed statements by error: %v; the open transaction's COMMIT: %v",
		took, len(acked), failed, commitErr)
}

// TestCutOffNodeCannotCommitOldSchema: node B has a transaction with
// writes open when its process is stopped (SIGSTOP) past its schema
// lease. Node A's ADD INDEX stops waiting for B once B's lease ends in
// pd, and completes. When B runs again, the transaction, which used the
// schema from before the index, cannot commit (8028 or 8027): a node cut
// off past its lease never writes under a schema two versions behind.
// B then serves new transactions again once it has renewed its lease.
func TestCutOffNodeCannotCommitOldSchema(t *testing.T) {
	n := startTwoNodes(t)
	dbA, dbB, logs := n.dbA, n.dbB, n.logs
	ctx := context.Background()
	exec := func(db *sql.DB, q string) { t.Helper(); n.exec(t, db, q) }
	exec(dbA, "CREATE TABLE d.t (id INT PRIMARY KEY, k INT NOT NULL)")
	exec(dbA, "INSERT INTO d.t VALUES (1, 1), (2, 2), (3, 3)")

	open := openTxn(t, dbB, logs, "BEGIN", "INSERT INTO d.t VALUES (10, 10)")
	if err := n.b.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = n.b.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	defer resume()
	start := time.Now()
	exec(dbA, "ALTER TABLE d.t ADD INDEX ik (k)")
	took := time.Since(start)
	resume()

	_, commitErr := open.ExecContext(ctx, "COMMIT")
	if code := errCode(commitErr); code != 8028 && code != 8027 {
		t.Fatalf("COMMIT on sql2 after it was cut off past its lease across ADD INDEX: %v, want 8028 or 8027\n%s", commitErr, logs())
	}
	var rows int
	if err := dbA.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t WHERE id = 10").Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("the refused transaction's row: count %d, err %v", rows, err)
	}
	// B serves again once it renewed its lease (a statement may still
	// meet the lease's end first: 8027).
	var insertErr error
	resumedAt := time.Now()
	waitFor(t, "sql2 commits again", func() bool {
		_, insertErr = dbB.ExecContext(ctx, "INSERT INTO d.t VALUES (11, 11)")
		return insertErr == nil || errCode(insertErr) == 1062
	}, logs)
	back := time.Since(resumedAt)
	adminCheck(t, dbA, "d.t", logs)
	t.Logf("ADD INDEX took %v with sql2 stopped (its lease 1s; loaded machine); sql2's open transaction's COMMIT: %v; sql2 committed again %v after its refusal",
		took, commitErr, back)
}

// TestAutoIncrementAcrossSQLNodes: writers on two SQL nodes insert into
// one AUTO_INCREMENT table at once. Each node takes batches of IDs from
// the table's allocator in the KV store, in transactions of their own: no
// insert fails (with a duplicate key or otherwise), no LAST_INSERT_ID is
// given twice, and every row's ID is distinct (their order across nodes
// is not the order of the inserts, as in TiDB: docs/cluster.md).
func TestAutoIncrementAcrossSQLNodes(t *testing.T) {
	n := startTwoNodes(t)
	dbs, logs := []*sql.DB{n.dbA, n.dbB}, n.logs
	ctx := context.Background()
	n.exec(t, n.dbA, "CREATE TABLE d.a (id BIGINT AUTO_INCREMENT PRIMARY KEY, node INT NOT NULL, seq INT NOT NULL)")
	const perWriter, writersPerNode = 150, 3
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ids  = map[int64]string{}
		errs []error
	)
	for node, db := range dbs {
		for w := 0; w < writersPerNode; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perWriter; i++ {
					var res sql.Result
					var err error
					if i%10 == 9 {
						// A multi-row insert takes several IDs at once.
						res, err = db.ExecContext(ctx, "INSERT INTO d.a (node, seq) VALUES (?, ?), (?, ?)", node, -i, node, i)
					} else {
						res, err = db.ExecContext(ctx, "INSERT INTO d.a (node, seq) VALUES (?, ?)", node, i)
					}
					var id int64
					if err == nil {
						id, err = res.LastInsertId()
					}
					mu.Lock()
					if err != nil {
						errs = append(errs, fmt.Errorf("node %d writer %d insert %d: %w", node, w, i, err))
					} else if prev, dup := ids[id]; dup {
						errs = append(errs, fmt.Errorf("LAST_INSERT_ID %d given twice: %s and node %d writer %d", id, prev, node, w))
					} else {
						ids[id] = fmt.Sprintf("node %d writer %d", node, w)
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d inserts failed or repeated an ID, the first: %v\n%s", len(errs), errs[0], logs())
	}
	rows := perWriter*2*writersPerNode + 2*writersPerNode*(perWriter/10)
	var count, distinct int
	if err := dbs[0].QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT id) FROM d.a").Scan(&count, &distinct); err != nil {
		t.Fatal(err)
	}
	if count != rows || distinct != rows {
		t.Fatalf("d.a holds %d rows, %d distinct ids; want %d of each", count, distinct, rows)
	}
	// B stops cleanly: it gives up its lease (Lease.Leave), so a schema
	// change on A need not wait for the lease to end.
	n.b.stop()
	start := time.Now()
	n.exec(t, n.dbA, "ALTER TABLE d.a ADD INDEX seq (seq)")
	t.Logf("%d rows inserted through two SQL nodes, every id distinct; ADD INDEX after sql2 stopped took %v (loaded machine)", rows, time.Since(start))
}

// TestStartingNodeLeavesRunningSchemaChange: a SQL node that starts rolls
// back the unfinished schema changes of nodes that are gone, but not one
// that a live node is running. Node A's ADD INDEX is held at its first
// step by a transaction of A's own that wrote the table; node C starts
// meanwhile; once the transaction ends, the ADD INDEX completes and the
// index is consistent.
func TestStartingNodeLeavesRunningSchemaChange(t *testing.T) {
	c := startCluster(t, testproc.BuildPercdb(t), 1, "--schema-lease", "1s", "--ddl-wait-timeout", "5m")
	dbA := openDB(t, c.sql.addr, "", true)
	ctx := context.Background()
	exec := func(db *sql.DB, q string) { t.Helper(); mustExec(t, db, q, c.logs) }
	exec(dbA, "CREATE DATABASE d")
	exec(dbA, "CREATE TABLE d.t (id INT PRIMARY KEY, k INT NOT NULL)")
	exec(dbA, "INSERT INTO d.t VALUES (1, 1), (2, 2), (3, 3)")
	open := openTxn(t, dbA, c.logs, "BEGIN", "INSERT INTO d.t VALUES (10, 10)")
	alter := make(chan error, 1)
	go func() {
		_, err := dbA.ExecContext(ctx, "ALTER TABLE d.t ADD INDEX ik (k)")
		alter <- err
	}()
	// The index is in the catalog, not public: the job waits for the
	// open transaction.
	waitFor(t, "ADD INDEX under way", func() bool { return ddlJobRunning(t, dbA) }, c.logs)
	time.Sleep(500 * time.Millisecond)
	node := c.startSQLWith(t, "sql3", "--schema-lease", "1s")
	if _, err := open.ExecContext(ctx, "COMMIT"); err != nil && errCode(err) != 8028 {
		t.Fatalf("COMMIT of the transaction holding the ADD INDEX: %v\n%s", err, c.logs())
	}
	if err := <-alter; err != nil {
		t.Fatalf("ADD INDEX while another SQL node started: %v\n%s--- sql3 ---\n%s", err, c.logs(), node.log)
	}
	adminCheck(t, dbA, "d.t", c.logs)
	var n int
	if err := dbA.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t FORCE INDEX (ik) WHERE k > 0").Scan(&n); err != nil || n < 3 {
		t.Fatalf("rows through the new index: %d, %v", n, err)
	}
}

// ddlJobRunning reports whether ADMIN SHOW DDL JOBS on db lists a running
// job.
func ddlJobRunning(t *testing.T, db *sql.DB) bool {
	t.Helper()
	rs, err := db.Query("ADMIN SHOW DDL JOBS")
	if err != nil {
		t.Fatalf("ADMIN SHOW DDL JOBS: %v", err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, c := range cols {
			if c == "STATE" && vals[i].String == "running" {
				return true
			}
		}
	}
	return false
}
