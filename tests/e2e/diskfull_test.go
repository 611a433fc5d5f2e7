package e2e

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/internal/testdisk"
	"github.com/percdb/percdb/kv"
	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/sql/sqltest"
)

// TestDiskFull fills a small file system under a node and checks issue
// 22's points: a write fails at once with 1021 naming the data directory,
// nothing acknowledged is lost, reads, DELETE, TRUNCATE and DROP go on,
// freed space brings writes back without a restart, and every
// acknowledged row is there after a restart. It mounts a 64 MiB tmpfs,
// so it needs root; elsewhere it skips.
func TestDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	mnt := testdisk.Mount(t, "64m")
	// Another program's file: deleting it is how space comes back (the
	// store reclaims deleted rows' space only once MVCC garbage
	// collection exists, issue 16).
	other := filepath.Join(mnt, "other-program.dat")
	if err := os.WriteFile(other, make([]byte, 16<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := percsql.Config{DataDir: filepath.Join(mnt, "data"), KV: kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: 6 << 20}, StatusAddr: "127.0.0.1:0"}
	srv := sqltest.StartConfig(t, cfg)
	db := srv.Open("")
	db.SetMaxOpenConns(2)
	mustExec(t, db, "CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY, pad VARCHAR(2100))", "CREATE TABLE f.small (id INT PRIMARY KEY)", "INSERT INTO f.small VALUES (1), (2), (3)", "CREATE TABLE f.scratch (id INT PRIMARY KEY)", "INSERT INTO f.scratch VALUES (1)")

	insert := randomRowInserter(db, "f.t")
	acked := 0
	var fullErr error
	for acked < 100_000 { // 100,000 rows are 200 MiB: far more than the disk
		if fullErr = insert(acked, 100); fullErr != nil {
			break
		}
		acked += 100
	}
	if code, _ := mysqlErrorCode(fullErr); code != 1021 || !strings.Contains(fullErr.Error(), cfg.DataDir) {
		t.Fatalf("after %d rows: %v; want error 1021 naming %s", acked, fullErr, cfg.DataDir)
	}
	t.Logf("disk full after %d acknowledged rows: %v", acked, fullErr)

	// Writes keep failing at once, in autocommit and in a transaction
	// (whose COMMIT fails and leaves nothing).
	if code, _ := mysqlErrorCode(insert(acked, 1)); code != 1021 {
		t.Fatalf("a second insert on a full disk: want 1021")
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec("INSERT INTO f.t VALUES (?, 'in a transaction')", acked+1)
	if err == nil {
		err = tx.Commit()
	} else {
		_ = tx.Rollback()
	}
	if code, _ := mysqlErrorCode(err); code != 1021 {
		t.Fatalf("a transaction's insert on a full disk: %v, want 1021", err)
	}
	// /metrics counts the refusals and says the disk is full.
	if n := statusMetric(t, srv, `percdb_disk_writes_refused_total{reason="full"}`); n < 3 {
		t.Errorf("percdb_disk_writes_refused_total{reason=\"full\"} = %v after 3 refused writes", n)
	}
	if n := statusMetric(t, srv, "percdb_disk_full"); n != 1 {
		t.Errorf("percdb_disk_full = %v on the full disk", n)
	}
	// Reads answer; nothing acknowledged is lost, nothing refused is there.
	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if n := count("SELECT count(*) FROM f.t"); n != acked {
		t.Fatalf("rows after the disk filled: %d, want the %d acknowledged", n, acked)
	}
	// DELETE, TRUNCATE and DROP work on the full disk.
	mustExec(t, db, "DELETE FROM f.small WHERE id = 1", "TRUNCATE TABLE f.small", "DROP TABLE f.scratch")
	if n := count("SELECT count(*) FROM f.small"); n != 0 {
		t.Fatalf("f.small after TRUNCATE: %d rows", n)
	}

	// Space comes back: writes are accepted again without a restart.
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	var err2 error
	for try := 0; try < 300; try++ {
		if err2 = insert(acked, 1); err2 == nil {
			acked++
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err2 != nil {
		t.Fatalf("writes after space was freed: %v", err2)
	}

	// Every acknowledged row survives a restart.
	srv.Stop()
	srv = sqltest.StartConfig(t, cfg)
	db = srv.Open("")
	if n := count("SELECT count(*) FROM f.t"); n != acked {
		t.Fatalf("rows after the restart: %d, want %d", n, acked)
	}
	var dummy sql.NullString
	if err := db.QueryRow("SELECT pad FROM f.t WHERE id = ?", acked-1).Scan(&dummy); err != nil || !dummy.Valid {
		t.Fatalf("the last acknowledged row after the restart: %v", err)
	}
}

// TestDiskFullDropGivesSpaceBack: on a disk filled by one table, with
// nothing else to delete, DROP TABLE and the garbage collector give the
// space back, and writes are accepted again without a restart. The drop's
// range must be stamped for deletion on the full disk (a stamp adds a few
// bytes; a store that refused it would never reclaim the table).
func TestDiskFullDropGivesSpaceBack(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	mnt := testdisk.Mount(t, "64m")
	cfg := percsql.Config{DataDir: filepath.Join(mnt, "data"), KV: kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: 6 << 20}}
	srv := sqltest.StartConfig(t, cfg)
	db := srv.Open("")
	db.SetMaxOpenConns(2)
	mustExec(t, db, "CREATE DATABASE f", "CREATE TABLE f.big (id INT PRIMARY KEY, pad VARCHAR(2100))", "CREATE TABLE f.small (id INT PRIMARY KEY)")

	insert := randomRowInserter(db, "f.big")
	var err error
	rows := 0
	// A compaction that finishes after the disk filled deletes its
	// inputs and may bring the free space back to twice the reserve,
	// which ends the full state as it should: then the disk is filled
	// again, a few times at most.
	for fills := 0; ; fills++ {
		for ; rows < 100_000; rows += 100 {
			if err = insert(rows, 100); err != nil {
				break
			}
		}
		if code, _ := mysqlErrorCode(err); code != 1021 {
			t.Fatalf("after %d rows: %v; want error 1021", rows, err)
		}
		_, err = db.Exec("INSERT INTO f.small VALUES (1)")
		if err != nil {
			break
		}
		if fills == 5 {
			t.Fatal("an insert into another table on the full disk was accepted, after 5 fills")
		}
		t.Logf("space came back after %d rows (a compaction's inputs deleted): filling again", rows)
		mustExec(t, db, "DELETE FROM f.small WHERE id = 1")
	}
	if code, _ := mysqlErrorCode(err); code != 1021 {
		t.Fatalf("an insert into another table on the full disk: %v; want 1021", err)
	}

	// Drop the table that filled the disk and let GC run every second
	// with a life time of a second.
	mustExec(t, db, "DROP TABLE f.big", "SET GLOBAL percdb_gc_life_time = '1s'", "SET GLOBAL percdb_gc_run_interval = '1s'")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err = db.Exec("INSERT INTO f.small VALUES (1)")
		if err == nil {
			break
		}
		if code, _ := mysqlErrorCode(err); code != 1021 || time.Now().After(deadline) {
			t.Fatalf("writes after DROP TABLE and GC: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM f.small").Scan(&n); err != nil || n != 1 {
		t.Fatalf("f.small: %d rows, %v", n, err)
	}
}

// randomRowInserter returns a function that inserts n rows (id, pad) with
// ids from..from+n-1 and random (incompressible) 2 KB pads into table in
// one statement.
func randomRowInserter(db *sql.DB, table string) func(from, n int) error {
	return func(from, n int) error { return testdisk.InsertRandomRows(db, table, from, n) }
}

// loadRandomRows inserts rows rows of 2 KB incompressible pads into
// table, 100 at a time.
func loadRandomRows(t *testing.T, db *sql.DB, table string, rows int) {
	t.Helper()
	insert := randomRowInserter(db, table)
	for i := 0; i < rows; i += 100 {
		if err := insert(i, 100); err != nil {
			t.Fatalf("loading %s at row %d: %v", table, i, err)
		}
	}
}

// countRows returns SELECT count(*) of table.
func countRows(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// TestDiskFullDuringLargeTransaction: an INSERT ... SELECT six times
// larger than the space left above the reserve (so that no recycling of
// Pebble's log can let it fit) fails with 1021 during its prewrite,
// within the test's deadline, and nothing of it is visible or left
// locked: the target table reads empty, at once, and its keys take
// writes; once space is freed a copy of the source commits every row,
// and every row is there after a restart.
//
// The source table is on disk (flushed by a restart) before the disk
// fills, so that the copy's flushes meet a compaction of the source's
// level-0 files larger than the released ballast: before compactions
// waited for room (kv/compactgate.go) and the reserve covered Pebble's
// flushes (kv.minReserveSpace), that compaction failed for space again
// and again, every flush beside it failed too, and the statement hung in
// Pebble's write stall (issue 22; with a 6 MiB reserve and the gate
// alone it still hung in 2 runs of 11). Until the reserve counted the
// prewrites admitted but still queued in Pebble's commit pipeline
// (kv/space.go), the statement was admitted whole, the disk filled past
// the ballast, and the test failed in 10 of 80 loaded runs, 2 of them
// hung on the latches of a write held in the stall (kv/writestall.go now
// ends such waits with 1021).
func TestDiskFullDuringLargeTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	mnt := testdisk.Mount(t, "128m")
	cfg := percsql.Config{DataDir: filepath.Join(mnt, "data"), KV: kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: 13 << 20}}
	srv := sqltest.StartConfig(t, cfg)
	db := srv.Open("")
	db.SetMaxOpenConns(2)
	mustExec(t, db, "CREATE DATABASE f", "CREATE TABLE f.src (id INT PRIMARY KEY, pad VARCHAR(2100))", "CREATE TABLE f.dst (id INT PRIMARY KEY, pad VARCHAR(2100))")
	const rows = 12000 // 24 MiB of incompressible pads
	loadRandomRows(t, db, "f.src", rows)
	// A restart flushes the source's memtables to level-0 files.
	srv.Stop()
	srv = sqltest.StartConfig(t, cfg)
	db = srv.Open("")
	db.SetMaxOpenConns(2)
	// Leave 8 MiB above the reserve. The statement below copies f.src
	// twice, 48 MiB: more than the space left, the released ballast and
	// f.src's 24 MiB of level-0 files together, which a compaction that
	// ran at the restart may still be deleting.
	other := testdisk.FillLeaving(t, mnt, 21<<20)

	var err error
	testdisk.WithinDeadline(t, mnt, "INSERT ... SELECT on a full disk", func() {
		_, err = db.Exec("INSERT INTO f.dst SELECT * FROM f.src UNION ALL SELECT id + 100000, pad FROM f.src")
	})
	if code, _ := mysqlErrorCode(err); code != 1021 {
		t.Fatalf("INSERT ... SELECT of %d rows into the space left: %v, want 1021", 2*rows, err)
	}
	// Nothing of the failed statement is visible, and nothing it
	// prewrote blocks a reader or a writer of its keys.
	testdisk.WithinDeadline(t, mnt, "reads and a delete after the failed statement", func() {
		if n := countRows(t, db, "f.dst"); n != 0 {
			t.Errorf("f.dst after the failed INSERT ... SELECT: %d rows, want 0", n)
		}
		if n := countRows(t, db, "f.src"); n != rows {
			t.Errorf("f.src after the failed INSERT ... SELECT: %d rows, want %d", n, rows)
		}
		mustExec(t, db, "DELETE FROM f.dst WHERE id = 1")
	})

	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	var err2 error
	testdisk.WithinDeadline(t, mnt, "INSERT ... SELECT after space was freed", func() {
		for try := 0; try < 300; try++ {
			if _, err2 = db.Exec("INSERT INTO f.dst SELECT * FROM f.src"); err2 == nil {
				break
			}
			if code, _ := mysqlErrorCode(err2); code != 1021 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err2 != nil {
		t.Fatalf("INSERT ... SELECT after space was freed: %v", err2)
	}
	if n := countRows(t, db, "f.dst"); n != rows {
		t.Fatalf("f.dst after the second INSERT ... SELECT: %d rows, want %d", n, rows)
	}
	// Every acknowledged row survives a restart.
	srv.Stop()
	srv = sqltest.StartConfig(t, cfg)
	db = srv.Open("")
	if n := countRows(t, db, "f.dst"); n != rows {
		t.Fatalf("f.dst after a restart: %d rows, want %d", n, rows)
	}
}

// TestDiskFullDuringBackfill: CREATE INDEX whose backfill fills the disk
// fails with 1021 and leaves no index behind (information_schema,
// CHECK TABLE); the table reads on, and writes once space is freed.
func TestDiskFullDuringBackfill(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	mnt := testdisk.Mount(t, "64m")
	cfg := percsql.Config{DataDir: filepath.Join(mnt, "data"), KV: kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: 13 << 20}}
	srv := sqltest.StartConfig(t, cfg)
	db := srv.Open("")
	db.SetMaxOpenConns(2)
	mustExec(t, db, "CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY, pad VARCHAR(2100))")
	const rows = 4000 // 8 MiB of incompressible pads
	loadRandomRows(t, db, "f.t", rows)
	// Half a MiB above the reserve (13 MiB): the backfill's first batches
	// fill it.
	other := testdisk.FillLeaving(t, mnt, 27<<19)

	// Each entry of an index on pad(700) holds 700 bytes of it.
	_, err := db.Exec("CREATE INDEX p ON f.t (pad(700))")
	if code, _ := mysqlErrorCode(err); code != 1021 {
		t.Fatalf("CREATE INDEX into the space left: %v, want 1021", err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'f' AND TABLE_NAME = 't' AND INDEX_NAME = 'p'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("index p after its CREATE INDEX failed: %d rows in STATISTICS (%v), want none", n, err)
	}
	if n := countRows(t, db, "f.t"); n != rows {
		t.Fatalf("f.t after the failed CREATE INDEX: %d rows, want %d", n, rows)
	}

	// The batches the backfill committed before the disk filled go with
	// the index's range once GC passes the failure: shorten its wait, as
	// docs/reliability.md tells an operator to.
	mustExec(t, db, "SET GLOBAL percdb_gc_life_time = '1s'", "SET GLOBAL percdb_gc_run_interval = '1s'")
	// Space freed brings writes back; the failed backfill's entries are
	// not in the table's reads.
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	var err2 error
	for try := 0; try < 300; try++ {
		if _, err2 = db.Exec("INSERT INTO f.t VALUES (-1, 'after')"); err2 == nil {
			break
		}
		if code, _ := mysqlErrorCode(err2); code != 1021 {
			t.Fatalf("an insert after space was freed: %v", err2)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err2 != nil {
		t.Fatalf("an insert after space was freed: %v", err2)
	}
	var table, op, msgType, msg string
	if err := db.QueryRow("CHECK TABLE f.t").Scan(&table, &op, &msgType, &msg); err != nil || msg != "OK" {
		t.Fatalf("CHECK TABLE f.t after the failed CREATE INDEX: %s %s (%v)", msgType, msg, err)
	}
	if n := countRows(t, db, "f.t"); n != rows+1 {
		t.Fatalf("f.t after the insert: %d rows, want %d", n, rows+1)
	}
}

// TestReadOnlyDataDirectory: a data directory on a read-only file system
// fails the start with an error naming the directory and the cause,
// rather than starting a node that cannot write.
func TestReadOnlyDataDirectory(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m,ro", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	dir := filepath.Join(mnt, "data")
	srv, err := percsql.Open(context.Background(), percsql.Config{DataDir: dir, Addr: "127.0.0.1:0"})
	if err == nil {
		_ = srv.Close()
		t.Fatal("a node started on a read-only file system")
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "read-only file system") {
		t.Fatalf("start on a read-only file system: %v; want an error naming %s and the cause", err, dir)
	}
}

// statusMetric reads one sample of the server's /metrics, named as the
// text format prints it (name{labels}); the test fails when it is absent.
func statusMetric(t *testing.T, srv *sqltest.Server, sample string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + srv.Percdb().StatusAddr().String() + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("/metrics line %q: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("/metrics has no %s", sample)
	return 0
}
