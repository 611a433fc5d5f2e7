package statistics

import (
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
)

// collect runs a sampling program over rows of two columns (IDs 1 and 2)
// with an index on (a, b), split in two ranges as two regions would be,
// and builds the statistics.
func collect(t *testing.T, rows [][]any) *Table {
	t.Helper()
	specs := []IndexSpec{{ID: 7, Columns: []int{0, 1}}}
	p := &copr.Program{Columns: []int64{1, 2}, Sample: &copr.SampleSpec{Size: copr.DefaultSampleSize, Tuples: Tuples(specs)}}
	enc, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	s := copr.NewSample(2, p.Sample.Tuples, p.Sample.Size)
	half := len(rows) / 2
	for _, part := range [][2]int{{0, half}, {half, len(rows)}} {
		prog, err := copr.Evaluator{}.Compile(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i := part[0]; i < part[1]; i++ {
			v, err := tablecodec.EncodeRow([]int64{1, 2}, rows[i])
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := prog.Feed(binary.BigEndian.AppendUint64(nil, uint64(i)), v); err != nil {
				t.Fatal(err)
			}
		}
		out, err := prog.Output()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Merge(out); err != nil {
			t.Fatal(err)
		}
	}
	return Build(s, 42, p.Columns, specs)
}

func key(t *testing.T, v any) []byte {
	t.Helper()
	b, err := tablecodec.EncodeKey(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// within fails unless got is within frac of want.
func within(t *testing.T, what string, got, want uint64, frac float64) {
	t.Helper()
	if math.Abs(float64(got)-float64(want)) > frac*float64(want) {
		t.Errorf("%s = %d, want %d within %.0f%%", what, got, want, 100*frac)
	}
}

// TestAccuracy checks NDV, NULL counts, histograms and the TopN on known
// distributions, within the bounds stated: NDV exact below the sketch's
// 10,000 hashes and within 5% above; equality estimates of a uniform
// column within 25% (a 10,000-row sample of 100,000 rows), of a value
// holding half the rows within 5%; bucket totals equal to the rows.
func TestAccuracy(t *testing.T) {
	const n = 100_000
	t.Run("uniform", func(t *testing.T) {
		var rows [][]any
		for i := range n {
			rows = append(rows, []any{int64(i % 1000), int64(i)})
		}
		st := collect(t, rows)
		a, b := st.Column(1), st.Column(2)
		if st.RowCount != n || a.NDV != 1000 || a.Nulls != 0 {
			t.Fatalf("rows %d, a NDV %d NULLs %d", st.RowCount, a.NDV, a.Nulls)
		}
		within(t, "b NDV", b.NDV, n, 0.05)
		within(t, "a histogram total", a.Hist.Total(), n, 0.01)
		if len(a.Hist.Buckets) > MaxBuckets || len(a.Hist.Buckets) < MaxBuckets/2 {
			t.Errorf("a has %d buckets", len(a.Hist.Buckets))
		}
		for _, v := range []int64{0, 17, 500, 999} {
			within(t, "rows of a = v", a.Hist.EqualRows(key(t, v)), 100, 0.25)
		}
		if got := a.Hist.EqualRows(key(t, int64(5000))); got != 0 {
			t.Errorf("rows of a = 5000 (out of range) = %d", got)
		}
		ix := st.Index(7, false)
		if ix == nil || ix.NDV[0] != 1000 {
			t.Fatalf("index stats %+v", ix)
		}
		within(t, "index (a, b) NDV", ix.NDV[1], n, 0.05)
	})
	t.Run("skewed", func(t *testing.T) {
		var rows [][]any
		for i := range n {
			v := int64(0)
			if i%2 == 1 {
				v = int64(i)
			}
			rows = append(rows, []any{v, "x"})
		}
		st := collect(t, rows)
		a := st.Column(1)
		within(t, "a NDV", a.NDV, n/2+1, 0.05)
		if len(a.Hist.TopN) == 0 || !reflect.DeepEqual(a.Hist.TopN[0].Value, key(t, int64(0))) {
			t.Fatalf("TopN %v lacks the frequent value", a.Hist.TopN)
		}
		within(t, "rows of a = 0", a.Hist.EqualRows(key(t, int64(0))), n/2, 0.05)
		if got := a.Hist.EqualRows(key(t, int64(12345))); got > 10 {
			t.Errorf("rows of a rare value = %d", got)
		}
		within(t, "a histogram total", a.Hist.Total(), n, 0.01)
		if b := st.Column(2); b.NDV != 1 || b.Hist.EqualRows(key(t, "x")) != n {
			t.Errorf("constant column: NDV %d, rows of 'x' %d", b.NDV, b.Hist.EqualRows(key(t, "x")))
		}
	})
	t.Run("all NULL", func(t *testing.T) {
		var rows [][]any
		for i := range 500 {
			rows = append(rows, []any{nil, int64(i)})
		}
		st := collect(t, rows)
		a := st.Column(1)
		if a.NDV != 0 || a.Nulls != 500 || len(a.Hist.Buckets)+len(a.Hist.TopN) != 0 {
			t.Errorf("all-NULL column: %+v", a)
		}
		if ix := st.Index(7, false); ix.NDV[0] != 1 || ix.NDV[1] != 500 || ix.Hist.Total() != 500 {
			t.Errorf("index over NULLs: NDV %v total %d", ix.NDV, ix.Hist.Total())
		}
	})
	t.Run("empty", func(t *testing.T) {
		st := collect(t, nil)
		if st.RowCount != 0 || st.Column(1).NDV != 0 || st.Index(7, false).Hist.Total() != 0 {
			t.Errorf("empty table: %+v", st)
		}
	})
	t.Run("one row", func(t *testing.T) {
		st := collect(t, [][]any{{int64(5), "five"}})
		a := st.Column(1)
		if st.RowCount != 1 || a.NDV != 1 || a.Hist.Total() != 1 || a.Hist.EqualRows(key(t, int64(5))) != 1 {
			t.Errorf("one row: %+v", a)
		}
	})
}

// TestFormatRoundTrip checks that statistics and version entries decode
// to what was encoded, and that every truncation of an encoding and an
// unknown format are errors, never a panic.
func TestFormatRoundTrip(t *testing.T) {
	var rows [][]any
	for i := range 3000 {
		var s any = "s" + string(rune('a'+i%26))
		if i%9 == 0 {
			s = nil
		}
		rows = append(rows, []any{int64(i % 40), s})
	}
	st := collect(t, rows)
	st.Version, st.AnalyzedAt = 1<<40, 1_700_000_000_000
	st.Indexes = append(st.Indexes, Index{Primary: true, ColumnIDs: []int64{1}, NDV: []uint64{40}})
	b := EncodeTable(st)
	got, err := DecodeTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normalize(got), normalize(st)) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, st)
	}
	for i := range len(b) {
		if _, err := DecodeTable(b[:i]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d of %d: %v", i, len(b), err)
		}
	}
	if _, err := DecodeTable(append([]byte{9}, b[1:]...)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unknown format: %v", err)
	}
	e, err := DecodeVersion(VersionKey(st.TableID), EncodeVersion(st))
	if err != nil || e != (VersionEntry{TableID: 42, Version: 1 << 40, RowCount: 3000}) {
		t.Fatalf("version entry: %+v, %v", e, err)
	}
	if _, err := DecodeVersion(VersionKey(1), []byte{1, 2}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("short version entry: %v", err)
	}
}

// normalize makes empty slices nil, as decoding leaves them.
func normalize(t *Table) *Table {
	c := *t
	fix := func(h *Histogram) {
		if len(h.TopN) == 0 {
			h.TopN = nil
		}
		if len(h.Buckets) == 0 {
			h.Buckets = nil
		}
	}
	c.Columns = append([]Column(nil), t.Columns...)
	for i := range c.Columns {
		fix(&c.Columns[i].Hist)
	}
	c.Indexes = append([]Index(nil), t.Indexes...)
	for i := range c.Indexes {
		fix(&c.Indexes[i].Hist)
	}
	return &c
}
