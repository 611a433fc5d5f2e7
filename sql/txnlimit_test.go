package sql

import (
	"context"
	"strings"
	"testing"
)

// TestTxnSizeLimit: a statement that would take its transaction past
// percdb_txn_total_size_limit fails with error 8004 and the transaction
// keeps what it had; bad values are refused with 1231/1232.
func TestTxnSizeLimit(t *testing.T) {
	ctx := context.Background()
	_, db := openInternal(t, t.TempDir(), "")
	execAll(t, db, "CREATE DATABASE g", "CREATE TABLE g.t (id INT PRIMARY KEY, v VARCHAR(2000))")
	var v int64
	if err := db.QueryRow("SELECT @@global.percdb_txn_total_size_limit").Scan(&v); err != nil || v != 100<<20 {
		t.Fatalf("default limit %d, %v", v, err)
	}
	execAll(t, db, "SET GLOBAL percdb_txn_total_size_limit = 4096")
	defer execAll(t, db, "SET GLOBAL percdb_txn_total_size_limit = 104857600")
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "INSERT INTO g.t VALUES (1, REPEAT('a', 1000)), (2, REPEAT('b', 1000))"); err != nil {
		t.Fatal(err)
	}
	_, err = conn.ExecContext(ctx, "INSERT INTO g.t VALUES (3, REPEAT('c', 1000)), (4, REPEAT('d', 1000)), (5, REPEAT('e', 1000))")
	if mysqlErrNum(err) != 8004 || !strings.Contains(err.Error(), "Transaction is too large") {
		t.Fatalf("a statement past the limit: %v, want error 8004", err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM g.t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d rows committed, %v; want the 2 within the limit", n, err)
	}
	for _, bad := range []string{"'abc'", "-1", "100"} {
		if _, err := db.Exec("SET GLOBAL percdb_txn_total_size_limit = " + bad); mysqlErrNum(err) != 1231 && mysqlErrNum(err) != 1232 {
			t.Errorf("SET GLOBAL percdb_txn_total_size_limit = %s: %v, want 1231 or 1232", bad, err)
		}
	}
}
