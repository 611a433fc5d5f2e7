package sql

import (
	"context"
	dbsql "database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
)

// statusValue returns a SHOW STATUS row's value.
func statusValue(t *testing.T, db *dbsql.DB, name string) string {
	t.Helper()
	var n, v string
	if err := db.QueryRow("SHOW STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
		t.Fatalf("SHOW STATUS LIKE %s: %v", name, err)
	}
	return v
}

// TestGCVariables: percdb_gc_life_time, percdb_gc_run_interval and
// percdb_gc_max_wait_time take
// TiDB's duration syntax, are shown normalized, refuse bad values with
// MySQL error 1231 and a session scope with 1229, and survive a restart.
func TestGCVariables(t *testing.T) {
	dir := t.TempDir()
	srv, db := openInternal(t, dir, "")
	var v string
	if err := db.QueryRow("SELECT @@global.percdb_gc_run_interval").Scan(&v); err != nil || v != "10m0s" {
		t.Fatalf("default run interval %q, %v", v, err)
	}
	if err := db.QueryRow("SELECT @@global.percdb_gc_max_wait_time").Scan(&v); err != nil || v != "24h0m0s" {
		t.Fatalf("default max wait time %q, %v", v, err)
	}
	execAll(t, db, "SET GLOBAL percdb_gc_life_time = '90s'", "SET GLOBAL percdb_gc_run_interval = '1h'", "SET GLOBAL percdb_gc_max_wait_time = '2h'")
	if err := db.QueryRow("SELECT @@global.percdb_gc_life_time").Scan(&v); err != nil || v != "1m30s" {
		t.Fatalf("life time after SET: %q, %v", v, err)
	}
	if st := srv.provider.gc.settings.get(); st.LifeTime != 90*time.Second || st.RunInterval != time.Hour || st.MaxTxnWait != 2*time.Hour {
		t.Fatalf("settings in force: %+v", st)
	}
	for _, bad := range []string{"'abc'", "'0s'", "'-5m'", "'10'", "5", "'9000h'"} {
		_, err := db.Exec("SET GLOBAL percdb_gc_life_time = " + bad)
		if mysqlErrNum(err) != 1231 {
			t.Errorf("SET GLOBAL percdb_gc_life_time = %s: %v, want error 1231", bad, err)
		}
	}
	if _, err := db.Exec("SET SESSION percdb_gc_life_time = '20m'"); mysqlErrNum(err) != 1229 {
		t.Errorf("SET SESSION: %v, want error 1229", err)
	}
	if st := srv.provider.gc.settings.get(); st.LifeTime != 90*time.Second {
		t.Fatalf("a refused value changed the setting: %+v", st)
	}
	db.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv.provider = nil // the cleanup of openInternal closes it otherwise
	srv2, db2 := openInternal(t, dir, "")
	if st := srv2.provider.gc.settings.get(); st.LifeTime != 90*time.Second || st.RunInterval != time.Hour || st.MaxTxnWait != 2*time.Hour {
		t.Fatalf("settings after a restart: %+v", st)
	}
	if err := db2.QueryRow("SELECT @@global.percdb_gc_life_time").Scan(&v); err != nil || v != "1m30s" {
		t.Fatalf("life time after a restart: %q, %v", v, err)
	}
}

// TestGCOfAnUpdatedTable: a table updated many times keeps only the
// versions the safe point needs. An open transaction holds the safe point
// back and reads its snapshot unchanged; once it has run longer than the
// GC's wait for it, GC passes it and its next read fails with error 9006
// instead of answering from collected data. SHOW STATUS shows the runs.
func TestGCOfAnUpdatedTable(t *testing.T) {
	ctx := context.Background()
	srv, db := openInternal(t, t.TempDir(), "")
	p := srv.provider
	execAll(t, db, "CREATE DATABASE g", "CREATE TABLE g.t (id INT PRIMARY KEY, v INT, KEY iv (v))",
		"INSERT INTO g.t VALUES (1, 0), (2, 0), (3, 0)")
	for i := 1; i <= 20; i++ {
		execAll(t, db, fmt.Sprintf("UPDATE g.t SET v = %d", i))
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sum := func(q string) (int, error) {
		var n int
		err := conn.QueryRowContext(ctx, q).Scan(&n)
		return n, err
	}
	for _, s := range []string{"USE g", "BEGIN"} {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := sum("SELECT sum(v) FROM t"); err != nil || n != 60 {
		t.Fatalf("snapshot sum %d, %v", n, err)
	}
	for i := 21; i <= 30; i++ {
		execAll(t, db, fmt.Sprintf("UPDATE g.t SET v = %d", i))
	}
	p.gc.settings.lifeTime.Store(0)
	if _, err := p.runGC(ctx); err != nil {
		t.Fatal(err)
	}
	deleted := p.gc.worker.Stats().VersionsDeleted
	// 19 old row versions of each of 3 rows below the open transaction,
	// and their index entries' deletions and puts (per update one entry
	// deleted, one written).
	if deleted < 3*19 {
		t.Fatalf("GC deleted %d versions, want at least %d", deleted, 3*19)
	}
	if n, err := sum("SELECT sum(v) FROM t"); err != nil || n != 60 {
		t.Fatalf("the open transaction's sum after GC: %d, %v; want 60", n, err)
	}
	if n, err := sum("SELECT count(*) FROM t WHERE v = 20"); err != nil || n != 3 {
		t.Fatalf("the open transaction's index read after GC: %d, %v; want 3", n, err)
	}
	var latest int
	if err := db.QueryRow("SELECT sum(v) FROM g.t").Scan(&latest); err != nil || latest != 90 {
		t.Fatalf("latest sum %d, %v", latest, err)
	}
	if got := statusValue(t, db, "Percdb_gc_keys_deleted"); got != fmt.Sprint(deleted) {
		t.Fatalf("Percdb_gc_keys_deleted %s, want %d", got, deleted)
	}
	// The transaction has run longer than GC waits for one (as after SET
	// GLOBAL percdb_gc_max_wait_time, whose smallest value is a second).
	p.gc.settings.maxTxnWait.Store(int64(time.Nanosecond))
	sp, err := p.runGC(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sum("SELECT sum(v) FROM t")
	if mysqlErrNum(err) != 9006 || !strings.Contains(err.Error(), "GC life time is shorter than transaction duration") {
		t.Fatalf("a read below the safe point: %v, want error 9006", err)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if n, err := sum("SELECT sum(v) FROM t"); err != nil || n != 90 {
		t.Fatalf("a new transaction's sum: %d, %v; want 90", n, err)
	}
	if got := statusValue(t, db, "Percdb_gc_safe_point"); got != fmt.Sprint(sp) {
		t.Fatalf("Percdb_gc_safe_point %s, want %d", got, sp)
	}
	if got := statusValue(t, db, "Percdb_gc_last_run"); got == "0" {
		t.Fatal("Percdb_gc_last_run is 0 after runs")
	}
}

// TestDropTableIsDestroyedByGC: DROP TABLE returns without touching the
// rows; its range is destroyed by GC once the safe point passes the DROP,
// not before (an open transaction older than the DROP still reads the
// table's rows until it ends).
func TestDropTableIsDestroyedByGC(t *testing.T) {
	ctx := context.Background()
	srv, db := openInternal(t, t.TempDir(), "")
	p := srv.provider
	execAll(t, db, "CREATE DATABASE g", "CREATE TABLE g.t (id INT PRIMARY KEY, v VARCHAR(300))")
	for i := 0; i < 10; i++ {
		execAll(t, db, fmt.Sprintf("INSERT INTO g.t VALUES (%d, REPEAT('x', 300))", i))
	}
	def := tableDefOf(t, p, "g", "t")
	old, err := p.store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start, end := tablecodec.TableRange(def.ID)
	countOld := func() int {
		n, err := countRange(ctx, old, start, end)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := countOld(); n != 10 {
		t.Fatalf("%d rows before the drop", n)
	}
	execAll(t, db, "DROP TABLE g.t")
	sig := p.ranges.IdleSignal()
	p.ranges.Kick()
	<-sig
	p.gc.settings.lifeTime.Store(0)
	if _, err := p.runGC(ctx); err != nil {
		t.Fatal(err)
	}
	if n := keysIn(t, p, start, end); n != 10 {
		t.Fatalf("%d keys of the dropped table before GC destroyed them, want the 10 rows untouched", n)
	}
	if n := countOld(); n != 10 || p.gc.worker.Stats().RangesDestroyed != 0 {
		t.Fatalf("while a transaction older than the DROP runs: %d rows, %d ranges destroyed", n, p.gc.worker.Stats().RangesDestroyed)
	}
	_ = old.Rollback(ctx)
	if _, err := p.runGC(ctx); err != nil {
		t.Fatal(err)
	}
	if st := p.gc.worker.Stats(); st.RangesDestroyed != 1 {
		t.Fatalf("%d ranges destroyed after the safe point passed the DROP", st.RangesDestroyed)
	}
	if n := keysIn(t, p, start, end); n != 0 {
		t.Fatalf("%d keys of the dropped table left", n)
	}
	if got := statusValue(t, db, "Percdb_gc_ranges_destroyed"); got != "1" {
		t.Fatalf("Percdb_gc_ranges_destroyed %s", got)
	}
}

// TestTruncateTableIsDestroyedByGC: TRUNCATE TABLE gives the table a new
// ID at once (the rows are gone, AUTO_INCREMENT starts over, the indexes
// work) and leaves the old rows to GC's range deletion.
func TestTruncateTableIsDestroyedByGC(t *testing.T) {
	srv, db := openInternal(t, t.TempDir(), "")
	p := srv.provider
	execAll(t, db, "CREATE DATABASE g", "CREATE TABLE g.t (id INT AUTO_INCREMENT PRIMARY KEY, k INT, UNIQUE KEY uk (k))",
		"INSERT INTO g.t (k) VALUES (10), (20), (30)")
	old := tableDefOf(t, p, "g", "t")
	res, err := db.Exec("TRUNCATE TABLE g.t")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 0 {
		t.Fatalf("TRUNCATE reported %d rows affected, %v; MySQL reports 0", n, err)
	}
	if cur := tableDefOf(t, p, "g", "t"); cur.ID == old.ID {
		t.Fatalf("the table kept its ID %d", cur.ID)
	}
	execAll(t, db, "INSERT INTO g.t (k) VALUES (20)")
	var id, n int
	if err := db.QueryRow("SELECT id FROM g.t WHERE k = 20").Scan(&id); err != nil || id != 1 {
		t.Fatalf("after TRUNCATE: id %d, %v; want AUTO_INCREMENT from 1 and the unique key free", id, err)
	}
	if err := db.QueryRow("SELECT count(*) FROM g.t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows after TRUNCATE and one insert, %v", n, err)
	}
	start, end := tablecodec.TableRange(old.ID)
	if n := keysIn(t, p, start, end); n == 0 {
		t.Fatal("the old rows were deleted by TRUNCATE itself")
	}
	waitRangesDeleted(t, p)
	if n := keysIn(t, p, start, end); n != 0 {
		t.Fatalf("%d keys of the truncated rows left after GC", n)
	}
}
