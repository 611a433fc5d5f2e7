// Command tpcc runs the TPC-C workload of package bench/tpcc against
// percdb and MariaDB side by side on this machine, through the private
// servers of package bench, and writes the result into docs/benchmarks.md
// and a chart. Run it from the root of the checkout:
//
//	go run ./bench/cmd/tpcc -warehouses 1 -threads 1,4 -time 60s
//
// For every server it creates the database, loads it with -loaders
// connections, runs the consistency checks, then runs the mix at every
// thread count (the servers back to back, alternating which goes first)
// and runs the checks again after every run. The runs do not reload: as in
// a TPC-C measurement, each one starts from the database the previous one
// left. Every run is bounded by -time plus -grace; a server that makes no
// progress is reported with what it did.
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
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/percdb/percdb/bench"
	"github.com/percdb/percdb/bench/tpcc"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tpcc:", err)
		os.Exit(1)
	}
}

// options are the command's settings, kept in the results.
type options struct {
	Servers     []string
	Warehouses  int
	Threads     []int
	Time, Grace time.Duration
	Retry       bool
	StockIN     bool
	// TxnMode is percdb's percdb_txn_mode for the run ('' keeps the
	// server's default).
	TxnMode string `json:",omitempty"`
	// Isolation is every server's global transaction isolation level for
	// the load and the runs, as the variables spell it (READ-COMMITTED,
	// ...; '' keeps the servers' default, REPEATABLE-READ).
	Isolation string `json:",omitempty"`
	Loaders   int
	// Analyze runs ANALYZE TABLE on every table after the load.
	Analyze bool `json:",omitempty"`
	Seed    int64
	// Requests is the transactions of each type run alone on percdb after
	// its load to count its store requests per transaction (0: none).
	Requests     int `json:",omitempty"`
	CheckTimeout time.Duration
	LoadTimeout  time.Duration
}

// loadRecord is how the load of one server went.
type loadRecord struct {
	Rows   int64
	Took   time.Duration
	Err    string
	Checks []tpcc.CheckResult
}

// runRecord is one run of the mix on one server.
type runRecord struct {
	Server  string
	Threads int
	Result  *tpcc.RunResult
	Err     string
	Checks  []tpcc.CheckResult
	LoadAvg string
	// Requests are percdb's store requests during the run (the grace
	// period included), by command.
	Requests bench.KVRequests `json:",omitempty"`
}

// results is everything a measurement produced.
type results struct {
	Command           string
	Options           options
	Started, Finished time.Time
	Machine           bench.Machine
	Versions          map[string]string
	Argv              map[string][]string
	Loads             map[string]loadRecord
	// Profiles are percdb's store requests per transaction of each type,
	// run alone after the load (-requests).
	Profiles   map[string][]tpcc.TxnProfile `json:",omitempty"`
	Runs       []runRecord
	Memory     map[string]bench.Memory
	LoadAvgEnd string
}

// sectionName is what a -section may be: the name goes into the markers.
var sectionName = regexp.MustCompile(`^tpcc(-[a-z0-9-]+)?$`)

func run() error {
	var (
		servers      = flag.String("servers", bench.MariaDB+","+bench.Percdb, "servers to measure, comma-separated: mariadb, percdb")
		warehouses   = flag.Int("warehouses", 1, "warehouses (the scale factor)")
		threads      = flag.String("threads", "1,4", "terminal counts, comma-separated, one run each")
		runTime      = flag.Duration("time", 60*time.Second, "measured interval of one run")
		grace        = flag.Duration("grace", 30*time.Second, "time transactions still running at the end may take before they are cancelled")
		retry        = flag.Bool("retry", true, "retry transactions that fail with 1213, 1205 or 8028, as well-behaved clients do")
		stockIN      = flag.Bool("stock-in", false, "New-Order reads its stock rows with one (s_w_id, s_i_id) IN (...) FOR UPDATE")
		txnMode      = flag.String("percdb-txn-mode", "", "percdb's transaction mode, optimistic or pessimistic (SET GLOBAL percdb_txn_mode; default: the server's)")
		isolation    = flag.String("isolation", "", "every server's global transaction isolation level, e.g. READ-COMMITTED (transaction_isolation on percdb, tx_isolation on MariaDB; default: the servers', REPEATABLE-READ)")
		loaders      = flag.Int("loaders", 4, "connections loading in parallel")
		analyze      = flag.Bool("analyze", true, "ANALYZE TABLE every table after the load (counted in the load's time), as a DBA does after a bulk load: the runs then measure the servers' steady state, not percdb's first automatic analysis of 600,000 fresh rows")
		seed         = flag.Int64("seed", 1, "seed of the population and of the terminals' inputs")
		requests     = flag.Int("requests", 100, "after percdb's load, run this many transactions of each type alone from one terminal and report its store requests per transaction (from its status port's percdb_kv_requests_total; 0: skip)")
		checkTimeout = flag.Duration("check-timeout", 5*time.Minute, "time limit of one consistency check")
		loadTimeout  = flag.Duration("load-timeout", 60*time.Minute, "time limit of one server's load")
		repo         = flag.String("repo", ".", "percdb checkout to build ./cmd/percdb from")
		rev          = flag.String("rev", "", "build percdb from this git revision of -repo (default: the working tree)")
		percdbBin    = flag.String("percdb-bin", "", "use this percdb binary instead of building -repo")
		doc          = flag.String("doc", "docs/benchmarks.md", "markdown file whose TPC-C section is rewritten ('' to skip)")
		chart        = flag.String("chart", "docs/benchmarks-tpcc", "chart path without extension: writes .png and .svg ('' to skip)")
		note         = flag.String("note", "", "remark printed with the results in the document")
		section      = flag.String("section", "tpcc", "name of the document's section (its markers): tpcc, or tpcc-<variant> for a variant kept beside it")
		title        = flag.String("title", "TPC-C", "heading of the document's section")
		outDir       = flag.String("out", "", "directory for results.json (default: a new temporary directory, kept)")
		tmp          = flag.String("tmp", "", "directory for the servers' temporary data directories (default: $TMPDIR)")
		replot       = flag.String("replot", "", "measure nothing: report the results.json of an earlier run")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	if !sectionName.MatchString(*section) {
		return fmt.Errorf("-section %q: want tpcc or tpcc-<variant> (lower case letters, digits, dashes)", *section)
	}
	out := output{doc: *doc, chart: *chart, note: *note, section: *section, title: *title}
	if *replot != "" {
		b, err := os.ReadFile(*replot)
		if err != nil {
			return err
		}
		var res results
		if err := json.Unmarshal(b, &res); err != nil {
			return fmt.Errorf("%s: %w", *replot, err)
		}
		return out.report(&res)
	}
	threadList, err := bench.ParseInts(*threads)
	if err == nil && (len(threadList) == 0 || slices.Min(threadList) < 1) {
		err = errors.New("want positive numbers")
	}
	if err != nil {
		return fmt.Errorf("-threads: %w", err)
	}
	o := options{Servers: bench.SplitList(*servers), Warehouses: *warehouses, Threads: threadList, Time: *runTime, Grace: *grace,
		Retry: *retry, StockIN: *stockIN, TxnMode: *txnMode, Isolation: *isolation, Loaders: *loaders, Analyze: *analyze, Seed: *seed, Requests: *requests, CheckTimeout: *checkTimeout, LoadTimeout: *loadTimeout}
	for _, s := range o.Servers {
		if s != bench.MariaDB && s != bench.Percdb {
			return fmt.Errorf("unknown server %q", s)
		}
	}
	if err := tpcc.StandardScale(o.Warehouses).Validate(); err != nil {
		return err
	}
	if err := bench.ValidateIsolation(o.Isolation); err != nil {
		return fmt.Errorf("-isolation: %w", err)
	}
	if *outDir, err = bench.ResultsDir(*outDir, "tpcc-results-"); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, runErr := measure(ctx, o, bench.ServerOptions{Dir: *tmp}, *repo, *rev, *percdbBin)
	res.Command = strings.TrimSpace("go run ./bench/cmd/tpcc " + bench.QuoteArgs(os.Args[1:]))
	runErr = errors.Join(runErr, bench.WriteResults(*outDir, res))
	fmt.Println("results.json in", *outDir)
	if runErr != nil {
		out.doc, out.chart = "", ""
		out.report(res)
		return fmt.Errorf("%w (the document and chart were not updated)", runErr)
	}
	return out.report(res)
}

// measure starts the servers, loads and checks each, runs the mix at every
// thread count with the servers alternating, and stops the servers.
func measure(ctx context.Context, o options, so bench.ServerOptions, repo, rev, percdbBin string) (res *results, err error) {
	res = &results{Options: o, Started: time.Now(), Machine: bench.ReadMachine(), Versions: map[string]string{},
		Argv: map[string][]string{}, Loads: map[string]loadRecord{}, Memory: map[string]bench.Memory{}, Profiles: map[string][]tpcc.TxnProfile{}}
	defer func() { res.Finished = time.Now() }()
	started, err := bench.StartServers(ctx, o.Servers, so, repo, rev, percdbBin)
	servers := started.Servers
	defer func() {
		for _, s := range servers {
			if st, merr := s.Memory(); merr == nil {
				m := res.Memory[s.Name]
				m.Final, m.Peak = st.RSS, max(m.Peak, st.HWM)
				res.Memory[s.Name] = m
			}
		}
		log("stopping the servers")
		err = errors.Join(err, started.Stop())
	}()
	res.Versions, res.Argv = started.Versions, started.Argv
	for name, m := range started.Idle {
		res.Memory[name] = bench.Memory{Idle: m.RSS, Peak: m.HWM}
	}
	if err != nil {
		return res, err
	}
	for _, s := range servers {
		log("%s %s: pid %d, port %d", s.Name, s.Version, s.PID(), s.Port)
	}

	scale := tpcc.StandardScale(o.Warehouses)
	dbs := map[string]*sql.DB{}
	for _, s := range servers {
		admin := bench.Open(s.Port, "", 4)
		defer admin.Close()
		if s.Name == bench.Percdb && o.TxnMode != "" {
			// Before the pool below opens: sessions take the global value
			// when they begin.
			if _, err := admin.ExecContext(ctx, "SET GLOBAL percdb_txn_mode = ?", o.TxnMode); err != nil {
				return res, fmt.Errorf("%s: percdb_txn_mode: %w", s.Name, err)
			}
		}
		if o.Isolation != "" {
			// Likewise: the load's and the terminals' sessions take it.
			v := bench.IsolationVariable(s.Name)
			if _, err := admin.ExecContext(ctx, "SET GLOBAL "+v+" = ?", o.Isolation); err != nil {
				return res, fmt.Errorf("%s: %s: %w", s.Name, v, err)
			}
		}
		db := bench.Open(s.Port, "tpcc", max(o.Loaders, slices.Max(o.Threads))+4)
		defer db.Close()
		dbs[s.Name] = db
		rec := loadRecord{}
		began := time.Now()
		lctx, cancel := context.WithTimeout(ctx, o.LoadTimeout)
		err := tpcc.CreateSchema(lctx, admin, "tpcc")
		if err == nil {
			var mu sync.Mutex // Progress runs on every loader
			last := time.Now()
			rec.Rows, err = tpcc.Load(lctx, db, tpcc.LoadOptions{Scale: scale, Loaders: o.Loaders, Seed: o.Seed,
				Progress: func(rows int64) {
					mu.Lock()
					defer mu.Unlock()
					if time.Since(last) > 10*time.Second {
						last = time.Now()
						log("%s: loaded %d rows in %v", s.Name, rows, time.Since(began).Round(time.Second))
					}
				}})
			if err == nil && o.Analyze {
				err = analyzeTables(lctx, db)
			}
		}
		cancel()
		rec.Took = time.Since(began)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			rec.Err = err.Error()
			log("%s: load failed after %v: %v", s.Name, rec.Took.Round(time.Second), err)
		} else {
			log("%s: loaded %d rows in %v; checking", s.Name, rec.Rows, rec.Took.Round(time.Second))
			rec.Checks = tpcc.RunChecks(ctx, db, tpcc.Checks(scale), true, o.CheckTimeout)
			logChecks(s.Name, rec.Checks)
			if s.StatusAddr != "" && o.Requests > 0 {
				// After the checks: they must see the initial population.
				log("%s: counting store requests of %d transactions of each type", s.Name, o.Requests)
				p, perr := tpcc.Profile(ctx, db, tpcc.ProfileOptions{Scale: scale, Transactions: o.Requests, StockIN: o.StockIN,
					Seed: o.Seed, Stream: -1, Sample: kvSampler(s.StatusAddr)})
				if perr != nil {
					log("%s: counting store requests: %v", s.Name, perr)
				}
				res.Profiles[s.Name] = p
				for _, tp := range p {
					log("%s: %s: %.1f store requests per transaction (%v)", s.Name, tp.Name, bench.KVRequests(tp.Counters).Total(), bench.KVRequests(tp.Counters))
				}
			}
		}
		res.Loads[s.Name] = rec
		if st, merr := s.Memory(); merr == nil {
			m := res.Memory[s.Name]
			m.Loaded, m.Peak = st.RSS, max(m.Peak, st.HWM)
			res.Memory[s.Name] = m
		}
	}

	for i, t := range o.Threads {
		for k := range servers {
			s := servers[(i+k)%len(servers)]
			rec := runRecord{Server: s.Name, Threads: t}
			if l := res.Loads[s.Name]; l.Err != "" {
				rec.Err = "not loaded: " + l.Err
				res.Runs = append(res.Runs, rec)
				continue
			}
			if exited, werr := s.Exited(); exited {
				rec.Err = fmt.Sprintf("server had exited (%v)", werr)
				res.Runs = append(res.Runs, rec)
				continue
			}
			log("%s: %d terminals for %v", s.Name, t, o.Time)
			var before bench.KVRequests
			if s.StatusAddr != "" {
				var serr error
				if before, serr = bench.ScrapeKVRequests(ctx, s.StatusAddr); serr != nil {
					log("%s: store requests: %v", s.Name, serr)
				}
			}
			r, err := tpcc.Run(ctx, dbs[s.Name], tpcc.RunOptions{Scale: scale, Threads: t, Duration: o.Time, Grace: o.Grace,
				Retry: o.Retry, StockIN: o.StockIN, Seed: o.Seed, Stream: int64(t),
				Progress: func(elapsed time.Duration, n int64) {
					if int(elapsed.Seconds())%10 == 0 {
						log("%s %d thr: %v, %d new orders", s.Name, t, elapsed.Round(time.Second), n)
					}
				}})
			rec.Result = r
			rec.LoadAvg = bench.LoadAvg()
			if before != nil {
				if after, serr := bench.ScrapeKVRequests(ctx, s.StatusAddr); serr == nil {
					rec.Requests = after.Sub(before)
				} else {
					log("%s: store requests: %v", s.Name, serr)
				}
			}
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			if err != nil {
				rec.Err = err.Error()
			}
			if r != nil {
				log("%s %d thr: tpmC %.1f, %d unfinished, errors %v", s.Name, t, r.TpmC, r.Unfinished, r.Errors())
			}
			rec.Checks = tpcc.RunChecks(ctx, dbs[s.Name], tpcc.Checks(scale), false, o.CheckTimeout)
			logChecks(s.Name, rec.Checks)
			res.Runs = append(res.Runs, rec)
			if st, merr := s.Memory(); merr == nil {
				m := res.Memory[s.Name]
				m.Peak = max(m.Peak, st.HWM)
				res.Memory[s.Name] = m
			}
		}
	}
	res.LoadAvgEnd = bench.LoadAvg()
	return res, nil
}

// kvSampler reads a percdb's store requests for tpcc.Profile.
func kvSampler(statusAddr string) func(context.Context) (map[string]float64, error) {
	return func(ctx context.Context) (map[string]float64, error) {
		return bench.ScrapeKVRequests(ctx, statusAddr)
	}
}

func log(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func logChecks(server string, checks []tpcc.CheckResult) {
	pass := 0
	for _, c := range checks {
		if c.Passed() {
			pass++
		} else {
			log("%s: check %s %s: %s: %s", server, c.ID, c.Text, c.Status, c.Detail)
		}
	}
	log("%s: %d of %d checks pass", server, pass, len(checks))
}

// analyzeTables runs ANALYZE TABLE on every table of the schema, reading
// the result rows: MariaDB reports a failure as a row, not an error.
func analyzeTables(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "ANALYZE TABLE "+strings.Join(tpcc.Tables, ", "))
	if err != nil {
		return fmt.Errorf("ANALYZE TABLE: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("ANALYZE TABLE: %w", err)
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("ANALYZE TABLE: %w", err)
		}
		// Table, Op, Msg_type, Msg_text: an "error" row is a failure.
		if len(vals) == 4 && strings.EqualFold(string(vals[2]), "error") {
			return fmt.Errorf("ANALYZE TABLE %s: %s", vals[0], vals[3])
		}
	}
	return rows.Err()
}
