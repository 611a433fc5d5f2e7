// Command slt runs sqllogictest files against a MySQL-protocol server or an
// in-process percdb, as engine "mysql".
//
//	go run ./tests/sqllogic/cmd/slt -dsn 'root@tcp(127.0.0.1:3306)/' -j 2 ../shared/sqllogictest
//	go run ./tests/sqllogic/cmd/slt -percdb -j 2 -timeout 25m path/to/corpus
//
// Every file runs in order on a fresh database; -j files run at once. While
// it runs, a progress line goes to stderr; at the end the per-file counts,
// the totals, the commonest failure classes and the first failures go to
// stdout. See docs/sqllogictest.md.
//
// Exit status: 0 when every record that runs passed (or, with -floor, when
// the pass count reaches the floor), 1 when not, 2 when the run could not
// start.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/percdb/percdb/tests/sqllogic"
)

// defaultGOGC is the -gogc default. A run against percdb in process
// allocates fast and keeps little: the server's data of the files being run
// and its caches. At Go's default of 100 the collector ran so often that
// it (marking, and preempting goroutines to scan their stacks) took a
// fifth of the CPU of the index/ and random/ gate files; at 400 the heap
// stays near 200 MB on the gate set and the run needs about 16% less CPU
// (docs/benchmarks.md).
const defaultGOGC = 400

// gcPercent returns the GOGC the run sets, from the -gogc flag (given
// when set on the command line) and the GOGC environment variable, and
// false to leave the runtime's as it is: an explicit flag wins, then the
// environment, then the flag's default.
func gcPercent(flagValue int, given bool, env string) (int, bool) {
	if !given && env != "" {
		return 0, false
	}
	return flagValue, true
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("slt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: slt (-dsn DSN | -percdb) [flags] FILE_OR_DIR...\n\n")
		fs.PrintDefaults()
	}
	var (
		dsn           = fs.String("dsn", "", "go-sql-driver DSN of a MySQL-protocol server, e.g. 'root@tcp(127.0.0.1:3306)/'; each file gets its own database on it")
		inProcess     = fs.Bool("percdb", false, "start percdb in process on a fresh in-memory store instead of using -dsn")
		storeDir      = fs.String("store-dir", "", "with -percdb: keep the store on disk in a temporary directory under this one instead of in memory")
		jobs          = fs.Int("j", runtime.GOMAXPROCS(0), "files run at once, each on its own database")
		budget        = fs.Duration("timeout", 0, "time budget for the whole run (0: none); records left when it runs out count as not run")
		recordTimeout = fs.Duration("record-timeout", sqllogic.DefaultRecordTimeout, "time limit of one record; a record over it fails")
		types         = fs.String("types", "strict", "column types against type letters: strict (declared types must match; I satisfies R) or loose (format by letter only)")
		engine        = fs.String("engine", "mysql", "engine name for skipif/onlyif")
		failures      = fs.Int("failures", 10, "failures shown in full")
		classes       = fs.Int("classes", 15, "failure classes listed, commonest first")
		slowest       = fs.Int("slowest", 5, "slowest records listed (and kept per file in the JSON)")
		jsonPath      = fs.String("json", "", "write a JSON summary to this file ('-' for stdout, replacing the text report)")
		floorPath     = fs.String("floor", "", "file holding the pass-count floor: exit 0 iff at least that many records pass")
		keep          = fs.Bool("keep", false, "keep each file's database on the server after the run")
		progress      = fs.Duration("progress", 0, "progress line interval (0: 1s on a terminal, 30s otherwise)")
		quiet         = fs.Bool("q", false, "no progress line")
		cpuProfile    = fs.String("cpuprofile", "", "write a CPU profile of the run to this file (with -percdb it covers the server too)")
		gogc          = fs.Int("gogc", defaultGOGC, "the process's garbage collection target percentage (GOGC; Go's default is 100); with -percdb the process is the server too; when not given, GOGC from the environment wins")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "gogc" })
	if percent, ok := gcPercent(*gogc, given, os.Getenv("GOGC")); ok {
		debug.SetGCPercent(percent)
	}
	if fs.NArg() == 0 || (*dsn == "") == !*inProcess {
		fs.Usage()
		return 2
	}
	typeCheck, err := sqllogic.ParseTypeCheck(*types)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	floor := -1
	if *floorPath != "" {
		if floor, err = readFloor(*floorPath); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	files, err := sqllogic.CollectFiles(fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "no .test files under %s\n", strings.Join(fs.Args(), " "))
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var target sqllogic.Target
	if *inProcess {
		// go-mysql-server logs every connection and every failed query
		// through logrus' standard logger; a run makes thousands of both.
		logrus.SetLevel(logrus.ErrorLevel)
		t, closeFn, err := startPercdb(ctx, *storeDir)
		if err != nil {
			fmt.Fprintf(stderr, "start percdb: %v\n", err)
			return 2
		}
		defer closeFn()
		target = t
	} else {
		t, err := sqllogic.NewServerTarget(ctx, *dsn, sqllogic.ServerOptions{Keep: *keep})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		defer t.Close()
		target = t
	}

	if *cpuProfile != "" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		defer stopProfile()
	}

	counters := &sqllogic.Counters{}
	opts := sqllogic.Options{
		Engine:        *engine,
		Jobs:          *jobs,
		Budget:        *budget,
		RecordTimeout: *recordTimeout,
		Types:         typeCheck,
		KeepFailures:  max(*failures, 10),
		KeepSlowest:   max(*slowest, 5),
		Counters:      counters,
	}
	stopProgress := func() {}
	if !*quiet {
		every, tty := *progress, isTerminal(os.Stderr)
		if every == 0 {
			every = 30 * time.Second
			if tty {
				every = time.Second
			}
		}
		stopProgress = sqllogic.ShowProgress(ctx, stderr, counters, every, tty)
	}
	sum := sqllogic.Run(ctx, target, files, opts)
	stopProgress()

	root := ""
	if len(fs.Args()) == 1 {
		if st, err := os.Stat(fs.Arg(0)); err == nil && st.IsDir() {
			root = fs.Arg(0)
		}
	}
	if *jsonPath != "-" {
		err := sqllogic.WriteReport(stdout, sum, sqllogic.ReportOptions{Root: root, Failures: *failures, Classes: *classes, Slowest: *slowest})
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	if *jsonPath != "" {
		if err := writeJSON(*jsonPath, stdout, sum); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "interrupted")
		return 1
	}
	if floor >= 0 {
		return checkFloor(stdout, sum.Total.OK, floor, *floorPath)
	}
	for _, f := range sum.Files {
		if f.Err != "" {
			return 1
		}
	}
	if sum.Total.Fail > 0 || sum.Total.NotRun > 0 {
		return 1
	}
	return 0
}

// readFloor reads the first number in the floor file; lines starting with
// '#' are comments.
func readFloor(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("floor: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n, err := strconv.Atoi(line)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("floor %s: %q is not a pass count", path, line)
		}
		return n, nil
	}
	return 0, fmt.Errorf("floor %s: no pass count in the file", path)
}

// checkFloor holds the pass count against the floor: below fails the run,
// above asks for the floor to be raised (it only ever rises).
func checkFloor(w io.Writer, ok, floor int, path string) int {
	switch {
	case ok < floor:
		fmt.Fprintf(w, "gate: FAIL: %d records pass, below the floor of %d in %s (%d lost)\n", ok, floor, path, floor-ok)
		return 1
	case ok > floor:
		fmt.Fprintf(w, "gate: ok: %d records pass, above the floor of %d; raise it: set the count in %s to %d\n", ok, floor, path, ok)
	default:
		fmt.Fprintf(w, "gate: ok: %d records pass, at the floor\n", ok)
	}
	return 0
}

func writeJSON(path string, stdout io.Writer, sum *sqllogic.Summary) error {
	if path == "-" {
		return sqllogic.WriteJSON(stdout, sum)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := sqllogic.WriteJSON(f, sum); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// startCPUProfile starts writing a CPU profile to path and returns the
// function that finishes it.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// isTerminal reports whether f is a character device, where the progress
// line can be rewritten in place.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
