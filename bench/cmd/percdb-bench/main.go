// Command percdb-bench measures percdb against MariaDB with sysbench, side
// by side on this machine, and writes the result into docs/benchmarks.md
// and a chart. See package bench for the method; run it from the root of
// the checkout:
//
//	go run ./bench/cmd/percdb-bench -budget 5m
//
// It starts private servers on free ports in temporary directories and
// stops them on every exit path, Ctrl-C included (a second Ctrl-C exits at
// once; the servers die with the harness).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/percdb/percdb/bench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "percdb-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		servers   = flag.String("servers", bench.MariaDB+","+bench.Percdb, "servers to measure, comma-separated: mariadb, percdb")
		workloads = flag.String("workloads", strings.Join(bench.DefaultWorkloads(), ","), "sysbench workloads, comma-separated")
		threads   = flag.String("threads", "1,4", "sysbench thread counts, comma-separated")
		rounds    = flag.Int("rounds", 3, "times every run is repeated (the median is quoted)")
		tables    = flag.Int("tables", 1, "sysbench tables")
		tableSize = flag.Int("table-size", 10000, "rows per table")
		runTime   = flag.Duration("time", 20*time.Second, "length of one run (whole seconds); ignored with -budget")
		budget    = flag.Duration("budget", 0, "wall time for everything, building percdb and loading included, e.g. 5m: picks the run length to fit (0: use -time)")
		repo      = flag.String("repo", ".", "percdb checkout to build ./cmd/percdb from")
		rev       = flag.String("rev", "", "build percdb from this git revision of -repo, e.g. HEAD (default: the working tree as it is)")
		percdbBin = flag.String("percdb-bin", "", "use this percdb binary instead of building -repo")
		txnMode   = flag.String("percdb-txn-mode", "", "percdb's transaction mode, optimistic or pessimistic (SET GLOBAL percdb_txn_mode; default: the server's)")
		isolation = flag.String("isolation", "", "every server's global transaction isolation level, e.g. READ-COMMITTED (default: the servers', REPEATABLE-READ)")
		sysbench  = flag.String("sysbench", "sysbench", "sysbench binary")
		doc       = flag.String("doc", "docs/benchmarks.md", "markdown file whose sysbench section is rewritten ('' to skip)")
		chart     = flag.String("chart", "docs/benchmarks-sysbench", "chart path without extension: writes .png and .svg ('' to skip)")
		note      = flag.String("note", "", "remark printed with the results in the document (e.g. about the machine's load)")
		outDir    = flag.String("out", "", "directory for raw sysbench outputs and results.json (default: a new temporary directory, kept)")
		tmp       = flag.String("tmp", "", "directory for the servers' temporary data directories (default: $TMPDIR)")
		keep      = flag.Bool("keep", false, "keep the servers' data directories and logs")
		install   = flag.Bool("install", true, "apt-get install sysbench and mariadb-server if missing")
		replot    = flag.String("replot", "", "measure nothing: report the results.json of an earlier run (with -doc, -chart, -note)")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (flags only; -h lists them)", flag.Args())
	}
	out := output{doc: *doc, chart: *chart, note: *note}
	if *replot != "" {
		res, err := readJSON(*replot)
		if err != nil {
			return err
		}
		return out.report(res)
	}

	// Options read zero as "default"; on the command line it is a mistake.
	for name, v := range map[string]int{"-rounds": *rounds, "-tables": *tables, "-table-size": *tableSize} {
		if v < 1 {
			return fmt.Errorf("%s %d: want at least 1", name, v)
		}
	}
	threadList, err := bench.ParseInts(*threads)
	if err != nil {
		return fmt.Errorf("-threads: %w", err)
	}
	opts := bench.Options{
		Servers:       bench.SplitList(*servers),
		Workloads:     bench.SplitList(*workloads),
		Threads:       threadList,
		Rounds:        *rounds,
		Tables:        *tables,
		TableSize:     *tableSize,
		RunTime:       *runTime,
		Budget:        *budget,
		Repo:          *repo,
		Rev:           *rev,
		PercdbBinary:  *percdbBin,
		PercdbTxnMode: *txnMode,
		Isolation:     *isolation,
		Sysbench:      *sysbench,
		Server:        bench.ServerOptions{Dir: *tmp, Keep: *keep},
		Progress:      os.Stderr,
	}
	if err := opts.Validate(); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills the harness; Pdeathsig takes the servers along
	}()

	if *install {
		if err := bench.EnsurePackages(ctx, slices.Contains(opts.Servers, bench.MariaDB), os.Stderr); err != nil {
			return err
		}
	}
	if *outDir, err = bench.ResultsDir(*outDir, "percdb-bench-results-"); err != nil {
		return err
	}
	opts.OutDir = *outDir
	h, err := bench.NewHarness(opts)
	if err != nil {
		return err
	}
	res, runErr := h.Run(ctx)
	res.Command = strings.TrimSpace("go run ./bench/cmd/percdb-bench " + bench.QuoteArgs(os.Args[1:]))
	runErr = errors.Join(runErr, bench.WriteResults(*outDir, res))
	fmt.Printf("raw sysbench outputs and %s in %s\n", bench.ResultsFile, *outDir)
	if errors.Is(runErr, context.Canceled) {
		runErr = errors.New("interrupted")
	}
	if runErr != nil {
		out.doc, out.chart = "", ""
		out.report(res)
		return fmt.Errorf("%w (the document and chart were not updated)", runErr)
	}
	return out.report(res)
}

// output says where the report of a result goes besides stdout.
type output struct {
	doc, chart, note string
}

// report prints the tables and writes the chart and the document section.
func (o output) report(res *bench.Result) error {
	cols := bench.Columns{
		Servers:  res.Options.Servers,
		Labels:   map[string]string{bench.MariaDB: "MariaDB", bench.Percdb: "percdb"},
		Subject:  bench.Percdb,
		Baseline: bench.MariaDB,
	}
	rows := bench.Summarize(res.Runs, cols.Subject, cols.Baseline)
	fmt.Println()
	if err := bench.WriteText(os.Stdout, bench.Grid(rows, cols)); err != nil {
		return err
	}
	for _, n := range bench.Notes(rows, cols) {
		fmt.Println("  " + n)
	}
	fmt.Println()
	if err := bench.WriteText(os.Stdout, bench.MemoryGrid(res.Memory, cols)); err != nil {
		return err
	}
	fmt.Printf("\nrun length %v\n", res.RunTime)
	if len(res.Runs) == 0 {
		return errors.New("no runs to report")
	}

	section := bench.Section{Result: res, Rows: rows, Cols: cols, Note: o.note}
	if o.chart != "" {
		ro := res.Options
		title := fmt.Sprintf("sysbench, %d x %s rows, %v runs, median of %d round(s); line: lowest to highest round",
			ro.Tables, bench.Thousands(float64(ro.TableSize)), res.RunTime, ro.Rounds)
		ch := bench.Chart{Title: title, Cols: cols}
		for _, ext := range []string{".png", ".svg"} {
			if err := ch.WriteFile(o.chart+ext, rows); err != nil {
				return err
			}
			fmt.Println("wrote", o.chart+ext)
		}
		if o.doc != "" {
			rel, err := filepath.Rel(filepath.Dir(o.doc), o.chart+".png")
			if err != nil {
				return err
			}
			section.Chart = filepath.ToSlash(rel)
		}
	}
	if o.doc != "" {
		if err := bench.UpdateFile(o.doc, "Benchmarks", section.Markdown()); err != nil {
			return err
		}
		fmt.Println("wrote", o.doc)
	}
	return nil
}

func readJSON(path string) (*bench.Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res bench.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &res, nil
}
