package copr

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

// wirePrograms are valid programs that together set every field of the
// wire form.
func wirePrograms() map[string]*Program {
	null := Expr{Op: OpConst, Const: &Datum{Null: true}}
	return map[string]*Program{
		"top-N over a filter": {
			Columns:  []int64{1, 7, math.MaxInt64},
			Defaults: []byte{0x80, 1, 2, 3},
			Trim:     []int{2},
			Filter: []Expr{
				cmp(OpLT, CmpUnsigned, col(1), uconst(math.MaxUint64)),
				{Op: OpOr, Args: []Expr{
					cmp(OpGE, CmpSigned, col(0), sconst(math.MinInt64)),
					{Op: OpNot, Args: []Expr{{Op: OpIsNull, Args: []Expr{col(2)}}}},
				}},
				cmp(OpNullSafe, CmpDouble, col(2), null),
				{Op: OpAnd, Args: []Expr{{Op: OpIsNotNull, Args: []Expr{col(0)}}, cmp(OpNE, CmpSigned, col(0), sconst(-1))}},
				{Op: OpIn, Cmp: CmpSigned, Args: []Expr{col(0), sconst(math.MinInt64), null, sconst(3)}},
			},
			Output:   []int{0, 2},
			Limit:    10,
			OrderBy:  []Order{{Col: 1, Desc: true}, {Col: 0}},
			PageRows: 100,
		},
		"groups": {
			Columns:   []int64{3, 4},
			Aggregate: true,
			GroupBy:   []Expr{{Op: OpMod, Const: &Datum{Int: -10}, Args: []Expr{col(0)}}, col(1)},
			Keep:      []int{1, 0},
			Aggs: []Agg{
				{Func: AggCountStar},
				{Func: AggCount, Arg: &Expr{Op: OpColumn, Col: 1}},
				{Func: AggMin, Arg: &Expr{Op: OpColumn}},
				{Func: AggMax, Arg: &Expr{Op: OpColumn, Col: 1}},
				{Func: AggSum, Arg: &Expr{Op: OpMod, Const: &Datum{Unsigned: true, Uint: 3}, Args: []Expr{col(1)}}},
			},
		},
		"distinct set": {Columns: []int64{2}, Aggregate: true, DistinctInts: true, GroupBy: []Expr{col(0)}},
		"sample":       {Columns: []int64{1, 2, 3}, Sample: &SampleSpec{Size: 500, MaxValueLen: 32, Tuples: [][]int{{0, 1}, {2}}}},
		"empty":        {},
	}
}

// TestWireRoundTrip checks that every program decodes to itself and that
// its encoding is stable.
func TestWireRoundTrip(t *testing.T) {
	for name, p := range wirePrograms() {
		enc, err := p.Encode()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, err := Decode(enc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(back, p) {
			t.Errorf("%s: decoded\n%+v\nwant\n%+v", name, back, p)
		}
		again, err := back.Encode()
		if err != nil || !bytes.Equal(again, enc) {
			t.Errorf("%s: encoded again %x (%v), first %x", name, again, err, enc)
		}
	}
}

// TestWireRefusesDamage checks that every cut of a program's wire form,
// a byte more, an unknown version, operator or aggregate code, and a
// nesting past maxExprDepth are refused, not decoded into something else.
func TestWireRefusesDamage(t *testing.T) {
	for name, p := range wirePrograms() {
		enc, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		for n := range len(enc) {
			if q, err := Decode(enc[:n]); err == nil {
				t.Errorf("%s: the first %d of %d bytes decoded to %+v", name, n, len(enc), q)
			}
		}
		if _, err := Decode(append(enc[:len(enc):len(enc)], 0)); err == nil {
			t.Errorf("%s: a byte past the end decoded", name)
		}
	}
	enc, _ := (&Program{Columns: []int64{1}, Filter: []Expr{{Op: OpIsNull, Args: []Expr{col(0)}}}}).Encode()
	bad := func(at int, v byte) []byte {
		b := append([]byte(nil), enc...)
		b[at] = v
		return b
	}
	// version, columns (1, 1), defaults (0), trim (0), filter (1), then
	// the filter's operator.
	if enc[6] != 12 {
		t.Fatalf("IS NULL's code at 6 of %x", enc)
	}
	for name, b := range map[string][]byte{
		"version":  bad(0, 2),
		"operator": bad(6, byte(len(opCodes))),
		"cmp":      bad(8, byte(len(cmpCodes))),
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("unknown %s decoded", name)
		}
	}
	deep := col(0)
	for range maxExprDepth {
		deep = Expr{Op: OpIsNull, Args: []Expr{deep}}
		deep = Expr{Op: OpNot, Args: []Expr{deep}}
	}
	p := &Program{Columns: []int64{1}, Filter: []Expr{deep}}
	b, err := p.appendWire(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b); err == nil {
		t.Error("an expression nested past the bound decoded")
	}
}

// FuzzDecode checks that Decode never panics and that what it accepts
// encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, p := range wirePrograms() {
		enc, _ := p.Encode()
		f.Add(enc)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b)
		if err != nil {
			return
		}
		enc, err := p.Encode()
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", p, err)
		}
		if back, err := Decode(enc); err != nil || !reflect.DeepEqual(back, p) {
			t.Fatalf("decoded %+v, again %+v (%v)", p, back, err)
		}
	})
}

// BenchmarkProgramWire encodes and decodes a program of sysbench's range
// reads (a filter of two comparisons and three output columns) and an
// aggregation (SUM over a filter), as the SQL side and the store do once
// per statement:
//
//	go test ./executor/copr -run '^$' -bench ProgramWire -count 10
func BenchmarkProgramWire(b *testing.B) {
	for name, p := range map[string]*Program{
		"rows": {Columns: []int64{1, 2, 3}, Defaults: []byte{0x80, 0}, Trim: []int{1, 2},
			Filter: []Expr{cmp(OpGE, CmpSigned, col(0), sconst(1000)), cmp(OpLE, CmpSigned, col(0), sconst(1099))}, Output: []int{0, 1, 2}},
		"sum": {Columns: []int64{1, 2}, Filter: []Expr{cmp(OpGE, CmpSigned, col(0), sconst(1000)), cmp(OpLE, CmpSigned, col(0), sconst(1099))},
			Aggregate: true, Aggs: []Agg{{Func: AggSum, Arg: &Expr{Op: OpColumn, Col: 1}}}},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				enc, err := p.Encode()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Decode(enc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
