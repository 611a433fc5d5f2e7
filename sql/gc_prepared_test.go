package sql

import (
	"runtime"
	"testing"
)

// TestPreparedStatementsDoNotPinGC: GMS leaves the read-only transactions
// it opens to prepare a statement unfinished; they must not hold the GC
// safe point back beyond their reclamation.
func TestPreparedStatementsDoNotPinGC(t *testing.T) {
	srv, db := openInternal(t, t.TempDir(), "")
	p := srv.provider
	execAll(t, db, "CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY, k INT)", "INSERT INTO s.t VALUES (1, 1), (2, 2)")
	for i := 0; i < 5; i++ {
		if _, err := db.Exec("UPDATE s.t SET k = k + 1 WHERE id = ?", 1+i%2); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 100 && len(p.store.ActiveTxns()) != 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if n := len(p.store.ActiveTxns()); n != 0 {
		t.Fatalf("%d transactions still running after the statements and 100 collections", n)
	}
}
