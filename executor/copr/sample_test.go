package copr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/percdb/percdb/executor/tablecodec"
)

// feedSample runs a sampling program over rows of (a int64, s string),
// column IDs 1 and 2, keyed by their position from first, and returns
// its output.
func feedSample(t *testing.T, p *Program, rows [][]any, first int) []byte {
	t.Helper()
	prog := compile(t, p)
	for i, r := range rows {
		v, err := tablecodec.EncodeRow([]int64{1, 2}, r)
		if err != nil {
			t.Fatal(err)
		}
		key := binary.BigEndian.AppendUint64([]byte("k"), uint64(first+i))
		if full, done, err := prog.Feed(key, v); err != nil || full || done {
			t.Fatalf("feed: full %v done %v err %v", full, done, err)
		}
	}
	out, err := prog.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sampleProgram(size int) *Program {
	return &Program{Columns: []int64{1, 2}, Sample: &SampleSpec{Size: size, MaxValueLen: 4, Tuples: [][]int{{0, 1}}}}
}

// TestSampleMergeIsWhole checks that the collections of two halves of a
// range merge into the collection of the whole (counts, sketches and the
// bottom-k sample), and that the encoding round-trips.
func TestSampleMergeIsWhole(t *testing.T) {
	var rows [][]any
	for i := range 5000 {
		var s any = string(rune('a' + i%7))
		if i%10 == 0 {
			s = nil
		}
		rows = append(rows, []any{int64(i % 300), s})
	}
	rows[1] = []any{int64(1), "a long string cut in the sample"}
	p := sampleProgram(100)
	whole, err := DecodeSample(feedSample(t, p, rows, 0), 100)
	if err != nil {
		t.Fatal(err)
	}
	merged := NewSample(2, p.Sample.Tuples, 100)
	for _, part := range []struct{ from, to int }{{0, 2000}, {2000, 5000}} {
		if err := merged.Merge(feedSample(t, p, rows[part.from:part.to], part.from)); err != nil {
			t.Fatal(err)
		}
	}
	if merged.Rows != 5000 || !reflect.DeepEqual(merged.Nulls, []uint64{0, 500}) || !reflect.DeepEqual(merged.Sizes, whole.Sizes) {
		t.Fatalf("rows %d nulls %v sizes %v, want 5000 [0 500] %v", merged.Rows, merged.Nulls, merged.Sizes, whole.Sizes)
	}
	if got := []uint64{merged.Columns[0].NDV(), merged.Columns[1].NDV(), merged.Prefixes[0][0].NDV()}; !reflect.DeepEqual(got, []uint64{300, 8, 1921}) {
		// s: 7 letters and the long string; (a, s): i mod 2100 has 2100
		// values, of which the 210 with i%10 = 0 have a NULL s, making 30
		// pairs (a, NULL), and the long string one more.
		t.Errorf("NDVs %v, want [300 8 1921] (exact below the sketch's size)", got)
	}
	if !reflect.DeepEqual(merged.Sampled(), whole.Sampled()) || len(whole.Sampled()) != 100 {
		t.Errorf("merged sample differs from the whole's (%d rows)", len(whole.Sampled()))
	}
	// The sample keeps only the first MaxValueLen bytes of a string.
	for _, r := range whole.Sampled() {
		if _, v, err := tablecodec.DecodeKey(r.Values[1]); err == nil {
			if b, ok := v.([]byte); ok && len(b) > 4 {
				t.Errorf("sampled string %q longer than 4 bytes", b)
			}
		}
	}
	again, err := DecodeSample(AppendSample(nil, whole), 100)
	if err != nil || !reflect.DeepEqual(again.Sampled(), whole.Sampled()) || again.Columns[0].NDV() != 300 {
		t.Errorf("round trip: %v", err)
	}
}

// TestSketchAccuracy checks the distinct-value sketch past its exact
// range: within 5% of the true count.
func TestSketchAccuracy(t *testing.T) {
	for _, n := range []int{1, 9_999, 50_000, 300_000} {
		s := NewSketch()
		for i := range n {
			for range 2 { // every value twice
				s.Insert(EncodeSampleValue(nil, int64(i)))
			}
		}
		if got := float64(s.NDV()); math.Abs(got-float64(n)) > 0.05*float64(n) {
			t.Errorf("%d distinct values: estimated %v", n, got)
		}
	}
}

// TestDecodeSampleCorrupt checks that a truncated or padded output is an
// error, never a panic.
func TestDecodeSampleCorrupt(t *testing.T) {
	var rows [][]any
	for i := range 50 {
		rows = append(rows, []any{int64(i), "x"})
	}
	data := feedSample(t, sampleProgram(10), rows, 0)
	for n := range len(data) {
		if _, err := DecodeSample(data[:n], 10); !errors.Is(err, tablecodec.ErrCorrupt) {
			t.Fatalf("truncated at %d of %d: %v", n, len(data), err)
		}
	}
	if _, err := DecodeSample(append(bytes.Clone(data), 0), 10); !errors.Is(err, tablecodec.ErrCorrupt) {
		t.Fatalf("trailing byte: %v", err)
	}
	bad := &Program{Columns: []int64{1}, Sample: &SampleSpec{Size: 10, Tuples: [][]int{{0, 3}}}}
	if _, err := bad.Encode(); err == nil {
		t.Fatal("a tuple naming a missing column was accepted")
	}
}
