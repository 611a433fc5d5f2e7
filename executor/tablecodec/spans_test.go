package tablecodec

import (
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

// TestSpanReaderMatchesRowColumnSpans reads random lists of column IDs
// (in any order, repeated, absent from the row, small and past the
// reader's table) from random rows of every type with a SpanReader and
// with RowColumnSpans: the same spans, the same errors on corrupt rows.
func TestSpanReaderMatchesRowColumnSpans(t *testing.T) {
	ids, vals := allTypesRow()
	pool := append([]int64(nil), ids...)
	for _, id := range []int64{0, 7, 1023, 1024, 5000, 1 << 40} {
		if !slices.Contains(pool, id) {
			pool = append(pool, id)
		}
	}
	rnd := rand.New(rand.NewSource(1))
	for round := 0; round < 2000; round++ {
		var rowIDs []int64
		var rowVals []any
		for _, i := range rnd.Perm(len(pool)) {
			if rnd.Intn(3) == 0 {
				continue
			}
			rowIDs = append(rowIDs, pool[i])
			rowVals = append(rowVals, vals[rnd.Intn(len(vals))])
		}
		row, err := EncodeRow(rowIDs, rowVals)
		if err != nil {
			t.Fatal(err)
		}
		if rnd.Intn(8) == 0 && len(row) > 1 {
			row = row[:1+rnd.Intn(len(row)-1)] // truncated: corrupt
		}
		want := make([]int64, rnd.Intn(6))
		for i := range want {
			want[i] = pool[rnd.Intn(len(pool))]
		}
		r := NewSpanReader(want)
		got, exp := make([][]byte, len(want)), make([][]byte, len(want))
		for i := range got {
			got[i] = []byte("stale") // a row's spans must not leak into the next
		}
		errGot := r.Spans(row, got)
		errExp := RowColumnSpans(row, want, exp)
		what := fmt.Sprintf("round %d: columns %v of row %v", round, want, rowIDs)
		if fmt.Sprint(errGot) != fmt.Sprint(errExp) {
			t.Fatalf("%s: error %v, RowColumnSpans %v", what, errGot, errExp)
		}
		if errGot != nil {
			continue
		}
		for i := range want {
			if (got[i] == nil) != (exp[i] == nil) || !bytes.Equal(got[i], exp[i]) {
				t.Fatalf("%s: span %d %x, RowColumnSpans %x", what, i, got[i], exp[i])
			}
		}
	}
	if err := NewSpanReader([]int64{1}).Spans([]byte{RowFormatV1}, nil); err == nil {
		t.Error("spans of another length accepted")
	}
}
