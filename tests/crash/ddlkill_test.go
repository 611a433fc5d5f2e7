package crash

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestServerKillMidDDL SIGKILLs the percdb process in the middle of a
// schema change and restarts it on the same directory:
//
//   - CREATE INDEX, killed while it backfills (ADMIN SHOW DDL JOBS says so):
//     the unfinished index is rolled back at the start, with its entries;
//   - ALTER TABLE ADD COLUMN, killed while it copies the table: the table
//     has the column (every row with its default) or not, as the copy's
//     commit was or was not reached, and takes writes again (no fence is
//     left up).
//
// Either way every row is there, CHECK TABLE answers OK and the same
// schema change then succeeds.
func TestServerKillMidDDL(t *testing.T) {
	const rows = 30_000
	bin := buildPercdb(t)
	for _, c := range []struct{ name, ddl, column string }{
		{"create_index", "CREATE INDEX ik ON d.t (k)", ""},
		{"add_column", "ALTER TABLE d.t ADD COLUMN c INT NOT NULL DEFAULT 7", "c"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			srv := startServer(t, bin, dir)
			db := openDB(t, srv.addr, "")
			mustExecAll(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, k INT NOT NULL)")
			for start := 0; start < rows; start += 2000 {
				var b strings.Builder
				b.WriteString("INSERT INTO d.t VALUES ")
				for id := start; id < start+2000; id++ {
					if id > start {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, "(%d, %d)", id, id%101)
				}
				mustExecAll(t, db, b.String())
			}
			ddlDone := make(chan error, 1)
			go func() {
				_, err := db.ExecContext(ctx, c.ddl)
				ddlDone <- err
			}()
			if c.column == "" {
				waitForBackfill(t, db, ddlDone)
			} else {
				time.Sleep(150 * time.Millisecond)
			}
			srv.kill(func() { db.Close() })
			<-ddlDone

			srv = startServer(t, bin, dir)
			db = openDB(t, srv.addr, "")
			var n int
			if err := db.QueryRow("SELECT count(*) FROM d.t").Scan(&n); err != nil || n != rows {
				t.Fatalf("rows after the restart: %d, %v; want %d", n, err, rows)
			}
			if c.column == "" {
				var idx int
				if err := db.QueryRow("SELECT count(*) FROM information_schema.statistics WHERE table_schema = 'd' AND table_name = 't' AND index_name = 'ik'").Scan(&idx); err != nil || idx != 0 {
					t.Fatalf("the unfinished index survived the restart (%d, %v)", idx, err)
				}
			} else {
				var cols int
				if err := db.QueryRow("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'd' AND table_name = 't' AND column_name = 'c'").Scan(&cols); err != nil {
					t.Fatal(err)
				}
				t.Logf("the column was added before the kill: %v", cols == 1)
				if cols == 1 {
					var bad int
					if err := db.QueryRow("SELECT count(*) FROM d.t WHERE c <> 7").Scan(&bad); err != nil || bad != 0 {
						t.Fatalf("%d rows without the default, %v", bad, err)
					}
					mustExecAll(t, db, "ALTER TABLE d.t DROP COLUMN c")
				}
			}
			mustExecAll(t, db, "INSERT INTO d.t VALUES (-1, 5)", "DELETE FROM d.t WHERE id = -1")
			checkTable(t, db, "d.t")
			mustExecAll(t, db, c.ddl)
			checkTable(t, db, "d.t")
			srv.stop()
		})
	}
}

// waitForBackfill waits until ADMIN SHOW DDL JOBS shows a running job
// that has backfilled rows.
func waitForBackfill(t *testing.T, db *sql.DB, ddlDone chan error) {
	t.Helper()
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-ddlDone:
			t.Fatalf("the DDL finished (%v) before the kill; make the table larger", err)
		default:
		}
		rs, err := db.Query("ADMIN SHOW DDL JOBS")
		if err != nil {
			t.Fatal(err)
		}
		backfilling := false
		for rs.Next() {
			var id, dbName, table, typ, state, count, start, status, comment string
			var end sql.NullString
			if err := rs.Scan(&id, &dbName, &table, &typ, &state, &count, &start, &end, &status, &comment); err != nil {
				t.Fatal(err)
			}
			backfilling = backfilling || (status == "running" && state == "write reorganization" && count != "0")
		}
		rs.Close()
		if backfilling {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatal("the DDL never reached its backfill")
}

func mustExecAll(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.80s: %v", q, err)
		}
	}
}

// checkTable runs CHECK TABLE and fails unless it answers OK.
func checkTable(t *testing.T, db *sql.DB, table string) {
	t.Helper()
	var name, op, typ, text string
	if err := db.QueryRow("CHECK TABLE "+table).Scan(&name, &op, &typ, &text); err != nil {
		t.Fatalf("CHECK TABLE %s: %v", table, err)
	}
	if typ != "status" || text != "OK" {
		t.Fatalf("CHECK TABLE %s: %s %s", table, typ, text)
	}
}
