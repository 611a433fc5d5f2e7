package sql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/percdb/percdb/bench/scan"
	percsql "github.com/percdb/percdb/sql"
)

// BenchmarkScanQueries times scanbench's table queries (package
// bench/scan) on an in-process server over a 100k-row table, one query
// per iteration, for profiling the scan path:
//
//	go test ./sql -run '^$' -bench ScanQueries -benchtime 5x -cpuprofile cpu.out
func BenchmarkScanQueries(b *testing.B) {
	ctx := context.Background()
	srv := startServerConfig(b, percsql.Config{})
	admin := openDB(b, srv, "")
	mustExec(b, admin, "CREATE DATABASE scan")
	db := openDB(b, srv, "scan")
	const rows = 100000
	if err := scan.CreateTable(ctx, db, "t"); err != nil {
		b.Fatal(err)
	}
	if err := scan.Load(ctx, db, "t", rows, 2, 1); err != nil {
		b.Fatal(err)
	}
	for _, q := range scan.TableQueries() {
		b.Run(q.Name, func(b *testing.B) {
			text := strings.ReplaceAll(q.SQL, "{t}", "t")
			for range b.N {
				rs, err := db.QueryContext(ctx, text)
				if err != nil {
					b.Fatal(err)
				}
				for rs.Next() {
				}
				if err := rs.Err(); err != nil {
					b.Fatal(err)
				}
				rs.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/rows, "ns/row")
		})
	}
}
