package sql_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	percsql "github.com/percdb/percdb/sql"
)

// BenchmarkWriteStatements measures the write side of sysbench's
// oltp_read_write on an in-process server over go-sql-driver, prepared,
// from one connection, one operation per iteration:
//
//   - txn: the write statements of one oltp_read_write transaction,
//     BEGIN, UPDATE ... SET k = k + 1 WHERE id = ?, UPDATE ... SET c = ?
//     WHERE id = ?, DELETE ... WHERE id = ?, INSERT of the deleted id,
//     COMMIT (pessimistic locks, then one prewrite);
//   - update_index, update_non_index: the autocommit UPDATEs of sysbench's
//     oltp_update_index and oltp_update_non_index (one-phase commits);
//   - insert: an autocommit INSERT of a new row (the row and its k entry).
//
// The store does not sync its writes (SyncNone), so this is the CPU of the
// write path without the WAL's fsync. Besides the wall time it reports the
// process's CPU time per operation (cpu-ns/op, client and server), which a
// loaded machine inflates less; count instructions for a steadier figure
// (docs/benchmarks.md, issue 13's write path).
//
//	go test ./sql -run '^$' -bench WriteStatements -benchtime 2000x -count 6
func BenchmarkWriteStatements(b *testing.B) {
	srv := startPointSelectServer(b, percsql.Config{})
	for _, shape := range []string{"txn", "update_index", "update_non_index", "insert"} {
		b.Run(shape, func(b *testing.B) { runWriteStatements(b, srv, shape) })
	}
}

// runWriteStatements runs b.N operations of shape (see
// BenchmarkWriteStatements) on srv from one connection.
func runWriteStatements(b *testing.B, srv *percsql.Server, shape string) {
	const rows = pointSelectRows
	ctx := context.Background()
	conn := sbtestConn(b, srv)
	prepare := func(q string) *sql.Stmt {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}
	exec := func(st *sql.Stmt, args ...any) {
		if _, err := st.ExecContext(ctx, args...); err != nil {
			b.Fatal(err)
		}
	}
	var op func(i int)
	switch shape {
	case "txn":
		begin, commit := prepare("BEGIN"), prepare("COMMIT")
		updIndex := prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?")
		updNonIndex := prepare("UPDATE sbtest1 SET c=? WHERE id=?")
		del := prepare("DELETE FROM sbtest1 WHERE id=?")
		ins := prepare("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")
		op = func(i int) {
			id := i%rows + 1
			exec(begin)
			exec(updIndex, (i*7)%rows+1)
			exec(updNonIndex, fmt.Sprintf("%0119d", i), (i*13)%rows+1)
			exec(del, id)
			exec(ins, id, i%rows, fmt.Sprintf("%0119d", i), fmt.Sprintf("%059d", i))
			exec(commit)
		}
	case "update_index":
		st := prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?")
		op = func(i int) { exec(st, i%rows+1) }
	case "update_non_index":
		st := prepare("UPDATE sbtest1 SET c=? WHERE id=?")
		op = func(i int) { exec(st, fmt.Sprintf("%0119d", i), i%rows+1) }
	case "insert":
		var base int
		if err := conn.QueryRowContext(ctx, "SELECT MAX(id) FROM sbtest1").Scan(&base); err != nil {
			b.Fatal(err)
		}
		st := prepare("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")
		op = func(i int) {
			base++
			exec(st, base, i%rows, fmt.Sprintf("%0119d", i), fmt.Sprintf("%059d", i))
		}
	default:
		b.Fatalf("unknown shape %q", shape)
	}
	// The first operation teaches the fast path the statements.
	op(0)
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 1; i <= b.N; i++ {
		op(i)
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// sbtestConn opens one connection to srv's database sbtest, closed when
// the benchmark ends.
func sbtestConn(b *testing.B, srv *percsql.Server) *sql.Conn {
	db := openDB(b, srv, "sbtest")
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return conn
}
