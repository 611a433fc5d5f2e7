// Command sltscale rewrites a sqllogictest file of the corpus's index/
// kind with its data table, tab0, filled with a given number of random
// rows instead of its own, so that the runner's cost on the corpus's
// 100-, 1,000- and 10,000-row files can be measured where only 1- and
// 10-row ones are at hand (docs/benchmarks.md, sqllogictest):
//
//	go run ./tests/sqllogic/cmd/sltscale -rows 1000 ../shared/sqllogictest/index/in/10/slt_good_0.test > /tmp/synth/1000/in.test
//	/tmp/slt -percdb -types loose /tmp/synth/1000
//
// The statements are the file's own; the rows are not the ones its
// expected results come from, so most queries fail: the file measures
// work, not correctness. The rows have the index/ schema (pk INTEGER
// PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4
// FLOAT, col5 TEXT), with distinct values in every numeric column so that
// the files' unique indexes accept them. The other tables are filled from
// tab0 by the file itself (INSERT INTO tabN SELECT * FROM tab0).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sltscale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rows := fs.Int("rows", 1000, "rows of tab0")
	seed := fs.Uint64("seed", 1, "seed of the random rows")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 || *rows < 1 {
		fmt.Fprintln(stderr, "usage: sltscale [-rows N] [-seed S] FILE.test > OUT.test")
		return 2
	}
	src, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	out, err := scale(src, *rows, rand.New(rand.NewPCG(*seed, 0)))
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Arg(0), err)
		return 1
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

// tab0Insert starts the records that fill tab0.
var tab0Insert = []byte("statement ok\nINSERT INTO tab0 VALUES")

// scale returns src with its tab0 INSERT records replaced, where the
// first of them stood, by n records of random rows.
func scale(src []byte, n int, rng *rand.Rand) ([]byte, error) {
	records := bytes.Split(src, []byte("\n\n"))
	var out [][]byte
	replaced := false
	for _, r := range records {
		if !bytes.HasPrefix(bytes.TrimLeft(r, "\n"), tab0Insert) {
			out = append(out, r)
			continue
		}
		if !replaced {
			out = append(out, randomRows(n, rng)...)
			replaced = true
		}
	}
	if !replaced {
		return nil, fmt.Errorf("no INSERT INTO tab0 records: not an index/ file")
	}
	return bytes.Join(out, []byte("\n\n")), nil
}

// randomRows returns n INSERT records of distinct random rows.
func randomRows(n int, rng *rand.Rand) [][]byte {
	col0, col3 := rng.Perm(n*10), rng.Perm(n*10)
	col1, col4 := rng.Perm(n*100000), rng.Perm(n*100000)
	word := func() string {
		b := make([]byte, 5)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "%s(%d,%d,%.2f,'%s',%d,%.2f,'%s')", tab0Insert, i,
			col0[i], float64(col1[i])/100, word(), col3[i], float64(col4[i])/100, word())
	}
	return out
}
