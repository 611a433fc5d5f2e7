package cluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/testproc"
)

// lockWaitTimeout is the sessions' innodb_lock_wait_timeout in the
// deadlock tests, in seconds: far above how long a detected deadlock
// takes, so that a deadlock left to the timeout fails the test with 1205
// (after it) instead of passing.
const lockWaitTimeout = 120

// TestDeadlockAcrossStores: sessions on two SQL nodes deadlock over rows
// whose regions are led by different KV nodes, so that no node's waits
// alone make a cycle: the cluster's one detector (kv/deadlock, on the
// leader of the first region) finds it, one session gets 1213 and the
// others go on; two sessions, then three; then the KV node holding the
// detector is stopped (it hands its leaderships away, the detector moves
// with the first region's) and two sessions deadlock again. No session
// may get 1205.
func TestDeadlockAcrossStores(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	sql2 := c.startSQL(t, "sql2")
	dbs := []*sql.DB{openDB(t, c.sql.addr, "", true), openDB(t, sql2.addr, "", true)}
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := dbs[0].ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, c.logs())
		}
	}
	const rows = 6
	exec("CREATE DATABASE d")
	exec("CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)")
	var splits []string
	for i := 0; i < rows; i++ {
		exec(fmt.Sprintf("INSERT INTO d.t VALUES (%d, 0)", i))
		if i > 0 {
			splits = append(splits, fmt.Sprintf("(%d)", i))
		}
	}
	exec("SPLIT TABLE d.t BY " + strings.Join(splits, ", "))

	// leaders maps each row to the address of its region's leader.
	leaders := func() (map[int]string, error) {
		rs, err := dbs[0].QueryContext(ctx, "SHOW TABLE d.t REGIONS")
		if err != nil {
			return nil, err
		}
		defer rs.Close()
		out := map[int]string{}
		for rs.Next() {
			var id, version int64
			var start, end, addr string
			if err := rs.Scan(&id, &start, &end, &version, &addr); err != nil {
				return nil, err
			}
			var tid, row int
			if _, err := fmt.Sscanf(start, "t_%d_r_%d", &tid, &row); err == nil && row < rows {
				out[row] = addr
			}
		}
		return out, rs.Err()
	}
	// spread waits until n rows are led by n different KV nodes, none of
	// them at the address not (if not ""), and returns them.
	spread := func(n int, not string) []int {
		t.Helper()
		var got map[int]string
		var picked []int
		waitFor(t, fmt.Sprintf("rows led by %d different KV nodes other than %q", n, not), func() bool {
			m, err := leaders()
			if err != nil {
				return false
			}
			got, picked = m, nil
			seen := map[string]bool{not: true}
			for row := 0; row < rows && len(picked) < n; row++ {
				if a := m[row]; a != "" && !seen[a] {
					seen[a] = true
					picked = append(picked, row)
				}
			}
			return len(picked) == n
		}, func() string { return fmt.Sprintf("row leaders %v\n%s", got, c.logs()) })
		return picked
	}

	picked := spread(3, "")
	deadlock(t, c, dbs, picked[:2], nil)
	deadlock(t, c, dbs, picked, nil)

	detector := c.leader(t)
	detector.stop()
	if moved := c.leader(t); moved == detector {
		t.Fatalf("the first region is still led by the stopped %s", detector.name)
	}
	deadlock(t, c, dbs, spread(2, ""), nil)

	// The detector moves while a wait is in progress: with the stopped
	// node back, two rows led by the two nodes that are not the detector;
	// the first session waits for the second's row, the detector's node
	// is stopped, and the second session's wait closes the cycle at the
	// new detector, which the first one's wait reaches only re-sent.
	detector.start()
	now := c.leader(t)
	rows2 := spread(2, now.addr)
	deadlock(t, c, dbs, rows2, func() {
		now.stop()
		if moved := c.leader(t); moved == now {
			t.Fatalf("the first region is still led by the stopped %s", now.name)
		}
	})
	now.start()
	c.stop()
}

// deadlock makes len(rows) sessions, alternating over dbs, each lock its
// row, then each ask for the next one's row (the last for the first's),
// and checks that exactly one gets 1213, the others' statements
// succeed and commit, and nobody gets another error (1205 above all).
// With between, the last session asks only once the others' statements
// are running (they wait: their rows are locked) and between returned.
func deadlock(t *testing.T, c *cluster, dbs []*sql.DB, rows []int, between func()) {
	t.Helper()
	ctx := context.Background()
	conns := make([]*sql.Conn, len(rows))
	for i := range rows {
		conn, err := dbs[i%len(dbs)].Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conns[i] = conn
		for _, q := range []string{fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", lockWaitTimeout), "BEGIN",
			fmt.Sprintf("UPDATE d.t SET v = v + 1 WHERE id = %d", rows[i])} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("session %d: %s: %v\n%s", i, q, err, c.logs())
			}
		}
	}
	errs := make([]error, len(rows))
	var wg sync.WaitGroup
	for i := range rows {
		if i == len(rows)-1 && between != nil {
			for j := range i {
				q := fmt.Sprintf("UPDATE d.t SET v = v + 1 WHERE id = %d", rows[j+1])
				waitFor(t, fmt.Sprintf("session %d's %q running", j, q), func() bool {
					var n int
					err := dbs[j%len(dbs)].QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = ?", q).Scan(&n)
					return err == nil && n == 1
				}, c.logs)
			}
			between()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := fmt.Sprintf("UPDATE d.t SET v = v + 1 WHERE id = %d", rows[(i+1)%len(rows)])
			if _, errs[i] = conns[i].ExecContext(ctx, q); errs[i] == nil {
				_, errs[i] = conns[i].ExecContext(ctx, "COMMIT")
			} else {
				_, _ = conns[i].ExecContext(ctx, "ROLLBACK")
			}
		}()
	}
	wg.Wait()
	victims := 0
	for i, err := range errs {
		var me *mysql.MySQLError
		switch {
		case err == nil:
		case errors.As(err, &me) && me.Number == 1213:
			victims++
			if !strings.Contains(me.Message, "Deadlock found when trying to get lock; try restarting transaction") {
				t.Errorf("session %d: 1213 without MySQL's message: %q", i, me.Message)
			}
		default:
			t.Errorf("session %d (rows %v): %v", i, rows, err)
		}
	}
	if victims != 1 {
		t.Fatalf("%d sessions deadlocking over rows %v on different KV nodes: %d victims (errors %v), want 1\n%s", len(rows), rows, victims, errs, c.logs())
	}
	t.Logf("%d sessions over rows %v: errors %v", len(rows), rows, errs)
}
