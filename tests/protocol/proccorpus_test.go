package protocol

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// TestProcCorpus runs the stored program scenarios of testdata/procs, each
// file in a database of its own (corpus_<file>) on one connection, and compares what every
// statement answers with what MariaDB 10.11 answered (the files' expected
// output was written by MariaDB: PERCDB_TEST_MARIADB=1 go test
// ./tests/protocol -run TestProcCorpus -rewrite). A file holds statements
// (a CREATE PROCEDURE whole, no DELIMITER) and their answers:
//
//	sql
//	CALL p()
//	----
//	result a | b
//	1 | x
//	ok
//
// Each result set is its column names then its rows; "ok" is the final OK
// packet; an error ends the answer as "error CODE (STATE): message". A
// duplicate key is named as MariaDB names it, in errors and values.
//
// A scenario where percdb is known to differ from MariaDB starts with
//
//	differs
//	reason
//
// and is then skipped on percdb with that reason (the file still records
// MariaDB's answers).
func TestProcCorpus(t *testing.T) {
	var start func(context.Context) (*testserver.Server, error)
	name := "percdb"
	if m := os.Getenv(testserver.EnvMariaDB); m != "" {
		name = "mariadb"
		start = func(ctx context.Context) (*testserver.Server, error) {
			opts := testserver.MariaDBOptions{}
			if m != "1" {
				opts.Mariadbd = m
			}
			return testserver.StartMariaDB(ctx, opts)
		}
	} else {
		start = func(ctx context.Context) (*testserver.Server, error) {
			return testserver.StartPercdb(ctx, testserver.PercdbOptions{})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	s, err := start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("stop server: %v", err)
		}
	}()
	datadriven.Walk(t, "testdata/procs", func(t *testing.T, path string) {
		c, _ := dial(t, s)
		db := "corpus_" + strings.TrimSuffix(filepath.Base(path), ".txt")
		for _, q := range []string{"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db, "USE " + db} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "differs":
				if name == "percdb" {
					t.Skip(strings.TrimSpace(d.Input))
				}
				return ""
			case "sql":
				res, err := c.QueryAll(d.Input)
				return corpusAnswer(res, err)
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

// keyName finds the table MySQL 8 names a key of in error 1062's message
// ('t.PRIMARY'), which MariaDB does not ('PRIMARY').
var keyName = regexp.MustCompile(`for key '[^'.]+\.`)

// corpusAnswer writes a statement's results and error as TestProcCorpus
// compares them.
func corpusAnswer(res []wirefuzz.Result, err error) string {
	var out strings.Builder
	for _, r := range res {
		if len(r.Columns) == 0 {
			out.WriteString("ok\n")
			continue
		}
		names := make([]string, len(r.Columns))
		for i, col := range r.Columns {
			names[i] = col.Name
		}
		out.WriteString("result " + strings.Join(names, " | ") + "\n")
		for _, row := range r.Rows {
			out.WriteString(strings.Join(row, " | ") + "\n")
		}
	}
	if err != nil {
		var se *wirefuzz.ServerError
		if errors.As(err, &se) {
			fmt.Fprintf(&out, "error %d (%s): %s\n", se.Code, se.State, se.Message)
		} else {
			fmt.Fprintf(&out, "error %v\n", err)
		}
	}
	return keyName.ReplaceAllString(out.String(), "for key '")
}
