package bench

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
		ok   bool
	}{
		{nil, 0, false},
		{[]float64{7}, 7, true},
		{[]float64{3, 1, 2}, 2, true},
		{[]float64{4, 1, 3, 2}, 2.5, true},
		{[]float64{5, 5, 1}, 5, true},
	} {
		xs := slices.Clone(tc.xs)
		got, ok := Median(xs)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Median(%v) = %v, %v; want %v, %v", tc.xs, got, ok, tc.want, tc.ok)
		}
		if !slices.Equal(xs, tc.xs) {
			t.Errorf("Median(%v) reordered its input to %v", tc.xs, xs)
		}
	}
}

func TestRatio(t *testing.T) {
	if r, ok := Ratio(3, 4); !ok || r != 0.75 {
		t.Errorf("Ratio(3, 4) = %v, %v", r, ok)
	}
	for _, b := range []float64{0, -1, math.NaN()} {
		if _, ok := Ratio(1, b); ok {
			t.Errorf("Ratio(1, %v) ok, want refused", b)
		}
	}
	if _, ok := Ratio(math.Inf(1), 1); ok {
		t.Error("Ratio(+Inf, 1) ok, want refused")
	}
}

func run(server, workload string, threads, round int, qps, p95 float64) Run {
	return Run{Server: server, Workload: workload, Threads: threads, Round: round,
		Report: Report{QPS: qps, LatencyPercentile: p95, Percentile: 95}}
}

func TestSummarize(t *testing.T) {
	runs := []Run{
		run("mariadb", "oltp_point_select", 1, 1, 100, 1),
		run("percdb", "oltp_point_select", 1, 1, 50, 2),
		run("percdb", "oltp_point_select", 1, 2, 90, 3), // percdb first in round 2
		run("mariadb", "oltp_point_select", 1, 2, 100, 5),
		run("mariadb", "oltp_point_select", 1, 3, 400, 1),
		run("percdb", "oltp_point_select", 1, 3, 100, 4),
		run("mariadb", "oltp_insert", 4, 1, 10, 1),
		run("percdb", "oltp_insert", 4, 1, 5, 1),
	}
	runs[7].Report.IgnoredErrors = 3
	// A failed run: no figures, must not enter a median nor a ratio.
	failed := run("percdb", "oltp_insert", 4, 2, 0, 0)
	failed.Err = "sysbench: exit status 1"
	runs = append(runs, run("mariadb", "oltp_insert", 4, 2, 20, 1), failed)

	rows := Summarize(runs, "percdb", "mariadb")
	if len(rows) != 2 || rows[0].Workload != "oltp_point_select" || rows[1].Workload != "oltp_insert" {
		t.Fatalf("rows = %+v, want point_select then insert", rows)
	}

	ps := rows[0]
	m, p := ps.Cells["mariadb"], ps.Cells["percdb"]
	if m.QPS != 100 || m.P95 != 1 || m.MinQPS != 100 || m.MaxQPS != 400 || m.Valid != 3 {
		t.Errorf("mariadb cell = %+v", m)
	}
	if p.QPS != 90 || p.P95 != 3 || p.MinQPS != 50 || p.MaxQPS != 100 {
		t.Errorf("percdb cell = %+v", p)
	}
	// Per-round ratios 0.5, 0.9, 0.25: the median is 0.5, which is not the
	// ratio of the medians (0.9).
	if !ps.HasRatio || ps.Ratio != 0.5 {
		t.Errorf("ratio = %v, %v; want 0.5", ps.Ratio, ps.HasRatio)
	}

	ins := rows[1]
	pi := ins.Cells["percdb"]
	if pi.Runs != 2 || pi.Valid != 1 || pi.QPS != 5 || pi.IgnoredErrors != 3 {
		t.Errorf("percdb insert cell = %+v", pi)
	}
	if len(pi.Flags) != 1 || !strings.HasPrefix(pi.Flags[0], "round 2: sysbench") {
		t.Errorf("flags = %q", pi.Flags)
	}
	// Round 2 has no valid percdb run: only round 1's ratio counts.
	if !ins.HasRatio || ins.Ratio != 0.5 {
		t.Errorf("insert ratio = %v, %v; want 0.5 from round 1 alone", ins.Ratio, ins.HasRatio)
	}
}

func TestSummarizeOneServer(t *testing.T) {
	rows := Summarize([]Run{run("mariadb", "w", 1, 1, 10, 1)}, "percdb", "mariadb")
	if len(rows) != 1 || rows[0].HasRatio {
		t.Errorf("rows = %+v, want one row without a ratio", rows)
	}
}

func TestRunFlag(t *testing.T) {
	clean := run("percdb", "w", 1, 1, 10, 1)
	clean.Report.IgnoredErrors = 12
	if f := clean.Flag(); f != "" {
		t.Errorf("retried conflicts flagged: %q", f)
	}
	re := clean
	re.Report.Reconnects = 2
	if f := re.Flag(); !strings.Contains(f, "2 reconnects") {
		t.Errorf("reconnects not flagged: %q", f)
	}
	fatal := clean
	fatal.Report.Fatal = []string{"mysql_stmt_execute() returned error 1105"}
	if f := fatal.Flag(); !strings.Contains(f, "1105") {
		t.Errorf("FATAL not flagged: %q", f)
	}
}

func TestOrderWorkloads(t *testing.T) {
	got := OrderWorkloads([]string{"oltp_delete", "oltp_insert", "oltp_read_write", "oltp_point_select", "oltp_update_index", "oltp_read_only"})
	want := []string{"oltp_point_select", "oltp_read_only", "oltp_read_write", "oltp_update_index", "oltp_insert", "oltp_delete"}
	if !slices.Equal(got, want) {
		t.Errorf("OrderWorkloads = %q, want %q", got, want)
	}
}

// TestIsolation checks the levels the harnesses accept and the variable
// each server is given.
func TestIsolation(t *testing.T) {
	for _, l := range []string{"", "READ-COMMITTED", "REPEATABLE-READ", "READ-UNCOMMITTED", "SERIALIZABLE"} {
		if err := ValidateIsolation(l); err != nil {
			t.Errorf("%q: %v", l, err)
		}
	}
	for _, l := range []string{"READ COMMITTED", "read-committed", "RC", "READ-COMMITTED'; DROP DATABASE x; --"} {
		if err := ValidateIsolation(l); err == nil {
			t.Errorf("%q accepted", l)
		}
	}
	if v := IsolationVariable(MariaDB); v != "tx_isolation" {
		t.Errorf("mariadb: %s", v)
	}
	if v := IsolationVariable(Percdb); v != "transaction_isolation" {
		t.Errorf("percdb: %s", v)
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Servers: []string{"mysql"}}, `unknown server "mysql"`},
		{Options{Servers: []string{"mariadb", "mariadb"}}, "named twice"},
		{Options{Workloads: []string{"oltp; rm -rf /"}}, "not a sysbench script"},
		{Options{Threads: []int{0}}, "threads 0"},
		{Options{Rounds: -1}, "rounds -1"},
		{Options{RunTime: 10}, "shortest run"},
		{Options{Budget: -1}, "negative"},
		{Options{PercdbTxnMode: "pessimistc"}, `transaction mode "pessimistc"`},
		{Options{Isolation: "READ COMMITTED"}, `isolation level "READ COMMITTED"`},
	} {
		err := tc.opts.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestSummarizeMergesRepeatedFlags(t *testing.T) {
	var runs []Run
	for round := 1; round <= 3; round++ {
		r := run("percdb", "w", 1, round, 0, 0)
		r.Err = "tables not prepared: prepare tables: exit status 1\nFATAL: no"
		if round == 2 {
			r.Err = "other"
		}
		runs = append(runs, r)
	}
	flags := Summarize(runs, "percdb", "mariadb")[0].Cells["percdb"].Flags
	want := []string{"rounds 1, 3: tables not prepared: prepare tables: exit status 1 FATAL: no", "round 2: other"}
	if !slices.Equal(flags, want) {
		t.Errorf("flags = %q, want %q", flags, want)
	}
}

func TestFlagTruncated(t *testing.T) {
	r := run("percdb", "w", 1, 1, 0, 0)
	r.Err = strings.Repeat("x", 2*maxFlagLen)
	flags := Summarize([]Run{r}, "percdb", "mariadb")[0].Cells["percdb"].Flags
	if len(flags) != 1 || len(flags[0]) != len("round 1: ")+maxFlagLen+len("...") {
		t.Errorf("flags = %q, want one flag cut to %d characters", flags, maxFlagLen)
	}
}
