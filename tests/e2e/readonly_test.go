package e2e

import (
	"context"
	"reflect"
	"testing"
)

// A write inside START TRANSACTION READ ONLY fails with MySQL's 1792 and
// the connection goes on serving; reads in it work. (GMS v0.20.0 panicked
// here for tables that are not sql.TemporaryTable, dropping the connection.)
func TestReadOnlyTransactionRefusesWrites(t *testing.T) {
	s := startServer(t, "")
	db := s.Open("")
	mustExec(t, db,
		"CREATE DATABASE ro",
		"CREATE TABLE ro.t (id INT PRIMARY KEY, v INT)",
		"INSERT INTO ro.t VALUES (1, 10)",
	)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	mustExec(t, conn, "START TRANSACTION READ ONLY")
	for _, stmt := range []string{
		"INSERT INTO ro.t VALUES (2, 20)",
		"UPDATE ro.t SET v = 11 WHERE id = 1",
		"DELETE FROM ro.t WHERE id = 1",
	} {
		_, err := conn.ExecContext(ctx, stmt)
		wantError(t, err, 1792, "")
	}
	if got := queryRows(t, conn, "SELECT id, v FROM ro.t"); !reflect.DeepEqual(got, [][]string{{"1", "10"}}) {
		t.Fatalf("read in the READ ONLY transaction = %v", got)
	}
	mustExec(t, conn, "COMMIT")
	mustExec(t, conn, "UPDATE ro.t SET v = 12 WHERE id = 1")
	if got := queryRows(t, conn, "SELECT v FROM ro.t WHERE id = 1"); !reflect.DeepEqual(got, [][]string{{"12"}}) {
		t.Fatalf("after COMMIT = %v", got)
	}
}
