package sqllogic

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Session runs one file's records, in order, on one fresh database.
type Session interface {
	// Exec runs a statement and reports whether it failed. A statement
	// that returns rows has them read and dropped.
	Exec(ctx context.Context, sql string) error
	// Query runs a query and returns all of its rows.
	Query(ctx context.Context, sql string) (*Rows, error)
	// Close drops the session's database and releases its connection.
	Close(ctx context.Context) error
}

// Target hands out fresh databases, one per file. Open may be called from
// several goroutines at once.
type Target interface {
	// Open returns a session on a new, empty database. name is the file's
	// path, for the target's logs; the database name is the target's
	// business.
	Open(ctx context.Context, name string) (Session, error)
}

// Options configure Run.
type Options struct {
	// Engine is the engine name skipif/onlyif lines are held against.
	// Default "mysql".
	Engine string
	// Jobs is how many files run at once, each on its own database.
	// Default 1.
	Jobs int
	// Budget bounds the whole run: when it is spent, the running records
	// are abandoned and every record not yet finished counts as not run.
	// Zero means no limit.
	Budget time.Duration
	// RecordTimeout bounds a single record; a record that takes longer
	// fails and the file goes on. Default one minute.
	RecordTimeout time.Duration
	// Types says how column types are held against type letters. Default
	// StrictTypes.
	Types TypeCheck
	// KeepFailures is how many failures per file are kept in full (file,
	// line, SQL, expected and actual); the rest are only counted. Default
	// 10.
	KeepFailures int
	// KeepSlowest is how many of its slowest records each file keeps, with
	// their time. Default 5.
	KeepSlowest int
	// Counters, when set, is updated as records finish, for a progress
	// display running alongside.
	Counters *Counters
}

// DefaultRecordTimeout is the RecordTimeout used when Options leaves it 0.
const DefaultRecordTimeout = time.Minute

func (o Options) withDefaults() Options {
	if o.Engine == "" {
		o.Engine = "mysql"
	}
	if o.Jobs <= 0 {
		o.Jobs = 1
	}
	if o.RecordTimeout <= 0 {
		o.RecordTimeout = DefaultRecordTimeout
	}
	if o.KeepFailures <= 0 {
		o.KeepFailures = 10
	}
	if o.KeepSlowest <= 0 {
		o.KeepSlowest = 5
	}
	return o
}

// Counters are the live totals of a run; every field is updated atomically.
type Counters struct {
	FilesDone  atomic.Int64
	FilesTotal atomic.Int64
	OK         atomic.Int64
	Fail       atomic.Int64
	Skip       atomic.Int64
}

func (c *Counters) ok() {
	if c != nil {
		c.OK.Add(1)
	}
}

func (c *Counters) fail() {
	if c != nil {
		c.Fail.Add(1)
	}
}

func (c *Counters) skip() {
	if c != nil {
		c.Skip.Add(1)
	}
}

// Failure is one record that did not do what the file expects.
type Failure struct {
	// File and Line locate the record's directive.
	File string `json:"file"`
	Line int    `json:"line"`
	// Directive is the record's first line, e.g. "query II rowsort".
	Directive string `json:"directive"`
	// SQL is the record's SQL.
	SQL string `json:"sql"`
	// Problem says what went wrong.
	Problem string `json:"problem"`
	// Class is a short name of the kind of problem, for tallies.
	Class string `json:"class"`
	// Expected and Actual are the results as the file writes them (values,
	// or a hash line); empty for statements. A long actual list is cut
	// short with a "... N more" line.
	Expected []string `json:"expected,omitempty"`
	Actual   []string `json:"actual,omitempty"`
	// Sample holds the first actual values when Actual is a hash line.
	Sample []string `json:"sample,omitempty"`
}

// Key names the failed record as "FILE:LINE", FILE being the base name of
// the .test file.
func (f *Failure) Key() string { return fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line) }

// Timing is how long one record took.
type Timing struct {
	File    string        `json:"file"`
	Line    int           `json:"line"`
	SQL     string        `json:"sql"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Counts tallies records by outcome.
type Counts struct {
	// OK records ran and did what the file expects.
	OK int `json:"ok"`
	// Fail records ran and did not.
	Fail int `json:"fail"`
	// Skip records are excluded for the engine by skipif/onlyif.
	Skip int `json:"skip"`
	// NotRun records would have run but did not: the budget ran out or the
	// file's database could not be set up.
	NotRun int `json:"notrun"`
}

// Run is the number of records that run on the engine: OK+Fail+NotRun.
func (c Counts) Run() int { return c.OK + c.Fail + c.NotRun }

func (c *Counts) add(o Counts) {
	c.OK += o.OK
	c.Fail += o.Fail
	c.Skip += o.Skip
	c.NotRun += o.NotRun
}

// FileResult is the outcome of one file.
type FileResult struct {
	// Path is the file's path as given to Run.
	Path string `json:"path"`
	Counts
	// HaltedAt is the line of the halt record that stopped the file, 0 if
	// none did; records after it are not counted.
	HaltedAt int `json:"halted_at,omitempty"`
	// Err is a problem with the file as a whole (it does not parse, its
	// database cannot be set up); empty if none.
	Err string `json:"error,omitempty"`
	// Elapsed is the file's wall time.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Failures are the first Options.KeepFailures failures in full.
	Failures []Failure `json:"failures,omitempty"`
	// Slowest are the file's slowest records, slowest first, at most
	// Options.KeepSlowest of them.
	Slowest []Timing `json:"slowest,omitempty"`
	// Classes counts every failure of the file by class.
	Classes map[string]int `json:"classes,omitempty"`
}

// Summary is the outcome of a run.
type Summary struct {
	// Files are the results in the order of the paths given to Run.
	Files []FileResult `json:"files"`
	// Total adds up the files.
	Total Counts `json:"total"`
	// Elapsed is the run's wall time.
	Elapsed time.Duration `json:"elapsed_ns"`
	// BudgetSpent is set when Options.Budget ran out before every record
	// had run.
	BudgetSpent bool `json:"budget_spent"`
}

// Classes adds up the failure classes of every file.
func (s *Summary) Classes() map[string]int {
	all := map[string]int{}
	for _, f := range s.Files {
		for c, n := range f.Classes {
			all[c] += n
		}
		if f.Err != "" {
			all["file: "+normalizeMessage(f.Err)]++
		}
	}
	return all
}

// Run executes each file on its own fresh database from target, Jobs files
// at a time, and returns what happened. A file's records run in order. It
// returns early, counting the rest as not run, when ctx is done or the
// budget is spent.
func Run(ctx context.Context, target Target, files []string, opts Options) *Summary {
	opts = opts.withDefaults()
	start := time.Now()
	if opts.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Budget)
		defer cancel()
	}
	if opts.Counters != nil {
		opts.Counters.FilesTotal.Add(int64(len(files)))
	}
	sum := &Summary{Files: make([]FileResult, len(files))}

	// Start the biggest files first: a big file started last would leave
	// the other workers idle at the end.
	order := make([]int, len(files))
	sizes := make([]int64, len(files))
	for i, f := range files {
		order[i] = i
		if st, err := os.Stat(f); err == nil {
			sizes[i] = st.Size()
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return sizes[order[a]] > sizes[order[b]] })

	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < opts.Jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				sum.Files[i] = runFile(ctx, target, files[i], opts)
				if opts.Counters != nil {
					opts.Counters.FilesDone.Add(1)
				}
			}
		}()
	}
	for _, i := range order {
		work <- i
	}
	close(work)
	wg.Wait()

	for _, f := range sum.Files {
		sum.Total.add(f.Counts)
	}
	sum.BudgetSpent = opts.Budget > 0 && sum.Total.NotRun > 0 && ctx.Err() != nil
	sum.Elapsed = time.Since(start)
	return sum
}

// fileRun is the state of one file being run.
type fileRun struct {
	opts   Options
	sess   Session
	res    *FileResult
	labels map[string]labelResult
}

// labelResult is the first result seen for a label.
type labelResult struct {
	line int
	hash string
}

func runFile(ctx context.Context, target Target, path string, opts Options) FileResult {
	start := time.Now()
	res := FileResult{Path: path}
	runRecords(ctx, target, &res, opts)
	res.Elapsed = time.Since(start)
	return res
}

// runRecords runs the file's records on a fresh database into res.
func runRecords(ctx context.Context, target Target, res *FileResult, opts Options) {
	path := res.Path
	recs, err := ParseFile(path)
	if err != nil {
		res.Err = err.Error()
		return
	}
	if ctx.Err() != nil {
		countNotRun(res, recs, opts)
		return
	}
	sess, err := target.Open(ctx, path)
	if err != nil {
		res.Err = fmt.Sprintf("open database: %v", err)
		countNotRun(res, recs, opts)
		return
	}
	defer func() {
		// Drop the database even when the budget is spent.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.RecordTimeout)
		defer cancel()
		if err := sess.Close(cctx); err != nil && res.Err == "" {
			res.Err = fmt.Sprintf("close database: %v", err)
		}
	}()

	fr := &fileRun{opts: opts, sess: sess, res: res, labels: map[string]labelResult{}}
	for i := range recs {
		rec := &recs[i]
		if ctx.Err() != nil {
			countNotRun(res, recs[i:], opts)
			break
		}
		if !rec.RunsOn(opts.Engine) {
			if rec.Kind != Halt {
				res.Skip++
				opts.Counters.skip()
			}
			continue
		}
		if rec.Kind == Halt {
			res.HaltedAt = rec.Line
			break
		}
		fr.run(ctx, rec)
	}
}

// countNotRun counts the records that would run, up to a halt, as not run.
func countNotRun(res *FileResult, recs []Record, opts Options) {
	for i := range recs {
		rec := &recs[i]
		switch {
		case !rec.RunsOn(opts.Engine):
			if rec.Kind != Halt {
				res.Skip++
			}
		case rec.Kind == Halt:
			return
		default:
			res.NotRun++
		}
	}
}

// run executes one record and records its outcome.
func (fr *fileRun) run(ctx context.Context, rec *Record) {
	rctx, cancel := context.WithTimeout(ctx, fr.opts.RecordTimeout)
	defer cancel()
	defer fr.time(rec, time.Now())
	f := Failure{File: fr.res.Path, Line: rec.Line, Directive: directive(rec), SQL: rec.SQL}
	switch rec.Kind {
	case Statement:
		err := fr.sess.Exec(rctx, rec.SQL)
		if ctx.Err() != nil {
			fr.notRun()
			return
		}
		switch {
		case err != nil && !rec.ExpectError:
			f.Problem, f.Class = describeError(rctx, err, fr.opts.RecordTimeout)
		case err == nil && rec.ExpectError:
			f.Problem, f.Class = "statement succeeded, expected an error", "expected error"
		default:
			fr.ok()
			return
		}
	case Query:
		rows, err := fr.sess.Query(rctx, rec.SQL)
		if ctx.Err() != nil {
			fr.notRun()
			return
		}
		f.Expected = expectedLines(rec)
		if err != nil {
			f.Problem, f.Class = describeError(rctx, err, fr.opts.RecordTimeout)
			break
		}
		out := Check(rec, rows, fr.opts.Types)
		f.Actual, f.Sample = actualLines(rec, out.Values)
		f.Problem, f.Class = out.Problem, out.Class
		if f.Problem == "" && rec.Label != "" {
			f.Problem = fr.checkLabel(rec, out.Values)
			f.Class = "label mismatch"
		}
		if f.Problem == "" {
			fr.ok()
			return
		}
	}
	fr.fail(f)
}

// time records how long rec took if it is among the file's slowest.
func (fr *fileRun) time(rec *Record, start time.Time) {
	t := Timing{File: fr.res.Path, Line: rec.Line, SQL: rec.SQL, Elapsed: time.Since(start)}
	slow := fr.res.Slowest
	if len(slow) == fr.opts.KeepSlowest && t.Elapsed <= slow[len(slow)-1].Elapsed {
		return
	}
	i := sort.Search(len(slow), func(i int) bool { return slow[i].Elapsed < t.Elapsed })
	slow = append(slow, Timing{})
	copy(slow[i+1:], slow[i:])
	slow[i] = t
	if len(slow) > fr.opts.KeepSlowest {
		slow = slow[:fr.opts.KeepSlowest]
	}
	fr.res.Slowest = slow
}

// Slowest returns the n slowest records of the run, slowest first.
func (s *Summary) Slowest(n int) []Timing {
	var all []Timing
	for _, f := range s.Files {
		all = append(all, f.Slowest...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Elapsed > all[j].Elapsed })
	if len(all) > n {
		all = all[:n]
	}
	return all
}

// checkLabel compares the values with the first result of the same label.
func (fr *fileRun) checkLabel(rec *Record, values []string) string {
	h := HashLine(values)
	prev, ok := fr.labels[rec.Label]
	if !ok {
		fr.labels[rec.Label] = labelResult{line: rec.Line, hash: h}
		return ""
	}
	if prev.hash != h {
		return fmt.Sprintf("label %s: results differ from line %d (%s)", rec.Label, prev.line, prev.hash)
	}
	return ""
}

func (fr *fileRun) ok() {
	fr.res.OK++
	fr.opts.Counters.ok()
}

func (fr *fileRun) notRun() { fr.res.NotRun++ }

func (fr *fileRun) fail(f Failure) {
	fr.res.Fail++
	fr.opts.Counters.fail()
	if fr.res.Classes == nil {
		fr.res.Classes = map[string]int{}
	}
	fr.res.Classes[f.Class]++
	if len(fr.res.Failures) < fr.opts.KeepFailures {
		fr.res.Failures = append(fr.res.Failures, f)
	}
}

// shownValues is how many actual values a failure keeps.
const shownValues = 20

// directive rebuilds the record's directive line.
func directive(rec *Record) string {
	switch rec.Kind {
	case Statement:
		if rec.ExpectError {
			return "statement error"
		}
		return "statement ok"
	case Query:
		d := "query " + rec.Types + " " + rec.Sort.String()
		if rec.Label != "" {
			d += " " + rec.Label
		}
		return d
	}
	return rec.Kind.String()
}

// expectedLines returns the record's expected results as the file has them.
func expectedLines(rec *Record) []string {
	if rec.Hashed() {
		return []string{fmt.Sprintf("%d values hashing to %s", rec.HashCount, rec.Hash)}
	}
	return rec.Expected
}

// actualLines returns actual values the way the file would write them for
// rec, and a sample of the values when that is a hash line.
func actualLines(rec *Record, values []string) (lines, sample []string) {
	hashed := rec.Hashed() || (rec.HashThreshold > 0 && len(values) > rec.HashThreshold)
	if hashed {
		return []string{HashLine(values)}, cut(values)
	}
	return cut(values), nil
}

// cut keeps the first shownValues values and says how many it dropped.
func cut(values []string) []string {
	if len(values) <= shownValues {
		return values
	}
	out := append([]string(nil), values[:shownValues]...)
	return append(out, fmt.Sprintf("... %d more", len(values)-shownValues))
}

// describeError explains a record's error and classifies it.
func describeError(rctx context.Context, err error, timeout time.Duration) (problem, class string) {
	if errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("timed out after %v: %v", timeout, err), "timeout"
	}
	return err.Error(), "error: " + normalizeMessage(err.Error())
}

var (
	// errorPrefix matches the driver's "Error 1105 (HY000): " prefix, kept
	// as it is by normalizeMessage.
	errorPrefix = regexp.MustCompile(`^Error \d+( \([0-9A-Z]+\))?: `)
	// quoted matches quoted names and strings in an error message.
	quoted = regexp.MustCompile("'[^']*'|\"[^\"]*\"|`[^`]*`")
	// number matches numbers in an error message.
	number = regexp.MustCompile(`\b\d+(\.\d+)?\b`)
)

// maxClassLen bounds a failure class name.
const maxClassLen = 90

// normalizeMessage turns an error message into a class name: quoted text
// becomes '?' and numbers become N, so that errors differing only in names
// and values tally together.
func normalizeMessage(msg string) string {
	prefix := errorPrefix.FindString(msg)
	rest := msg[len(prefix):]
	rest = quoted.ReplaceAllString(rest, "?")
	rest = number.ReplaceAllString(rest, "N")
	rest = strings.Join(strings.Fields(rest), " ")
	s := prefix + rest
	if len(s) > maxClassLen {
		s = s[:maxClassLen] + "..."
	}
	return s
}

// CollectFiles returns the .test files named by paths: files as they are,
// directories searched recursively, in lexical order within a directory.
func CollectFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".test") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}
