package sql_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/bench/scan"
	percsql "github.com/percdb/percdb/sql"
)

// BenchmarkScanQueries times scanbench's table queries (package
// bench/scan) on an in-process server over a 100k-row table, with
// pushdown to the coprocessor (copr) and without (gms), one query per
// iteration. Besides the wall time it reports the process's CPU time per
// query (cpu-ms/op), which a loaded machine inflates less:
//
//	go test ./sql -run '^$' -bench ScanQueries -benchtime 5x -cpuprofile cpu.out
func BenchmarkScanQueries(b *testing.B) {
	ctx := context.Background()
	srv := startServerConfig(b, percsql.Config{})
	admin := openDB(b, srv, "")
	mustExec(b, admin, "CREATE DATABASE scan")
	db := openDB(b, srv, "scan")
	db.SetMaxOpenConns(1)
	const rows = 100000
	if err := scan.CreateTable(ctx, db, "t"); err != nil {
		b.Fatal(err)
	}
	if err := scan.Load(ctx, db, "t", rows, 2, 1); err != nil {
		b.Fatal(err)
	}
	for _, q := range scan.TableQueries() {
		for _, mode := range []string{"copr", "gms"} {
			b.Run(q.Name+"/"+mode, func(b *testing.B) {
				on := "1"
				if mode == "gms" {
					on = "0"
				}
				mustExec(b, db, "SET @percdb_coprocessor = "+on)
				text := strings.ReplaceAll(q.SQL, "{t}", "t")
				cpu := processCPU()
				b.ResetTimer()
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
				b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op") // processCPU: fastpath_bench_test.go
			})
		}
	}
}
