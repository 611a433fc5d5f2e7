package tablecodec

import (
	"strings"
	"testing"
)

// sysbenchRow is a row of sysbench's sbtest table: id, k, c char(120),
// pad char(60).
func sysbenchRow() ([]int64, []any) {
	return []int64{1, 2, 3, 4}, []any{int64(4242), int64(5017), strings.Repeat("68487932199-96439406143-", 5), strings.Repeat("22195207048-", 5)}
}

func BenchmarkEncodeRow(b *testing.B) {
	ids, vals := sysbenchRow()
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendRow(buf[:0], ids, vals); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRow(b *testing.B) { benchmarkDecodeRow(b, sysbenchRow) }

// BenchmarkDecodeRowAllTypes decodes a row holding every supported type.
func BenchmarkDecodeRowAllTypes(b *testing.B) { benchmarkDecodeRow(b, allTypesRow) }

func benchmarkDecodeRow(b *testing.B, row func() ([]int64, []any)) {
	ids, vals := row()
	enc, err := EncodeRow(ids, vals)
	if err != nil {
		b.Fatal(err)
	}
	dst, present := make([]any, len(ids)), make([]bool, len(ids))
	b.ReportAllocs()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if err := DecodeRow(enc, ids, dst, present); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRowKey(b *testing.B) {
	buf := make([]byte, 0, 32)
	b.ReportAllocs()
	for i := int64(0); b.Loop(); i++ {
		buf = RowKey(buf[:0], 7, IntHandle(i))
	}
}

// BenchmarkIndexKey encodes a secondary index entry on (k, c) of sbtest.
func BenchmarkIndexKey(b *testing.B) {
	_, vals := sysbenchRow()
	buf, vbuf := make([]byte, 0, 256), make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if vbuf, err = EncodeKey(vbuf[:0], vals[1], vals[2]); err != nil {
			b.Fatal(err)
		}
		buf = IndexKey(buf[:0], 7, 1, vbuf, false, false, IntHandle(4242))
	}
}
