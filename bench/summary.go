package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Run is one sysbench run of one workload on one server.
type Run struct {
	Server   string
	Workload string
	Threads  int
	// Round counts from 1.
	Round int
	// RunTime is the --time given to sysbench.
	RunTime time.Duration
	// Report is what sysbench printed; meaningful only when Err is empty or
	// the output was partial.
	Report Report
	// Err is why the run did not produce a clean report, empty if it did.
	// It is a string so that results survive a JSON round trip.
	Err string
	// Output is the file holding sysbench's raw output, if it was kept.
	Output string
}

// Flag returns why the run must not be quoted without a warning, or "" if
// it is clean. Retried conflicts (Report.IgnoredErrors) are not a reason:
// they are counted and shown separately.
func (r Run) Flag() string {
	var why []string
	if r.Err != "" {
		why = append(why, r.Err)
	} else if len(r.Report.Fatal) > 0 {
		why = append(why, "FATAL: "+r.Report.Fatal[0])
	}
	if r.Report.Reconnects > 0 {
		why = append(why, fmt.Sprintf("%d reconnects", r.Report.Reconnects))
	}
	return strings.Join(why, "; ")
}

// valid reports whether the run's figures can enter a median.
func (r Run) valid() bool {
	return r.Err == "" && r.Report.QPS > 0
}

// Median returns the median of xs (the mean of the two middle values for an
// even count) and false for an empty slice. It does not modify xs.
func Median(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid], true
	}
	return (s[mid-1] + s[mid]) / 2, true
}

// Ratio returns a/b, and false when b is not a positive number (a ratio to
// a failed or missing run means nothing).
func Ratio(a, b float64) (float64, bool) {
	if !(b > 0) || math.IsNaN(a) || math.IsInf(a, 0) {
		return 0, false
	}
	return a / b, true
}

// Cell summarises the rounds of one (workload, threads) pair on one server.
type Cell struct {
	// Runs is how many runs there were, Valid how many produced figures.
	Runs, Valid int
	// QPS and P95 are medians over the valid runs; MinQPS and MaxQPS show
	// the spread.
	QPS, P95       float64
	MinQPS, MaxQPS float64
	// IgnoredErrors is the total of retried errors over all runs.
	IgnoredErrors int64
	// Flags lists, per flagged run, "round N: why".
	Flags []string
}

// maxFlagLen bounds the reason kept in a Cell's flag, in characters.
const maxFlagLen = 300

// addFlag records that round failed for why, as "round N: why", merging
// the rounds that failed for the same reason into "rounds N, M: why" so
// that a server that fails every run is one line, not one per run.
func addFlag(flags []string, round int, why string) []string {
	why = strings.Join(strings.Fields(why), " ") // one line, for tables
	if r := []rune(why); len(r) > maxFlagLen {
		why = string(r[:maxFlagLen]) + "..." // the whole text is in the Run
	}
	for i, f := range flags {
		rounds, prev, _ := strings.Cut(f, ": ")
		if prev == why {
			flags[i] = fmt.Sprintf("rounds %s, %d: %s",
				strings.TrimPrefix(strings.TrimPrefix(rounds, "rounds "), "round "), round, why)
			return flags
		}
	}
	return append(flags, fmt.Sprintf("round %d: %s", round, why))
}

// Row is one (workload, threads) pair with a Cell per server.
type Row struct {
	Workload string
	Threads  int
	Cells    map[string]Cell
	// Ratio is the median over rounds of subject QPS / baseline QPS, over
	// the rounds where both runs were valid; HasRatio says there was one.
	Ratio    float64
	HasRatio bool
}

// Summarize groups runs into one Row per (workload, threads) pair, in the
// order the pairs first appear in runs. When subject and baseline are both
// among the servers, each row gets the median per-round ratio
// subject/baseline.
func Summarize(runs []Run, subject, baseline string) []Row {
	type pair struct {
		workload string
		threads  int
	}
	var order []pair
	byPair := map[pair][]Run{}
	for _, r := range runs {
		p := pair{r.Workload, r.Threads}
		if _, ok := byPair[p]; !ok {
			order = append(order, p)
		}
		byPair[p] = append(byPair[p], r)
	}
	rows := make([]Row, 0, len(order))
	for _, p := range order {
		row := Row{Workload: p.workload, Threads: p.threads, Cells: map[string]Cell{}}
		qps := map[string][]float64{}
		p95 := map[string][]float64{}
		// perRound[round][server] = QPS of a valid run.
		perRound := map[int]map[string]float64{}
		for _, r := range byPair[p] {
			c := row.Cells[r.Server]
			c.Runs++
			c.IgnoredErrors += r.Report.IgnoredErrors
			if why := r.Flag(); why != "" {
				c.Flags = addFlag(c.Flags, r.Round, why)
			}
			if r.valid() {
				c.Valid++
				qps[r.Server] = append(qps[r.Server], r.Report.QPS)
				p95[r.Server] = append(p95[r.Server], r.Report.LatencyPercentile)
				if perRound[r.Round] == nil {
					perRound[r.Round] = map[string]float64{}
				}
				perRound[r.Round][r.Server] = r.Report.QPS
			}
			row.Cells[r.Server] = c
		}
		for server, c := range row.Cells {
			c.QPS, _ = Median(qps[server])
			c.P95, _ = Median(p95[server])
			if len(qps[server]) > 0 {
				c.MinQPS, c.MaxQPS = slices.Min(qps[server]), slices.Max(qps[server])
			}
			row.Cells[server] = c
		}
		var ratios []float64
		for _, byServer := range perRound {
			s, okS := byServer[subject]
			b, okB := byServer[baseline]
			if !okS || !okB {
				continue
			}
			if q, ok := Ratio(s, b); ok {
				ratios = append(ratios, q)
			}
		}
		row.Ratio, row.HasRatio = Median(ratios)
		rows = append(rows, row)
	}
	return rows
}
