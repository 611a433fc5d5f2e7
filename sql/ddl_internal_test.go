package sql

import (
	"context"
	dbsql "database/sql"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/ddljob"
	"github.com/percdb/percdb/txn"
)

// openInternal starts a server on dir for a test that reaches into its
// provider, and returns it with a connection pool to database db.
func openInternal(t testing.TB, dir, db string) (*Server, *dbsql.DB) {
	t.Helper()
	srv, err := Open(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: dir, KV: kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: -1}})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", srv.Addr().String(), db
	pool, err := dbsql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Close()
		if srv.provider != nil {
			_ = srv.Close()
			<-served
		}
	})
	return srv, pool
}

func execAll(t *testing.T, db *dbsql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// tableDefOf returns the committed definition of table name in database db.
func tableDefOf(t *testing.T, p *DatabaseProvider, db, name string) *catalog.TableDef {
	t.Helper()
	ctx := context.Background()
	k, err := p.store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = k.Rollback(ctx) }()
	c, err := p.catalogs.Load(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := c.Database(db)
	def, ok := c.Table(d.ID, name)
	if !ok {
		t.Fatalf("no table %s.%s", db, name)
	}
	return def
}

// TestCheckTableFindsInconsistencies: CHECK TABLE and ADMIN CHECK TABLE
// answer OK for a sound table and name the index and the row for a
// missing entry, a dangling entry and an entry with the wrong value.
func TestCheckTableFindsInconsistencies(t *testing.T) {
	srv, db := openInternal(t, t.TempDir(), "")
	execAll(t, db, "CREATE DATABASE c", "USE c",
		"CREATE TABLE t (id INT PRIMARY KEY, k INT, KEY ik (k))",
		"INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
	p := srv.provider
	def := tableDefOf(t, p, "c", "t")
	ixID := def.Indexes[0].ID
	entryKey := func(k, h int64) []byte {
		et := mustExecTable(t, p, "c", "t")
		key, _, _, err := executor.IndexEntry(et, et.Index(ixID), tablecodec.IntHandle(h), []any{int32(h), int32(k)})
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	mutate := func(fn func(k *txn.Txn) error) {
		ctx := context.Background()
		k, err := p.store.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := fn(k); err != nil {
			t.Fatal(err)
		}
		if err := k.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want string) {
		t.Helper()
		var name, op, typ, text string
		rs, err := db.Query("CHECK TABLE c.t")
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for rs.Next() {
			if err := rs.Scan(&name, &op, &typ, &text); err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, typ+": "+text)
		}
		rs.Close()
		got := strings.Join(msgs, "; ")
		if !strings.Contains(got, want) {
			t.Fatalf("CHECK TABLE: %q, want %q in it", got, want)
		}
		_, err = db.Exec("ADMIN CHECK TABLE c.t")
		if want == "status: OK" {
			if err != nil {
				t.Fatalf("ADMIN CHECK TABLE: %v", err)
			}
		} else if err == nil || !strings.Contains(err.Error(), "8223") {
			t.Fatalf("ADMIN CHECK TABLE: %v, want error 8223", err)
		}
	}
	check("status: OK")

	// A missing entry.
	mutate(func(k *txn.Txn) error { return k.Delete(entryKey(20, 2)) })
	check("row 2 (values [2 20]) has no entry")
	// A stale entry: the row's old value is indexed.
	mutate(func(k *txn.Txn) error {
		return k.Set(entryKey(99, 2), tablecodec.IndexValue(nil, false, false, tablecodec.IntHandle(2)))
	})
	check("the entry of row 2 does not match")
	// A dangling entry.
	mutate(func(k *txn.Txn) error {
		if err := k.Delete(entryKey(99, 2)); err != nil {
			return err
		}
		if err := k.Set(entryKey(20, 2), tablecodec.IndexValue(nil, false, false, tablecodec.IntHandle(2))); err != nil {
			return err
		}
		return k.Set(entryKey(40, 4), tablecodec.IndexValue(nil, false, false, tablecodec.IntHandle(4)))
	})
	check("points to row 4, which does not exist")
	mutate(func(k *txn.Txn) error { return k.Delete(entryKey(40, 4)) })
	check("status: OK")
	if _, err := db.Exec("CHECK TABLE c.nope"); err != nil {
		t.Fatalf("CHECK TABLE of a missing table answers rows, not an error: %v", err)
	}
	if _, err := db.Exec("ADMIN CHECK TABLE c.nope"); err == nil || !strings.Contains(err.Error(), "1146") {
		t.Fatalf("ADMIN CHECK TABLE of a missing table: %v, want 1146", err)
	}
}

// TestUnfinishedSchemaChangesRollBackAtOpen: a process that died in the
// middle of CREATE INDEX (the index write-only, half its entries written)
// and of a table rewrite (the fence up) leaves a store that the next open
// puts back as before the DDLs: the index and its entries gone, the fence
// lifted, and writes accepted.
func TestUnfinishedSchemaChangesRollBackAtOpen(t *testing.T) {
	dir := t.TempDir()
	srv, db := openInternal(t, dir, "")
	execAll(t, db, "CREATE DATABASE r", "USE r",
		"CREATE TABLE t (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE u (id INT PRIMARY KEY, k INT)",
		"INSERT INTO t VALUES (1, 10), (2, 20)",
		"INSERT INTO u VALUES (1, 10)")
	p := srv.provider
	ctx := context.Background()
	def := tableDefOf(t, p, "r", "t")
	var ixID int64
	if err := p.runSchemaStep(ctx, nil, func(c *catalog.Catalog, k *txn.Txn) error {
		nd := def.Clone()
		ixID = nd.NextIndexID
		nd.NextIndexID++
		nd.Indexes = append(nd.Indexes, catalog.IndexDef{ID: ixID, Name: "ik", Columns: []catalog.IndexColumnDef{{ColumnID: 2}}, State: catalog.StateWriteOnly})
		return putTableDef(c, k, nd)
	}); err != nil {
		t.Fatal(err)
	}
	// One row's entry backfilled, then the crash.
	if _, _, err := p.backfillBatch(ctx, mustExecTable(t, p, "r", "t"), mustExecTable(t, p, "r", "t").Index(ixID), tablecodec.RowKey(nil, def.ID, tablecodec.IntHandle(1)), tablecodec.RowKey(nil, def.ID, tablecodec.IntHandle(2))); err != nil {
		t.Fatal(err)
	}
	udef := tableDefOf(t, p, "r", "u")
	if err := p.runSchemaStep(ctx, nil, func(c *catalog.Catalog, k *txn.Txn) error {
		nd := udef.Clone()
		nd.Fence = "ALTER TABLE"
		return putTableDef(c, k, nd)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv.provider = nil

	srv2, db2 := openInternal(t, dir, "r")
	waitRangesDeleted(t, srv2.provider)
	after := tableDefOf(t, srv2.provider, "r", "t")
	if len(after.Indexes) != 0 {
		t.Fatalf("the unfinished index is still defined: %+v", after.Indexes)
	}
	start, end := tablecodec.IndexRange(def.ID, ixID)
	k, err := srv2.provider.store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := k.Iter(ctx, start, end)
	if err != nil {
		t.Fatal(err)
	}
	if it.Valid() {
		t.Fatalf("an entry of the unfinished index is left: %x", it.Key())
	}
	it.Close()
	_ = k.Rollback(ctx)
	if f := tableDefOf(t, srv2.provider, "r", "u").Fence; f != "" {
		t.Fatalf("fence still up after open: %q", f)
	}
	execAll(t, db2, "INSERT INTO u VALUES (2, 20)", "CREATE INDEX ik ON t (k)")
	var n int
	if err := db2.QueryRow("SELECT count(*) FROM t WHERE k = 20").Scan(&n); err != nil || n != 1 {
		t.Fatalf("index read after recovery: %d, %v", n, err)
	}
}

// mustExecTable returns the executor's description of a committed table.
func mustExecTable(t *testing.T, p *DatabaseProvider, db, name string) *executor.Table {
	t.Helper()
	m, err := p.metas.Get(gsql.NewEmptyContext(), db, tableDefOf(t, p, db, name))
	if err != nil {
		t.Fatal(err)
	}
	return m.Exec
}

// waitRangesDeleted waits until the range deleter has stamped every
// recorded range, and runs the garbage collector with a life time of 0,
// which destroys them (no transaction of the test is running).
func waitRangesDeleted(t *testing.T, p *DatabaseProvider) {
	t.Helper()
	sig := p.ranges.IdleSignal()
	p.ranges.Kick()
	select {
	case <-sig:
	case <-time.After(time.Minute):
		t.Fatal("the range deleter did not finish in a minute")
	}
	p.gc.settings.lifeTime.Store(0)
	if _, err := p.runGC(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// waitRangeEmpty runs waitRangesDeleted until [start, end) holds no key
// and returns the keys left, after a minute at most: a background
// transaction of the server (the statistics cache's refresh, a schema
// change's last step) that runs while the collector decides its safe
// point holds the point below the range's deletion, and the next run
// destroys it.
func waitRangeEmpty(t *testing.T, p *DatabaseProvider, start, end []byte) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		waitRangesDeleted(t, p)
		n := keysIn(t, p, start, end)
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keysIn counts the keys of [start, end) at a fresh snapshot.
func keysIn(t *testing.T, p *DatabaseProvider, start, end []byte) int {
	t.Helper()
	ctx := context.Background()
	k, err := p.store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = k.Rollback(ctx) }()
	n, err := countRange(ctx, k, start, end)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDroppedDataIsDeletedAfterCommit: DROP TABLE, DROP INDEX, DROP
// DATABASE and a table rewrite leave their data to the range deleter,
// which deletes it after the DDL, also when the process stopped before it
// could (the records survive a restart).
func TestDroppedDataIsDeletedAfterCommit(t *testing.T) {
	dir := t.TempDir()
	srv, db := openInternal(t, dir, "")
	execAll(t, db, "CREATE DATABASE g", "USE g",
		"CREATE TABLE a (id INT PRIMARY KEY, k INT, KEY ik (k))",
		"CREATE TABLE b (id INT PRIMARY KEY, k INT, KEY ik (k))",
		"CREATE TABLE c (id INT PRIMARY KEY, k INT)",
		"INSERT INTO a VALUES (1, 1), (2, 2)", "INSERT INTO b VALUES (1, 1), (2, 2)", "INSERT INTO c VALUES (1, 1)")
	p := srv.provider
	a, b, c := tableDefOf(t, p, "g", "a"), tableDefOf(t, p, "g", "b"), tableDefOf(t, p, "g", "c")
	execAll(t, db, "DROP TABLE a", "DROP INDEX ik ON b", "ALTER TABLE c ADD COLUMN z INT DEFAULT 3")
	for name, r := range map[string][2][]byte{
		"dropped table":   rangeOf(tablecodec.TableRange(a.ID)),
		"dropped index":   rangeOf(tablecodec.IndexRange(b.ID, b.Indexes[0].ID)),
		"rewritten table": rangeOf(tablecodec.TableRange(c.ID)),
	} {
		if n := waitRangeEmpty(t, p, r[0], r[1]); n != 0 {
			t.Fatalf("%s: %d keys left", name, n)
		}
	}
	if n := keysIn(t, p, ddljob.RangesPrefix, tablecodec.PrefixNext(ddljob.RangesPrefix)); n != 0 {
		t.Fatalf("%d delete-range records left", n)
	}
	var rows int
	if err := db.QueryRow("SELECT count(*) FROM b").Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("rows of b after DROP INDEX: %d, %v", rows, err)
	}

	// A record the process had no time to act on is acted on at the
	// next start.
	b = tableDefOf(t, p, "g", "b")
	ctx := context.Background()
	k, err := p.store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ddljob.ScheduleTable(k, b, "test"); err != nil {
		t.Fatal(err)
	}
	if err := k.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	srv.stopBackground() // as if the process stopped before the deleter ran
	srv.background.Wait()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv.provider = nil
	srv2, _ := openInternal(t, dir, "g")
	start, end := tablecodec.TableRange(b.ID)
	if n := waitRangeEmpty(t, srv2.provider, start, end); n != 0 {
		t.Fatalf("after restart: %d keys of the scheduled range left", n)
	}
}

func rangeOf(start, end []byte) [2][]byte { return [2][]byte{start, end} }
