package cluster

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/testproc"
)

// lockWait is a row of information_schema.DATA_LOCK_WAITS.
type lockWait struct {
	waiterTxn, waiterConn, holderTxn, holderConn uint64
}

// lockWaitsOf reads DATA_LOCK_WAITS through db.
func lockWaitsOf(db *sql.DB) ([]lockWait, error) {
	rs, err := db.Query(`SELECT REQUESTING_ENGINE_TRANSACTION_ID, REQUESTING_THREAD_ID, BLOCKING_ENGINE_TRANSACTION_ID, BLOCKING_THREAD_ID
		FROM information_schema.DATA_LOCK_WAITS`)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []lockWait
	for rs.Next() {
		var w lockWait
		if err := rs.Scan(&w.waiterTxn, &w.waiterConn, &w.holderTxn, &w.holderConn); err != nil {
			return nil, err
		}
		out = append(out, w)
	}
	return out, rs.Err()
}

// TestLockWaitsAcrossSQLNodes: a session on the second SQL node waits for
// a row lock a session on the first holds. The wait is in the KV node
// leading the row's region, and each SQL node sees it
// (kv.Client.LockWaitInfo asks every store): DATA_LOCK_WAITS on either
// node shows the same waiting and holding transactions, each node naming
// its own session's connection (the other's is 0: not a connection of
// this node); the waiting node's process list shows its session "waiting
// for row lock"; the holding node's console lists the wait with its
// holding connection. Once the holder commits, the waiter goes on.
func TestLockWaitsAcrossSQLNodes(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	sqlStatus := freeAddr(t)
	c := startCluster(t, bin, 3, "--status-port", port(t, sqlStatus))
	sql2 := c.startSQL(t, "sql2")
	db1, db2 := openDB(t, c.sql.addr, "", true), openDB(t, sql2.addr, "", true)
	ctx := context.Background()
	for _, stmt := range []string{"CREATE DATABASE lw", "CREATE TABLE lw.t (id INT PRIMARY KEY, v INT)", "INSERT INTO lw.t VALUES (1, 0)"} {
		if _, err := db1.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v\n%s", stmt, err, c.logs())
		}
	}
	session := func(db *sql.DB) (*sql.Conn, uint64) {
		t.Helper()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		var id uint64
		if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		for _, stmt := range []string{fmt.Sprintf("SET innodb_lock_wait_timeout = %d", lockWaitTimeout), "BEGIN PESSIMISTIC"} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		return conn, id
	}
	holder, holderID := session(db1)
	waiter, waiterID := session(db2)
	if _, err := holder.ExecContext(ctx, "UPDATE lw.t SET v = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(ctx, "UPDATE lw.t SET v = v + 10 WHERE id = 1")
		done <- err
	}()

	// From the waiting node: its connection waits, the holder is not
	// one of its connections.
	var seen2 []lockWait
	waitFor(t, "sql2's DATA_LOCK_WAITS shows its session waiting", func() bool {
		ws, err := lockWaitsOf(db2)
		if err != nil {
			t.Fatalf("DATA_LOCK_WAITS on sql2: %v", err)
		}
		seen2 = ws
		return len(ws) == 1 && ws[0].waiterConn == waiterID
	}, func() string { return fmt.Sprintf("%+v\n%s", seen2, c.logs()) })
	if w := seen2[0]; w.holderConn != 0 || w.holderTxn == 0 || w.waiterTxn <= w.holderTxn {
		t.Fatalf("sql2's DATA_LOCK_WAITS row %+v: want the holder's transaction, and connection 0 (not sql2's)", w)
	}
	// A wait longer than the store's wait slice (1 s) leaves the store's
	// queue for a moment between slices: each view is polled.
	var state string
	waitFor(t, "sql2's process list shows its session waiting", func() bool {
		if err := db2.QueryRowContext(ctx, "SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = ?", waiterID).Scan(&state); err != nil {
			t.Fatalf("sql2's process list: %v", err)
		}
		return state == "waiting for row lock"
	}, func() string { return fmt.Sprintf("state %q", state) })

	// From the holding node: the same wait, with its own connection as
	// the holder's.
	want := lockWait{waiterTxn: seen2[0].waiterTxn, holderTxn: seen2[0].holderTxn, holderConn: holderID}
	var seen1 []lockWait
	waitFor(t, "sql1's DATA_LOCK_WAITS shows the wait for its session", func() bool {
		ws, err := lockWaitsOf(db1)
		if err != nil {
			t.Fatalf("DATA_LOCK_WAITS on sql1: %v", err)
		}
		seen1 = ws
		return len(ws) == 1 && ws[0] == want
	}, func() string { return fmt.Sprintf("%+v, want [%+v]", seen1, want) })
	var tx struct {
		LockWaits []struct {
			ConnID        uint32 `json:"conn_id"`
			StartTS       string `json:"start_ts"`
			HoldingConnID uint32 `json:"holding_conn_id"`
			HoldingTS     string `json:"holding_start_ts"`
		} `json:"lock_waits"`
	}
	waitFor(t, "sql1's console lists the wait", func() bool {
		if err := json.Unmarshal(getOK(t, c, sqlStatus, "/api/transactions"), &tx); err != nil {
			t.Fatal(err)
		}
		return len(tx.LockWaits) == 1 && uint64(tx.LockWaits[0].HoldingConnID) == holderID && tx.LockWaits[0].ConnID == 0 &&
			tx.LockWaits[0].HoldingTS == fmt.Sprint(want.holderTxn) && tx.LockWaits[0].StartTS == fmt.Sprint(want.waiterTxn)
	}, func() string {
		return fmt.Sprintf("%+v, want the wait for connection %d's transaction %d", tx.LockWaits, holderID, want.holderTxn)
	})

	// InnoDB's row lock counters, the KV nodes' summed, on a SQL node
	// (which has no store of its own).
	status := func(db *sql.DB, name string) (v uint64) {
		t.Helper()
		var n string
		if err := db.QueryRowContext(ctx, "SHOW STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
			t.Fatalf("SHOW STATUS LIKE '%s': %v", name, err)
		}
		return v
	}
	waitFor(t, "sql1's Innodb_row_lock_current_waits counts the wait", func() bool {
		return status(db1, "Innodb_row_lock_current_waits") == 1
	}, func() string { return "" })
	if n := status(db2, "Innodb_row_lock_waits"); n < 1 {
		t.Fatalf("sql2's Innodb_row_lock_waits = %d during a wait", n)
	}
	var metrics string
	waitFor(t, "sql1's /metrics counts the wait", func() bool {
		metrics = string(getOK(t, c, sqlStatus, "/metrics"))
		return strings.Contains(metrics, "\npercdb_kv_lock_waiting 1\n")
	}, func() string { return metrics })

	if _, err := holder.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the waiter after the holder's commit: %v", err)
	}
	if _, err := waiter.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := db1.QueryRowContext(ctx, "SELECT v FROM lw.t WHERE id = 1").Scan(&v); err != nil || v != 11 {
		t.Fatalf("v = %d (%v), want 11", v, err)
	}
	if ws, err := lockWaitsOf(db1); err != nil || len(ws) != 0 {
		t.Fatalf("DATA_LOCK_WAITS after both committed: %+v %v, want none", ws, err)
	}
}
