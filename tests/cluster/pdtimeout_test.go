package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/testproc"
)

// pdOutage is how long TestPDRestartWithinPDTimeout keeps pd down: longer
// than the oracle client's default bound on one call for timestamps
// (3 s), well within the test's --pd-timeout.
const pdOutage = 5 * time.Second

// TestPDRestartWithinPDTimeout: --pd-timeout governs the SQL node's
// requests for timestamps, as its help says of every request to pd. A
// statement that needs a timestamp while pd restarts waits for it, up to
// --pd-timeout, and succeeds once pd is back, as TiDB retries its
// timestamp requests for 15 s before it fails with 9001. Before, each
// call was bounded at 3 s whatever the flag said, so the insert below
// failed with 9001 while pd was still starting. How long the insert
// waited is logged, not asserted.
func TestPDRestartWithinPDTimeout(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 1, "--pd-timeout", "60s", "--schema-lease", "60s")
	db := openDB(t, c.sql.addr, "", true)
	db.SetMaxIdleConns(0) // a fresh connection per statement: nothing cached in a session
	ctx := context.Background()
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)", "INSERT INTO d.t VALUES (1, 10)"} {
		mustExec(t, db, q, c.logs)
	}

	c.pd.kill()
	start := time.Now()
	inserted := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "INSERT INTO d.t VALUES (2, 20)")
		inserted <- err
	}()
	select {
	case err := <-inserted:
		t.Fatalf("the insert returned %v after %v, while pd was down, before its restart and --pd-timeout\n%s", err, time.Since(start), c.logs())
	case <-time.After(pdOutage):
	}
	c.pd.start()
	if err := <-inserted; err != nil {
		t.Fatalf("insert across a pd restart of %v, with --pd-timeout 60s: %v (after %v)\n%s", pdOutage, err, time.Since(start), c.logs())
	}
	t.Logf("the insert waited %v for pd, down %v and then restarted (loaded machine)", time.Since(start), pdOutage)
	var sum int
	if err := db.QueryRowContext(ctx, "SELECT SUM(v) FROM d.t").Scan(&sum); err != nil || sum != 30 {
		t.Fatalf("sum after pd's restart: %d %v, want 30", sum, err)
	}
}
