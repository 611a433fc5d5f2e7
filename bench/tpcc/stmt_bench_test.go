package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/percdb/percdb/sql/sqltest"
)

// benchScale is small enough to load in seconds but has the standard
// number of districts and enough customers per last name for Payment's
// lookup by name to read several rows.
var benchScale = Scale{Warehouses: 1, Items: 2000, Districts: 10, Customers: 300, NewOrders: 90}

// benchTxn runs transactions of type t from one connection, the
// per-statement cost of each transaction type without contention.
func benchTxn(b *testing.B, t TxnType) {
	srv := sqltest.Start(b, "")
	ctx := context.Background()
	if err := CreateSchema(ctx, srv.Open(""), "tpcc"); err != nil {
		b.Fatal(err)
	}
	db := srv.Open("tpcc")
	if _, err := Load(ctx, db, LoadOptions{Scale: benchScale, Loaders: 2, Seed: 7}); err != nil {
		b.Fatal(err)
	}
	// The statistics auto-analyze gathers after a load, at once: plans
	// do not change midway through the measurement.
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+strings.Join(Tables, ", ")); err != nil {
		b.Fatal(err)
	}
	s := &session{db: db}
	defer s.drop()
	if err := s.ensure(ctx); err != nil {
		b.Fatal(err)
	}
	// TPCC_BENCH_PLANCACHE=off runs GMS's statements without the plan
	// cache of prepared statements, for a comparison in one sitting.
	if v := os.Getenv("TPCC_BENCH_PLANCACHE"); v != "" {
		if _, err := s.conn.ExecContext(ctx, "SET @percdb_plan_cache = '"+v+"'"); err != nil {
			b.Fatal(err)
		}
	}
	// TPCC_BENCH_SET sets session variables for the same purpose, e.g.
	// TPCC_BENCH_SET='@percdb_lookup_batch = 0'.
	if v := os.Getenv("TPCC_BENCH_SET"); v != "" {
		if _, err := s.conn.ExecContext(ctx, "SET "+v); err != nil {
			b.Fatal(err)
		}
	}
	r := NewRand(11, NewConstants(7))
	// Warm up: prepare every statement and fill the plan caches.
	for range 20 {
		if err := r.draw(t, benchScale, 1, 1, false).run(ctx, s); err != nil && !errors.Is(err, errRollback) {
			b.Fatal(err)
		}
	}
	if _, err := db.Exec("TRUNCATE TABLE performance_schema.events_statements_summary_by_digest"); err != nil {
		b.Fatal(err)
	}
	// TPCC_BENCH_CPUPROFILE profiles the timed loop only, not the load.
	if path := os.Getenv("TPCC_BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for range b.N {
		if err := r.draw(t, benchScale, 1, 1, false).run(ctx, s); err != nil && !errors.Is(err, errRollback) {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// The process's CPU per transaction (server and client are both in
	// it), which a loaded machine inflates less than the wall time.
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	b.ReportMetric(float64(cpu)/1e3/float64(b.N), "cpu-us/op")
	if os.Getenv("TPCC_BENCH_DIGESTS") != "" {
		printDigests(b, db)
		printFastPath(b, s.conn)
	}
}

// printDigests logs the statement summary, where a transaction's time goes
// statement by statement, and the plan cache's counters.
func printDigests(b *testing.B, db *sql.DB) {
	rows, err := db.Query("SELECT DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT FROM performance_schema.events_statements_summary_by_digest")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	type dg struct {
		text     string
		n, total int64
	}
	var all []dg
	for rows.Next() {
		var d dg
		var text sql.NullString
		if err := rows.Scan(&text, &d.n, &d.total); err != nil {
			b.Fatal(err)
		}
		d.text = text.String
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].total > all[j].total })
	for _, d := range all {
		fmt.Printf("%8d x %8.1f us  %s\n", d.n, float64(d.total)/float64(d.n)/1e6, d.text)
	}
	var name, value string
	status, err := db.Query("SHOW STATUS LIKE 'Percdb_plan_cache_%'")
	if err != nil {
		b.Fatal(err)
	}
	defer status.Close()
	for status.Next() {
		if err := status.Scan(&name, &value); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%s %s\n", name, value)
	}
}

// printFastPath logs the fast path's counters of the benchmark's session
// (session scope: SHOW STATUS on another connection would not see them):
// how many statements it ran and why the others went to GMS.
func printFastPath(b *testing.B, conn *sql.Conn) {
	rows, err := conn.QueryContext(context.Background(), "SHOW STATUS LIKE 'Percdb_fastpath_%'")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			b.Fatal(err)
		}
		if value != "0" {
			fmt.Printf("%s %s\n", name, value)
		}
	}
}

func BenchmarkNewOrder(b *testing.B)    { benchTxn(b, NewOrder) }
func BenchmarkPayment(b *testing.B)     { benchTxn(b, Payment) }
func BenchmarkOrderStatus(b *testing.B) { benchTxn(b, OrderStatus) }
func BenchmarkDelivery(b *testing.B)    { benchTxn(b, Delivery) }
func BenchmarkStockLevel(b *testing.B)  { benchTxn(b, StockLevel) }
