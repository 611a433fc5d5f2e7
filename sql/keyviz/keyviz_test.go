package keyviz

import (
	"testing"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
)

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestSpanOf(t *testing.T) {
	start, _ := tablecodec.RecordRange(42)
	for _, c := range []struct {
		name string
		key  []byte
		want Span
	}{
		{"row key", tablecodec.RowKey(nil, 42, tablecodec.IntHandle(7)), Span{TableID: 42, Part: PartRows}},
		{"row prefix", start, Span{TableID: 42, Part: PartRows}},
		{"index key", tablecodec.IndexPrefix(nil, 42, 3), Span{TableID: 42, Part: PartIndex, IndexID: 3}},
		{"table prefix", tablecodec.TablePrefix(nil, 42), Span{TableID: 42, Part: PartOther}},
		{"meta", []byte("m:catalog"), Span{Part: PartMeta}},
		{"none", nil, Span{Part: PartMeta}},
	} {
		if got := SpanOf(c.key); got != c.want {
			t.Errorf("%s %q: %+v, want %+v", c.name, c.key, got, c.want)
		}
	}
}

// TestRecorderColumns: requests count in the column of their time; the
// columns between are there, empty; columns older than the kept ones go;
// spans come in key order; past MaxSpans a column counts the rest as
// overflow.
func TestRecorderColumns(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	r := New(Options{Interval: 10 * time.Second, Columns: 4, MaxSpans: 3})
	r.now = clk.now
	rows := tablecodec.RowKey(nil, 5, tablecodec.IntHandle(1))
	idx := tablecodec.IndexPrefix(nil, 5, 2)
	r.ObserveRequest(kv.RequestStats{Command: kv.CmdGet, Key: rows, Keys: 1, Bytes: 30})
	r.ObserveRequest(kv.RequestStats{Command: kv.CmdPrewrite, Key: idx, Keys: 2, Bytes: 50, Write: true})
	clk.t = clk.t.Add(25 * time.Second) // two columns later
	r.ObserveRequest(kv.RequestStats{Command: kv.CmdScan, Key: rows, Keys: 10, Bytes: 300})
	h := r.Snapshot()
	if len(h.Times) != 3 || !h.Times[0].Equal(time.Unix(1000, 0)) || !h.Times[2].Equal(time.Unix(1020, 0)) {
		t.Fatalf("times %v, want 1000, 1010, 1020", h.Times)
	}
	wantSpans := []Span{{TableID: 5, Part: PartRows}, {TableID: 5, Part: PartIndex, IndexID: 2}}
	if len(h.Spans) != 2 || h.Spans[0] != wantSpans[0] || h.Spans[1] != wantSpans[1] {
		t.Fatalf("spans %+v, want %+v", h.Spans, wantSpans)
	}
	if c := h.Cells[0][0]; c.ReadKeys != 1 || c.ReadBytes != 30 || c.Requests != 1 {
		t.Errorf("rows, first column: %+v", c)
	}
	if c := h.Cells[1][0]; c.WriteKeys != 2 || c.WriteBytes != 50 || c.ReadKeys != 0 {
		t.Errorf("index, first column: %+v", c)
	}
	if c := h.Cells[0][1]; c != (Cell{}) {
		t.Errorf("the empty column between: %+v", c)
	}
	if c := h.Cells[0][2]; c.ReadKeys != 10 || c.ReadBytes != 300 {
		t.Errorf("rows, third column: %+v", c)
	}

	// Four columns later the first ones are gone.
	clk.t = clk.t.Add(40 * time.Second)
	r.ObserveRequest(kv.RequestStats{Command: kv.CmdGet, Key: []byte("m:x"), Keys: 1, Bytes: 1})
	for i := int64(1); i <= 4; i++ {
		r.ObserveRequest(kv.RequestStats{Command: kv.CmdGet, Key: tablecodec.RowKey(nil, 100+i, tablecodec.IntHandle(1)), Keys: 1, Bytes: 1})
	}
	h = r.Snapshot()
	if len(h.Times) != 1 || !h.Times[0].Equal(time.Unix(1060, 0)) {
		t.Fatalf("times after the ring turned: %v, want only 1060", h.Times)
	}
	// meta, tables 101 and 102, then overflow for 103 and 104.
	if len(h.Spans) != 4 || h.Spans[0].Part != PartMeta || h.Spans[1].TableID != 101 || h.Spans[3].Part != PartOverflow {
		t.Fatalf("spans with MaxSpans 3: %+v", h.Spans)
	}
	if c := h.Cells[3][0]; c.Requests != 2 {
		t.Errorf("overflow counted %d requests, want 2", c.Requests)
	}
}

// TestRecorderByRegion: with ByRegion a part's requests are counted per
// region they went to (a table split in two gives two rows of its rows),
// without it per part only.
func TestRecorderByRegion(t *testing.T) {
	for _, byRegion := range []bool{false, true} {
		clk := &clock{t: time.Unix(1000, 0)}
		r := New(Options{ByRegion: byRegion})
		r.now = clk.now
		for _, q := range []struct {
			region uint64
			handle int64
		}{{7, 1}, {3, 500}, {7, 2}} {
			r.ObserveRequest(kv.RequestStats{Command: kv.CmdGet, Region: q.region, Key: tablecodec.RowKey(nil, 5, tablecodec.IntHandle(q.handle)), Keys: 1, Bytes: 10})
		}
		h := r.Snapshot()
		var want []Span
		var reads []uint64
		if byRegion {
			want = []Span{{TableID: 5, Part: PartRows, Region: 3}, {TableID: 5, Part: PartRows, Region: 7}}
			reads = []uint64{1, 2}
		} else {
			want = []Span{{TableID: 5, Part: PartRows}}
			reads = []uint64{3}
		}
		if len(h.Spans) != len(want) {
			t.Fatalf("ByRegion %v: spans %+v, want %+v", byRegion, h.Spans, want)
		}
		for i := range want {
			if h.Spans[i] != want[i] || h.Cells[i][0].ReadKeys != reads[i] {
				t.Errorf("ByRegion %v: span %d %+v with %d keys read, want %+v with %d", byRegion, i, h.Spans[i], h.Cells[i][0].ReadKeys, want[i], reads[i])
			}
		}
	}
}
