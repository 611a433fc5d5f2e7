package sql_test

import (
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// A range SELECT ... FOR UPDATE on the fast path (TPC-C's Delivery:
// the oldest new order of a district, ORDER BY the key's last column
// LIMIT 1) locks the rows it reads, which are the rows it returns, as
// GMS's path does: each scenario below runs with the fast path and
// without it (@percdb_fastpath = 0), and both must see the same thing.

// scanLockQuery reads the first row of a key prefix in key order.
const scanLockQuery = "SELECT id, v FROM ck WHERE w = ? AND d = ? ORDER BY id LIMIT 1 FOR UPDATE"

// scanLockOutcome is what one run of the scenarios observed.
type scanLockOutcome struct {
	first        string // the row the locking read returned
	otherWaited  string // a write of the next row: how it ended
	lockedWaited bool   // a write of the returned row waited
	afterDelete  string // the locking read after the first row's deletion
}

// TestFastPathScanForUpdateLocks checks the rows a range SELECT ... FOR
// UPDATE locks in a pessimistic transaction: the row it returns (a write
// of it waits for the commit), not the next one in the range (a write of
// it does not wait), and, when a concurrent commit deleted the row at the
// transaction's snapshot, the statement runs again at a newer snapshot
// and locks and returns the next row. Each scenario runs on the fast path
// and on GMS's, which must agree.
func TestFastPathScanForUpdateLocks(t *testing.T) {
	var outs [2]scanLockOutcome
	for i, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fastpath=%v", fast), func(t *testing.T) {
			outs[i] = scanLockScenario(t, fast)
		})
	}
	if outs[0] != outs[1] {
		t.Errorf("fast path %+v, GMS %+v", outs[0], outs[1])
	}
	want := scanLockOutcome{first: "1/10", otherWaited: "no wait", lockedWaited: true, afterDelete: "2/<nil>"}
	if outs[0] != want {
		t.Errorf("fast path %+v, want %+v", outs[0], want)
	}
}

func scanLockScenario(t *testing.T, fast bool) scanLockOutcome {
	a, b, status := forUpdateSetup(t)
	var out scanLockOutcome
	if !fast {
		if _, err := a.Exec("SET @percdb_fastpath = 0"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Exec("SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
		t.Fatal(err)
	}
	// Once outside a transaction: the fast path learns the result's
	// column definitions from GMS.
	if _, err := a.Exec(scanLockQuery, 1, 1); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		var id int
		var v sql.NullInt64
		if err := a.QueryRow(scanLockQuery, 1, 1).Scan(&id, &v); err != nil {
			return err.Error()
		}
		if !v.Valid {
			return fmt.Sprintf("%d/<nil>", id)
		}
		return fmt.Sprintf("%d/%d", id, v.Int64)
	}

	if _, err := a.Exec("BEGIN PESSIMISTIC"); err != nil {
		t.Fatal(err)
	}
	hits := serverStatus(t, status, "Percdb_fastpath_hits")
	out.first = read()
	if got := serverStatus(t, status, "Percdb_fastpath_hits"); fast != (got == hits+1) {
		t.Errorf("fast path %v: hits %d -> %d for the range SELECT ... FOR UPDATE", fast, hits, got)
	}
	// The next row of the range was not read: writing it does not wait
	// (a wait would end in 1205 after a second).
	out.otherWaited = "no wait"
	if _, err := b.Exec("UPDATE ck SET v = 20 WHERE w = 1 AND d = 1 AND id = 2"); err != nil {
		out.otherWaited = fmt.Sprintf("error %d", errCode(err))
	}
	if _, err := b.Exec("UPDATE ck SET v = NULL WHERE w = 1 AND d = 1 AND id = 2"); err != nil && out.otherWaited == "no wait" {
		out.otherWaited = fmt.Sprintf("error %d", errCode(err))
	}
	// The row returned was: a write of it waits for the commit.
	if _, err := b.Exec("SET SESSION innodb_lock_wait_timeout = 50"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec("UPDATE ck SET v = v + 1 WHERE w = 1 AND d = 1 AND id = 1")
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for waits := 0; waits == 0 && time.Now().Before(deadline); {
		select {
		case err := <-done:
			t.Errorf("the write of the row returned did not wait: %v", err)
			deadline = time.Time{}
			continue
		default:
		}
		if err := status.QueryRow("SELECT count(*) FROM information_schema.DATA_LOCK_WAITS").Scan(&waits); err != nil {
			t.Fatal(err)
		}
		out.lockedWaited = waits > 0
	}
	if _, err := a.Exec("COMMIT"); err != nil {
		t.Fatal(err)
	}
	if out.lockedWaited {
		if err := <-done; err != nil {
			t.Fatalf("the waiting write: %v", err)
		}
	}

	// A row deleted by a commit after the transaction's snapshot: the
	// lock meets the newer commit, the statement runs again at a newer
	// snapshot and returns the next row.
	if _, err := a.Exec("BEGIN PESSIMISTIC"); err != nil {
		t.Fatal(err)
	}
	var v sql.NullInt64
	if err := a.QueryRow("SELECT v FROM ck WHERE w = 2 AND d = 1 AND id = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Exec("DELETE FROM ck WHERE w = 1 AND d = 1 AND id = 1"); err != nil {
		t.Fatal(err)
	}
	out.afterDelete = read()
	if _, err := a.Exec("COMMIT"); err != nil {
		t.Fatal(err)
	}
	return out
}
