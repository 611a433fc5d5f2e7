package sql_test

import (
	"fmt"
	"strings"
	"testing"

	percsql "github.com/percdb/percdb/sql"
)

// digestRow is a row of events_statements_summary_by_digest as the test
// reads it.
type digestRow struct {
	schema, digest, text             string
	count, sum, min, avg, max        uint64
	errors, affected, sent, examined uint64
	p95, p99                         uint64
	sample                           string
}

// TestStatementDigests checks performance_schema.
// events_statements_summary_by_digest: statements that differ only in
// literals are one row on the fast path and through GMS, with a prepared
// statement of the same text; the counts, rows and errors are those of
// the traffic sent; times are picoseconds in order; TRUNCATE empties it;
// and past its bound statements are counted in the NULL row.
func TestStatementDigests(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("fast=%v", fast), func(t *testing.T) {
			srv := startServerConfig(t, percsql.Config{DisableFastPath: !fast})
			db := openDB(t, srv, "")
			db.SetMaxOpenConns(1)
			mustExec(t, db, "CREATE DATABASE dg", "USE dg", "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
			mustExec(t, db, "TRUNCATE TABLE performance_schema.events_statements_summary_by_digest")
			const n = 5
			for i := 0; i < n; i++ {
				mustExec(t, db, fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", i, 10*i))
			}
			for i := 0; i < n; i++ {
				queryRows(t, db, fmt.Sprintf("SELECT v FROM t WHERE id = %d", i))
			}
			// The same statement prepared (the driver prepares
			// statements with arguments).
			for i := 0; i < 2; i++ {
				var v int
				if err := db.QueryRow("SELECT v FROM t WHERE id = ?", i).Scan(&v); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.Exec("SELECT v FROM t WHERE id = 'x' AND nosuch = 1"); err == nil {
				t.Fatal("a statement with a missing column succeeded")
			}
			queryRows(t, db, "SELECT v FROM t WHERE id IN (1, 2, 3)")
			queryRows(t, db, "SELECT v FROM t WHERE id IN (4, 1)")

			q := "SELECT SCHEMA_NAME, DIGEST, DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT, MIN_TIMER_WAIT, AVG_TIMER_WAIT, MAX_TIMER_WAIT, " +
				"SUM_ERRORS, SUM_ROWS_AFFECTED, SUM_ROWS_SENT, SUM_ROWS_EXAMINED, QUANTILE_95, QUANTILE_99, QUERY_SAMPLE_TEXT " +
				"FROM performance_schema.events_statements_summary_by_digest WHERE DIGEST_TEXT LIKE '%s' ORDER BY DIGEST_TEXT"
			get := func(like string) []digestRow {
				t.Helper()
				rows, err := db.Query(fmt.Sprintf(q, like))
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var out []digestRow
				for rows.Next() {
					var d digestRow
					if err := rows.Scan(&d.schema, &d.digest, &d.text, &d.count, &d.sum, &d.min, &d.avg, &d.max,
						&d.errors, &d.affected, &d.sent, &d.examined, &d.p95, &d.p99, &d.sample); err != nil {
						t.Fatal(err)
					}
					out = append(out, d)
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				return out
			}
			ins := get("insert into `t` %")
			if len(ins) != 1 || ins[0].count != n || ins[0].affected != n || ins[0].schema != "dg" || len(ins[0].digest) != 64 {
				t.Errorf("INSERT rows: %+v", ins)
			}
			sel := get("select `v` from `t` where `id` = ?")
			if len(sel) != 1 {
				t.Fatalf("SELECT rows: %+v", sel)
			}
			s := sel[0]
			if s.count != n+2 || s.sent != n+2 || s.examined != n+2 || s.errors != 0 {
				t.Errorf("point selects: %+v, want %d statements, rows sent and examined", s, n+2)
			}
			if !(s.min > 0 && s.min <= s.avg && s.avg <= s.max && s.sum >= s.max && s.p95 >= s.min && s.p99 >= s.p95) {
				t.Errorf("timer waits out of order: %+v", s)
			}
			if !strings.HasPrefix(s.sample, "SELECT v FROM t WHERE id =") {
				t.Errorf("sample %q", s.sample)
			}
			if bad := get("%`nosuch`%"); len(bad) != 1 || bad[0].errors != 1 || bad[0].count != 1 {
				t.Errorf("failing statement: %+v", bad)
			}
			if in := get("% where `id` in ( ... )"); len(in) != 1 || in[0].count != 2 || in[0].sent != 5 {
				t.Errorf("IN lists collapsed: %+v", in)
			}

			mustExec(t, db, "TRUNCATE TABLE performance_schema.events_statements_summary_by_digest")
			if rows := get("insert into%"); len(rows) != 0 {
				t.Errorf("after TRUNCATE: %+v", rows)
			}
		})
	}
}

// TestStatementDigestsBound checks that past performance_schema_digests_size
// statements are counted in the row whose SCHEMA_NAME, DIGEST and
// DIGEST_TEXT are NULL, and the system database cannot be dropped,
// created or written.
func TestStatementDigestsBound(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{DigestsSize: 3})
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	if got := queryRows(t, db, "SELECT @@performance_schema_digests_size"); len(got) != 1 || got[0] != "3" {
		t.Errorf("@@performance_schema_digests_size = %v", got)
	}
	mustExec(t, db, "TRUNCATE TABLE performance_schema.events_statements_summary_by_digest")
	// The TRUNCATE itself is the first row.
	for _, q := range []string{"SELECT 1", "SELECT 1 + 1", "SELECT ABS(1)", "SELECT LENGTH('a')", "SELECT 1 = 1"} {
		queryRows(t, db, q)
	}
	got := queryRows(t, db, "SELECT COALESCE(DIGEST, 'NULL'), COALESCE(SCHEMA_NAME, 'NULL'), COALESCE(DIGEST_TEXT, 'NULL'), COUNT_STAR "+
		"FROM performance_schema.events_statements_summary_by_digest WHERE DIGEST IS NULL")
	if len(got) != 1 || got[0] != "NULL NULL NULL 3" {
		t.Errorf("overflow row = %v, want NULLs and 3 statements; all rows: %v", got,
			queryRows(t, db, "SELECT DIGEST, DIGEST_TEXT, COUNT_STAR FROM performance_schema.events_statements_summary_by_digest"))
	}
	if got := queryRows(t, db, "SELECT COUNT(*) FROM performance_schema.events_statements_summary_by_digest WHERE DIGEST IS NOT NULL"); got[0] != "3" {
		t.Errorf("held digests = %v, want 3", got)
	}
	if got := queryRows(t, db, "SHOW DATABASES LIKE 'performance_schema'"); len(got) != 1 {
		t.Errorf("SHOW DATABASES: %v", got)
	}
	// information_schema's tables that ask every database for its
	// objects still answer, performance_schema's table among them.
	for q, want := range map[string]string{
		"SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'performance_schema'":     "1",
		"SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = 'performance_schema'": "0",
		"SELECT COUNT(*) FROM information_schema.routines WHERE routine_schema = 'performance_schema'": "0",
		"SELECT COUNT(*) FROM information_schema.events WHERE event_schema = 'performance_schema'":     "0",
	} {
		if got := queryRows(t, db, q); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %v, want %s", q, got, want)
		}
	}
	for _, c := range []struct {
		stmt  string
		errno string
	}{
		{"DROP DATABASE performance_schema", "1044"},
		{"CREATE DATABASE performance_schema", "1007"},
		{"CREATE TABLE performance_schema.x (a INT)", ""},
		{"DELETE FROM performance_schema.events_statements_summary_by_digest", ""},
	} {
		_, err := db.Exec(c.stmt)
		if err == nil {
			t.Errorf("%s succeeded", c.stmt)
		} else if c.errno != "" && !strings.Contains(err.Error(), "Error "+c.errno) {
			t.Errorf("%s: %v, want error %s", c.stmt, err, c.errno)
		}
	}
}
