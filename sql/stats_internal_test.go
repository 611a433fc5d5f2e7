package sql

import (
	"context"
	dbsql "database/sql"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/statistics"
)

// fillStatsTable creates x.t with rows rows: a = i%10, b = 's' + i%100,
// c NULL in every third row, a primary key, an index (a, b) and an index
// (b).
func fillStatsTable(t *testing.T, db *dbsql.DB, rows int) {
	t.Helper()
	execAll(t, db, "CREATE DATABASE IF NOT EXISTS x", "USE x",
		"CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), c INT, KEY ab (a, b), KEY kb (b))")
	var vals []string
	for i := range rows {
		c := fmt.Sprint(i)
		if i%3 == 0 {
			c = "NULL"
		}
		vals = append(vals, fmt.Sprintf("(%d, %d, 's%d', %s)", i, i%10, i%100, c))
		if len(vals) == 1000 || i == rows-1 {
			execAll(t, db, "INSERT INTO t VALUES "+strings.Join(vals, ","))
			vals = vals[:0]
		}
	}
}

// stringsOf returns the rows of q, values separated by spaces.
func stringsOf(t *testing.T, db *dbsql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for _, r := range readAll(t, rows) {
		out = append(out, strings.Join(r, " "))
	}
	return out
}

const (
	schemaCardinality = "SELECT INDEX_NAME, SEQ_IN_INDEX, CARDINALITY FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'x' AND TABLE_NAME = 't' ORDER BY INDEX_NAME, SEQ_IN_INDEX"
)

// TestAnalyzeTableStatistics checks that ANALYZE TABLE stores NDVs that
// information_schema.STATISTICS.CARDINALITY, SHOW INDEX and
// information_schema.TABLES.TABLE_ROWS show, and that they survive a
// restart of the server.
func TestAnalyzeTableStatistics(t *testing.T) {
	dir := t.TempDir()
	srv, db := openInternal(t, dir, "")
	db.SetMaxOpenConns(1)
	fillStatsTable(t, db, 3000)
	if got := stringsOf(t, db, schemaCardinality); strings.Join(got, ",") != "ab 1 0,ab 2 0,kb 1 0,PRIMARY 1 0" {
		t.Fatalf("cardinality before ANALYZE: %v", got)
	}
	if got := stringsOf(t, db, "ANALYZE TABLE t"); len(got) != 1 || got[0] != "x.t analyze status OK" {
		t.Fatalf("ANALYZE TABLE: %v", got)
	}
	want := "PRIMARY 1 3000,ab 1 10,ab 2 100,kb 1 100"
	check := func(when string) {
		t.Helper()
		if got := stringsOf(t, db, schemaCardinality); strings.Join(got, ",") != "ab 1 10,ab 2 100,kb 1 100,PRIMARY 1 3000" {
			t.Errorf("%s: information_schema.STATISTICS: %v, want %s", when, got, want)
		}
		rows, err := db.Query("SHOW INDEX FROM t")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range readAll(t, rows) {
			got = append(got, r[2]+" "+r[3]+" "+r[6])
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: SHOW INDEX: %v, want %s", when, got, want)
		}
		if got := stringsOf(t, db, "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'x' AND TABLE_NAME = 't'"); len(got) != 1 || got[0] != "3000" {
			t.Errorf("%s: TABLE_ROWS %v", when, got)
		}
	}
	check("after ANALYZE")
	db.Close()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	srv.provider = nil // closed: the cleanup leaves it
	_, db = openInternal(t, dir, "x")
	db.SetMaxOpenConns(1)
	check("after a restart")
}

// readAll reads rows as strings (NULL as "NULL").
func readAll(t *testing.T, rows *dbsql.Rows) [][]string {
	t.Helper()
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]dbsql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		r := make([]string, len(cols))
		for i, v := range vals {
			r[i] = "NULL"
			if v.Valid {
				r[i] = v.String
			}
		}
		out = append(out, r)
	}
	return out
}

// TestAnalyzeDroppedTable checks that an ANALYZE whose table is dropped
// while it collects fails with MySQL's error for a missing table and
// stores nothing.
func TestAnalyzeDroppedTable(t *testing.T) {
	srv, db := openInternal(t, t.TempDir(), "")
	db.SetMaxOpenConns(1)
	fillStatsTable(t, db, 200)
	p := srv.provider
	ctx := gsql.NewEmptyContext()
	m, err := p.metas.Get(ctx, "x", tableDefOf(t, p, "x", "t"))
	if err != nil {
		t.Fatal(err)
	}
	// The table is dropped after the statement resolved it: what
	// analyze collects has no table to go to.
	execAll(t, db, "DROP TABLE t")
	if err := p.analyze(context.Background(), m, statistics.CollectOptions{Parallel: 2}); !gsql.ErrTableNotFound.Is(err) {
		t.Fatalf("analyze of a dropped table: %v", err)
	}
	if err := p.stats.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := p.stats.Get(context.Background(), m.Exec.ID); st != nil {
		t.Fatalf("statistics stored for a dropped table: %+v", st)
	}
}

// TestConcurrentAnalyze runs ANALYZE TABLE on one table from several
// connections at once: each succeeds (a write conflict between them is
// retried) and the statistics stored are whole.
func TestConcurrentAnalyze(t *testing.T) {
	srv, db := openInternal(t, t.TempDir(), "")
	fillStatsTable(t, db, 2000)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			var tbl, op, typ, msg string
			if err := db.QueryRow("ANALYZE TABLE x.t").Scan(&tbl, &op, &typ, &msg); err != nil {
				errs <- err
			} else if typ != "status" || msg != "OK" {
				errs <- fmt.Errorf("ANALYZE: %s %s", typ, msg)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := srv.provider.stats.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := mustExecTable(t, srv.provider, "x", "t")
	st := srv.provider.stats.Get(context.Background(), m.ID)
	if st == nil || st.RowCount != 2000 || len(st.Indexes) != 3 || len(st.Columns) != 4 {
		t.Fatalf("statistics after concurrent ANALYZEs: %+v", st)
	}
}

// examined returns the rows examined by the statements whose digest
// text contains marker, summed (performance_schema).
func examined(t *testing.T, db *dbsql.DB, marker string) uint64 {
	t.Helper()
	var n uint64
	q := "SELECT COALESCE(SUM(SUM_ROWS_EXAMINED), 0) FROM performance_schema.events_statements_summary_by_digest WHERE DIGEST_TEXT LIKE '%" + marker + "%'"
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestStatisticsIndexChoice checks a plan that statistics make better:
// two indexes pinned alike by equalities, a with 2 values and b with
// 1,000. Without statistics the index is chosen by rule (the first of
// equal scores); with them the read goes through b, which EXPLAIN shows
// and which examines a few rows where a read by a examines half the
// table. The answers are the same with and without (differential, over
// values present, absent and NULL).
func TestStatisticsIndexChoice(t *testing.T) {
	_, db := openInternal(t, t.TempDir(), "")
	db.SetMaxOpenConns(1)
	execAll(t, db, "CREATE DATABASE x", "USE x",
		"CREATE TABLE u (id INT PRIMARY KEY, a INT, b INT, c INT, KEY ka (a), KEY kb (b), KEY kac (a, c))")
	var vals []string
	for i := range 4000 {
		b := fmt.Sprint(i % 1000)
		if i%500 == 3 {
			b = "NULL"
		}
		vals = append(vals, fmt.Sprintf("(%d, %d, %s, %d)", i, i%2, b, i%3))
	}
	execAll(t, db, "INSERT INTO u VALUES "+strings.Join(vals, ","))
	probe := "SELECT id AS probe_ab FROM u WHERE a = 1 AND b = 7 ORDER BY id"
	// Without statistics the rule prefers the index of more pinned
	// columns, kac; with them, the fewest rows estimated: kb (an UPDATE,
	// whose access path the rule chooses last, sql/writeaccess.go).
	probe2 := "UPDATE u SET c = c WHERE a = 1 AND c = 2 AND b = 7"
	explainRow := func(probe string) []string {
		rows, err := db.Query("EXPLAIN " + probe)
		if err != nil {
			t.Fatal(err)
		}
		r := readAll(t, rows)
		if len(r) != 1 {
			t.Fatalf("EXPLAIN %s: %v", probe, r)
		}
		return r[0]
	}
	key := func(probe string) string { return explainRow(probe)[6] }
	queries := []string{
		"SELECT id FROM u WHERE a = 1 AND b = 7 ORDER BY id",
		"SELECT id FROM u WHERE a = 0 AND b = 8 ORDER BY id",
		"SELECT id FROM u WHERE a = 0 AND b = 5000 ORDER BY id",
		"SELECT id FROM u WHERE a = 1 AND b IS NULL ORDER BY id",
		"SELECT count(*) FROM u WHERE a = 1 AND b BETWEEN 10 AND 20",
		"SELECT id FROM u WHERE b = 7 AND a IN (0, 1) ORDER BY id",
		"SELECT id FROM u WHERE a = 1 AND c = 2 AND b = 7 ORDER BY id",
		"SELECT id FROM u WHERE a = 1 AND c = 1 AND b > 990 ORDER BY id",
	}
	answers := func() []string {
		var out []string
		for _, q := range queries {
			out = append(out, strings.Join(stringsOf(t, db, q), ","))
		}
		return out
	}
	before, before2 := key(probe), key(probe2)
	stringsOf(t, db, probe)
	examinedBefore := examined(t, db, "probe_ab")
	without := answers()
	execAll(t, db, "ANALYZE TABLE u")
	// EXPLAIN's rows: the rows of b = 7 in b's histogram, 4 (the whole
	// table is in the sample), where rows over distinct values said 5.
	if got := explainRow(probe)[9]; got != "4" {
		t.Errorf("EXPLAIN rows with statistics: %s, want 4: %v", got, explainRow(probe))
	}
	if got := key(probe); got != "kb" {
		t.Errorf("with statistics the read goes through %s, want kb (without: %s)", got, before)
	}
	if got := key(probe2); got != "kb" || before2 != "kac" {
		t.Errorf("%s: through %s with statistics, want kb; through %s without, want kac", probe2, got, before2)
	}
	stringsOf(t, db, probe)
	examinedAfter := examined(t, db, "probe_ab") - examinedBefore
	if examinedAfter > 10 || before != "kb" && examinedBefore < 1000 {
		t.Errorf("rows examined: %d without statistics (%s), %d with", examinedBefore, before, examinedAfter)
	}
	t.Logf("rows examined: %d without statistics (%s), %d with (kb); probe2 %s -> %s", examinedBefore, before, examinedAfter, before2, key(probe2))
	if with := answers(); strings.Join(with, "|") != strings.Join(without, "|") {
		t.Errorf("answers differ with statistics:\n with %v\n without %v", with, without)
	}
}

// TestAutoAnalyze checks when a node analyzes a table by itself: once
// autoAnalyzeMinRows rows of a table never analyzed changed, then once
// the rows changed since pass tidb_auto_analyze_ratio of its rows;
// rolled-back writes do not count, and tidb_enable_auto_analyze = OFF
// stops it. It runs the background worker's step itself
// (autoAnalyzeOnce), which the worker may also run meanwhile under the
// same rules.
func TestAutoAnalyze(t *testing.T) {
	srv, db := openInternal(t, t.TempDir(), "")
	db.SetMaxOpenConns(1)
	p := srv.provider
	ctx := context.Background()
	execAll(t, db, "CREATE DATABASE x", "USE x", "CREATE TABLE t (id INT PRIMARY KEY, a INT, KEY ka (a))")
	insert := func(from, to int) {
		t.Helper()
		var vals []string
		for i := from; i < to; i++ {
			vals = append(vals, fmt.Sprintf("(%d, %d)", i, i%7))
		}
		execAll(t, db, "INSERT INTO t VALUES "+strings.Join(vals, ","))
	}
	id := mustExecTable(t, p, "x", "t").ID
	step := func(what string, wantRows uint64) uint64 {
		t.Helper()
		if err := p.autoAnalyzeOnce(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var rows, version uint64
		if st := p.stats.Get(ctx, id); st != nil {
			rows, version = st.RowCount, st.Version
		}
		if rows != wantRows {
			t.Fatalf("%s: statistics of %d rows, want %d", what, rows, wantRows)
		}
		return version
	}
	insert(0, 600)
	step("600 rows inserted", 0)
	insert(600, 1500)
	v1 := step("1,500 rows inserted", 1500)
	execAll(t, db, "UPDATE t SET a = a + 1 WHERE id < 500")
	if v := step("500 rows of 1,500 updated", 1500); v != v1 {
		t.Fatal("analyzed again after a third of the rows changed")
	}
	// The row count is the statistics' plus inserts less deletes since.
	tableRows := func(want string) {
		t.Helper()
		if got := stringsOf(t, db, "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'x' AND TABLE_NAME = 't'"); len(got) != 1 || got[0] != want {
			t.Errorf("TABLE_ROWS %v, want %s", got, want)
		}
	}
	execAll(t, db, "DELETE FROM t WHERE id >= 1400")
	tableRows("1400")
	if v := step("500 rows updated and 100 deleted of 1,500", 1500); v != v1 {
		t.Fatal("analyzed again after 600 of 1,500 rows changed")
	}
	execAll(t, db, "BEGIN", "UPDATE t SET a = a + 1 WHERE id >= 500", "ROLLBACK")
	if v := step("1,000 updates rolled back", 1500); v != v1 {
		t.Fatal("rolled-back updates counted")
	}
	execAll(t, db, "SET GLOBAL tidb_enable_auto_analyze = OFF")
	insert(1500, 3000)
	step("1,500 rows inserted with auto-analyze off", 1500)
	tableRows("2900")
	execAll(t, db, "SET GLOBAL tidb_enable_auto_analyze = ON", "SET GLOBAL tidb_auto_analyze_ratio = 2.5")
	step("2,100 of 1,500 rows changed, ratio 2.5", 1500)
	execAll(t, db, "SET GLOBAL tidb_auto_analyze_ratio = 0.5")
	step("2,100 of 1,500 rows changed, ratio 0.5", 2900)
	tableRows("2900")
}

// TestStatisticsTypesDifferential analyzes a table with an index on a
// column of each kind of type (strings under a case-insensitive
// collation, DECIMAL, DATETIME, DOUBLE, ENUM, a composite key with NULLs,
// JSON and a long TEXT not indexed) and checks that queries over ranges
// and points of them answer the same with and without statistics (GMS's
// costing reads the histograms' bounds as values of the columns' types).
func TestStatisticsTypesDifferential(t *testing.T) {
	_, db := openInternal(t, t.TempDir(), "")
	db.SetMaxOpenConns(1)
	execAll(t, db, "CREATE DATABASE x", "USE x",
		"CREATE TABLE v (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb4_0900_ai_ci, d DECIMAL(10,2), ts DATETIME, f DOUBLE, "+
			"e ENUM('red','green','blue'), u BIGINT UNSIGNED, j JSON, txt TEXT, "+
			"KEY ks (s), KEY kd (d), KEY kts (ts), KEY kf (f), KEY ke (e), KEY ku (u, s))")
	var vals []string
	for i := range 1500 {
		s := fmt.Sprintf("'%s%d'", []string{"apple", "APPLE", "Banana", "cherry"}[i%4], i%37)
		if i%11 == 0 {
			s = "NULL"
		}
		vals = append(vals, fmt.Sprintf("(%d, %s, %d.%02d, '2024-01-%02d %02d:00:00', %d.5, '%s', %d, '{\"k\": %d}', '%s')",
			i, s, i%100-50, i%100, 1+i%28, i%24, i%13-6, []string{"red", "green", "blue"}[i%3],
			uint64(1)<<63+uint64(i%50), i, strings.Repeat("x", 100+i%200)))
	}
	execAll(t, db, "INSERT INTO v VALUES "+strings.Join(vals, ","))
	queries := []string{
		"SELECT id FROM v WHERE s = 'apple3' ORDER BY id",
		"SELECT id FROM v WHERE s > 'b' AND s < 'c' ORDER BY id",
		"SELECT count(*) FROM v WHERE s IS NULL",
		"SELECT id FROM v WHERE d BETWEEN -3.5 AND 2.25 ORDER BY id",
		"SELECT id FROM v WHERE d = 7.07 ORDER BY id",
		"SELECT id FROM v WHERE ts >= '2024-01-27' ORDER BY id",
		"SELECT id FROM v WHERE ts = '2024-01-05 04:00:00' ORDER BY id",
		"SELECT id FROM v WHERE f < -5 ORDER BY id",
		"SELECT id FROM v WHERE f = 0.5 AND e = 'green' ORDER BY id",
		"SELECT count(*) FROM v WHERE e = 'blue' AND s LIKE 'a%'",
		"SELECT id FROM v WHERE u = 9223372036854775817 AND s = 'cherry3' ORDER BY id",
		"SELECT id FROM v WHERE u > 9223372036854775850 ORDER BY id",
		"SELECT a.id, b.id FROM v a JOIN v b ON a.d = b.d AND b.s = 'banana5' WHERE a.e = 'red' ORDER BY a.id, b.id",
		"SELECT e, count(*) FROM v WHERE ts < '2024-01-03' GROUP BY e ORDER BY e",
	}
	run := func() []string {
		var out []string
		for _, q := range queries {
			out = append(out, strings.Join(stringsOf(t, db, q), ","))
		}
		return out
	}
	without := run()
	if got := stringsOf(t, db, "ANALYZE TABLE v"); len(got) != 1 || got[0] != "x.v analyze status OK" {
		t.Fatalf("ANALYZE TABLE: %v", got)
	}
	with := run()
	for i, q := range queries {
		if with[i] != without[i] {
			t.Errorf("%s:\n with statistics    %.200s\n without statistics %.200s", q, with[i], without[i])
		}
	}
	// An ENUM's values are counted as the enum's indexes.
	if got := stringsOf(t, db, "SELECT CARDINALITY FROM information_schema.STATISTICS WHERE TABLE_NAME = 'v' AND INDEX_NAME = 'ke'"); len(got) != 1 || got[0] != "3" {
		t.Errorf("ENUM cardinality %v, want 3", got)
	}
}

// TestAnalyzeReadingsAgree: auto-analyze's paced collection (the
// table read in statistics.PacedParts sub-ranges one after another, with
// pauses) and an ANALYZE statement's collection in waves that report
// progress store the same statistics as a parallel one.
func TestAnalyzeReadingsAgree(t *testing.T) {
	srv, db := openInternal(t, t.TempDir(), "")
	db.SetMaxOpenConns(1)
	fillStatsTable(t, db, 3000)
	p := srv.provider
	ctx := context.Background()
	id := mustExecTable(t, p, "x", "t").ID
	m, ok, err := p.tableMetaByID(ctx, id)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	collect := func(opts statistics.CollectOptions) statistics.Table {
		t.Helper()
		if err := p.analyze(ctx, m, opts); err != nil {
			t.Fatal(err)
		}
		st := *p.stats.Get(ctx, id)
		st.Version, st.AnalyzedAt = 0, 0
		return st
	}
	parallel := collect(statistics.CollectOptions{Parallel: 2})
	paced := collect(statistics.CollectOptions{Parallel: 1, Duty: 0.5})
	if parallel.RowCount != 3000 || !reflect.DeepEqual(parallel, paced) {
		t.Fatalf("paced statistics differ:\nparallel %+v\npaced    %+v", parallel, paced)
	}
	// With progress reported (ANALYZE TABLE), in waves of 2 parts.
	var steps []string
	reported := collect(statistics.CollectOptions{Parallel: 2, Progress: func(done, total int) {
		steps = append(steps, fmt.Sprintf("%d/%d", done, total))
	}})
	if !reflect.DeepEqual(parallel, reported) {
		t.Fatalf("statistics read with progress differ:\nparallel %+v\nreported %+v", parallel, reported)
	}
	if want := "2/16 4/16 6/16 8/16 10/16 12/16 14/16 16/16"; strings.Join(steps, " ") != want {
		t.Fatalf("progress %v, want %s", steps, want)
	}
}
