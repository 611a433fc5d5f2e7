package sqllogic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// RecordsPerSecond is the rate at which records that ran (ok or failed)
// finished over the run's wall time.
func (s *Summary) RecordsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Total.OK+s.Total.Fail) / s.Elapsed.Seconds()
}

// PassRate is the share of records that run on the engine that passed, in
// percent; 100 when none run.
func (s *Summary) PassRate() float64 { return passRate(s.Total) }

func passRate(c Counts) float64 {
	if c.Run() == 0 {
		return 100
	}
	return 100 * float64(c.OK) / float64(c.Run())
}

// byDir adds up the files by their first directory under the report root
// ("." for files directly in it), and returns the directories in order.
func (s *Summary) byDir(opts ReportOptions) (map[string]Counts, []string) {
	groups := map[string]Counts{}
	for _, f := range s.Files {
		d := "."
		if first, _, ok := strings.Cut(filepath.ToSlash(opts.show(f.Path)), "/"); ok {
			d = first
		}
		c := groups[d]
		c.add(f.Counts)
		groups[d] = c
	}
	names := make([]string, 0, len(groups))
	for d := range groups {
		names = append(names, d)
	}
	sort.Strings(names)
	return groups, names
}

// ReportOptions configure WriteReport.
type ReportOptions struct {
	// Root is cut from the front of file paths when they are shown.
	// Default: none.
	Root string
	// Failures is how many failures are shown in full. Default 0: none.
	Failures int
	// Classes is how many failure classes are listed, commonest first.
	// Default 0: none.
	Classes int
	// Slowest is how many of the slowest records are listed. Default 0:
	// none.
	Slowest int
}

// WriteReport writes the per-file table, the totals, the commonest failure
// classes and the first failures in full.
func WriteReport(w io.Writer, s *Summary, opts ReportOptions) error {
	ew := &errWriter{w: w}
	width := len("FILE")
	for _, f := range s.Files {
		width = max(width, len(opts.show(f.Path)))
	}
	ew.printf("%-*s %8s %7s %7s %7s %8s\n", width, "FILE", "OK", "FAIL", "SKIP", "NOTRUN", "TIME")
	for _, f := range s.Files {
		note := ""
		if f.HaltedAt > 0 {
			note = fmt.Sprintf("  halted at line %d", f.HaltedAt)
		}
		if f.Err != "" {
			note += "  " + f.Err
		}
		ew.printf("%-*s %8d %7d %7d %7d %8s%s\n", width, opts.show(f.Path), f.OK, f.Fail, f.Skip, f.NotRun,
			f.Elapsed.Round(100*time.Millisecond), note)
	}
	if groups, names := s.byDir(opts); len(names) > 1 {
		ew.printf("\n%-*s %8s %7s %7s %7s %8s\n", width, "DIRECTORY", "OK", "FAIL", "SKIP", "NOTRUN", "PASS")
		for _, d := range names {
			c := groups[d]
			ew.printf("%-*s %8d %7d %7d %7d %7.2f%%\n", width, d, c.OK, c.Fail, c.Skip, c.NotRun, passRate(c))
		}
	}
	ew.printf("\n%s\n", s.TotalLine())
	if s.BudgetSpent {
		ew.printf("the time budget ran out: %d records did not run\n", s.Total.NotRun)
	}

	if opts.Classes > 0 && s.Total.Fail > 0 {
		classes := s.Classes()
		names := make([]string, 0, len(classes))
		for c := range classes {
			names = append(names, c)
		}
		sort.Slice(names, func(i, j int) bool {
			if classes[names[i]] != classes[names[j]] {
				return classes[names[i]] > classes[names[j]]
			}
			return names[i] < names[j]
		})
		ew.printf("\nfailure classes (%d):\n", len(names))
		for i, c := range names {
			if i == opts.Classes {
				ew.printf("  ... %d more classes\n", len(names)-i)
				break
			}
			ew.printf("%8d  %s\n", classes[c], c)
		}
	}

	if slow := s.Slowest(opts.Slowest); len(slow) > 0 {
		ew.printf("\nslowest records:\n")
		for _, t := range slow {
			ew.printf("%8s  %s:%d: %s\n", t.Elapsed.Round(time.Millisecond), opts.show(t.File), t.Line, oneLine(t.SQL, 100))
		}
	}

	shown := 0
	for _, f := range s.Files {
		for _, fl := range f.Failures {
			if shown == opts.Failures {
				break
			}
			shown++
			if shown == 1 {
				ew.printf("\nfirst failures:\n")
			}
			writeFailure(ew, opts.show(fl.File), &fl)
		}
	}
	return ew.err
}

// TotalLine is the one-line summary of the run.
func (s *Summary) TotalLine() string {
	t := s.Total
	return fmt.Sprintf("total: %d files, %d records run: %d ok, %d fail, %d not run (%.2f%% pass); %d skipped; %v, %.0f records/s",
		len(s.Files), t.Run(), t.OK, t.Fail, t.NotRun, s.PassRate(), t.Skip,
		s.Elapsed.Round(time.Second), s.RecordsPerSecond())
}

// Problem is one failed record described in full.
type Problem struct {
	Failure Failure
	// Text is the failure as the report shows it: file:line, directive,
	// SQL, the problem, expected and actual results.
	Text string
}

// Problems describes every kept failure in full, file by file, for tests
// that report them one by one. File errors are in FileResult.Err.
func (s *Summary) Problems() []Problem {
	var out []Problem
	for _, f := range s.Files {
		for _, fl := range f.Failures {
			var b strings.Builder
			writeFailure(&errWriter{w: &b}, fl.File, &fl)
			out = append(out, Problem{Failure: fl, Text: strings.TrimPrefix(b.String(), "\n")})
		}
	}
	return out
}

func writeFailure(ew *errWriter, file string, f *Failure) {
	ew.printf("\n--- %s:%d: %s\n", file, f.Line, f.Directive)
	ew.printf("%s\n", indent(f.SQL))
	ew.printf("problem: %s\n", f.Problem)
	if len(f.Expected) > 0 || len(f.Actual) > 0 {
		ew.printf("expected:\n%s\n", indent(strings.Join(f.Expected, "\n")))
		ew.printf("actual:\n%s\n", indent(strings.Join(f.Actual, "\n")))
	}
	if len(f.Sample) > 0 {
		ew.printf("actual values: %s\n", strings.Join(f.Sample, " "))
	}
}

// oneLine puts s on one line, cut to at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

func indent(s string) string {
	if s == "" {
		return "    (none)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func (o ReportOptions) show(path string) string {
	if o.Root == "" {
		return path
	}
	if rel, err := filepath.Rel(o.Root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// errWriter keeps the first write error so that a report is written without
// checking every line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// jsonSummary is the machine-readable form of a Summary.
type jsonSummary struct {
	*Summary
	ElapsedSeconds   float64        `json:"elapsed_s"`
	RecordsPerSecond float64        `json:"records_per_s"`
	PassRate         float64        `json:"pass_rate"`
	Classes          map[string]int `json:"classes"`
}

// WriteJSON writes the summary as indented JSON: every file with its
// counts, kept failures and failure classes, the totals, elapsed_s,
// records_per_s, pass_rate (percent) and all failure classes.
func WriteJSON(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonSummary{
		Summary:          s,
		ElapsedSeconds:   s.Elapsed.Seconds(),
		RecordsPerSecond: s.RecordsPerSecond(),
		PassRate:         s.PassRate(),
		Classes:          s.Classes(),
	})
}

// ProgressLine renders the counters as one line: files done, records,
// outcome counts and the rate since start.
func ProgressLine(c *Counters, start, now time.Time) string {
	ok, fail, skip := c.OK.Load(), c.Fail.Load(), c.Skip.Load()
	el := now.Sub(start)
	rate := 0.0
	if el > 0 {
		rate = float64(ok+fail) / el.Seconds()
	}
	return fmt.Sprintf("[%d/%d files] %d records: %d ok, %d fail, %d skip; %.0f records/s, %v",
		c.FilesDone.Load(), c.FilesTotal.Load(), ok+fail+skip, ok, fail, skip, rate, el.Round(time.Second))
}

// ShowProgress writes a progress line every interval until ctx is done or
// the returned stop is called (stop waits for the last line). On a terminal
// (overwrite set) the line is rewritten in place; elsewhere each is a new
// line.
func ShowProgress(ctx context.Context, w io.Writer, c *Counters, every time.Duration, overwrite bool) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				if overwrite {
					fmt.Fprintf(w, "\r\033[K")
				}
				return
			case now := <-t.C:
				if overwrite {
					fmt.Fprintf(w, "\r\033[K%s", ProgressLine(c, start, now))
				} else {
					fmt.Fprintln(w, ProgressLine(c, start, now))
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
