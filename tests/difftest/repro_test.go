package difftest

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
)

var flagRepro = flag.String("difftest.repro", "", "a file of statements (one a line, -- comments) to run on both servers, printing both answers")

// TestRepro runs the statements of a file on percdb and on MariaDB and
// prints both answers to each, for looking into a mismatch by hand:
//
//	go test ./tests/difftest -run TestRepro -v -difftest.repro /tmp/q.sql
//
// A line "?args 1|'a'|2" before a statement runs it prepared, with those
// parameters (numbers as numbers, quoted text as strings), and a line
// "?seed N" makes the tables and rows seed N starts with (its queries
// run on those rows, so the planner sees the row counts it saw).
func TestRepro(t *testing.T) {
	if *flagRepro == "" {
		t.Skip("no -difftest.repro file")
	}
	src, err := os.ReadFile(*flagRepro)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	maria, perc := startServers(ctx, t)
	p := connect(t, perc.Addr(), "repro")
	m := connect(t, fmt.Sprintf("127.0.0.1:%d", maria.Port), "repro")
	var args []any
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ";"))
		if line == "" || strings.HasPrefix(line, "--") {
			continue
		}
		if n, ok := strings.CutPrefix(line, "?seed "); ok {
			seed, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatalf("?seed %s: %v", n, err)
			}
			r := &run{t: t, ctx: ctx, seed: seed, p: p, m: m, st: &stats{classes: map[string]int{}, deviations: map[string]int{}}}
			r.setup(genSchema(rand.New(rand.NewSource(seed)), *flagTypes))
			continue
		}
		if a, ok := strings.CutPrefix(line, "?args "); ok {
			args = parseArgs(a)
			continue
		}
		var a, b outcome
		up := strings.ToUpper(line)
		if strings.HasPrefix(up, "SELECT") || strings.HasPrefix(up, "WITH") || strings.HasPrefix(up, "EXPLAIN") || strings.HasPrefix(up, "SHOW") {
			a, b = p.query(ctx, line, args...), m.query(ctx, line, args...)
		} else {
			a, b = p.exec(ctx, line), m.exec(ctx, line)
		}
		mark := "same"
		if !same(a, b, strings.Contains(up, "ORDER BY")) {
			mark = "DIFFERENT"
		}
		t.Logf("%s %v [%s]\n-- percdb:\n%s\n-- mariadb:\n%s", line, args, mark, describe(a), describe(b))
		args = nil
	}
}

// parseArgs reads "1|'a'|2.5" as parameters.
func parseArgs(s string) []any {
	var out []any
	for _, f := range strings.Split(s, "|") {
		f = strings.TrimSpace(f)
		if strings.HasPrefix(f, "'") {
			out = append(out, strings.Trim(f, "'"))
			continue
		}
		var i int64
		if _, err := fmt.Sscan(f, &i); err == nil && fmt.Sprint(i) == f {
			out = append(out, i)
			continue
		}
		out = append(out, f)
	}
	return out
}
