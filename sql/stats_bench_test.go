package sql

import (
	dbsql "database/sql"
	"fmt"
	"strings"
	"testing"
)

// benchStatsTable starts a server with x.u of rows rows: a of 2 values,
// b of rows/10 values, c of 3, indexes ka (a), kb (b), kac (a, c).
func benchStatsTable(b *testing.B, rows int) *dbsql.DB {
	b.Helper()
	_, db := openInternal(b, b.TempDir(), "")
	db.SetMaxOpenConns(1)
	// Statistics only where the benchmark analyzes.
	for _, q := range []string{"SET GLOBAL tidb_enable_auto_analyze = OFF", "CREATE DATABASE x", "USE x",
		"CREATE TABLE u (id INT PRIMARY KEY, a INT, b INT, c INT, KEY ka (a), KEY kb (b), KEY kac (a, c))"} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	var vals []string
	for i := range rows {
		vals = append(vals, fmt.Sprintf("(%d, %d, %d, %d)", i, i%2, i%(rows/10), i%3))
		if len(vals) == 1000 || i == rows-1 {
			if _, err := db.Exec("INSERT INTO u VALUES " + strings.Join(vals, ",")); err != nil {
				b.Fatal(err)
			}
			vals = vals[:0]
		}
	}
	return db
}

// BenchmarkAnalyze100k measures ANALYZE TABLE of a 100,000-row table of
// four integer columns and three indexes.
func BenchmarkAnalyze100k(b *testing.B) {
	db := benchStatsTable(b, 100_000)
	b.ResetTimer()
	for range b.N {
		var tbl, op, typ, msg string
		if err := db.QueryRow("ANALYZE TABLE u").Scan(&tbl, &op, &typ, &msg); err != nil || msg != "OK" {
			b.Fatalf("ANALYZE: %s %v", msg, err)
		}
	}
}

// BenchmarkSelectivityPlan measures a query whose plan depends on
// selectivity, WHERE a = 1 AND b = 7 on 100,000 rows (a of 2 values, b of
// 10,000), without statistics (read by ka: half the table) and with them
// (read by kb: 10 rows).
func BenchmarkSelectivityPlan(b *testing.B) {
	db := benchStatsTable(b, 100_000)
	run := func(b *testing.B) {
		var key string
		row := db.QueryRow("EXPLAIN SELECT id FROM u WHERE a = 1 AND b = 7")
		var skip [12]dbsql.NullString
		ptrs := make([]any, 12)
		for i := range ptrs {
			ptrs[i] = &skip[i]
		}
		if err := row.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		key = skip[6].String
		b.Logf("key %s, rows %s", key, skip[9].String)
		for range b.N {
			rows, err := db.Query("SELECT id FROM u WHERE a = 1 AND b = 7")
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rows.Next() {
				n++
			}
			rows.Close()
			if n != 10 {
				b.Fatalf("%d rows, want 10", n)
			}
		}
	}
	b.Run("without-statistics", run)
	if _, err := db.Exec("ANALYZE TABLE u"); err != nil {
		b.Fatal(err)
	}
	b.Run("with-statistics", run)
}
