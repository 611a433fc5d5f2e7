package bench

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Section is the input of the generated "## sysbench" part of
// docs/benchmarks.md.
type Section struct {
	Result *Result
	Rows   []Row
	Cols   Columns
	// Chart is the chart's file name relative to the document, "" for none.
	Chart string
	// Note is free text from whoever ran it (e.g. "machine busy").
	Note string
}

// FullRunCommand is the command for the reference measurement, quoted in
// the section so that it survives every regeneration.
const FullRunCommand = "go run ./bench/cmd/percdb-bench -rev HEAD -rounds 3 -time 20s"

// Markdown renders the section body (without the markers).
func (s Section) Markdown() string {
	r := s.Result
	o := r.Options
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

	p("## sysbench\n\n")
	p("sysbench against %s, measured %s on one machine, in one sitting, by `%s`.\n\n",
		strings.Join(labels(s.Cols), " and "), r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Command)
	if s.Note != "" {
		p("**Note:** %s\n\n", s.Note)
	}
	p("- Machine: %s", r.Machine)
	if r.LoadAvgEnd != "" {
		p(", %s at the end", r.LoadAvgEnd)
	}
	p(". sysbench ran on the same CPUs as the servers.\n")
	p("- Software: %s.\n", s.versions())
	p("- Data: %d table(s) x %s rows (`sysbench oltp_read_write prepare`), re-created at the start of every round.\n",
		o.Tables, Thousands(float64(o.TableSize)))
	p("- Runs: %d round(s) of every workload at %s thread(s), %v each (`--time=%d`), the servers back to back, "+
		"rotating which one goes first; whole measurement %s.\n",
		o.Rounds, JoinInts(o.Threads), r.RunTime, wholeSeconds(r.RunTime), fmtDuration(r.Finished.Sub(r.Started)))
	p("- Figures: queries per second, p95 latency in ms in brackets, both the median over the rounds. ")
	if s.Cols.hasRatio() {
		p("The ratio is the median of the per-round ratios %s/%s (the two runs of a round ran seconds apart). ",
			s.Cols.label(s.Cols.Subject), s.Cols.label(s.Cols.Baseline))
	}
	p("`!` marks a flagged run (sysbench failed, FATAL, reconnects), `[v/n]` a cell with only v of n runs valid.\n\n")

	p("%s\n", Markdown(Grid(s.Rows, s.Cols)))
	if notes := Notes(s.Rows, s.Cols); len(notes) > 0 {
		for _, n := range notes {
			p("- %s\n", MarkdownEscape(n))
		}
		p("\n")
	}
	if s.Chart != "" {
		p("![sysbench QPS per workload](%s)\n\n", s.Chart)
	}
	p("Resident memory (VmRSS, and VmHWM for the peak, from /proc/PID/status):\n\n")
	p("%s\n", Markdown(MemoryGrid(r.Memory, s.Cols)))

	p("Servers (`$TMP` is each server's temporary directory, `$BUILD` where `go build -o $BUILD/percdb ./cmd/percdb` put percdb):\n\n")
	for _, name := range s.Cols.Servers {
		if argv, ok := r.Argv[name]; ok {
			p("- %s: `%s`", s.Cols.label(name), strings.Join(argv, " "))
			if set := r.Settings[name]; set != "" {
				p(" (%s)", set)
			}
			p("\n")
		}
	}
	args := Sysbench{Host: "127.0.0.1", User: "root", Database: Database, Tables: o.Tables, TableSize: o.TableSize}.
		Args("<workload>", "run", 0, r.RunTime)
	for i, a := range args {
		switch a {
		case "--mysql-port=0":
			args[i] = "--mysql-port=<port>"
		case "--threads=0":
			args[i] = "--threads=<threads>"
		}
	}
	p("- each run: `sysbench %s`\n\n", strings.Join(args, " "))
	p("Caveats: oltp_delete in sysbench 1.0 only deletes, so after its first seconds most statements find no row " +
		"(sysbench counts those as \"other\"); oltp_insert grows the table. Figures from a shared machine move by " +
		"10-20%% between runs: compare the systems within one table, as ratios, not across days.\n\n")

	p("To reproduce (the reference run, on a quiet machine, takes about %s):\n\n", referenceDuration())
	p("    %s\n\n", FullRunCommand)
	p("A quick look in five minutes, or MariaDB alone:\n\n")
	p("    go run ./bench/cmd/percdb-bench -rev HEAD -budget 5m\n")
	p("    go run ./bench/cmd/percdb-bench -servers mariadb -budget 2m -doc ''\n\n")
	p("`-rev HEAD` builds percdb from the last commit (exported with git archive), not from the working tree. " +
		"`-h` lists the flags (workloads, threads, rounds, table size, output paths; `-replot` redraws from a results.json). " +
		"The harness installs sysbench and mariadb-server with apt-get if they are missing.\n")
	return b.String()
}

// referenceDuration estimates FullRunCommand's wall time: 6 workloads x 2
// thread counts x 2 servers x 3 rounds x (20s + overhead).
func referenceDuration() string {
	runs := time.Duration(len(DefaultWorkloads()) * 2 * 2 * 3)
	return fmtDuration(runs*(20*time.Second+time.Second) + time.Minute)
}

func labels(c Columns) []string {
	var out []string
	for _, s := range c.Servers {
		out = append(out, c.label(s))
	}
	return out
}

func (s Section) versions() string {
	var parts []string
	keys := make([]string, 0, len(s.Result.Versions))
	for k := range s.Result.Versions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v := s.Result.Versions[k]; v != "" {
			parts = append(parts, fmt.Sprintf("%s %s", k, v))
		}
	}
	return strings.Join(parts, ", ")
}

// JoinInts renders xs as "1 and 4".
func JoinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " and ")
}

// MarkdownEscape makes text from error messages (keys with backslashes,
// underscores, angle brackets) print literally in markdown.
func MarkdownEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|#", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
