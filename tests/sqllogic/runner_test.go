package sqllogic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTarget is a scripted engine: each file gets a session with its own
// set of tables (so a second CREATE TABLE of a name fails only within one
// file), and queries are answered from a fixed map.
type fakeTarget struct {
	answers map[string]fakeAnswer
	openErr error

	mu             sync.Mutex
	opened, closed int
}

// fakeAnswer is what the fake does with one SQL text.
type fakeAnswer struct {
	rows  *Rows
	err   error
	block bool // wait until the context is done
}

func (t *fakeTarget) Open(ctx context.Context, name string) (Session, error) {
	if t.openErr != nil {
		return nil, t.openErr
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.opened++
	return &fakeSession{t: t, tables: map[string]bool{}}, nil
}

type fakeSession struct {
	t      *fakeTarget
	tables map[string]bool
}

func (s *fakeSession) answer(ctx context.Context, sql string) (*Rows, error) {
	if name, ok := strings.CutPrefix(sql, "CREATE TABLE "); ok {
		if s.tables[name] {
			return nil, fmt.Errorf("table %s exists", name)
		}
		s.tables[name] = true
		return &Rows{}, nil
	}
	a, ok := s.t.answers[sql]
	if !ok {
		return nil, fmt.Errorf("fake: no answer for %q", sql)
	}
	if a.block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return a.rows, a.err
}

func (s *fakeSession) Exec(ctx context.Context, sql string) error {
	_, err := s.answer(ctx, sql)
	return err
}

func (s *fakeSession) Query(ctx context.Context, sql string) (*Rows, error) {
	return s.answer(ctx, sql)
}

func (s *fakeSession) Close(ctx context.Context) error {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	s.t.closed++
	return nil
}

func ints(vs ...string) *Rows {
	r := &Rows{Kinds: "I"}
	for _, v := range vs {
		r.Values = append(r.Values, Value{Text: v})
	}
	return r
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const tinyTest = `statement ok
CREATE TABLE t1

statement error
CREATE TABLE t1

statement ok
SELECT broken

query I nosort
SELECT one
----
1

query I rowsort label-a
SELECT three
----
1
2
3

query I rowsort label-a
SELECT other
----
1
2
4

query I nosort
SELECT one
----
2

statement error
SELECT one

skipif mysql
statement ok
SELECT never

onlyif mysql
query I valuesort
SELECT three
----
3 values hashing to HASH

onlyif sqlite
halt

skipif sqlite
halt

statement ok
SELECT never
`

func tinyTarget() *fakeTarget {
	return &fakeTarget{answers: map[string]fakeAnswer{
		"SELECT one":    {rows: ints("1")},
		"SELECT three":  {rows: ints("3", "1", "2")},
		"SELECT other":  {rows: ints("4", "2", "1")},
		"SELECT broken": {err: errors.New("Error 1064 (42000): syntax error near 'broken'")},
		"SELECT never":  {err: errors.New("must not run")},
	}}
}

func TestRunTinyFile(t *testing.T) {
	path := writeFile(t, "tiny.test", strings.Replace(tinyTest, "HASH", HashValues([]string{"1", "2", "3"}), 1))
	target := tinyTarget()
	counters := &Counters{}
	sum := Run(context.Background(), target, []string{path}, Options{Counters: counters})

	f := sum.Files[0]
	if f.Err != "" {
		t.Fatalf("file error: %s", f.Err)
	}
	want := Counts{OK: 5, Fail: 4, Skip: 1}
	if f.Counts != want || sum.Total != want {
		t.Fatalf("counts %+v (total %+v), want %+v", f.Counts, sum.Total, want)
	}
	if f.HaltedAt != 51 {
		t.Fatalf("halted at line %d, want 51", f.HaltedAt)
	}
	if got := [3]int64{counters.OK.Load(), counters.Fail.Load(), counters.FilesDone.Load()}; got != [3]int64{5, 4, 1} {
		t.Fatalf("live counters ok/fail/files = %v", got)
	}
	type failure struct {
		line  int
		class string
	}
	var got []failure
	for _, fl := range f.Failures {
		got = append(got, failure{fl.Line, fl.Class})
	}
	wantFailures := []failure{
		{7, "error: Error 1064 (42000): syntax error near ?"},
		{22, "label mismatch"},
		{29, "wrong values"},
		{34, "expected error"},
	}
	if fmt.Sprint(got) != fmt.Sprint(wantFailures) {
		t.Fatalf("failures %v, want %v", got, wantFailures)
	}
	if fl := f.Failures[2]; fl.SQL != "SELECT one" || fl.Directive != "query I nosort" ||
		fmt.Sprint(fl.Expected) != "[2]" || fmt.Sprint(fl.Actual) != "[1]" {
		t.Fatalf("failure detail %+v", fl)
	}
	if target.opened != 1 || target.closed != 1 {
		t.Fatalf("opened %d, closed %d databases; want 1 and 1", target.opened, target.closed)
	}
}

func TestRunFreshDatabasePerFile(t *testing.T) {
	const file = "statement ok\nCREATE TABLE t1\n\nquery I nosort\nSELECT one\n----\n1\n"
	var files []string
	for i := 0; i < 6; i++ {
		files = append(files, writeFile(t, fmt.Sprintf("f%d.test", i), file))
	}
	target := tinyTarget()
	sum := Run(context.Background(), target, files, Options{Jobs: 3})
	if want := (Counts{OK: 12}); sum.Total != want {
		t.Fatalf("total %+v, want %+v: %+v", sum.Total, want, sum.Files)
	}
	for i, f := range sum.Files {
		if f.Path != files[i] {
			t.Fatalf("result %d is for %s, want %s", i, f.Path, files[i])
		}
	}
	if target.opened != 6 || target.closed != 6 {
		t.Fatalf("opened %d, closed %d databases; want 6 and 6", target.opened, target.closed)
	}
}

func TestRunRecordTimeout(t *testing.T) {
	path := writeFile(t, "slow.test", "query I nosort\nSELECT slow\n----\n1\n\nquery I nosort\nSELECT one\n----\n1\n")
	target := &fakeTarget{answers: map[string]fakeAnswer{
		"SELECT slow": {block: true},
		"SELECT one":  {rows: ints("1")},
	}}
	sum := Run(context.Background(), target, []string{path}, Options{RecordTimeout: 10 * time.Millisecond})
	f := sum.Files[0]
	if want := (Counts{OK: 1, Fail: 1}); f.Counts != want {
		t.Fatalf("counts %+v, want %+v", f.Counts, want)
	}
	if f.Failures[0].Class != "timeout" {
		t.Fatalf("class %q, want timeout", f.Failures[0].Class)
	}
	// The blocked record took at least the timeout; whichever order the
	// two come in, it must be listed with that much.
	if len(f.Slowest) != 2 {
		t.Fatalf("slowest %+v, want both records", f.Slowest)
	}
	for _, tm := range sum.Slowest(2) {
		if tm.Line == 1 && tm.Elapsed < 10*time.Millisecond {
			t.Fatalf("blocked record timed at %v", tm.Elapsed)
		}
	}
	if got := sum.Slowest(1); len(got) != 1 {
		t.Fatalf("Slowest(1) = %+v", got)
	}
}

func TestSlowestKeepsTheSlowest(t *testing.T) {
	fr := &fileRun{opts: Options{}.withDefaults(), res: &FileResult{Path: "x.test"}}
	start := time.Now()
	// Records "started" 1..8 ms before now: line 8 is the slowest.
	for line := 1; line <= 8; line++ {
		fr.time(&Record{Line: line}, start.Add(-time.Duration(line)*time.Millisecond))
	}
	var lines []int
	for _, tm := range fr.res.Slowest {
		lines = append(lines, tm.Line)
	}
	if fmt.Sprint(lines) != "[8 7 6 5 4]" {
		t.Fatalf("kept lines %v, want [8 7 6 5 4]", lines)
	}
}

func TestRunBudget(t *testing.T) {
	path := writeFile(t, "slow.test", "statement ok\nCREATE TABLE t1\n\nquery I nosort\nSELECT slow\n----\n1\n\n"+
		"skipif mysql\nstatement ok\nSELECT one\n\nstatement ok\nSELECT one\n\nhalt\n\nstatement ok\nSELECT one\n")
	later := writeFile(t, "later.test", "statement ok\nSELECT one\n\nstatement ok\nSELECT one\n")
	target := &fakeTarget{answers: map[string]fakeAnswer{
		"SELECT slow": {block: true},
		"SELECT one":  {rows: ints("1")},
	}}
	// One job: the bigger file runs first and spends the budget, so the
	// other never starts.
	sum := Run(context.Background(), target, []string{path, later}, Options{Budget: 20 * time.Millisecond})
	if !sum.BudgetSpent {
		t.Fatal("budget not reported spent")
	}
	if want := (Counts{OK: 1, Skip: 1, NotRun: 2}); sum.Files[0].Counts != want {
		t.Fatalf("first file %+v, want %+v", sum.Files[0].Counts, want)
	}
	if want := (Counts{NotRun: 2}); sum.Files[1].Counts != want {
		t.Fatalf("second file %+v, want %+v", sum.Files[1].Counts, want)
	}
	if target.opened != target.closed {
		t.Fatalf("opened %d, closed %d databases", target.opened, target.closed)
	}
}

func TestRunFileProblems(t *testing.T) {
	bad := writeFile(t, "bad.test", "statement ok\nSELECT one\n\nnonsense\n")
	good := writeFile(t, "good.test", "statement ok\nSELECT one\n")
	sum := Run(context.Background(), tinyTarget(), []string{bad, good}, Options{})
	if !strings.Contains(sum.Files[0].Err, "unknown directive") || sum.Files[1].OK != 1 {
		t.Fatalf("parse error not confined to its file: %+v", sum.Files)
	}

	target := &fakeTarget{openErr: errors.New("no database for you")}
	sum = Run(context.Background(), target, []string{good}, Options{})
	f := sum.Files[0]
	if !strings.Contains(f.Err, "no database for you") || f.NotRun != 1 {
		t.Fatalf("open error: %+v", f)
	}
	if sum.Classes()["file: open database: no database for you"] != 1 {
		t.Fatalf("classes %v", sum.Classes())
	}
}

func TestReport(t *testing.T) {
	path := writeFile(t, "tiny.test", strings.Replace(tinyTest, "HASH", HashValues([]string{"1", "2", "3"}), 1))
	sum := Run(context.Background(), tinyTarget(), []string{path}, Options{})

	var text bytes.Buffer
	if err := WriteReport(&text, sum, ReportOptions{Root: filepath.Dir(path), Failures: 2, Classes: 10}); err != nil {
		t.Fatal(err)
	}
	out := text.String()
	for _, want := range []string{
		"tiny.test", "halted at line 51", "5 ok, 4 fail", "1 skipped",
		"--- tiny.test:7: statement ok", "SELECT broken", "--- tiny.test:22: query I rowsort label-a",
		"label mismatch",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "tiny.test:29") {
		t.Errorf("report shows more than 2 failures:\n%s", out)
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, sum); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Total    Counts         `json:"total"`
		PassRate float64        `json:"pass_rate"`
		Classes  map[string]int `json:"classes"`
		Files    []struct {
			Path     string    `json:"path"`
			Failures []Failure `json:"failures"`
		} `json:"files"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Total != sum.Total || back.Classes["wrong values"] != 1 || len(back.Files) != 1 ||
		back.Files[0].Path != path || len(back.Files[0].Failures) != 4 || back.Files[0].Failures[2].Line != 29 {
		t.Fatalf("JSON round trip: %s", js.String())
	}
	if want := 100 * 5.0 / 9.0; back.PassRate < want-0.01 || back.PassRate > want+0.01 {
		t.Fatalf("pass rate %v, want %v", back.PassRate, want)
	}
}

func TestCollectFiles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"b.test", "a/x.test", "a/notes.txt", "c/d/y.test"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	extra := writeFile(t, "single.slt", "")
	got, err := CollectFiles([]string{dir, extra})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a/x.test"), filepath.Join(dir, "b.test"), filepath.Join(dir, "c/d/y.test"), extra}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := CollectFiles([]string{filepath.Join(dir, "missing")}); err == nil {
		t.Fatal("no error for a missing path")
	}
}
