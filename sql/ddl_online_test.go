package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/sql/sqltest"
)

var onlineDDLRounds = flag.Int("onlineddl.rounds", 1, "rounds of TestOnlineDDLUnderConcurrentWriters (more for a longer run)")

// connExec runs statements on one connection, failing the test on an
// error.
func connExec(t *testing.T, c *sql.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := c.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// mysqlErrNum returns the MySQL error number of err, or 0.
func mysqlErrNum(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// retryable reports whether err is one a client retries: a write
// conflict (1213), a lock wait timeout (1205) or a schema change (8028).
func retryable(err error) bool {
	switch mysqlErrNum(err) {
	case 1213, 1205, 8028:
		return true
	}
	return false
}

// checkTableOK runs CHECK TABLE and ADMIN CHECK TABLE on table.
func checkTableOK(t *testing.T, db *sql.DB, table string) {
	t.Helper()
	var name, op, typ, text string
	if err := db.QueryRow("CHECK TABLE "+table).Scan(&name, &op, &typ, &text); err != nil {
		t.Fatalf("CHECK TABLE %s: %v", table, err)
	}
	if typ != "status" || text != "OK" {
		t.Fatalf("CHECK TABLE %s: %s %s", table, typ, text)
	}
	if _, err := db.Exec("ADMIN CHECK TABLE " + table); err != nil {
		t.Fatalf("ADMIN CHECK TABLE %s: %v", table, err)
	}
}

// TestDDLBesideOpenTransaction is the first reproduction, for
// every DDL: a transaction inserts a row, a DDL on its table runs, then the
// transaction commits. The COMMIT either fails with a retryable error or
// the row is there afterwards; never both an OK and a lost row. With a long
// DDL wait the DDL waits for the transaction, which commits while it
// waits; with a short one the DDL goes on without it.
func TestDDLBesideOpenTransaction(t *testing.T) {
	ddls := []struct{ setup, ddl string }{
		{"", "ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7"},
		{"", "ALTER TABLE t MODIFY a BIGINT"},
		{"ALTER TABLE t ADD COLUMN c INT", "ALTER TABLE t DROP COLUMN c"},
		{"", "ALTER TABLE t CHANGE a a2 INT"},
		{"", "ALTER TABLE t RENAME COLUMN a TO a3"},
		{"", "CREATE INDEX ia ON t (a)"},
		{"", "CREATE UNIQUE INDEX ua ON t (a)"},
		{"CREATE INDEX ia ON t (a)", "DROP INDEX ia ON t"},
		{"", "RENAME TABLE t TO t2"},
	}
	for _, wait := range []time.Duration{time.Minute, 50 * time.Millisecond} {
		srv := sqltest.StartConfig(t, percsql.Config{DDLWaitTimeout: wait})
		db := srv.Open("")
		db.SetMaxOpenConns(4)
		for i, c := range ddls {
			t.Run(fmt.Sprintf("wait=%v/%s", wait, c.ddl), func(t *testing.T) {
				dbName := fmt.Sprintf("d%d", i)
				mustExec(t, db, "CREATE DATABASE "+dbName, "USE "+dbName)
				conn1, err := db.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer conn1.Close()
				conn2, err := db.Conn(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer conn2.Close()
				connExec(t, conn1, "USE "+dbName, "CREATE TABLE t (id INT PRIMARY KEY, a INT)", "INSERT INTO t VALUES (1, 1)")
				if c.setup != "" {
					connExec(t, conn1, c.setup)
				}
				connExec(t, conn2, "USE "+dbName)
				connExec(t, conn1, "BEGIN", "INSERT INTO t (id, a) VALUES (100, 5)")
				ddlDone := make(chan error, 1)
				go func() {
					_, err := conn2.ExecContext(context.Background(), c.ddl)
					ddlDone <- err
				}()
				// Let the DDL reach its wait (or finish) before the commit.
				select {
				case err := <-ddlDone:
					ddlDone <- err
				case <-time.After(300 * time.Millisecond):
				}
				_, commitErr := conn1.ExecContext(context.Background(), "COMMIT")
				if err := <-ddlDone; err != nil {
					t.Fatalf("%s: %v", c.ddl, err)
				}
				table := "t"
				if strings.HasPrefix(c.ddl, "RENAME TABLE") {
					table = "t2"
				}
				var n int
				if err := conn2.QueryRowContext(context.Background(), "SELECT count(*) FROM "+table+" WHERE id = 100").Scan(&n); err != nil {
					t.Fatal(err)
				}
				switch {
				case commitErr == nil && n != 1:
					t.Fatalf("COMMIT answered OK beside %q, and the row is gone", c.ddl)
				case commitErr != nil && !retryable(commitErr):
					t.Fatalf("COMMIT beside %q failed with a non-retryable error: %v", c.ddl, commitErr)
				case commitErr != nil && n != 0:
					t.Fatalf("COMMIT failed (%v) but its row is there", commitErr)
				}
				if wait == time.Minute && commitErr != nil {
					t.Fatalf("with a long wait the DDL should have waited for the transaction: %v", commitErr)
				}
				checkTableOK(t, db, dbName+"."+table)
			})
		}
	}
}

// TestOnlineDDLUnderConcurrentWriters runs each DDL while four connections
// insert, update and delete (autocommit and multi-statement transactions,
// some rolled back), retrying retryable errors as a client does, and keeps
// a model of every acknowledged change. After each DDL the table equals
// the model, every index agrees with the table (CHECK TABLE), and an
// added column holds its default in every row.
func TestOnlineDDLUnderConcurrentWriters(t *testing.T) {
	srv := sqltest.StartConfig(t, percsql.Config{DDLWaitTimeout: 2 * time.Second})
	db := srv.Open("")
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE DATABASE s", "USE s")
	db = srv.Open("s")
	db.SetMaxOpenConns(8)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(60))")
	const writers, perWriter = 4, 400
	models := make([]map[int]int, writers)
	var rows []string
	for w := 0; w < writers; w++ {
		models[w] = make(map[int]int)
		for i := 0; i < perWriter/2; i++ {
			id := w*100000 + i
			models[w][id] = id
			rows = append(rows, fmt.Sprintf("(%d, %d, 'p%d')", id, id, id))
		}
	}
	mustExec(t, db, "INSERT INTO t (id, k, pad) VALUES "+strings.Join(rows, ","))

	ddls := []string{
		"CREATE INDEX ik ON t (k)",
		"ALTER TABLE t ADD COLUMN c INT NOT NULL DEFAULT 7",
		"ALTER TABLE t ADD INDEX ikc (k, c)",
		"ALTER TABLE t MODIFY pad VARCHAR(80)",
		"DROP INDEX ik ON t",
		"ALTER TABLE t DROP COLUMN c",
		"CREATE INDEX ip ON t (pad)",
		"ALTER TABLE t RENAME COLUMN pad TO pad2",
	}
	// Later rounds (-onlineddl.rounds) drop and build indexes again.
	again := []string{"DROP INDEX ikc ON t", "CREATE INDEX ik ON t (k)", "DROP INDEX ip ON t", "CREATE UNIQUE INDEX uid ON t (id, k)", "DROP INDEX ik ON t", "DROP INDEX uid ON t", "CREATE INDEX ikc ON t (k, id)", "CREATE INDEX ip ON t (pad2)"}
	for round := 0; round < *onlineDDLRounds; round++ {
		list := ddls
		if round > 0 {
			list = again
		}
		for _, ddl := range list {
			stop := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					if err := runModelWriter(db, w, models[w], stop); err != nil {
						errs <- err
					}
				}(w)
			}
			time.Sleep(50 * time.Millisecond)
			_, ddlErr := db.Exec(ddl)
			time.Sleep(50 * time.Millisecond)
			close(stop)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("writer beside %q: %v", ddl, err)
			}
			if ddlErr != nil {
				t.Fatalf("%s: %v", ddl, ddlErr)
			}
			compareWithModel(t, db, models, ddl)
			checkTableOK(t, db, "s.t")
			if cols := columnsOf(t, db); strings.Contains(strings.Join(cols, ","), ",c") {
				var bad int
				if err := db.QueryRow("SELECT count(*) FROM t WHERE c IS NULL OR c <> 7").Scan(&bad); err != nil {
					t.Fatal(err)
				}
				if bad != 0 {
					t.Fatalf("after %q: %d rows without the new column's default", ddl, bad)
				}
			}
		}
	}
}

// runModelWriter changes rows of writer w's id range until stop is
// closed, in autocommit statements and in transactions of up to three
// statements that commit or roll back, recording in model what was
// acknowledged. Retryable errors are retried with a fresh transaction.
func runModelWriter(db *sql.DB, w int, model map[int]int, stop <-chan struct{}) error {
	rnd := rand.New(rand.NewSource(int64(w) + time.Now().UnixNano()))
	next := w*100000 + 10000
	for id := range model {
		next = max(next, id+1)
	}
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		n := 1 + rnd.Intn(3)
		explicit := rnd.Intn(2) == 0
		rollback := explicit && rnd.Intn(5) == 0
		pending := make(map[int]*int)
		var stmts []string
		for i := 0; i < n; i++ {
			ids := make([]int, 0, len(model))
			for id := range model {
				if _, ok := pending[id]; !ok {
					ids = append(ids, id)
				}
			}
			sort.Ints(ids)
			switch op := rnd.Intn(5); {
			case op == 3:
				// REPLACE of an existing or a new row.
				id, k := next, rnd.Intn(1000000)
				if len(ids) > 0 && rnd.Intn(2) == 0 {
					id = ids[rnd.Intn(len(ids))]
				} else {
					next++
				}
				stmts = append(stmts, fmt.Sprintf("REPLACE INTO t (id, k) VALUES (%d, %d)", id, k))
				pending[id] = &k
			case op == 4:
				// INSERT ... ON DUPLICATE KEY UPDATE of an existing or a
				// new row: either way the row ends with k.
				id, k := next, rnd.Intn(1000000)
				if len(ids) > 0 && rnd.Intn(2) == 0 {
					id = ids[rnd.Intn(len(ids))]
				} else {
					next++
				}
				stmts = append(stmts, fmt.Sprintf("INSERT INTO t (id, k) VALUES (%d, %d) ON DUPLICATE KEY UPDATE k = %d", id, k, k))
				pending[id] = &k
			case op == 0 || len(ids) == 0:
				id, k := next, rnd.Intn(1000000)
				next++
				stmts = append(stmts, fmt.Sprintf("INSERT INTO t (id, k) VALUES (%d, %d)", id, k))
				pending[id] = &k
			case op == 1:
				id, k := ids[rnd.Intn(len(ids))], rnd.Intn(1000000)
				stmts = append(stmts, fmt.Sprintf("UPDATE t SET k = %d WHERE id = %d", k, id))
				pending[id] = &k
			default:
				id := ids[rnd.Intn(len(ids))]
				stmts = append(stmts, fmt.Sprintf("DELETE FROM t WHERE id = %d", id))
				pending[id] = nil
			}
		}
		var err error
		if explicit {
			err = runTxn(db, stmts, rollback)
		} else {
			for _, s := range stmts {
				// Each autocommit statement stands alone.
				if _, err = db.Exec(s); err != nil {
					break
				}
				applyOne(model, s, pending)
			}
			if err == nil || retryable(err) {
				continue
			}
			return fmt.Errorf("%v: %w", stmts, err)
		}
		switch {
		case err == nil && !rollback:
			for id, k := range pending {
				if k == nil {
					delete(model, id)
				} else {
					model[id] = *k
				}
			}
		case err == nil, retryable(err):
		default:
			return fmt.Errorf("%v: %w", stmts, err)
		}
	}
}

// applyOne records the acknowledged autocommit statement s.
func applyOne(model map[int]int, s string, pending map[int]*int) {
	var id, k int
	switch {
	case strings.HasPrefix(s, "INSERT"), strings.HasPrefix(s, "REPLACE"):
		fmt.Sscanf(s[strings.Index(s, "VALUES"):], "VALUES (%d, %d)", &id, &k)
		model[id] = k
	case strings.HasPrefix(s, "UPDATE"):
		fmt.Sscanf(s, "UPDATE t SET k = %d WHERE id = %d", &k, &id)
		model[id] = k
	default:
		fmt.Sscanf(s, "DELETE FROM t WHERE id = %d", &id)
		delete(model, id)
	}
}

// runTxn runs stmts in one transaction on one connection and commits or
// rolls back.
func runTxn(db *sql.DB, stmts []string, rollback bool) error {
	conn, err := db.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			_, _ = conn.ExecContext(ctx, "ROLLBACK")
			return err
		}
	}
	end := "COMMIT"
	if rollback {
		end = "ROLLBACK"
	}
	_, err = conn.ExecContext(ctx, end)
	if err != nil {
		_, _ = conn.ExecContext(ctx, "ROLLBACK")
	}
	return err
}

// compareWithModel checks that table t holds exactly the models' rows.
func compareWithModel(t *testing.T, db *sql.DB, models []map[int]int, after string) {
	t.Helper()
	want := make(map[int]int)
	for _, m := range models {
		for id, k := range m {
			want[id] = k
		}
	}
	rs, err := db.Query("SELECT id, k FROM t")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	got := make(map[int]int)
	for rs.Next() {
		var id, k int
		if err := rs.Scan(&id, &k); err != nil {
			t.Fatal(err)
		}
		got[id] = k
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	for id, k := range want {
		if g, ok := got[id]; !ok {
			t.Fatalf("after %q: acknowledged row %d (k=%d) is missing", after, id, k)
		} else if g != k {
			t.Fatalf("after %q: row %d has k=%d, acknowledged %d", after, id, g, k)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Fatalf("after %q: row %d is there, but its insert was not acknowledged or its delete was", after, id)
		}
	}
}

// columnsOf returns the columns of s.t.
func columnsOf(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rs, err := db.Query("SELECT column_name FROM information_schema.columns WHERE table_schema = 's' AND table_name = 't' ORDER BY ordinal_position")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var cols []string
	for rs.Next() {
		var c string
		if err := rs.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	return cols
}

// TestUniqueIndexBuildBesideDuplicateInserts: connections insert rows that
// duplicate existing values of u while a unique index on u is built.
// Either the DDL fails with 1062 and leaves no index, or it succeeds and
// no duplicate exists: never both succeed.
func TestUniqueIndexBuildBesideDuplicateInserts(t *testing.T) {
	srv := sqltest.Start(t, "")
	db := srv.Open("")
	mustExec(t, db, "CREATE DATABASE u")
	db = srv.Open("u")
	db.SetMaxOpenConns(8)
	for attempt := 0; attempt < 4; attempt++ {
		mustExec(t, db, "DROP TABLE IF EXISTS t", "CREATE TABLE t (id INT PRIMARY KEY, u INT)")
		var rows []string
		for i := 0; i < 2000; i++ {
			rows = append(rows, fmt.Sprintf("(%d, %d)", i, i))
		}
		mustExec(t, db, "INSERT INTO t VALUES "+strings.Join(rows, ","))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var inserted sync.Map
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					id := 10000 + w*10000 + i
					u := (id * 7) % 2000
					if attempt%2 == 1 {
						u = 5000 + id // no duplicate: the index must build
					}
					if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", id, u); err == nil {
						inserted.Store(id, u)
					} else if n := mysqlErrNum(err); n != 1062 && !retryable(err) {
						t.Errorf("insert: %v", err)
						return
					}
				}
			}(w)
		}
		time.Sleep(20 * time.Millisecond)
		_, ddlErr := db.Exec("CREATE UNIQUE INDEX uu ON t (u)")
		close(stop)
		wg.Wait()
		var dups int
		if err := db.QueryRow("SELECT count(*) FROM (SELECT u FROM t GROUP BY u HAVING count(*) > 1) x").Scan(&dups); err != nil {
			t.Fatal(err)
		}
		var indexes int
		if err := db.QueryRow("SELECT count(*) FROM information_schema.statistics WHERE table_schema = 'u' AND table_name = 't' AND index_name = 'uu'").Scan(&indexes); err != nil {
			t.Fatal(err)
		}
		switch {
		case ddlErr == nil && dups != 0:
			t.Fatalf("the unique index was built and %d values are duplicated", dups)
		case ddlErr == nil && indexes == 0:
			t.Fatal("CREATE UNIQUE INDEX succeeded but the index is not there")
		case ddlErr != nil && mysqlErrNum(ddlErr) != 1062:
			t.Fatalf("CREATE UNIQUE INDEX: %v, want success or 1062", ddlErr)
		case ddlErr != nil && indexes != 0:
			t.Fatal("CREATE UNIQUE INDEX failed but left the index")
		case attempt%2 == 1 && ddlErr != nil:
			t.Fatalf("no duplicate was inserted, yet the index failed: %v", ddlErr)
		}
		checkTableOK(t, db, "t")
	}
}

// TestDDLJobsShowCancelAndKill: ADMIN SHOW DDL JOBS shows a CREATE INDEX
// with its rows backfilled; ADMIN CANCEL DDL JOBS and KILL QUERY stop a
// running one, which fails (8214, 1317) and leaves neither the index nor
// any entry of it; the table stays consistent.
func TestDDLJobsShowCancelAndKill(t *testing.T) {
	srv := sqltest.Start(t, "")
	db := srv.Open("")
	mustExec(t, db, "CREATE DATABASE j")
	db = srv.Open("j")
	db.SetMaxOpenConns(4)
	mustExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	for i := 0; i < 10; i++ {
		batch := make([]string, 5000)
		for j := range batch {
			batch[j] = fmt.Sprintf("(%d, %d)", i*5000+j, (i*5000+j)%97)
		}
		mustExec(t, db, "INSERT INTO t VALUES "+strings.Join(batch, ","))
	}
	mustExec(t, db, "CREATE INDEX done ON t (k)")
	jobs := adminJobs(t, db)
	if len(jobs) == 0 || jobs[0]["STATE"] != "synced" || jobs[0]["ROW_COUNT"] != "50000" || jobs[0]["TABLE_NAME"] != "t" {
		t.Fatalf("ADMIN SHOW DDL JOBS after CREATE INDEX: %v", jobs)
	}

	stop := func(how string) {
		t.Helper()
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var connID int
		if err := conn.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&connID); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := conn.ExecContext(context.Background(), "CREATE INDEX ik ON t (k, id)")
			done <- err
		}()
		stopped := false
		for !stopped {
			select {
			case err := <-done:
				t.Logf("%s: the job finished (%v) before it could be stopped", how, err)
				mustExec(t, db, "DROP INDEX ik ON t")
				return
			case <-time.After(2 * time.Millisecond):
			}
			for _, j := range adminJobs(t, db) {
				if j["STATE"] != "running" || j["SCHEMA_STATE"] != "write reorganization" {
					continue
				}
				if how == "cancel" {
					var id, result string
					if err := db.QueryRow("ADMIN CANCEL DDL JOBS "+j["JOB_ID"]).Scan(&id, &result); err != nil {
						t.Fatal(err)
					}
					stopped = result == "successful"
				} else {
					mustExec(t, db, fmt.Sprintf("KILL QUERY %d", connID))
					stopped = true
				}
			}
		}
		err = <-done
		want := uint16(8214)
		if how == "kill" {
			want = 1317
		}
		if mysqlErrNum(err) != want {
			t.Fatalf("%s: CREATE INDEX returned %v, want error %d", how, err, want)
		}
		var n int
		if err := db.QueryRow("SELECT count(*) FROM information_schema.statistics WHERE table_schema = 'j' AND table_name = 't' AND index_name = 'ik'").Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s: the stopped index is still there (%d, %v)", how, n, err)
		}
		if jobs := adminJobs(t, db); jobs[0]["STATE"] != map[string]string{"cancel": "cancelled", "kill": "cancelled"}[how] {
			t.Fatalf("%s: job after stop: %v", how, jobs[0])
		}
		checkTableOK(t, db, "t")
		mustExec(t, db, "CREATE INDEX ik ON t (k, id)", "DROP INDEX ik ON t")
	}
	stop("cancel")
	stop("kill")
}

// adminJobs returns ADMIN SHOW DDL JOBS's rows as column maps.
func adminJobs(t *testing.T, db *sql.DB) []map[string]string {
	t.Helper()
	rs, err := db.Query("ADMIN SHOW DDL JOBS")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out []map[string]string
	for rs.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := make(map[string]string)
		for i, c := range cols {
			m[c] = vals[i].String
		}
		out = append(out, m)
	}
	return out
}
