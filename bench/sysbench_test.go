package bench

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseReportReadWrite checks every field against the captured output
// of sysbench 1.0.20 oltp_read_write on MariaDB (testdata).
func TestParseReportReadWrite(t *testing.T) {
	r, err := ParseReport(readTestdata(t, "mariadb-oltp_read_write.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := Report{
		Reads: 42588, Writes: 12165, Other: 6083,
		Queries: 60836, QPS: 30347.53,
		Transactions: 3041, TPS: 1516.98,
		IgnoredErrors: 1, Reconnects: 0,
		TotalTime:  2003500 * time.Microsecond,
		LatencyMin: 0.73, LatencyAvg: 2.63, LatencyMax: 11.18,
		Percentile: 95, LatencyPercentile: 4.18,
	}
	if !reportsEqual(r, want) {
		t.Errorf("ParseReport =\n%+v\nwant\n%+v", r, want)
	}
}

func reportsEqual(a, b Report) bool {
	return reflect.DeepEqual(a, b)
}

// TestParseReportAllWorkloads checks the invariants of every captured
// successful run: the statement counts add up, the rates match the counts
// over the run time, and the percentile lies between min and max.
func TestParseReportAllWorkloads(t *testing.T) {
	for _, w := range DefaultWorkloads() {
		t.Run(w, func(t *testing.T) {
			r, err := ParseReport(readTestdata(t, "mariadb-"+w+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if r.Reads+r.Writes+r.Other != r.Queries {
				t.Errorf("read %d + write %d + other %d != queries %d", r.Reads, r.Writes, r.Other, r.Queries)
			}
			if r.Queries == 0 || r.TotalTime <= 0 {
				t.Fatalf("empty run: %+v", r)
			}
			if got := float64(r.Queries) / r.TotalTime.Seconds(); !near(got, r.QPS, 0.01) {
				t.Errorf("queries/time = %.2f, QPS = %.2f", got, r.QPS)
			}
			if r.Percentile != 95 || r.LatencyPercentile < r.LatencyMin || r.LatencyPercentile > r.LatencyMax {
				t.Errorf("p%d = %v not within [%v, %v]", r.Percentile, r.LatencyPercentile, r.LatencyMin, r.LatencyMax)
			}
			if len(r.Fatal) != 0 {
				t.Errorf("Fatal = %q", r.Fatal)
			}
		})
	}
}

func near(a, b, rel float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= rel*max(a, b)
}

// TestParseReportFatal checks that aborted runs (a non-retried deadlock, an
// unknown database) give errNoReport and keep the FATAL lines.
func TestParseReportFatal(t *testing.T) {
	for _, tc := range []struct {
		file      string
		wantFatal int
		wantInErr string
	}{
		{"fatal-deadlock.txt", 2, "error 1213"},
		{"fatal-connect.txt", 4, "unable to connect"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r, err := ParseReport(readTestdata(t, tc.file))
			if !errors.Is(err, errNoReport) {
				t.Fatalf("err = %v, want errNoReport", err)
			}
			if !strings.Contains(err.Error(), tc.wantInErr) {
				t.Errorf("err = %v, want it to mention %q", err, tc.wantInErr)
			}
			if len(r.Fatal) != tc.wantFatal {
				t.Errorf("Fatal = %q, want %d lines", r.Fatal, tc.wantFatal)
			}
		})
	}
}

func TestParseReportBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, out, wantInErr string
	}{
		{"empty", "", "no statistics"},
		{"prepare output", string(readTestdata(t, "prepare.txt")), "no statistics"},
		{"bad count", "    queries:   lots  (1.0 per sec.)\n", `line 1 "queries:`},
		{"bad latency", "Latency (ms):\n   95th percentile:   fast\n", "line 2"},
		{"bad time", "    total time:   2.0xs\n", "line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseReport([]byte(tc.out))
			if err == nil || !strings.Contains(err.Error(), tc.wantInErr) {
				t.Errorf("err = %v, want it to contain %q", err, tc.wantInErr)
			}
		})
	}
}

// TestParseReportOtherPercentile: --percentile=99 prints "99th percentile".
func TestParseReportOtherPercentile(t *testing.T) {
	out := strings.Replace(string(readTestdata(t, "mariadb-oltp_point_select.txt")), "95th percentile", "99th percentile", 1)
	r, err := ParseReport([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.Percentile != 99 || r.LatencyPercentile <= 0 {
		t.Errorf("percentile %d = %v, want 99th and positive", r.Percentile, r.LatencyPercentile)
	}
}

func TestSysbenchArgs(t *testing.T) {
	s := Sysbench{Host: "127.0.0.1", Port: 3307, User: "root", Database: "sbtest", Tables: 2, TableSize: 500}
	run := s.Args("oltp_point_select", "run", 4, 2500*time.Millisecond)
	for _, want := range []string{"--mysql-port=3307", "--tables=2", "--table-size=500", "--threads=4", "--time=2"} {
		if !slices.Contains(run, want) {
			t.Errorf("run args %q lack %q", run, want)
		}
	}
	if run[0] != "oltp_point_select" || run[len(run)-1] != "run" {
		t.Errorf("run args %q: want the workload first and the command last", run)
	}
	prep := s.Args("oltp_read_write", "prepare", 4, time.Minute)
	for _, a := range prep {
		if strings.HasPrefix(a, "--threads") || strings.HasPrefix(a, "--time") {
			t.Errorf("prepare args %q carry run-only %q", prep, a)
		}
	}
	if got := s.Args("w", "run", 1, 0); !slices.Contains(got, "--time=1") {
		t.Errorf("a zero run time gives %q, want --time=1 (sysbench's --time=0 means forever)", got)
	}
}
