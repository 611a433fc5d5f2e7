package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Server names the harness knows how to start.
const (
	MariaDB = "mariadb"
	Percdb  = "percdb"
)

// Database is the schema the sysbench tables live in, on every server.
const Database = "sbtest"

// DefaultWorkloads returns the sysbench scripts measured by default.
func DefaultWorkloads() []string {
	return []string{"oltp_point_select", "oltp_read_only", "oltp_read_write",
		"oltp_insert", "oltp_update_index", "oltp_delete"}
}

// Options configure a Harness. The zero value of a field means its default.
type Options struct {
	// Servers to measure, from MariaDB and Percdb, in column order.
	// Default: both, MariaDB first.
	Servers []string
	// Workloads are sysbench script names. Default: DefaultWorkloads().
	// A round runs them in order of how much they disturb the data, see
	// OrderWorkloads.
	Workloads []string
	// Threads are the sysbench --threads values. Default: 1 and 4.
	Threads []int
	// Rounds is how many times every run is repeated. Default: 3.
	Rounds int
	// Tables and TableSize shape the data. Default: 1 table of 10,000 rows.
	Tables, TableSize int
	// RunTime is the length of one run when there is no Budget.
	// Default: 20 seconds, as in the peers' baseline.
	RunTime time.Duration
	// Budget, when set, is the wall time the whole measurement should take,
	// starting up included; the run length is picked to fit, at least one
	// second (see Plan).
	Budget time.Duration
	// PerRunOverhead is the time a run is assumed to cost beyond its
	// length, for the budget. Default: 700ms.
	PerRunOverhead time.Duration
	// Repo is the percdb checkout to build. Default: ".".
	Repo string
	// Rev, when set, is the git revision of Repo to build (exported with
	// git archive, so the working tree's uncommitted edits do not count).
	// Default: the working tree as it is.
	Rev string
	// PercdbBinary, when set, is used instead of building the checkout.
	PercdbBinary string
	// PercdbTxnMode, when set, is percdb's percdb_txn_mode for every run
	// (SET GLOBAL once the server started: sysbench's sessions take it),
	// optimistic or pessimistic. Default: the server's (pessimistic).
	PercdbTxnMode string `json:",omitempty"`
	// Isolation, when set, is every server's global transaction
	// isolation level for every run (SET GLOBAL transaction_isolation on
	// percdb, tx_isolation on MariaDB 10.11, which has no other name for
	// it; sysbench's sessions take it), as the variable spells it:
	// READ-COMMITTED, REPEATABLE-READ, ... Default: the servers'
	// (REPEATABLE-READ).
	Isolation string `json:",omitempty"`
	// Sysbench is the sysbench binary. Default: "sysbench".
	Sysbench string
	// Server holds the options shared by the servers (temporary
	// directory, timeouts, Keep).
	Server ServerOptions
	// OutDir, when set, receives every run's raw sysbench output.
	OutDir string
	// Progress receives the status line and log messages. Default: none.
	Progress io.Writer `json:"-"`
}

func (o Options) withDefaults() Options {
	if len(o.Servers) == 0 {
		o.Servers = []string{MariaDB, Percdb}
	}
	if len(o.Workloads) == 0 {
		o.Workloads = DefaultWorkloads()
	}
	if len(o.Threads) == 0 {
		o.Threads = []int{1, 4}
	}
	o.Rounds = cmp.Or(o.Rounds, 3)
	o.Tables = cmp.Or(o.Tables, 1)
	o.TableSize = cmp.Or(o.TableSize, 10000)
	o.RunTime = cmp.Or(o.RunTime, 20*time.Second)
	o.PerRunOverhead = cmp.Or(o.PerRunOverhead, 700*time.Millisecond)
	o.Repo = cmp.Or(o.Repo, ".")
	o.Sysbench = cmp.Or(o.Sysbench, "sysbench")
	return o
}

// workloadName is what a sysbench script name may look like; anything else
// is refused rather than handed to a command line.
var workloadName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Validate reports the first option that cannot work.
func (o Options) Validate() error {
	o = o.withDefaults()
	for _, s := range o.Servers {
		if s != MariaDB && s != Percdb {
			return fmt.Errorf("unknown server %q (want %s or %s)", s, MariaDB, Percdb)
		}
	}
	if dup := firstDuplicate(o.Servers); dup != "" {
		return fmt.Errorf("server %q named twice", dup)
	}
	for _, w := range o.Workloads {
		if !workloadName.MatchString(w) {
			return fmt.Errorf("workload %q is not a sysbench script name", w)
		}
	}
	if dup := firstDuplicate(o.Workloads); dup != "" {
		return fmt.Errorf("workload %q named twice", dup)
	}
	for _, t := range o.Threads {
		if t < 1 {
			return fmt.Errorf("threads %d: want at least 1", t)
		}
	}
	if m := o.PercdbTxnMode; m != "" && m != "optimistic" && m != "pessimistic" {
		return fmt.Errorf("percdb transaction mode %q: want optimistic or pessimistic", m)
	}
	if err := ValidateIsolation(o.Isolation); err != nil {
		return err
	}
	switch {
	case o.Rounds < 1:
		return fmt.Errorf("rounds %d: want at least 1", o.Rounds)
	case o.Tables < 1 || o.TableSize < 1:
		return fmt.Errorf("tables %d x %d rows: want at least 1 x 1", o.Tables, o.TableSize)
	case o.RunTime < time.Second:
		return fmt.Errorf("run time %v: sysbench's shortest run is 1s", o.RunTime)
	case o.Budget < 0:
		return fmt.Errorf("budget %v is negative", o.Budget)
	}
	return nil
}

func firstDuplicate(xs []string) string {
	for i, x := range xs {
		if slices.Contains(xs[:i], x) {
			return x
		}
	}
	return ""
}

// OrderWorkloads returns the workloads in the order a round runs them:
// read-only first, then those that keep the row count, then oltp_insert
// (which adds rows) and last oltp_delete (which removes them), so that no
// workload measures data another one of the round has thinned out or grown.
// The order is otherwise as given.
func OrderWorkloads(ws []string) []string {
	rank := func(w string) int {
		switch w {
		case "oltp_point_select", "oltp_read_only", "select_random_points", "select_random_ranges":
			return 0
		case "oltp_insert", "bulk_insert":
			return 2
		case "oltp_delete":
			return 3
		default:
			return 1
		}
	}
	out := slices.Clone(ws)
	slices.SortStableFunc(out, func(a, b string) int { return rank(a) - rank(b) })
	return out
}

// Result is everything a measurement produced, complete or not.
type Result struct {
	// Command is the command line that ran the measurement, as the caller
	// wants it quoted.
	Command  string
	Options  Options
	Started  time.Time
	Finished time.Time
	Machine  Machine
	// Versions maps "sysbench", each server name, and "percdb checkout" to
	// a version string.
	Versions map[string]string
	// Argv maps each server name to the command line it ran with.
	Argv map[string][]string
	// Settings maps each server name to notable settings it reported
	// (MariaDB's durability and buffer pool), for the report.
	Settings map[string]string
	// Plan is the time arithmetic; RunTime the length of every run.
	Plan    Plan
	RunTime time.Duration
	// Runs in the order they ran.
	Runs   []Run
	Memory map[string]Memory
	// LoadAvgEnd is the load average when the runs ended.
	LoadAvgEnd string
}

// Harness runs one measurement.
type Harness struct {
	opts     Options
	progress *Progress
}

// NewHarness checks the options and fills in defaults.
func NewHarness(opts Options) (*Harness, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	return &Harness{opts: opts, progress: NewProgress(opts.Progress)}, nil
}

// Run starts the servers, prepares the tables, runs every round and stops
// the servers. It returns what it measured even when it fails part way, so
// that an interrupted run still shows what it got; the servers are stopped
// in every case.
func (h *Harness) Run(ctx context.Context) (res *Result, err error) {
	o := h.opts
	res = &Result{
		Options:  o,
		Started:  time.Now(),
		Machine:  ReadMachine(),
		Versions: map[string]string{},
		Argv:     map[string][]string{},
		Settings: map[string]string{},
		Memory:   map[string]Memory{},
	}
	defer func() { res.Finished = time.Now() }()
	// "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)"
	res.Versions["sysbench"] = strings.TrimPrefix(CommandVersion(ctx, o.Sysbench, "--version"), "sysbench ")

	servers, err := h.startServers(ctx, res)
	defer func() {
		h.progress.Done()
		for _, s := range servers {
			if st, merr := s.Memory(); merr == nil {
				m := res.Memory[s.Name]
				m.Final, m.Peak = st.RSS, max(m.Peak, st.HWM)
				res.Memory[s.Name] = m
			}
			h.progress.Logf("stopping %s (pid %d)", s.Name, s.PID())
			if serr := s.Stop(); serr != nil {
				err = errors.Join(err, serr)
			}
		}
	}()
	if err != nil {
		return res, err
	}

	benches := map[string]Sysbench{}
	// unprepared maps a server to why its tables are not in shape.
	unprepared := map[string]string{}
	var prepared time.Duration
	for _, s := range servers {
		sb := Sysbench{Path: o.Sysbench, Host: "127.0.0.1", Port: s.Port, User: "root",
			Database: Database, Tables: o.Tables, TableSize: o.TableSize}
		benches[s.Name] = sb
		began := time.Now()
		h.progress.Status("preparing %d x %d rows on %s", o.Tables, o.TableSize, s.Name)
		err := s.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+Database)
		if err == nil {
			err = h.prepare(ctx, sb, false)
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			// The other servers can still be measured; this one's runs
			// are recorded as failed, so the table shows why.
			unprepared[s.Name] = err.Error()
			h.progress.Logf("%s: %v", s.Name, err)
			continue
		}
		took := time.Since(began)
		prepared += took
		h.progress.Logf("%s: tables prepared in %v", s.Name, took.Round(time.Millisecond))
		if st, merr := s.Memory(); merr == nil {
			m := res.Memory[s.Name]
			m.Loaded, m.Peak = st.RSS, max(m.Peak, st.HWM)
			res.Memory[s.Name] = m
		}
	}

	workloads := OrderWorkloads(o.Workloads)
	perRound := len(workloads) * len(o.Threads) * len(servers)
	res.Plan = Plan{
		Runs:           perRound * o.Rounds,
		PerRunOverhead: o.PerRunOverhead,
		// Re-creating the tables costs about what preparing them did.
		Fixed: time.Duration(o.Rounds-1) * prepared,
	}
	res.RunTime = o.RunTime
	if o.Budget > 0 {
		res.Plan.Left = o.Budget - h.progress.Elapsed()
		var fits bool
		res.RunTime, fits = res.Plan.RunTime()
		if !fits {
			h.progress.Logf("budget %v too small: %v", o.Budget, res.Plan)
		}
	} else {
		res.Plan.Left = res.Plan.Estimate(res.RunTime)
	}
	h.progress.Logf("plan: %d rounds x %d runs of %v, about %v",
		o.Rounds, perRound, res.RunTime, fmtDuration(res.Plan.Estimate(res.RunTime)))

	done, total := 0, res.Plan.Runs
	runsStart := time.Now()
	for round := 1; round <= o.Rounds; round++ {
		if round > 1 {
			for _, s := range servers {
				h.progress.Status("round %d/%d: re-creating the tables on %s", round, o.Rounds, s.Name)
				rerr := h.prepare(ctx, benches[s.Name], true)
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				if rerr != nil {
					unprepared[s.Name] = rerr.Error()
					h.progress.Logf("%s: %v", s.Name, rerr)
				} else {
					delete(unprepared, s.Name)
				}
			}
		}
		pair := 0
		for _, w := range workloads {
			for _, t := range o.Threads {
				// Rotate which server goes first, pair by pair and round
				// by round.
				first := (pair + round - 1) % len(servers)
				pair++
				for i := range servers {
					s := servers[(first+i)%len(servers)]
					// The plan's estimate until the runs so far say better.
					left := fmtDuration(res.Plan.Estimate(res.RunTime))
					if done > 0 {
						per := time.Since(runsStart) / time.Duration(done)
						left = fmtDuration(per * time.Duration(total-done))
					}
					h.progress.Status("run %d/%d  round %d/%d  %s  %d thr  %-7s  (%v each, ~%s left)",
						done+1, total, round, o.Rounds, w, t, s.Name, res.RunTime, left)
					run := Run{Server: s.Name, Workload: w, Threads: t, Round: round, RunTime: res.RunTime}
					if why, ok := unprepared[s.Name]; ok {
						run.Err = "tables not prepared: " + why
					} else if run, err = h.runOne(ctx, s, benches[s.Name], round, w, t, res.RunTime); err != nil {
						return res, err
					}
					res.Runs = append(res.Runs, run)
					done++
					if why := run.Flag(); why != "" && !strings.HasPrefix(why, "tables not prepared") {
						h.progress.Logf("%s %s %d thr round %d: flagged: %s", s.Name, w, t, round, why)
					}
					if st, merr := s.Memory(); merr == nil {
						m := res.Memory[s.Name]
						m.Peak = max(m.Peak, st.HWM)
						res.Memory[s.Name] = m
					}
				}
			}
		}
	}
	res.LoadAvgEnd = LoadAvg()
	return res, nil
}

// startServers builds percdb if needed and starts every server, recording
// versions, command lines and idle memory. On error it returns the servers
// already started, for the caller to stop.
func (h *Harness) startServers(ctx context.Context, res *Result) ([]*Server, error) {
	o := h.opts
	var servers []*Server
	for _, name := range o.Servers {
		var (
			s   *Server
			err error
		)
		switch name {
		case MariaDB:
			h.progress.Status("starting MariaDB")
			s, err = StartMariaDB(ctx, MariaDBOptions{ServerOptions: o.Server})
		case Percdb:
			bin := o.PercdbBinary
			if bin == "" {
				if bin, err = h.buildPercdb(ctx, res); err != nil {
					return servers, err
				}
			}
			h.progress.Status("starting percdb")
			s, err = StartPercdb(ctx, PercdbOptions{ServerOptions: o.Server, Binary: bin})
			if o.PercdbBinary == "" {
				// Linux keeps a running executable after its unlink: remove
				// the build now so no exit path leaves it behind.
				os.RemoveAll(filepath.Dir(bin))
				if s != nil {
					s.Argv[0] = "$BUILD/percdb"
				}
			}
		}
		if err != nil {
			return servers, err
		}
		servers = append(servers, s)
		res.Versions[name] = s.Version
		// The temporary directory's name is noise in a report.
		argv := slices.Clone(s.Argv)
		for i := range argv {
			argv[i] = strings.ReplaceAll(argv[i], s.Dir(), "$TMP")
		}
		res.Argv[name] = argv
		if name == Percdb && o.PercdbTxnMode != "" {
			if err := s.Exec(ctx, "SET GLOBAL percdb_txn_mode = '"+o.PercdbTxnMode+"'"); err != nil {
				return append(servers, s), fmt.Errorf("percdb_txn_mode: %w", err)
			}
			res.Settings[name] = "percdb_txn_mode=" + o.PercdbTxnMode
		}
		if o.Isolation != "" {
			v := IsolationVariable(name)
			if err := s.Exec(ctx, "SET GLOBAL "+v+" = '"+o.Isolation+"'"); err != nil {
				return append(servers, s), fmt.Errorf("%s: %w", v, err)
			}
			res.Settings[name] = strings.TrimPrefix(res.Settings[name]+", "+v+"="+o.Isolation, ", ")
		}
		if name == MariaDB {
			var flush, pool string
			if err := s.QueryRow(ctx, "SELECT @@innodb_flush_log_at_trx_commit, @@innodb_buffer_pool_size", &flush, &pool); err == nil {
				res.Settings[name] = fmt.Sprintf("innodb_flush_log_at_trx_commit=%s, innodb_buffer_pool_size=%s", flush, pool)
			}
		}
		st, err := s.Memory()
		if err != nil {
			return servers, err
		}
		res.Memory[name] = Memory{Idle: st.RSS, Peak: st.HWM}
		h.progress.Logf("%s %s: pid %d, port %d, dir %s, %s idle", name, s.Version, s.PID(), s.Port, s.Dir(), MiB(st.RSS))
	}
	return servers, nil
}

// buildPercdb builds the checkout into a new temporary directory.
func (h *Harness) buildPercdb(ctx context.Context, res *Result) (string, error) {
	o := h.opts
	rev := cmp.Or(o.Rev, "HEAD")
	commit := CommandVersion(ctx, "git", "-C", o.Repo, "rev-parse", "--short=12", rev+"^{commit}")
	if o.Rev == "" && CommandVersion(ctx, "git", "-C", o.Repo, "status", "--porcelain", "--untracked-files=no") != "" {
		commit += " plus uncommitted changes" // the build is of the working tree
	}
	res.Versions["percdb checkout"] = commit
	dir, err := os.MkdirTemp(o.Server.withDefaults().Dir, "percdb-bench-build-")
	if err != nil {
		return "", fmt.Errorf("build percdb: %w", err)
	}
	h.progress.Status("building percdb from %s %s", o.Repo, cmp.Or(o.Rev, "(working tree)"))
	bin, err := BuildPercdb(ctx, o.Repo, o.Rev, dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return bin, nil
}

// prepare creates the tables, dropping them first when reset.
func (h *Harness) prepare(ctx context.Context, sb Sysbench, reset bool) error {
	if reset {
		if out, err := sb.Exec(ctx, "oltp_read_write", "cleanup", 1, 0); err != nil {
			return fmt.Errorf("drop tables: %w\n%s", err, tail(out, 5))
		}
	}
	if out, err := sb.Exec(ctx, "oltp_read_write", "prepare", 1, 0); err != nil {
		return fmt.Errorf("prepare tables: %w\n%s", err, tail(out, 5))
	}
	return nil
}

// runOne runs one workload on one server. A failure of the run is recorded
// in the Run; only a cancelled ctx is returned as an error.
func (h *Harness) runOne(ctx context.Context, s *Server, sb Sysbench, round int, workload string, threads int, runTime time.Duration) (Run, error) {
	run := Run{Server: s.Name, Workload: workload, Threads: threads, Round: round, RunTime: runTime}
	if exited, werr := s.Exited(); exited {
		run.Err = fmt.Sprintf("server had exited (%v)", werr)
		return run, nil
	}
	out, err := sb.Exec(ctx, workload, "run", threads, runTime)
	if ctx.Err() != nil {
		return run, ctx.Err()
	}
	if h.opts.OutDir != "" {
		name := fmt.Sprintf("r%d-%s-t%d-%s.txt", round, workload, threads, s.Name)
		run.Output = filepath.Join(h.opts.OutDir, name)
		if werr := os.WriteFile(run.Output, out, 0o644); werr != nil {
			h.progress.Logf("keep output: %v", werr)
			run.Output = ""
		}
	}
	rep, perr := ParseReport(out)
	run.Report = rep
	switch {
	case err != nil:
		var why []string
		why = append(why, err.Error())
		if len(rep.Fatal) > 0 {
			why = append(why, "FATAL: "+rep.Fatal[0])
		}
		if exited, werr := s.Exited(); exited {
			why = append(why, fmt.Sprintf("server exited (%v); log: %s", werr, s.LogTail(3)))
		}
		run.Err = strings.Join(why, "; ")
	case perr != nil:
		run.Err = perr.Error()
	}
	return run, nil
}

// EnsurePackages installs, with apt-get, the Debian packages providing the
// binaries that are missing: sysbench, and mariadb-server when MariaDB is
// to be measured. It uses sudo when not root.
func EnsurePackages(ctx context.Context, needMariaDB bool, log io.Writer) error {
	var missing []string
	if _, err := exec.LookPath("sysbench"); err != nil {
		missing = append(missing, "sysbench")
	}
	if needMariaDB {
		if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
			missing = append(missing, "mariadb-server")
		} else if _, err := exec.LookPath("mariadb-install-db"); err != nil {
			missing = append(missing, "mariadb-server")
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var prefix []string
	if os.Geteuid() != 0 {
		prefix = []string{"sudo"}
	}
	apt := func(args ...string) error {
		argv := append(slices.Clone(prefix), append([]string{"apt-get"}, args...)...)
		fmt.Fprintf(log, "+ %s\n", strings.Join(argv, " "))
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = log, log
		return cmd.Run()
	}
	install := append([]string{"install", "-y", "--no-install-recommends"}, missing...)
	if err := apt(install...); err == nil {
		return nil
	}
	// The package lists may be stale or absent (a fresh container).
	if err := apt("update"); err != nil {
		return fmt.Errorf("install %s: apt-get update: %w", strings.Join(missing, ", "), err)
	}
	if err := apt(install...); err != nil {
		return fmt.Errorf("install %s: %w", strings.Join(missing, ", "), err)
	}
	return nil
}
