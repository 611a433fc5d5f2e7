package sql_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	percsql "github.com/percdb/percdb/sql"
)

// sbtestTable is sysbench's table, sbtest1 in database sbtest.
const sbtestTable = `CREATE TABLE sbtest.sbtest1 (
	id INTEGER NOT NULL AUTO_INCREMENT,
	k INTEGER DEFAULT '0' NOT NULL,
	c CHAR(120) DEFAULT '' NOT NULL,
	pad CHAR(60) DEFAULT '' NOT NULL,
	PRIMARY KEY (id), KEY k_1 (k))`

// BenchmarkRangeQueries runs sysbench oltp_read_only's four range
// queries (100 rows of the primary key each) and the same shapes over the
// secondary index k, as prepared statements on an in-process server over
// a 10,000-row sbtest table, one query per iteration. Besides the wall
// time it reports the process's CPU time per query (cpu-us/op), which a
// loaded machine inflates less. Each query runs on the fast path
// (fastpath_scan.go; the k- shapes, over a secondary index, go to GMS
// there too), and on GMS's path with the plan cache of prepared
// statements on and off (plancache.go):
//
//	go test ./sql -run '^$' -bench RangeQueries -benchtime 2000x -cpuprofile cpu.out
func BenchmarkRangeQueries(b *testing.B) {
	srv := startServerConfig(b, percsql.Config{})
	admin := openDB(b, srv, "")
	mustExec(b, admin, "CREATE DATABASE sbtest", sbtestTable)
	const rows = 10000
	rnd := rand.New(rand.NewSource(1))
	for i := 1; i <= rows; i += 500 {
		var q strings.Builder
		q.WriteString("INSERT INTO sbtest.sbtest1 (id, k, c, pad) VALUES ")
		for j := i; j < i+500; j++ {
			if j > i {
				q.WriteString(", ")
			}
			// sysbench's c is 10 groups of 11 digits joined by '-'.
			fmt.Fprintf(&q, "(%d, %d, '%011d-%011d-%011d-%011d-%011d-%011d-%011d-%011d-%011d-%011d', '%011d-%011d-%011d-%011d-%011d')",
				j, rnd.Intn(rows)+1,
				rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11),
				rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11),
				rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11))
		}
		mustExec(b, admin, q.String())
	}
	queries := []struct{ name, sql string }{
		{"simple", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?"},
		{"sum", "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?"},
		{"order", "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"},
		{"distinct", "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"},
		{"k-simple", "SELECT id FROM sbtest1 WHERE k BETWEEN ? AND ?"},
		{"k-count", "SELECT COUNT(*) FROM sbtest1 WHERE k BETWEEN ? AND ?"},
		{"k-sum", "SELECT SUM(id) FROM sbtest1 WHERE k BETWEEN ? AND ?"},
	}
	modes := []struct{ name, set string }{
		{"fastpath", "SET @percdb_fastpath = 1, @percdb_plan_cache = 1"},
		{"plancache", "SET @percdb_fastpath = 0, @percdb_plan_cache = 1"},
		{"gms", "SET @percdb_fastpath = 0, @percdb_plan_cache = 0"},
	}
	for _, q := range queries {
		for _, m := range modes {
			b.Run(q.name+"/"+m.name, func(b *testing.B) {
				benchRangeQuery(b, srv, q.sql, m.set, rows)
			})
		}
	}
}

// benchRangeQuery runs the prepared query of two parameters (lo, lo+99)
// from one connection whose session variables set sets.
func benchRangeQuery(b *testing.B, srv *percsql.Server, query, set string, rows int) {
	ctx := context.Background()
	conn := sbtestConn(b, srv)
	if _, err := conn.ExecContext(ctx, set); err != nil {
		b.Fatal(err)
	}
	st, err := conn.PrepareContext(ctx, query)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	run := func(i int) {
		lo := (i*7919)%(rows-100) + 1
		rs, err := st.QueryContext(ctx, lo, lo+99)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rs.Next() {
			n++
		}
		if err := rs.Err(); err != nil {
			b.Fatal(err)
		}
		rs.Close()
		if n == 0 {
			b.Fatal("no rows")
		}
	}
	run(0)
	cpu := processCPU()
	b.ResetTimer()
	for i := range b.N {
		run(i)
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
}
