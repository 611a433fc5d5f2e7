package cluster

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/testproc"
)

// Measurements, not tests: they run only with PERCDB_MEASURE=1 and log
// what they measure (on a loaded machine, read them as A/B within one
// run), e.g.
//
//	PERCDB_MEASURE=1 go test ./tests/cluster -run TestMeasure -v
//
// PERCDB_BIN names a percdb binary to measure instead of this tree's (an
// older build, for an A/B).

// measuring skips t unless PERCDB_MEASURE is set, and returns the binary
// to measure.
func measuring(t *testing.T) string {
	t.Helper()
	if os.Getenv("PERCDB_MEASURE") == "" {
		t.Skip("a measurement: PERCDB_MEASURE=1 runs it")
	}
	if bin := os.Getenv("PERCDB_BIN"); bin != "" {
		return bin
	}
	return testproc.BuildPercdb(t)
}

// TestMeasureSchemaCheck: what checking the schema version with every
// fast-path autocommit read would cost a cluster's SQL node, against
// trusting its cached catalog, per prepared point select on one
// connection, with the row in the version key's region and in another.
// The reads of sql2 are checked while it has loaded a schema change of
// sql1 (a TRUNCATE's fence) but not reported it: its transaction that
// wrote the truncated table holds it back (cacheCurrentFor, Lease.Current).
func TestMeasureSchemaCheck(t *testing.T) {
	bin := measuring(t)
	args := []string{"--schema-lease", "1s", "--ddl-wait-timeout", "120s"}
	c := startCluster(t, bin, 1, args...)
	b := c.startSQLWith(t, "sql2", args...)
	dbA := openDB(t, c.sql.addr, "", true)
	dbB := openDB(t, b.addr, "", false)
	dbB.SetMaxOpenConns(1)
	logs := func() string { return c.logs() + b.log.String() }
	ctx := context.Background()
	mustExec(t, dbA, "CREATE DATABASE d", logs)
	mustExec(t, dbA, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)", logs)
	mustExec(t, dbA, "CREATE TABLE d.u (id INT PRIMARY KEY, v INT NOT NULL)", logs)
	q := "INSERT INTO d.u VALUES (0,0)"
	for i := 1; i < 1000; i++ {
		q += fmt.Sprintf(",(%d,%d)", i, i)
	}
	mustExec(t, dbA, q, logs)
	mustExec(t, dbA, "INSERT INTO d.t VALUES (1,1)", logs)
	mustExec(t, dbA, "SPLIT TABLE d.u BY (500)", logs)
	time.Sleep(2 * time.Second) // pd learns of the split
	stmt, err := dbB.Prepare("SELECT v FROM d.u WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	run := func(what string, base int) {
		var v int
		for i := 0; i < 200; i++ {
			_ = stmt.QueryRowContext(ctx, base+i%400).Scan(&v)
		}
		start := time.Now()
		for i := 0; i < n; i++ {
			if err := stmt.QueryRowContext(ctx, base+i%400).Scan(&v); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %.1f us a point select", what, float64(time.Since(start).Microseconds())/n)
	}
	for round := 0; round < 2; round++ {
		run("trusted, rows in the version key's region", 50)
		run("trusted, rows in another region", 550)
		open := openTxn(t, openDB(t, b.addr, "", true), logs, "BEGIN", "INSERT INTO d.t VALUES (2, 2)")
		done := make(chan error, 1)
		go func() { _, err := dbA.ExecContext(ctx, "TRUNCATE TABLE d.t"); done <- err }()
		time.Sleep(1500 * time.Millisecond) // sql2 loads the fence and waits for its transaction
		run("checked, rows in the version key's region", 50)
		run("checked, rows in another region", 550)
		_, _ = open.ExecContext(ctx, "ROLLBACK")
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestMeasureTruncate: how long TRUNCATE TABLE of a small table takes on
// a cluster with two SQL nodes (with PERCDB_BIN, an older binary's).
func TestMeasureTruncate(t *testing.T) {
	measureDDL(t, "TRUNCATE", "TRUNCATE TABLE d.t", "INSERT INTO d.t VALUES (1,1),(2,2),(3,3)")
}

// TestMeasureDrop: how long DROP TABLE of a small table takes on a
// cluster with two SQL nodes (with PERCDB_BIN, an older binary's): on a
// cluster it fences the table first, a schema step of its own.
func TestMeasureDrop(t *testing.T) {
	measureDDL(t, "DROP TABLE", "DROP TABLE d.t", "CREATE TABLE IF NOT EXISTS d.t (id INT PRIMARY KEY, v INT NOT NULL)", "INSERT INTO d.t VALUES (1,1),(2,2),(3,3)")
}

// measureDDL times ddl 20 times on the first of two SQL nodes, each after
// the statements of setup, and logs the mean, the median and each time.
func measureDDL(t *testing.T, what, ddl string, setup ...string) {
	bin := measuring(t)
	c := startCluster(t, bin, 1, leaseArgs...)
	c.startSQLWith(t, "sql2", leaseArgs...)
	dbA := openDB(t, c.sql.addr, "", true)
	logs := func() string { return c.logs() }
	mustExec(t, dbA, "CREATE DATABASE d", logs)
	mustExec(t, dbA, "CREATE TABLE IF NOT EXISTS d.t (id INT PRIMARY KEY, v INT NOT NULL)", logs)
	const n = 20
	var total time.Duration
	var ds []time.Duration
	for i := 0; i < n; i++ {
		for _, q := range setup {
			mustExec(t, dbA, q, logs)
		}
		start := time.Now()
		mustExec(t, dbA, ddl, logs)
		d := time.Since(start)
		total += d
		ds = append(ds, d.Round(100*time.Microsecond))
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	t.Logf("bin %s: %s mean %v median %v over %d: %v", bin, what, total/n, sorted[n/2], n, ds)
}
