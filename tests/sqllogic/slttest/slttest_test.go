package slttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/sqllogic"
)

// answers is a target whose every database answers a query with a fixed
// integer.
type answers map[string]string

func (a answers) Open(ctx context.Context, name string) (sqllogic.Session, error) { return a, nil }

func (a answers) Exec(ctx context.Context, sql string) error { return nil }

func (a answers) Query(ctx context.Context, sql string) (*sqllogic.Rows, error) {
	v, ok := a[sql]
	if !ok {
		return nil, fmt.Errorf("no answer for %q", sql)
	}
	return &sqllogic.Rows{Kinds: "I", Values: []sqllogic.Value{{Text: v}}}, nil
}

func (a answers) Close(ctx context.Context) error { return nil }

// recorder is a testing.TB that collects errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestRunFilesKnownFailures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("x.test", "query I nosort\nSELECT 1\n----\n1\n\nquery I nosort\nSELECT 2\n----\n2\n")
	target := answers{"SELECT 1": "1", "SELECT 2": "3"}

	for _, tc := range []struct {
		name, known string
		errors      int
		want        []string // substrings of the errors
	}{
		{"listed failure tolerated", "# comment\nx.test:6 answers 3\n", 0, nil},
		{"unlisted failure reported", "", 1, []string{"x.test:6: query I nosort", "expected \"2\", got \"3\""}},
		{"fixed failure reported", "x.test:1 was broken\nx.test:6 answers 3\n", 1, []string{"known failure passes now", "x.test:1 (was broken)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			RunFiles(r, target, filepath.Join(dir, "*.test"), Options{KnownFailures: write("known.txt", tc.known)})
			if len(r.errs) != tc.errors {
				t.Fatalf("errors %q, want %d", r.errs, tc.errors)
			}
			joined := strings.Join(r.errs, "\n")
			for _, w := range tc.want {
				if !strings.Contains(joined, w) {
					t.Fatalf("errors %q lack %q", r.errs, w)
				}
			}
		})
	}
}

func TestReadKnownFailures(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "known.txt")
	for _, bad := range []string{"x.test why\n", "x.test:abc why\n", ":3 why\n", "x.test:3\n", "x.test:3   \n"} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if k, err := ReadKnownFailures(path); err == nil {
			t.Errorf("ReadKnownFailures(%q) = %v, want an error", bad, k)
		}
	}
	if err := os.WriteFile(path, []byte("# c\n\nx.test:3  two words\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := ReadKnownFailures(path)
	if err != nil || len(k) != 1 || k["x.test:3"] != "two words" {
		t.Fatalf("ReadKnownFailures = %v, %v", k, err)
	}
}
