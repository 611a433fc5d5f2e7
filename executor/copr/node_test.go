package copr

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/percdb/percdb/executor/tablecodec"
)

// TestColumnConstTruth checks the comparison of a column with a constant
// read from the column's span (columnConstTruth) against the general
// evaluation (nums), over every operator and comparison kind, integers of
// every width and sign at their edges, NULLs, a column the row lacks
// (its default), a column decoded before the comparison (it is also an
// output column), and values of other types, which the general way
// decides or refuses.
func TestColumnConstTruth(t *testing.T) {
	edges := []any{
		nil, int8(math.MinInt8), int8(-1), int8(0), int8(3), int8(math.MaxInt8),
		int16(math.MinInt16), int16(300), int32(math.MinInt32), int32(3), int32(math.MaxInt32),
		int64(math.MinInt64), int64(-3), int64(3), int64(math.MaxInt64), int(7),
		uint8(0), uint8(3), uint8(math.MaxUint8), uint16(math.MaxUint16), uint32(3), uint32(math.MaxUint32),
		uint64(0), uint64(3), uint64(math.MaxInt64 + 1), uint64(math.MaxUint64), uint(7),
		"3", []byte("x"), float64(3), true,
	}
	consts := []*Datum{
		{Int: 3}, {Int: -3}, {Int: 0}, {Int: math.MinInt64}, {Int: math.MaxInt64},
		{Unsigned: true, Uint: 3}, {Unsigned: true, Uint: math.MaxUint64}, {Unsigned: true}, {Null: true},
	}
	ops := []Op{OpEQ, OpNE, OpLT, OpLE, OpGT, OpGE, OpNullSafe}
	kinds := []CmpKind{CmpSigned, CmpUnsigned, CmpDouble}
	rnd := rand.New(rand.NewSource(1))
	fast := 0
	for round := 0; round < 3000; round++ {
		x := Expr{Op: ops[rnd.Intn(len(ops))], Cmp: kinds[rnd.Intn(len(kinds))],
			Args: []Expr{col(0), {Op: OpConst, Const: consts[rnd.Intn(len(consts))]}}}
		if rnd.Intn(2) == 0 {
			x.Args[0], x.Args[1] = x.Args[1], x.Args[0] // constant first: never the span way
		}
		p := &Program{Columns: []int64{1, 2}, Filter: []Expr{x}, Output: []int{1}}
		if rnd.Intn(4) == 0 {
			p.Output = []int{0, 1} // column 1 decoded by an earlier row's output
		}
		if rnd.Intn(4) == 0 {
			def, err := tablecodec.EncodeRow([]int64{1}, []any{edges[rnd.Intn(len(edges))]})
			if err != nil {
				t.Fatal(err)
			}
			p.Defaults = def
		}
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		spanWay, err := p.Start()
		if err != nil {
			t.Fatal(err)
		}
		general, err := p.Start()
		if err != nil {
			t.Fatal(err)
		}
		for i := range general.filter {
			general.filter[i].colConst = false
		}
		fast += map[bool]int{true: 1}[spanWay.filter[0].colConst]
		for i := 0; i < 8; i++ {
			ids, vals := []int64{2}, []any{int64(i)}
			if rnd.Intn(6) > 0 { // else the row lacks column 1
				ids, vals = []int64{1, 2}, []any{edges[rnd.Intn(len(edges))], int64(i)}
			}
			row, err := tablecodec.EncodeRow(ids, vals)
			if err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("round %d: %s %s over %v", round, x.Op, x.Cmp, vals)
			_, _, errSpan := spanWay.Feed(nil, row)
			_, _, errGeneral := general.Feed(nil, row)
			if (errSpan == nil) != (errGeneral == nil) {
				t.Fatalf("%s: error %v, the general way %v", what, errSpan, errGeneral)
			}
			if errSpan != nil {
				break // both refuse: the evaluation is over
			}
		}
		a, err := spanWay.Output()
		if err != nil {
			t.Fatal(err)
		}
		b, err := general.Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Fatalf("round %d: %s %s: output %x, the general way %x", round, x.Op, x.Cmp, a, b)
		}
	}
	if fast < 300 {
		t.Fatalf("%d of 3000 programs compared from the span: want many", fast)
	}
}
