package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"syscall"
	"testing"

	percsql "github.com/percdb/percdb/sql"
)

// BenchmarkPointSelect measures sysbench's point select, SELECT c FROM
// sbtest1 WHERE id = ?, through the fast path and through GMS on the same
// in-process server (the GMS side sets @percdb_fastpath = 0), over
// go-sql-driver on loopback, prepared and as text.
//
//	go test ./sql -run '^$' -bench PointSelect -benchtime 2s
func BenchmarkPointSelect(b *testing.B) {
	srv := startPointSelectServer(b, percsql.Config{})
	for _, path := range []string{"fast", "gms"} {
		for _, mode := range []string{"prepared", "text"} {
			b.Run(path+"/"+mode, func(b *testing.B) { runPointSelect(b, srv, path == "gms", mode == "prepared") })
		}
	}
}

// BenchmarkPointSelectObservation measures what observing statements
// (statement metrics, digests, slow log check, process list record)
// costs sysbench's point select on the fast path: the same statements on
// a server that observes them and on one that does not. The difference
// is small against the spread of timed runs on a shared machine; count
// instructions instead, the whole process's, at two -benchtime counts
// (docs/benchmarks.md has the commands):
//
//	go test ./sql -run '^$' -bench PointSelectObservation -count 10
func BenchmarkPointSelectObservation(b *testing.B) {
	for _, observed := range []bool{true, false} {
		name, cfg := "observed", percsql.Config{}
		if !observed {
			name, cfg = "unobserved", percsql.WithoutObservation(cfg)
		}
		b.Run(name, func(b *testing.B) {
			srv := startPointSelectServer(b, cfg)
			for _, mode := range []string{"prepared", "text"} {
				b.Run(mode, func(b *testing.B) { runPointSelect(b, srv, false, mode == "prepared") })
			}
		})
	}
}

// pointSelectRows is how many rows startPointSelectServer loads.
const pointSelectRows = 1000

// startPointSelectServer starts a server with cfg holding sysbench's
// table sbtest.sbtest1 with pointSelectRows rows.
func startPointSelectServer(b *testing.B, cfg percsql.Config) *percsql.Server {
	srv := startServerConfig(b, cfg)
	admin := openDB(b, srv, "")
	mustExec(b, admin, "CREATE DATABASE sbtest", sbtestTable) // range_bench_test.go
	const rows = pointSelectRows
	for i := 1; i <= rows; i += 100 {
		q := "INSERT INTO sbtest.sbtest1 (id, k, c, pad) VALUES "
		for j := i; j < i+100; j++ {
			if j > i {
				q += ", "
			}
			q += fmt.Sprintf("(%d, %d, '%070d', '%050d')", j, j*7%rows, j, j)
		}
		mustExec(b, admin, q)
	}
	return srv
}

// runPointSelect runs b.N point selects on srv from one connection,
// through GMS when gms (@percdb_fastpath = 0), prepared or as text.
func runPointSelect(b *testing.B, srv *percsql.Server, gms, prepared bool) {
	const rows = pointSelectRows
	conn := sbtestConn(b, srv)
	if gms {
		if _, err := conn.ExecContext(context.Background(), "SET @percdb_fastpath = 0"); err != nil {
			b.Fatal(err)
		}
	}
	query := func(i int) *sql.Row {
		return conn.QueryRowContext(context.Background(), fmt.Sprintf("SELECT c FROM sbtest1 WHERE id=%d", i%rows+1))
	}
	if prepared {
		st, err := conn.PrepareContext(context.Background(), "SELECT c FROM sbtest1 WHERE id=?")
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		query = func(i int) *sql.Row { return st.QueryRow(i%rows + 1) }
	}
	var c string
	// The first execution teaches the fast path the columns.
	if err := query(0).Scan(&c); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		if err := query(i).Scan(&c); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time, client and server, steadier than wall time on a shared
	// machine.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the CPU time this process has used, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
