// Package slttest runs sqllogictest files from Go tests, in the manner of
// net/http/httptest: one call runs the files on a target and reports every
// record that did not do what the file expects as a test error.
package slttest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/sqllogic"
)

// Options configure RunFiles.
type Options struct {
	// Jobs is how many files run at once. Default 1: files run one after
	// the other, so that the outcome does not depend on how they
	// interleave.
	Jobs int
	// KnownFailures names a file listing records that are known to fail,
	// one "FILE:LINE reason" per line (FILE as the base name of the .test
	// file; '#' starts a comment line). Such a record failing is not an
	// error; such a record passing is, so that the list only shrinks.
	// Default "": every record must pass.
	KnownFailures string
}

// RunFiles runs the .test files matching pattern (a filepath.Glob pattern)
// on target. It fails t for every file error, every failed record not in
// the known failures, every known failure that passed, and when no file
// matches.
func RunFiles(t testing.TB, target sqllogic.Target, pattern string, opts Options) *sqllogic.Summary {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s (%v)", pattern, err)
	}
	known := map[string]string{}
	if opts.KnownFailures != "" {
		if known, err = ReadKnownFailures(opts.KnownFailures); err != nil {
			t.Fatal(err)
		}
	}
	sum := sqllogic.Run(context.Background(), target, files, sqllogic.Options{
		Jobs: opts.Jobs,
		// Keep every failure: each is checked against the known ones.
		KeepFailures: 1 << 30,
	})
	failed := map[string]bool{}
	for _, f := range sum.Files {
		if f.Err != "" {
			t.Errorf("%s: %s", f.Path, f.Err)
		}
		if f.NotRun > 0 {
			t.Errorf("%s: %d records did not run", f.Path, f.NotRun)
		}
	}
	for _, p := range sum.Problems() {
		key := p.Failure.Key()
		failed[key] = true
		if _, ok := known[key]; !ok {
			t.Error(p.Text)
		}
	}
	var fixed []string
	for key, why := range known {
		if !failed[key] {
			fixed = append(fixed, fmt.Sprintf("%s (%s)", key, why))
		}
	}
	sort.Strings(fixed)
	for _, k := range fixed {
		t.Errorf("known failure passes now, remove it from %s: %s", opts.KnownFailures, k)
	}
	if sum.Total.Run() == 0 {
		t.Errorf("no record ran: %s", sum.TotalLine())
	}
	return sum
}

// ReadKnownFailures reads a known-failures file: "FILE:LINE reason" per
// line, '#' comment lines and blank lines ignored. It returns reasons by
// "FILE:LINE".
func ReadKnownFailures(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("known failures: %w", err)
	}
	defer f.Close()
	known := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, why, _ := strings.Cut(line, " ")
		file, lineNo, ok := strings.Cut(key, ":")
		if _, err := strconv.Atoi(lineNo); !ok || file == "" || err != nil {
			return nil, fmt.Errorf("known failures %s:%d: %q is not FILE:LINE", path, n, key)
		}
		if strings.TrimSpace(why) == "" {
			return nil, fmt.Errorf("known failures %s:%d: %s has no reason", path, n, key)
		}
		known[key] = strings.TrimSpace(why)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("known failures %s: %w", path, err)
	}
	return known, nil
}

// recordTimeoutFile blocks in its third record: a server that supports
// SLEEP() holds it for 30 s.
const recordTimeoutFile = `statement ok
CREATE TABLE t1(a INTEGER)

statement ok
INSERT INTO t1 VALUES(7)

query I nosort
SELECT SLEEP(30)
----
0

query I nosort
SELECT a FROM t1
----
7
`

// CheckRecordTimeout checks that a record that runs past the record
// timeout fails alone on target: the runner stops it, reconnects to the
// file's database, and the file goes on.
func CheckRecordTimeout(t testing.TB, target sqllogic.Target) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "timeout.test")
	if err := os.WriteFile(path, []byte(recordTimeoutFile), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sqllogic.Run(context.Background(), target, []string{path}, sqllogic.Options{RecordTimeout: 200 * time.Millisecond})
	f := sum.Files[0]
	if f.Counts != (sqllogic.Counts{OK: 3, Fail: 1}) || f.Failures[0].Class != "timeout" || f.Err != "" {
		t.Fatalf("got %+v", f)
	}
}
