package cluster

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"testing"

	"github.com/percdb/percdb/tests/testproc"
)

// TestGCInCluster: the SQL node of a cluster of three KV nodes runs the
// garbage collector (gcworker over the KV nodes, pd deciding and keeping
// the safe point) with a one-second life time and run interval. A
// transaction opened before 30 updates of a row keeps reading its
// snapshot through several runs (the safe point stays below its
// start_ts: reads below the safe point fail with 9006); once it commits,
// the old versions are collected, and a dropped table's range is
// destroyed on every KV node (UnsafeDestroyRange to each); the row reads
// its last value.
func TestGCInCluster(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	db := openDB(t, c.sql.addr, "", true)
	ctx := context.Background()
	exec := func(q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, c.logs())
		}
	}
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)", "INSERT INTO d.t VALUES (1, 0)",
		"CREATE TABLE d.dropped (id INT PRIMARY KEY)", "INSERT INTO d.dropped VALUES (1), (2), (3)"} {
		exec(q)
	}
	long, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer long.Close()
	read := func(q *sql.Conn) (int, error) {
		var v int
		err := q.QueryRowContext(ctx, "SELECT v FROM d.t WHERE id = 1").Scan(&v)
		return v, err
	}
	if _, err := long.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if v, err := read(long); err != nil || v != 0 {
		t.Fatalf("the long transaction reads %d, %v", v, err)
	}
	for range 30 {
		exec("UPDATE d.t SET v = v + 1 WHERE id = 1")
	}
	exec("DROP TABLE d.dropped")
	status := func(name string) uint64 {
		t.Helper()
		var n string
		var v string
		if err := db.QueryRowContext(ctx, "SHOW STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
			t.Fatalf("status %s: %v", name, err)
		}
		u, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("status %s = %q", name, v)
		}
		return u
	}
	exec("SET GLOBAL percdb_gc_life_time = '1s'")
	exec("SET GLOBAL percdb_gc_run_interval = '1s'")
	runs := status("Percdb_gc_runs")
	why := func() string {
		return fmt.Sprintf("runs %d, failed %d\n%s", status("Percdb_gc_runs"), status("Percdb_gc_failed_runs"), c.logs())
	}
	waitFor(t, "three GC runs", func() bool { return status("Percdb_gc_runs") >= runs+3 }, why)
	if v, err := read(long); err != nil || v != 0 {
		t.Fatalf("after %d GC runs the long transaction reads %d, %v; want its snapshot's 0", status("Percdb_gc_runs")-runs, v, err)
	}
	if n := status("Percdb_gc_keys_deleted"); n >= 30 {
		t.Fatalf("%d versions collected while the long transaction could read them", n)
	}
	if _, err := long.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the old versions collected and the dropped table's range destroyed", func() bool {
		return status("Percdb_gc_keys_deleted") >= 30 && status("Percdb_gc_ranges_destroyed") >= 1
	}, why)
	var v int
	if err := db.QueryRowContext(ctx, "SELECT v FROM d.t WHERE id = 1").Scan(&v); err != nil || v != 30 {
		t.Fatalf("after GC v = %d, %v; want 30", v, err)
	}
	t.Logf("GC runs %d (failed %d), versions deleted %d, bytes reclaimed %d, ranges destroyed %d, safe point %d",
		status("Percdb_gc_runs"), status("Percdb_gc_failed_runs"), status("Percdb_gc_keys_deleted"), status("Percdb_gc_bytes_reclaimed"),
		status("Percdb_gc_ranges_destroyed"), status("Percdb_gc_safe_point"))
	c.stop()
}
