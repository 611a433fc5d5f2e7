// Command scanbench times scan and analytics queries on percdb and MariaDB
// side by side (package bench/scan): on tables of the (w, id, k, q, pad)
// shape of -rows sizes and, with -tpcc, on a one-warehouse TPC-C database
// (package bench/tpcc). It writes the result into docs/benchmarks.md. Run
// it from the root of the checkout:
//
//	go run ./bench/cmd/scanbench -rows 100000,1000000
//
// Each query runs -repeat times per server (the median is quoted), the
// servers alternating which goes first from query to query; a run past
// -limit is stopped with KILL QUERY and reported as "> limit". The tables
// are analyzed (ANALYZE TABLE) after the load on both servers, as a user
// would.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/percdb/percdb/bench"
	"github.com/percdb/percdb/bench/scan"
	"github.com/percdb/percdb/bench/tpcc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scanbench:", err)
		os.Exit(1)
	}
}

// options are the command's settings, kept in the results.
type options struct {
	Servers []string
	Rows    []int
	TPCC    bool
	Repeat  int
	Limit   time.Duration
	Loaders int
	Seed    int64
	// Queries is the -queries filter ("" times every query); match is it
	// compiled.
	Queries string         `json:",omitempty"`
	match   *regexp.Regexp `json:"-"`
}

// loadRecord is the load of one table (or the TPC-C database) on one
// server.
type loadRecord struct {
	Server, Table string
	Rows          int64
	Took          time.Duration
	Err           string
}

// measurement is one query on one table, per server.
type measurement struct {
	Query, Table string
	Rows         int // the table's rows, 0 for TPC-C
	// Ordered says the answer is fully determined (scan.Query.Ordered).
	Ordered bool
	Timings map[string]scan.Timing
}

type results struct {
	Command           string
	Options           options
	Started, Finished time.Time
	Machine           bench.Machine
	Versions          map[string]string
	Argv              map[string][]string
	Loads             []loadRecord
	Measurements      []measurement
	LoadAvgEnd        string
}

func run() error {
	var (
		servers   = flag.String("servers", bench.MariaDB+","+bench.Percdb, "servers to measure, comma-separated: mariadb, percdb")
		rows      = flag.String("rows", "100000,1000000", "table sizes, comma-separated, multiples of 10")
		withTPCC  = flag.Bool("tpcc", true, "also load a one-warehouse TPC-C database and time issue 13's queries on it")
		repeat    = flag.Int("repeat", 3, "runs per query and server (the median is quoted)")
		limit     = flag.Duration("limit", 60*time.Second, "time limit of one run of a query")
		loaders   = flag.Int("loaders", 4, "connections loading in parallel")
		seed      = flag.Int64("seed", 1, "seed of the data")
		repo      = flag.String("repo", ".", "percdb checkout to build ./cmd/percdb from")
		rev       = flag.String("rev", "", "build percdb from this git revision of -repo (default: the working tree)")
		percdbBin = flag.String("percdb-bin", "", "use this percdb binary instead of building -repo")
		doc       = flag.String("doc", "docs/benchmarks.md", "markdown file whose scan section is rewritten ('' to skip)")
		note      = flag.String("note", "", "remark printed with the results in the document")
		outDir    = flag.String("out", "", "directory for results.json (default: a new temporary directory, kept)")
		tmp       = flag.String("tmp", "", "directory for the servers' temporary data directories (default: $TMPDIR)")
		only      = flag.String("queries", "", "time only the queries whose names match this regular expression")
		replot    = flag.String("replot", "", "measure nothing: report the results.json of an earlier run")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if *replot != "" {
		b, err := os.ReadFile(*replot)
		if err != nil {
			return err
		}
		var res results
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("%s: %w", *replot, err)
		}
		return report(&res, *doc, *note)
	}
	sizes, err := bench.ParseInts(*rows)
	if err != nil {
		return fmt.Errorf("-rows: %w", err)
	}
	for _, n := range sizes {
		if n < scan.Groups || n%scan.Groups != 0 {
			return fmt.Errorf("-rows %d: want a positive multiple of %d", n, scan.Groups)
		}
	}
	if *repeat < 1 {
		return fmt.Errorf("-repeat %d: want at least 1", *repeat)
	}
	match, err := regexp.Compile(*only)
	if err != nil {
		return fmt.Errorf("-queries: %w", err)
	}
	o := options{Servers: bench.SplitList(*servers), Rows: sizes, TPCC: *withTPCC, Repeat: *repeat, Limit: *limit, Loaders: *loaders, Seed: *seed, Queries: *only, match: match}
	if *outDir, err = bench.ResultsDir(*outDir, "scanbench-results-"); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, runErr := measure(ctx, o, bench.ServerOptions{Dir: *tmp}, *repo, *rev, *percdbBin)
	res.Command = strings.TrimSpace("go run ./bench/cmd/scanbench " + bench.QuoteArgs(os.Args[1:]))
	runErr = errors.Join(runErr, bench.WriteResults(*outDir, res))
	fmt.Println("results.json in", *outDir)
	if runErr != nil {
		report(res, "", "")
		return fmt.Errorf("%w (the document was not updated)", runErr)
	}
	return report(res, *doc, *note)
}

func tableName(n int) string { return fmt.Sprintf("t%d", n) }

func measure(ctx context.Context, o options, so bench.ServerOptions, repo, rev, percdbBin string) (res *results, err error) {
	res = &results{Options: o, Started: time.Now(), Machine: bench.ReadMachine()}
	defer func() { res.Finished = time.Now() }()
	started, err := bench.StartServers(ctx, o.Servers, so, repo, rev, percdbBin)
	defer func() { err = errors.Join(err, started.Stop()) }()
	res.Versions, res.Argv = started.Versions, started.Argv
	if err != nil {
		return res, err
	}
	scanDBs, tpccDBs := map[string]*sql.DB{}, map[string]*sql.DB{}
	for _, s := range started.Servers {
		admin := bench.Open(s.Port, "", 2)
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS scan"); err != nil {
			return res, fmt.Errorf("%s: %w", s.Name, err)
		}
		db := bench.Open(s.Port, "scan", o.Loaders+2)
		defer db.Close()
		scanDBs[s.Name] = db
		for _, n := range o.Rows {
			rec := loadRecord{Server: s.Name, Table: tableName(n), Rows: int64(n)}
			log("%s: loading %s", s.Name, rec.Table)
			began := time.Now()
			err := scan.CreateTable(ctx, db, rec.Table)
			if err == nil {
				err = scan.Load(ctx, db, rec.Table, n, o.Loaders, o.Seed)
			}
			if err == nil {
				err = analyze(ctx, db, rec.Table)
			}
			rec.Took = time.Since(began)
			if err != nil {
				rec.Err = err.Error()
			}
			log("%s: %s loaded in %v %s", s.Name, rec.Table, rec.Took.Round(time.Second), rec.Err)
			res.Loads = append(res.Loads, rec)
		}
		if o.TPCC {
			rec := loadRecord{Server: s.Name, Table: "tpcc"}
			log("%s: loading TPC-C, 1 warehouse", s.Name)
			began := time.Now()
			err := tpcc.CreateSchema(ctx, admin, "tpcc")
			tdb := bench.Open(s.Port, "tpcc", o.Loaders+2)
			defer tdb.Close()
			if err == nil {
				rec.Rows, err = tpcc.Load(ctx, tdb, tpcc.LoadOptions{Scale: tpcc.StandardScale(1), Loaders: o.Loaders, Seed: o.Seed})
			}
			for _, t := range tpcc.Tables {
				if err == nil {
					err = analyze(ctx, tdb, t)
				}
			}
			rec.Took = time.Since(began)
			if err != nil {
				rec.Err = err.Error()
			}
			log("%s: TPC-C loaded in %v %s", s.Name, rec.Took.Round(time.Second), rec.Err)
			res.Loads = append(res.Loads, rec)
			tpccDBs[s.Name] = tdb
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	i := 0
	measureOne := func(q scan.Query, table string, rows int, dbs map[string]*sql.DB) {
		if !o.match.MatchString(q.Name) {
			return
		}
		m := measurement{Query: q.Name, Table: table, Rows: rows, Ordered: q.Ordered, Timings: map[string]scan.Timing{}}
		for k := range started.Servers {
			s := started.Servers[(i+k)%len(started.Servers)]
			if failed(res.Loads, s.Name, table) {
				m.Timings[s.Name] = scan.Timing{Query: q.Name, Err: "not loaded"}
				continue
			}
			t := scan.Time(ctx, dbs[s.Name], q, table, o.Repeat, o.Limit)
			log("%s: %s on %s: %s %s", s.Name, q.Name, table, t.Summary(), t.Err)
			m.Timings[s.Name] = t
		}
		i++
		res.Measurements = append(res.Measurements, m)
	}
	for _, n := range o.Rows {
		for _, q := range scan.TableQueries() {
			measureOne(q, tableName(n), n, scanDBs)
		}
	}
	if o.TPCC {
		for _, q := range scan.TPCCQueries() {
			measureOne(q, "tpcc", 0, tpccDBs)
		}
	}
	res.LoadAvgEnd = bench.LoadAvg()
	return res, ctx.Err()
}

// analyze runs ANALYZE TABLE, reading its result rows (MariaDB reports a
// failure as a row, not an error).
func analyze(ctx context.Context, db *sql.DB, table string) error {
	rows, err := db.QueryContext(ctx, "ANALYZE TABLE "+table)
	if err != nil {
		return fmt.Errorf("ANALYZE TABLE %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

func failed(loads []loadRecord, server, table string) bool {
	for _, l := range loads {
		if l.Server == server && l.Table == table {
			return l.Err != ""
		}
	}
	return false
}

func log(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
