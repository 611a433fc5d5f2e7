package copr

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
)

func col(i int) Expr                       { return Expr{Op: OpColumn, Col: i} }
func sconst(v int64) Expr                  { return Expr{Op: OpConst, Const: &Datum{Int: v}} }
func uconst(v uint64) Expr                 { return Expr{Op: OpConst, Const: &Datum{Unsigned: true, Uint: v}} }
func cmp(op Op, k CmpKind, l, r Expr) Expr { return Expr{Op: op, Cmp: k, Args: []Expr{l, r}} }

// run evaluates p over rows of (a int32, u uint64) values, column IDs 1
// and 2, and returns the decoded output rows of width n.
func run(t *testing.T, p *Program, rows [][]any, n int) [][]any {
	t.Helper()
	prog := compile(t, p)
	var out [][]any
	for _, r := range rows {
		v, err := tablecodec.EncodeRow([]int64{1, 2}, r)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := prog.Feed(nil, v); err != nil {
			t.Fatal(err)
		}
	}
	data, err := prog.Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := DecodeRows(data, n, func(r []any) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// compile encodes p and compiles it as the store does.
func compile(t *testing.T, p *Program) kv.CoprocessorProgram {
	t.Helper()
	enc, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := Evaluator{}.Compile(enc)
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

var sample = [][]any{{int32(1), uint64(5)}, {nil, uint64(18446744073709551615)}, {int32(-3), nil}, {int32(7), uint64(7)}}

// TestFilter checks three-valued logic and GMS's comparison kinds.
func TestFilter(t *testing.T) {
	null := Expr{Op: OpConst, Const: &Datum{Null: true}}
	for _, c := range []struct {
		name string
		f    Expr
		want string
	}{
		{"a > 0", cmp(OpGT, CmpSigned, col(0), sconst(0)), "[[1 5] [7 7]]"},
		{"a = NULL", cmp(OpEQ, CmpSigned, col(0), Expr{Op: OpConst, Const: &Datum{Null: true}}), "[]"},
		{"a <=> NULL", cmp(OpNullSafe, CmpSigned, col(0), Expr{Op: OpConst, Const: &Datum{Null: true}}), "[[<nil> 18446744073709551615]]"},
		{"NOT (a > 0)", Expr{Op: OpNot, Args: []Expr{cmp(OpGT, CmpSigned, col(0), sconst(0))}}, "[[-3 <nil>]]"},
		{"a > 0 OR u > 6", Expr{Op: OpOr, Args: []Expr{cmp(OpGT, CmpSigned, col(0), sconst(0)), cmp(OpGT, CmpUnsigned, col(1), uconst(6))}}, "[[1 5] [<nil> 18446744073709551615] [7 7]]"},
		{"a = u (as doubles)", cmp(OpEQ, CmpDouble, col(0), col(1)), "[[7 7]]"},
		{"u IS NULL", Expr{Op: OpIsNull, Args: []Expr{col(1)}}, "[[-3 <nil>]]"},
		{"a MOD 2 = 1", cmp(OpEQ, CmpSigned, Expr{Op: OpMod, Const: &Datum{Int: 2}, Args: []Expr{col(0)}}, sconst(1)), "[[1 5] [7 7]]"},
		{"a IN (7, -3)", Expr{Op: OpIn, Cmp: CmpSigned, Args: []Expr{col(0), sconst(7), sconst(-3)}}, "[[-3 <nil>] [7 7]]"},
		{"u IN (18446744073709551615, 5)", Expr{Op: OpIn, Cmp: CmpUnsigned, Args: []Expr{col(1), uconst(18446744073709551615), uconst(5)}}, "[[1 5] [<nil> 18446744073709551615]]"},
		// NULL when nothing matched and the list holds a NULL: NOT of it
		// keeps no row the list does not match.
		{"NOT (a IN (1, NULL))", Expr{Op: OpNot, Args: []Expr{{Op: OpIn, Cmp: CmpSigned, Args: []Expr{col(0), sconst(1), null}}}}, "[]"},
		{"a IN (1, NULL)", Expr{Op: OpIn, Cmp: CmpSigned, Args: []Expr{col(0), sconst(1), null}}, "[[1 5]]"},
		{"NOT (a IN (1, 2))", Expr{Op: OpNot, Args: []Expr{{Op: OpIn, Cmp: CmpSigned, Args: []Expr{col(0), sconst(1), sconst(2)}}}}, "[[-3 <nil>] [7 7]]"},
		{"a IN (u, 1) (as doubles)", Expr{Op: OpIn, Cmp: CmpDouble, Args: []Expr{col(0), col(1), sconst(-3)}}, "[[-3 <nil>] [7 7]]"},
	} {
		p := &Program{Columns: []int64{1, 2}, Filter: []Expr{c.f}, Output: []int{0, 1}}
		if got := fmt.Sprint(run(t, p, sample, 2)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestAggregateAndMerge checks partial groups and their merge, and the
// one group of an aggregation without GROUP BY over no rows.
func TestAggregateAndMerge(t *testing.T) {
	p := &Program{Columns: []int64{1, 2}, Aggregate: true, GroupBy: []Expr{{Op: OpMod, Const: &Datum{Int: 2}, Args: []Expr{col(0)}}},
		Keep: []int{0}, Aggs: []Agg{{Func: AggCountStar}, {Func: AggCount, Arg: &Expr{Op: OpColumn, Col: 1}}, {Func: AggMax, Arg: &Expr{Op: OpColumn, Col: 1}}}}
	enc, _ := p.Encode()
	m := NewMerger(p, nil)
	for _, half := range [][][]any{sample[:2], sample[2:]} {
		prog, err := Evaluator{}.Compile(enc)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range half {
			v, _ := tablecodec.EncodeRow([]int64{1, 2}, r)
			if _, _, err := prog.Feed(nil, v); err != nil {
				t.Fatal(err)
			}
		}
		data, _ := prog.Output()
		if err := m.Add(data); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	m.Each(func(keep, aggs []any) error { got = append(got, fmt.Sprint(keep, aggs)); return nil })
	if want := []string{"[1] [2 2 7]", "[<nil>] [1 1 18446744073709551615]", "[-3] [1 0 <nil>]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("groups %q, want %q", got, want)
	}
	empty := &Program{Columns: []int64{1}, Aggregate: true, Aggs: []Agg{{Func: AggCountStar}, {Func: AggMin, Arg: &Expr{Op: OpColumn}}}}
	got = nil
	NewMerger(empty, nil).Each(func(keep, aggs []any) error { got = append(got, fmt.Sprint(aggs)); return nil })
	if fmt.Sprint(got) != "[[0 <nil>]]" {
		t.Errorf("aggregation over nothing: %v", got)
	}
}

// TestDistinctInts checks the distinct sets of two regions, one paged,
// their merge, and the set encoding's round trip and refusals.
func TestDistinctInts(t *testing.T) {
	for _, c := range []struct {
		name string
		col  int
		rows [][]any
		want int
	}{
		{"signed, NULL left out", 0, [][]any{{int32(-3), nil}, {int32(5), nil}, {nil, nil}, {int32(-3), nil}, {int32(-2147483648), nil}, {int32(2147483647), nil}}, 4},
		{"unsigned edges", 1, [][]any{{nil, uint64(0)}, {nil, uint64(18446744073709551615)}, {nil, uint64(0)}, {nil, uint64(1 << 63)}}, 3},
		{"nothing", 0, [][]any{{nil, uint64(1)}}, 0},
	} {
		p := &Program{Columns: []int64{1, 2}, Aggregate: true, GroupBy: []Expr{col(c.col)}, DistinctInts: true, PageRows: 2}
		enc, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		m := NewMerger(p, nil)
		for _, half := range [][][]any{c.rows[:len(c.rows)/2], c.rows[len(c.rows)/2:]} {
			prog, err := Evaluator{}.Compile(enc)
			if err != nil {
				t.Fatal(err)
			}
			var out []byte
			for _, r := range half {
				v, _ := tablecodec.EncodeRow([]int64{1, 2}, r)
				full, _, err := prog.Feed(nil, v)
				if err != nil {
					t.Fatal(err)
				}
				if full { // a page: the region sends what it has
					page, _ := prog.Output()
					out = append(out, page...)
				}
			}
			page, _ := prog.Output()
			if err := m.Add(append(out, page...)); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Flush(); err != nil {
			t.Fatal(err)
		}
		if m.Len() != c.want {
			t.Errorf("%s: %d distinct, want %d", c.name, m.Len(), c.want)
		}
	}
	set := []uint64{0, 7, 1 << 63, ^uint64(0)}
	var back []uint64
	if err := DecodeDistinctInts(AppendDistinctInts(nil, set), func(v uint64) error { back = append(back, v); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []uint64{0, 7, 1 << 63, ^uint64(0)}; !reflect.DeepEqual(back, want) {
		t.Errorf("round trip %v, want %v", back, want)
	}
	for name, bad := range map[string][]byte{
		"count past the data": {5, 1},
		"repeated value":      {2, 1, 0},
		"past 2^64":           append([]byte{2}, append(AppendDistinctInts(nil, []uint64{^uint64(0)})[1:], 1)...),
		"truncated delta":     {1, 0x80},
	} {
		if err := DecodeDistinctInts(bad, func(uint64) error { return nil }); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
	for name, bad := range map[string]*Program{
		"two expressions": {Columns: []int64{1}, Aggregate: true, DistinctInts: true, GroupBy: []Expr{col(0), col(0)}},
		"with aggregates": {Columns: []int64{1}, Aggregate: true, DistinctInts: true, GroupBy: []Expr{col(0)}, Aggs: []Agg{{Func: AggCountStar}}},
		"not aggregating": {Columns: []int64{1}, DistinctInts: true, Output: []int{0}},
	} {
		if _, err := bad.Encode(); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}

// TestTopN checks that the top-N keeps the first rows by its keys, NULL
// first ascending.
func TestTopN(t *testing.T) {
	p := &Program{Columns: []int64{1, 2}, Output: []int{0}, OrderBy: []Order{{Col: 0}}, Limit: 2}
	if got := fmt.Sprint(run(t, p, sample, 1)); got != "[[<nil>] [-3]]" {
		t.Errorf("ascending: %s", got)
	}
	p.OrderBy[0].Desc = true
	if got := fmt.Sprint(run(t, p, sample, 1)); got != "[[7] [1]]" {
		t.Errorf("descending: %s", got)
	}
}

// TestProgramEncoding checks the wire form's round trip and that
// malformed programs are refused.
func TestProgramEncoding(t *testing.T) {
	p := &Program{Columns: []int64{1, 2}, Filter: []Expr{cmp(OpLT, CmpUnsigned, col(1), uconst(18446744073709551615))}, Output: []int{1}, Limit: 3, OrderBy: []Order{{Col: 0, Desc: true}}}
	enc, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(enc)
	if err != nil || !reflect.DeepEqual(back, p) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	for name, bad := range map[string]*Program{
		"column out of range":   {Columns: []int64{1}, Output: []int{1}},
		"value as a condition":  {Columns: []int64{1}, Filter: []Expr{col(0)}},
		"condition as a value":  {Columns: []int64{1}, Filter: []Expr{cmp(OpEQ, CmpSigned, cmp(OpEQ, CmpSigned, col(0), col(0)), col(0))}},
		"unknown comparison":    {Columns: []int64{1}, Filter: []Expr{cmp(OpEQ, "text", col(0), col(0))}},
		"MOD by zero":           {Columns: []int64{1}, Aggregate: true, GroupBy: []Expr{{Op: OpMod, Const: &Datum{}, Args: []Expr{col(0)}}}},
		"top-N without a limit": {Columns: []int64{1}, Output: []int{0}, OrderBy: []Order{{Col: 0}}},
		"rows and groups":       {Columns: []int64{1}, Aggregate: true, Output: []int{0}},
		"unknown aggregate":     {Columns: []int64{1}, Aggregate: true, Aggs: []Agg{{Func: "avg", Arg: &Expr{Op: OpColumn}}}},
		"SUM without argument":  {Columns: []int64{1}, Aggregate: true, Aggs: []Agg{{Func: AggSum}}},
		"IN without a list":     {Columns: []int64{1}, Filter: []Expr{{Op: OpIn, Cmp: CmpSigned, Args: []Expr{col(0)}}}},
		"IN of a condition":     {Columns: []int64{1}, Filter: []Expr{{Op: OpIn, Cmp: CmpSigned, Args: []Expr{col(0), cmp(OpEQ, CmpSigned, col(0), col(0))}}}},
		"IN without a kind":     {Columns: []int64{1}, Filter: []Expr{{Op: OpIn, Args: []Expr{col(0), sconst(1)}}}},
	} {
		if _, err := bad.Encode(); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
	if _, err := Decode([]byte("{")); err == nil {
		t.Error("a truncated program decoded")
	}
}

// TestSplitKeys checks that the cut points between two keys increase,
// lie after the first key and not after the last, and spread integer
// handles evenly.
func TestSplitKeys(t *testing.T) {
	row := func(h int64) []byte { return tablecodec.RowKey(nil, 42, tablecodec.IntHandle(h)) }
	keys := splitKeys(row(0), row(1000), 4)
	if len(keys) != 3 {
		t.Fatalf("cut points of handles 0..1000 in 4: %q", keys)
	}
	for i, k := range keys {
		// Each cut lies just after the row of handle 250(i+1).
		h := int64(250 * (i + 1))
		if string(k) <= string(row(h)) || string(k) > string(row(h+1)) {
			t.Errorf("cut %d %q, want after handle %d", i, k, h)
		}
	}
	for _, c := range []struct{ first, last string }{
		{"a", "b"}, {"a", "a\x00"}, {"abc", "abd\xff\xff"}, {"\x00", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"}, {"k1", "k1\x00\x00\x01"},
	} {
		for n := 2; n < 9; n++ {
			prev := []byte(c.first)
			for _, k := range splitKeys([]byte(c.first), []byte(c.last), n) {
				if string(k) <= string(prev) || string(k) > c.last {
					t.Fatalf("splitKeys(%q, %q, %d): %q out of order", c.first, c.last, n, k)
				}
				prev = k
			}
		}
	}
}

// TestSumExact checks that SUM's partials stay exact past the int64 range
// both ways, over unsigned values past it, and when partials merge.
func TestSumExact(t *testing.T) {
	sum := func(merging bool, vals ...any) any {
		var acc any
		for _, v := range vals {
			acc = Accumulate(AggSum, acc, v, merging)
		}
		return acc
	}
	for _, c := range []struct {
		name string
		got  any
		want string
	}{
		{"nothing", sum(false, nil, nil), "<nil>"},
		{"small", sum(false, int32(-3), nil, int8(5), uint16(7)), "9"},
		{"past MaxInt64", sum(false, int64(math.MaxInt64), int32(1), int32(-2)), "9223372036854775806"},
		{"past MinInt64", sum(false, int64(math.MinInt64), int64(-1)), "-9223372036854775809"},
		{"unsigned past MaxInt64", sum(false, uint64(math.MaxUint64), int64(-1)), "18446744073709551614"},
		{"merged partials", sum(true, int64(math.MaxInt64), decimal.RequireFromString("1"), int64(math.MaxInt64)), "18446744073709551615"},
	} {
		if fmt.Sprint(c.got) != c.want {
			t.Errorf("%s: %v, want %s", c.name, c.got, c.want)
		}
	}
	if _, ok := sum(false, int64(1), int64(2)).(int64); !ok {
		t.Error("a sum that fits is not an int64")
	}
}

// TestSlotMatchesAccumulate checks the unboxed partial aggregates of an
// evaluation (slot) against Accumulate over random runs of values of
// every integer width, NULLs and the int64 and uint64 extremes: the same
// value of the same Go type after every row, past overflow both ways.
func TestSlotMatchesAccumulate(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	vals := []any{nil, int8(-128), int8(127), int16(300), int32(-70000), int64(math.MaxInt64), int64(math.MinInt64),
		int64(-1), int64(1), uint8(255), uint32(math.MaxUint32), uint64(math.MaxUint64), uint64(math.MaxInt64), uint64(1 << 63), int(5)}
	for _, f := range []AggFunc{AggCountStar, AggCount, AggSum, AggMin, AggMax} {
		for run := 0; run < 200; run++ {
			var s slot
			var acc any
			if f == AggCount || f == AggCountStar {
				acc = int64(0)
			}
			for i := r.Intn(12); i >= 0; i-- {
				v := vals[r.Intn(len(vals))]
				s.add(f, v)
				acc = Accumulate(f, acc, v, false)
				got := s.value(f)
				if reflect.TypeOf(got) != reflect.TypeOf(acc) || fmt.Sprint(got) != fmt.Sprint(acc) {
					t.Fatalf("%s run %d after %v: slot %T %v, Accumulate %T %v", f, run, v, got, got, acc, acc)
				}
			}
		}
	}
}

// TestDistinctManyPages checks the distinct sets of regions fed many
// rows with repeats, in small pages (a page is sent once half of it is
// distinct), merged over many outputs: the count is the values', and the
// merge asks its memory bound once per distinct value, failing with its
// error.
func TestDistinctManyPages(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	p := &Program{Columns: []int64{1}, Aggregate: true, GroupBy: []Expr{col(0)}, DistinctInts: true, PageRows: 64}
	var outputs [][]byte
	want := map[int64]bool{}
	for region := 0; region < 40; region++ {
		e, err := p.Start()
		if err != nil {
			t.Fatal(err)
		}
		span := int64(1 + r.Intn(20000))
		for i := r.Intn(3000); i >= 0; i-- {
			var v any = r.Int63n(span) - span/2
			if r.Intn(10) == 0 {
				v = nil
			} else {
				want[v.(int64)] = true
			}
			row, _ := tablecodec.EncodeRow([]int64{1}, []any{v})
			full, _, err := e.Feed(nil, row)
			if err != nil {
				t.Fatal(err)
			}
			if full {
				out, _ := e.Output()
				outputs = append(outputs, out)
			}
		}
		out, _ := e.Output()
		outputs = append(outputs, out)
	}
	reserved := 0
	m := NewMerger(p, func() error { reserved++; return nil })
	for _, out := range outputs {
		if err := m.Add(out); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Flush(); err != nil {
		t.Fatal(err)
	}
	if m.Len() != len(want) || reserved != len(want) {
		t.Fatalf("%d distinct, %d reserved, want %d (%d outputs)", m.Len(), reserved, len(want), len(outputs))
	}
	bound := errors.New("over the bound")
	reserved = 0
	m = NewMerger(p, func() error {
		if reserved++; reserved > len(want)/2 {
			return bound
		}
		return nil
	})
	err := error(nil)
	for _, out := range outputs {
		if err = m.Add(out); err != nil {
			break
		}
	}
	if err == nil {
		err = m.Flush()
	}
	if !errors.Is(err, bound) {
		t.Fatalf("over the memory bound: %v", err)
	}
}
