package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	percsql "github.com/percdb/percdb/sql"
)

// TestStatementStatsSwitch checks percdb_statement_stats: OFF, no
// statement moves the statement metrics, the digest table or the slow
// log, while the process list still shows the running statement and the
// other metrics count on; back ON, every statement is counted again,
// text and prepared, a statement prepared while it was OFF included.
// --statement-stats=off (Config.NoStatementStats) starts a node with it
// OFF.
func TestStatementStatsSwitch(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "slow.log")
	srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0", SlowQueryLog: logPath})
	admin := openDB(t, srv, "")
	admin.SetMaxOpenConns(1)
	t.Cleanup(func() {
		// The variables are the process's: leave them as other tests
		// expect them.
		_, _ = admin.Exec("SET GLOBAL percdb_statement_stats = ON")
		_, _ = admin.Exec("SET GLOBAL slow_query_log = OFF")
		_, _ = admin.Exec("SET GLOBAL long_query_time = 10")
	})
	var on int
	if err := admin.QueryRow("SELECT @@GLOBAL.percdb_statement_stats").Scan(&on); err != nil || on != 1 {
		t.Fatalf("@@GLOBAL.percdb_statement_stats = %d (%v), want 1 by default", on, err)
	}
	// Every statement is slow: each one collected is in the slow log.
	mustExec(t, admin, "SET GLOBAL long_query_time = 0", "CREATE DATABASE sw", "CREATE TABLE sw.t (id INT PRIMARY KEY, v INT)")

	db := openDB(t, srv, "sw")
	db.SetMaxOpenConns(1)
	// Prepared while collected, and one prepared while not (below).
	selPrepared, err := db.Prepare("SELECT v FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer selPrepared.Close()

	const n = 4
	// round sends n INSERTs and n text point selects with their own
	// literals, and n executions of each prepared statement.
	round := func(base int, prepared ...*sql.Stmt) {
		t.Helper()
		for i := base; i < base+n; i++ {
			mustExec(t, db, fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", i, i))
			var v int
			if err := db.QueryRow(fmt.Sprintf("SELECT v FROM t WHERE id = %d", i)).Scan(&v); err != nil {
				t.Fatal(err)
			}
			for _, p := range prepared {
				if err := p.QueryRow(i).Scan(&v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	type counts struct {
		inserts, selects, durations, commits float64
		digestInsert, digestSelect           uint64
		slowEntries                          int
	}
	read := func() counts {
		t.Helper()
		fams := scrape(t, srv)
		c := counts{
			inserts:   metricValue(t, fams, "percdb_queries_total", "type=insert", "result=ok"),
			selects:   metricValue(t, fams, "percdb_queries_total", "type=select", "result=ok"),
			durations: metricValue(t, fams, "percdb_query_duration_seconds", "type=select"),
			commits:   metricValue(t, fams, "percdb_commits_total", "protocol=1pc"),
		}
		// The digest table read through the server: while collected this
		// statement is counted too, under its own digest.
		q := "SELECT DIGEST_TEXT, COUNT_STAR FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = 'sw'"
		rows, err := admin.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var text string
			var count uint64
			if err := rows.Scan(&text, &count); err != nil {
				t.Fatal(err)
			}
			switch text {
			case "insert into `t` values ( ... )":
				c.digestInsert = count
			case "select `v` from `t` where `id` = ?":
				c.digestSelect = count
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(logPath); err != nil {
			return c // nothing logged yet
		}
		for _, e := range parseSlowLog(t, logPath) {
			if e.db == "sw" && (strings.HasPrefix(e.query, "INSERT INTO t") || strings.HasPrefix(e.query, "SELECT v ")) {
				c.slowEntries++
			}
		}
		return c
	}
	// check compares the counts' moves with the n INSERTs, the sw
	// selects (selects, of which digestSelects of the select digest) and
	// the reads of the digest table (reads: selects of another schema,
	// and under a long_query_time taken before it was 0) expected.
	check := func(what string, before, after counts, inserts, selects, digestSelects, reads int) {
		t.Helper()
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"percdb_queries_total{type=insert}", after.inserts - before.inserts, float64(inserts)},
			{"percdb_queries_total{type=select}", after.selects - before.selects, float64(selects + reads)},
			{"percdb_query_duration_seconds{type=select} count", after.durations - before.durations, float64(selects + reads)},
			{"insert digest COUNT_STAR", float64(after.digestInsert - before.digestInsert), float64(inserts)},
			{"select digest COUNT_STAR", float64(after.digestSelect - before.digestSelect), float64(digestSelects)},
			{"slow log entries", float64(after.slowEntries - before.slowEntries), float64(inserts + selects)},
			// Not statistics of statements: counted either way.
			{"percdb_commits_total{protocol=1pc}", after.commits - before.commits, n},
		} {
			if c.got != c.want {
				t.Errorf("%s: %s moved by %v, want %v", what, c.name, c.got, c.want)
			}
		}
	}

	before := read()
	round(0, selPrepared)
	after := read()
	check("ON", before, after, n, 2*n, 2*n, 1)

	mustExec(t, admin, "SET GLOBAL percdb_statement_stats = OFF")
	if err := admin.QueryRow("SELECT @@GLOBAL.percdb_statement_stats").Scan(&on); err != nil || on != 0 {
		t.Fatalf("@@GLOBAL.percdb_statement_stats = %d (%v) after SET GLOBAL ... = OFF", on, err)
	}
	offPrepared, err := db.Prepare("SELECT v + 0 FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer offPrepared.Close()
	before = read()
	round(100, selPrepared, offPrepared)
	// The process list still shows a running statement.
	conn := dedicatedConn(t, openDB(t, srv, "sw"))
	id := connID(t, conn)
	done := make(chan error, 1)
	go func() {
		_, err := conn.ExecContext(context.Background(), "SELECT SLEEP(2)")
		done <- err
	}()
	seen := false
	for deadline := time.Now().Add(10 * time.Second); !seen && time.Now().Before(deadline); {
		if r, ok := showProcessList(t, admin, "SHOW FULL PROCESSLIST")[id]; ok && r.info.String == "SELECT SLEEP(2)" && r.command == "Query" {
			seen = true
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Error("OFF: SHOW FULL PROCESSLIST never showed the running SELECT SLEEP(2)")
	}
	after = read()
	check("OFF", before, after, 0, 0, 0, 0)

	mustExec(t, admin, "SET GLOBAL percdb_statement_stats = ON")
	before = read()
	round(200, selPrepared, offPrepared)
	after = read()
	// offPrepared's digest is its own ("v + ?"): its executions count as
	// selects in the metrics but not in the select digest.
	check("ON again", before, after, n, 3*n, 2*n, 1)
	var offDigest uint64
	if err := admin.QueryRow("SELECT COUNT_STAR FROM performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = 'sw' AND DIGEST_TEXT = 'select `v` + ? from `t` where `id` = ?'").Scan(&offDigest); err != nil || offDigest != n {
		t.Errorf("the statement prepared while OFF: COUNT_STAR %d (%v), want %d, its executions once ON", offDigest, err, n)
	}

	t.Run("flag", func(t *testing.T) {
		off := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0", NoStatementStats: true})
		odb := openDB(t, off, "")
		odb.SetMaxOpenConns(1)
		if err := odb.QueryRow("SELECT @@GLOBAL.percdb_statement_stats").Scan(&on); err != nil || on != 0 {
			t.Errorf("@@GLOBAL.percdb_statement_stats = %d (%v) on a node started with it off", on, err)
		}
		fams := scrape(t, off)
		sel := metricValue(t, fams, "percdb_queries_total", "type=select", "result=ok")
		for i := 0; i < n; i++ {
			queryRows(t, odb, fmt.Sprintf("SELECT %d", i))
		}
		if got := metricValue(t, scrape(t, off), "percdb_queries_total", "type=select", "result=ok") - sel; got != 0 {
			t.Errorf("a node started with statement statistics off counted %v selects", got)
		}
	})
}
