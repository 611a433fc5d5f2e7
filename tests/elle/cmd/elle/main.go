// Command elle runs the list-append workload of package elle against a
// MySQL-protocol server for a while, then checks the history for
// snapshot-isolation anomalies and prints the anomaly counts and the number
// of transactions checked. The exit status is 0 when the history is valid
// under snapshot isolation, 1 when it is not, 2 when the run failed.
//
// A long run against percdb:
//
//	go run ./tests/elle/cmd/elle -dsn 'root@tcp(127.0.0.1:4000)/test' -duration 10m -clients 16
//
// Against a node started in this process (in-memory store), or a private
// MariaDB started for the run (to see the checker find InnoDB's lost
// updates):
//
//	go run ./tests/elle/cmd/elle -start percdb -duration 10m -clients 16
//	go run ./tests/elle/cmd/elle -start mariadb -duration 1m -clients 16
//
// -history saves the history as JSON lines; -check re-checks a saved one
// without running anything.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/elle"
	"github.com/percdb/percdb/tests/isolation/testserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command without the process around it: it returns the exit
// status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("elle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		dsn        = fs.String("dsn", "", "go-sql-driver/mysql DSN of the server, with a database")
		start      = fs.String("start", "", `start a server for the run instead of -dsn: "percdb" (in process) or "mariadb"`)
		duration   = fs.Duration("duration", time.Minute, "how long to invoke new transactions")
		clients    = fs.Int("clients", 16, "concurrent clients")
		txns       = fs.Int("txns", 0, "stop after this many transactions (0: only -duration)")
		keys       = fs.Int("keys", 8, "active keys at a time")
		maxWrites  = fs.Int("max-writes-per-key", 32, "appends before a key is retired")
		maxOps     = fs.Int("max-ops", 4, "most micro-operations per transaction")
		seed       = fs.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the transaction generator")
		table      = fs.String("table", "elle_append", "table holding the lists (dropped and recreated)")
		upsert     = fs.Bool("upsert", false, "append with INSERT ... ON DUPLICATE KEY UPDATE")
		txnTimeout = fs.Duration("txn-timeout", 30*time.Second, "bound on one transaction (0: none)")
		historyOut = fs.String("history", "", "write the history to this file (JSON lines)")
		checkFile  = fs.String("check", "", "only check the history in this file")
		noRealTime = fs.Bool("no-realtime", false, "leave real-time edges out (plain, not strong, snapshot isolation)")
		examples   = fs.Int("examples", 8, "examples printed per anomaly")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var (
		h   []elle.Txn
		err error
	)
	if *checkFile != "" {
		h, err = readHistory(*checkFile)
	} else {
		h, err = runWorkload(ctx, stdout, *dsn, *start, elle.WorkloadOptions{
			Table:           *table,
			Clients:         *clients,
			Txns:            *txns,
			Duration:        *duration,
			ActiveKeys:      *keys,
			MaxWritesPerKey: *maxWrites,
			MaxOps:          *maxOps,
			Seed:            *seed,
			Upsert:          *upsert,
			TxnTimeout:      *txnTimeout,
			Progress:        stdout,
		})
		if err == nil && *historyOut != "" {
			err = writeHistory(*historyOut, h)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "elle:", err)
		return 2
	}
	checkStart := time.Now()
	res, err := elle.Check(h, elle.CheckOptions{SkipRealTime: *noRealTime, MaxExamples: *examples})
	if err != nil {
		fmt.Fprintln(stderr, "elle:", err)
		return 2
	}
	if err := res.WriteReport(stdout); err != nil {
		fmt.Fprintln(stderr, "elle:", err)
		return 2
	}
	fmt.Fprintf(stdout, "checked in %v\n", time.Since(checkStart).Round(time.Millisecond))
	if !res.Valid() {
		return 1
	}
	return 0
}

func runWorkload(ctx context.Context, stdout io.Writer, dsn, start string, opts elle.WorkloadOptions) ([]elle.Txn, error) {
	var (
		srv *testserver.Server
		err error
	)
	switch {
	case start != "" && dsn != "":
		return nil, errors.New("give -dsn or -start, not both")
	case start == string(testserver.Percdb):
		srv, err = testserver.StartPercdb(ctx, testserver.PercdbOptions{})
	case start == string(testserver.MariaDB):
		srv, err = testserver.StartMariaDB(ctx, testserver.MariaDBOptions{})
	case start != "":
		return nil, fmt.Errorf("-start %q: want percdb or mariadb", start)
	case dsn == "":
		return nil, errors.New("-dsn is required (or -start, or -check)")
	}
	if err != nil {
		return nil, err
	}
	if srv != nil {
		defer srv.Close()
		dsn = srv.DSN
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(opts.Clients)
	db.SetMaxIdleConns(opts.Clients)
	fmt.Fprintf(stdout, "list-append: %d clients, %v, seed %d\n", opts.Clients, opts.Duration, opts.Seed)
	h, err := elle.Run(ctx, db, opts)
	if err != nil {
		return nil, err
	}
	if len(h) == 0 {
		return nil, errors.New("no transaction ran")
	}
	return h, nil
}

func readHistory(path string) ([]elle.Txn, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return elle.ReadHistory(f)
}

func writeHistory(path string, h []elle.Txn) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := elle.WriteHistory(f, h); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
