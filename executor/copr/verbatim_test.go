package copr

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/percdb/percdb/executor/tablecodec"
)

// TestVerbatimMatchesDecoding feeds random rows to random row programs
// twice, once with verbatim output and once the general way (decode,
// filter, encode), and requires the same answers from Feed and the same
// output bytes: rows with strings with and without trailing spaces under
// Trim, byte strings, integers of every width, NULLs, booleans, and
// values that must take the general way (decimals, times, floats), rows
// that lack columns (their origin defaults), filters over the output
// columns and others, limits and small pages.
func TestVerbatimMatchesDecoding(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	values := []func() any{
		func() any { return nil },
		func() any { return int64(rnd.Intn(7) - 3) },
		func() any { return int32(rnd.Intn(7) - 3) },
		func() any { return uint64(rnd.Intn(7)) },
		func() any { return int8(rnd.Intn(7) - 3) },
		func() any { return []string{"", "a", "a ", " b", "c  ", "é"}[rnd.Intn(6)] },
		func() any { return []byte{'x', ' '}[:rnd.Intn(3)] },
		func() any { return rnd.Intn(2) == 0 },
		func() any { return decimal.New(int64(rnd.Intn(100)), -1) },
		func() any { return time.Unix(int64(rnd.Intn(1000)), 0).UTC() },
		func() any { return float64(rnd.Intn(5)) / 2 },
	}
	ints := []func() any{values[0], values[1], values[2], values[3]}
	verbatimRows, generalRows := 0, 0
	for round := range 300 {
		ncols := 1 + rnd.Intn(5)
		p := &Program{Columns: make([]int64, ncols), PageRows: 1 + rnd.Intn(4)}
		gen := make([]func() any, ncols)
		intCols := []int{}
		for c := range ncols {
			p.Columns[c] = int64(c*3 + 1)
			if rnd.Intn(2) == 0 {
				gen[c] = ints[rnd.Intn(len(ints))]
				intCols = append(intCols, c)
			} else {
				gen[c] = values[rnd.Intn(len(values))]
				if rnd.Intn(2) == 0 {
					p.Trim = append(p.Trim, c)
				}
			}
		}
		for range 1 + rnd.Intn(3) {
			p.Output = append(p.Output, rnd.Intn(ncols))
		}
		if len(intCols) > 0 && rnd.Intn(3) > 0 {
			p.Filter = []Expr{cmp(OpGE, CmpSigned, col(intCols[rnd.Intn(len(intCols))]), sconst(int64(rnd.Intn(3)-1)))}
		}
		if rnd.Intn(3) == 0 {
			p.Limit = int64(1 + rnd.Intn(5))
		}
		defVals := make([]any, ncols)
		for c := range defVals {
			defVals[c] = gen[c]()
		}
		var err error
		if p.Defaults, err = tablecodec.EncodeRow(p.Columns, defVals); err != nil {
			t.Fatal(err)
		}
		enc, err := p.Encode()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		dec, err := Decode(enc)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := dec.Start()
		if err != nil {
			t.Fatal(err)
		}
		slow, _ := dec.Start()
		slow.verbatim = nil
		if fast.verbatim == nil {
			t.Fatalf("round %d: a row program without verbatim output", round)
		}
		for r := range 20 {
			var ids []int64
			var vals []any
			for c := range ncols {
				if rnd.Intn(6) > 0 {
					ids = append(ids, p.Columns[c])
					vals = append(vals, gen[c]())
				}
			}
			row, err := tablecodec.EncodeRow(ids, vals)
			if err != nil {
				t.Fatal(err)
			}
			before := fast.outRows
			ff, fd, ferr := fast.Feed(nil, row)
			sf, sd, serr := slow.Feed(nil, row)
			if ff != sf || fd != sd || fmt.Sprint(ferr) != fmt.Sprint(serr) {
				t.Fatalf("round %d row %d: Feed %v %v %v, general %v %v %v", round, r, ff, fd, ferr, sf, sd, serr)
			}
			if fast.outRows > before {
				probe := &Evaluation{p: dec, verbatim: newVerbatim(dec), row: make([]any, ncols), spans: make([][]byte, ncols), spanner: tablecodec.NewSpanReader(dec.Columns), ready: make([]bool, ncols), trimmed: fast.trimmed, defaults: fast.defaults, page: 1 << 20}
				if probe.readRow(row) == nil && probe.verbatimSpans() {
					verbatimRows++
				} else {
					generalRows++
				}
			}
			if ff || fd {
				fo, _ := fast.Output()
				so, _ := slow.Output()
				if !bytes.Equal(fo, so) {
					t.Fatalf("round %d row %d: output %x, general %x", round, r, fo, so)
				}
			}
			if fd {
				break
			}
		}
		fo, _ := fast.Output()
		so, _ := slow.Output()
		if !bytes.Equal(fo, so) {
			t.Fatalf("round %d: output %x, general %x", round, fo, so)
		}
	}
	if verbatimRows == 0 || generalRows == 0 {
		t.Errorf("%d rows output verbatim, %d the general way: want both", verbatimRows, generalRows)
	}
}

// BenchmarkFeedRows evaluates sysbench's range read in the store, 100
// rows of (id, k, c CHAR(120), pad CHAR(60)) filtered on id and output
// as c, verbatim and the general way:
//
//	go test ./executor/copr -run '^$' -bench FeedRows -count 10
func BenchmarkFeedRows(b *testing.B) {
	rnd := rand.New(rand.NewSource(1))
	rows := make([][]byte, 100)
	for i := range rows {
		c := fmt.Sprintf("%011d-%011d-%011d-%011d-%011d-%011d-%011d-%011d-%011d-%011d",
			rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11),
			rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11))
		pad := fmt.Sprintf("%011d-%011d-%011d-%011d-%011d", rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11), rnd.Int63n(1e11))
		var err error
		if rows[i], err = tablecodec.EncodeRow([]int64{1, 2, 3, 4}, []any{int32(1000 + i), int32(rnd.Intn(10000)), c, pad}); err != nil {
			b.Fatal(err)
		}
	}
	p := &Program{Columns: []int64{1, 3}, Trim: []int{1},
		Filter: []Expr{cmp(OpGE, CmpSigned, col(0), sconst(1000)), cmp(OpLE, CmpSigned, col(0), sconst(1099))}, Output: []int{1}}
	benchmarkFeed(b, p, rows)
}

// BenchmarkFeedSelective evaluates the outer side of issue 13's
// self-join in the store: rows of (k, q, pad VARCHAR(120)) filtered on q
// = 3, which one row in a hundred passes, output as (k, q):
//
//	go test ./executor/copr -run '^$' -bench FeedSelective -count 10
func BenchmarkFeedSelective(b *testing.B) {
	rnd := rand.New(rand.NewSource(1))
	rows := make([][]byte, 1000)
	for i := range rows {
		pad := fmt.Sprintf("%0100d", rnd.Int63())
		var err error
		if rows[i], err = tablecodec.EncodeRow([]int64{3, 4, 5}, []any{int32(rnd.Intn(100000)), int32(rnd.Intn(100)), pad}); err != nil {
			b.Fatal(err)
		}
	}
	p := &Program{Columns: []int64{3, 4},
		Filter: []Expr{cmp(OpEQ, CmpSigned, col(1), sconst(3))}, Output: []int{0, 1}}
	benchmarkFeed(b, p, rows)
}

// benchmarkFeed feeds rows to p, verbatim and the general way.
func benchmarkFeed(b *testing.B, p *Program, rows [][]byte) {
	for _, way := range []string{"verbatim", "general"} {
		b.Run(way, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				e, err := p.Start()
				if err != nil {
					b.Fatal(err)
				}
				if way == "general" {
					e.verbatim = nil
				}
				for _, r := range rows {
					if _, _, err := e.Feed(nil, r); err != nil {
						b.Fatal(err)
					}
				}
				if out, _ := e.Output(); len(out) == 0 {
					b.Fatal("no output")
				}
			}
		})
	}
}
