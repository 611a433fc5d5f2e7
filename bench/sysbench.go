package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Report is what one sysbench 1.0 "run" printed at its end. Latencies are in
// milliseconds, as sysbench prints them.
type Report struct {
	// Reads, Writes and Other count the statements sysbench classified under
	// "queries performed". A DELETE or UPDATE that matched no row is counted
	// as Other, which is how a depleted table shows up in oltp_delete.
	Reads, Writes, Other int64
	// Queries is the total number of statements and QPS their rate.
	Queries int64
	QPS     float64
	// Transactions is the number of events (one per Lua event() call) and
	// TPS their rate.
	Transactions int64
	TPS          float64
	// IgnoredErrors counts the errors sysbench retried by itself (its
	// --mysql-ignore-errors list, 1213, 1020 and 1205 by default).
	IgnoredErrors int64
	// Reconnects counts the connections sysbench had to re-open.
	Reconnects int64
	// TotalTime is the measured run time.
	TotalTime time.Duration
	// LatencyMin, LatencyAvg and LatencyMax are per event, in ms.
	LatencyMin, LatencyAvg, LatencyMax float64
	// Percentile is the percentile sysbench computed (95 by default, 0 if
	// it printed none) and LatencyPercentile its value in ms.
	Percentile        int
	LatencyPercentile float64
	// Fatal holds sysbench's FATAL lines, in order. sysbench aborts the run
	// on the first error it does not retry, so a non-empty Fatal usually
	// comes without the statistics.
	Fatal []string
}

// errNoReport is returned by ParseReport when the output has no statistics.
var errNoReport = errors.New("no statistics in sysbench output")

var (
	// countRate matches "  queries:   60836  (30347.53 per sec.)".
	countRate = regexp.MustCompile(`^(\d+)\s+\(([0-9.]+) per sec\.\)$`)
	// percentileKey matches "95th percentile" (also 99th, 50th, 1st...).
	percentileKey = regexp.MustCompile(`^(\d+)(?:st|nd|rd|th) percentile$`)
)

// ParseReport reads the output of `sysbench <workload> run`. It returns an
// error wrapping errNoReport when the statistics are missing (sysbench
// aborted), together with whatever it found, including the FATAL lines; and
// an error naming the line when a statistic it knows is malformed.
func ParseReport(out []byte) (Report, error) {
	var (
		r       Report
		section string // the last "xxx:" line with no value, e.g. "Latency (ms)"
		sawQPS  bool
	)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "FATAL:"); ok {
			r.Fatal = append(r.Fatal, strings.TrimSpace(rest))
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if value == "" {
			section = key
			continue
		}
		var err error
		switch {
		case section == "queries performed" && key == "read":
			r.Reads, err = parseInt(value)
		case section == "queries performed" && key == "write":
			r.Writes, err = parseInt(value)
		case section == "queries performed" && key == "other":
			r.Other, err = parseInt(value)
		case key == "transactions":
			r.Transactions, r.TPS, err = parseCountRate(value)
		case key == "queries":
			r.Queries, r.QPS, err = parseCountRate(value)
			sawQPS = err == nil
		case key == "ignored errors":
			r.IgnoredErrors, _, err = parseCountRate(value)
		case key == "reconnects":
			r.Reconnects, _, err = parseCountRate(value)
		case key == "total time":
			r.TotalTime, err = time.ParseDuration(value) // "2.0035s"
		case strings.HasPrefix(section, "Latency") && key == "min":
			r.LatencyMin, err = strconv.ParseFloat(value, 64)
		case strings.HasPrefix(section, "Latency") && key == "avg":
			r.LatencyAvg, err = strconv.ParseFloat(value, 64)
		case strings.HasPrefix(section, "Latency") && key == "max":
			r.LatencyMax, err = strconv.ParseFloat(value, 64)
		case strings.HasPrefix(section, "Latency") && percentileKey.MatchString(key):
			r.Percentile, err = strconv.Atoi(percentileKey.FindStringSubmatch(key)[1])
			if err == nil {
				r.LatencyPercentile, err = strconv.ParseFloat(value, 64)
			}
		}
		if err != nil {
			return r, fmt.Errorf("sysbench output line %d %q: %w", n, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return r, fmt.Errorf("read sysbench output: %w", err)
	}
	if !sawQPS {
		if len(r.Fatal) > 0 {
			return r, fmt.Errorf("%w: FATAL: %s", errNoReport, r.Fatal[0])
		}
		return r, errNoReport
	}
	return r, nil
}

func parseInt(s string) (int64, error) {
	return strconv.ParseInt(s, 10, 64)
}

// parseCountRate parses "60836  (30347.53 per sec.)".
func parseCountRate(s string) (int64, float64, error) {
	m := countRate.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, errors.New(`want "<count> (<rate> per sec.)"`)
	}
	n, err := parseInt(m[1])
	if err != nil {
		return 0, 0, err
	}
	rate, err := strconv.ParseFloat(m[2], 64)
	return n, rate, err
}

// Sysbench runs the sysbench binary against one MySQL-protocol server.
type Sysbench struct {
	// Path is the sysbench binary. Default: "sysbench" from $PATH.
	Path string
	// Host and Port address the server; User logs in with no password.
	Host string
	Port int
	User string
	// Database holds the tables; it must exist before "prepare".
	Database string
	// Tables and TableSize shape the data set (--tables, --table-size).
	Tables, TableSize int
}

// Args returns the arguments (without the binary) of one sysbench command.
// threads and runTime only matter for the "run" command; runTime is rounded
// down to whole seconds (sysbench's --time unit), at least one.
func (s Sysbench) Args(workload, command string, threads int, runTime time.Duration) []string {
	args := []string{
		workload,
		"--db-driver=mysql",
		"--mysql-host=" + s.Host,
		"--mysql-port=" + strconv.Itoa(s.Port),
		"--mysql-user=" + s.User,
		"--mysql-password=",
		"--mysql-db=" + s.Database,
		"--tables=" + strconv.Itoa(s.Tables),
		"--table-size=" + strconv.Itoa(s.TableSize),
	}
	if command == "run" {
		args = append(args,
			"--threads="+strconv.Itoa(threads),
			"--time="+strconv.Itoa(wholeSeconds(runTime)),
			"--report-interval=0",
		)
	}
	return append(args, command)
}

// wholeSeconds rounds d down to whole seconds, at least one.
func wholeSeconds(d time.Duration) int {
	return max(1, int(d/time.Second))
}

// Exec runs one sysbench command and returns its combined output. The error
// says how it ended when it did not exit with status 0.
func (s Sysbench) Exec(ctx context.Context, workload, command string, threads int, runTime time.Duration) ([]byte, error) {
	path := s.Path
	if path == "" {
		path = "sysbench"
	}
	cmd := exec.CommandContext(ctx, path, s.Args(workload, command, threads, runTime)...)
	cmd.WaitDelay = 5 * time.Second // do not hang on a child holding the pipes
	// Dies with the harness, like the servers: no load left running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("sysbench %s %s on port %d: %w", workload, command, s.Port, err)
	}
	return out, nil
}
