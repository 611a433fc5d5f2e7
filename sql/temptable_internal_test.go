package sql

import (
	"context"
	"testing"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
)

// TestTemporaryTableDataIsDeleted: the rows of a temporary table are
// deleted when its session ends, and those a process left registered at
// its next start.
func TestTemporaryTableDataIsDeleted(t *testing.T) {
	dir := t.TempDir()
	srv, db := openInternal(t, dir, "")
	execAll(t, db, "CREATE DATABASE g")
	p := srv.provider
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"USE g", "CREATE TEMPORARY TABLE tt (id INT PRIMARY KEY, k INT, KEY (k))", "INSERT INTO tt VALUES (1, 1), (2, 2)"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	regs := tablecodec.PrefixNext(prefixTempTables)
	if n := keysIn(t, p, prefixTempTables, regs); n != 1 {
		t.Fatalf("%d temporary tables registered, want 1", n)
	}
	id := registeredTempTable(t, p)
	start, end := tablecodec.TableRange(id)
	if n := keysIn(t, p, start, end); n != 4 {
		t.Fatalf("%d keys of the temporary table, want 4 (2 rows, 2 index entries)", n)
	}
	// A column change moves the rows to a new table ID; the old one goes.
	if _, err := conn.ExecContext(ctx, "ALTER TABLE tt ADD COLUMN z INT DEFAULT 1"); err != nil {
		t.Fatal(err)
	}
	if n := waitRangeEmpty(t, p, start, end); n != 0 {
		t.Fatalf("%d keys of the temporary table left after its rewrite", n)
	}
	if n := keysIn(t, p, prefixTempTables, regs); n != 1 {
		t.Fatalf("%d temporary tables registered after a rewrite, want 1", n)
	}
	id = registeredTempTable(t, p)
	start, end = tablecodec.TableRange(id)
	if n := keysIn(t, p, start, end); n != 4 {
		t.Fatalf("%d keys of the rewritten temporary table, want 4", n)
	}
	conn.Close()
	db.Close() // the session ends when its connection goes
	for deadline := time.Now().Add(time.Minute); keysIn(t, p, prefixTempTables, regs) != 0; {
		if time.Now().After(deadline) {
			t.Fatal("the temporary table is still registered a minute after its session ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := waitRangeEmpty(t, p, start, end); n != 0 {
		t.Fatalf("%d keys of the temporary table left after its session ended", n)
	}

	// A process that stopped with a temporary table open.
	id, err = p.registerTempTable(ctx, "left")
	if err != nil {
		t.Fatal(err)
	}
	k, err := p.store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Set(tablecodec.RowKey(nil, id, tablecodec.IntHandle(1)), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := k.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv.provider = nil
	srv2, _ := openInternal(t, dir, "g")
	start, end = tablecodec.TableRange(id)
	if n := waitRangeEmpty(t, srv2.provider, start, end); n != 0 {
		t.Fatalf("after restart: %d keys of the temporary table left", n)
	}
	if n := keysIn(t, srv2.provider, prefixTempTables, regs); n != 0 {
		t.Fatalf("after restart: %d temporary tables still registered", n)
	}
}

// registeredTempTable returns the ID of the one registered temporary
// table.
func registeredTempTable(t *testing.T, p *DatabaseProvider) int64 {
	t.Helper()
	ctx := context.Background()
	k, err := p.store.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = k.Rollback(ctx) }()
	it, err := k.Iter(ctx, prefixTempTables, tablecodec.PrefixNext(prefixTempTables))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if !it.Valid() {
		t.Fatal("no temporary table registered")
	}
	return decodeTempTableKey(it.Key())
}
