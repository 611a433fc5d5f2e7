package tablecodec

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// allTypesRow returns one value of every Go type GMS hands over.
func allTypesRow() ([]int64, []any) {
	line := types.LineString{SRID: 4326, Points: []types.Point{{SRID: 4326, X: 1, Y: 2}, {SRID: 4326, X: 3, Y: 4}}}
	vals := []any{
		nil, int8(-8), int16(-16), int32(-32), int64(math.MinInt64), uint8(8), uint16(3), uint32(32),
		uint64(math.MaxUint64), float32(-1.25), 3.5e300, "hello, wörld", []byte{0, 1, 0xFF},
		decimal.RequireFromString("-12345678901234567890.0100"), decimal.New(15, -1),
		time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.UTC), time.Time{},
		types.Timespan(-123456789), types.MustJSON(`{"a":[1,"x",null,true],"b":{"c":2.5}}`),
		types.Point{SRID: 0, X: 1.5, Y: -2}, line,
		types.Polygon{SRID: 4326, Lines: []types.LineString{{SRID: 4326, Points: []types.Point{
			{SRID: 4326}, {SRID: 4326, X: 1}, {SRID: 4326, X: 1, Y: 1}, {SRID: 4326}}}}},
		types.GeomColl{SRID: 4326, Geoms: []types.GeometryValue{types.Point{SRID: 4326, X: 9, Y: 9}, line}},
		true, false, int(7), uint(9), "", []byte{},
	}
	ids := make([]int64, len(vals))
	for i := range ids {
		ids[i] = int64(i*3 + 1) // sparse, like IDs after drops
	}
	return ids, vals
}

func equalValue(a, b any) bool {
	if da, ok := a.(decimal.Decimal); ok {
		db, ok := b.(decimal.Decimal)
		return ok && da.Equal(db) && da.Exponent() == db.Exponent()
	}
	return reflect.DeepEqual(a, b)
}

func TestRowRoundTrip(t *testing.T) {
	ids, vals := allTypesRow()
	b, err := EncodeRow(ids, vals)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]any, len(ids))
	present := make([]bool, len(ids))
	if err := DecodeRow(b, ids, dst, present); err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if !present[i] {
			t.Errorf("column %d absent", ids[i])
		}
		if !equalValue(dst[i], vals[i]) {
			t.Errorf("column %d: got %#v (%T), want %#v (%T)", ids[i], dst[i], dst[i], vals[i], vals[i])
		}
	}
	got, err := RowColumnIDs(b)
	if err != nil || !reflect.DeepEqual(got, ids) {
		t.Errorf("RowColumnIDs = %v, %v; want %v", got, err, ids)
	}
}

// TestRowSchemaChange: wanted columns in any order, absent columns (added
// after the row was written) reported, dropped columns skipped.
func TestRowSchemaChange(t *testing.T) {
	ids, vals := allTypesRow()
	b, err := EncodeRow(ids, vals)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{ids[12], 1000, ids[3], ids[len(ids)-1], ids[0], 999}
	dst := []any{"keep", "keep", "keep", "keep", "keep", "keep"}
	present := make([]bool, len(want))
	if err := DecodeRow(b, want, dst, present); err != nil {
		t.Fatal(err)
	}
	wantPresent := []bool{true, false, true, true, true, false}
	wantVals := []any{vals[12], "keep", vals[3], vals[len(vals)-1], nil, "keep"}
	for i := range want {
		if present[i] != wantPresent[i] || !equalValue(dst[i], wantVals[i]) {
			t.Errorf("column %d: got %#v present %v, want %#v present %v", want[i], dst[i], present[i], wantVals[i], wantPresent[i])
		}
	}
}

// TestRowDecodeDoesNotAlias: decoded values stay valid when the caller
// reuses the value buffer.
func TestRowDecodeDoesNotAlias(t *testing.T) {
	b, err := EncodeRow([]int64{1, 2}, []any{"abc", []byte("xyz")})
	if err != nil {
		t.Fatal(err)
	}
	dst, present := make([]any, 2), make([]bool, 2)
	if err := DecodeRow(b, []int64{1, 2}, dst, present); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0
	}
	if dst[0] != "abc" || string(dst[1].([]byte)) != "xyz" {
		t.Fatalf("decoded values changed with the buffer: %q %q", dst[0], dst[1])
	}
}

func TestEncodeRowRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		ids  []int64
		vals []any
		msg  string
	}{
		"unknown type":  {[]int64{1}, []any{struct{ X int }{}}, "struct"},
		"map":           {[]int64{1}, []any{map[string]int{}}, "map[string]int"},
		"length":        {[]int64{1, 2}, []any{1}, "2 column IDs for 1 values"},
		"negative ID":   {[]int64{-1}, []any{1}, "negative"},
		"duplicate ID":  {[]int64{4, 4}, []any{1, 2}, "twice"},
		"bad JSON kind": {[]int64{1}, []any{types.JSONDocument{Val: make(chan int)}}, "JSON"},
	} {
		if _, err := EncodeRow(tc.ids, tc.vals); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: EncodeRow error %v, want one containing %q", name, err, tc.msg)
		}
	}
	many := make([]int64, 100)
	for i := range many {
		many[i] = int64(i % 99)
	}
	if _, err := EncodeRow(many, make([]any, 100)); err == nil {
		t.Errorf("EncodeRow accepted a repeated ID among 100")
	}
}

func TestDecodeRowCorrupt(t *testing.T) {
	ids, vals := allTypesRow()
	good, err := EncodeRow(ids, vals)
	if err != nil {
		t.Fatal(err)
	}
	dst, present := make([]any, len(ids)), make([]bool, len(ids))
	// Every truncation of a valid row is either a shorter valid row or an
	// error; never a panic.
	for n := 0; n < len(good); n++ {
		if err := DecodeRow(good[:n], ids, dst, present); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d: error %v does not wrap ErrCorrupt", n, err)
		}
	}
	for name, b := range map[string][]byte{
		"empty":         {},
		"version":       {0x01},
		"bad tag":       {RowFormatV1, 1, 0x7F},
		"int8 range":    {RowFormatV1, 1, tagInt8, 0x80, 0x04},
		"twice":         {RowFormatV1, 1, tagNull, 1, tagNull},
		"long string":   {RowFormatV1, 1, tagString, 0x7F, 'a'},
		"bad json":      {RowFormatV1, 1, tagJSON, 1, '{'},
		"huge geometry": {RowFormatV1, 1, tagGeometry, 13, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF},
		"big endian":    {RowFormatV1, 1, tagGeometry, 25, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		"time nanos":    {RowFormatV1, 1, tagTime, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F},
	} {
		if err := DecodeRow(b, ids[:1], dst[:1], present[:1]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: DecodeRow = %v, want ErrCorrupt", name, err)
		}
	}
	if err := DecodeRow(good, ids, dst[:1], present); err == nil {
		t.Error("DecodeRow accepted a short destination")
	}
}

// TestRowColumnsEqual: two row values compare equal on some columns when
// each of those has the same encoding in both (every type of value), or is
// absent from both; a change to any of them, a change of type, or a
// column present in one only is a difference, and other columns do not
// count.
func TestRowColumnsEqual(t *testing.T) {
	ids, vals := allTypesRow()
	base, err := EncodeRow(ids, vals)
	if err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		// Column i changes to the value of the next column of another
		// type (or to NULL); every other column stays.
		changed := append([]any(nil), vals...)
		changed[i] = vals[(i+1)%len(vals)]
		if reflect.DeepEqual(changed[i], vals[i]) {
			changed[i] = nil
		}
		b, err := EncodeRow(ids, changed)
		if err != nil {
			t.Fatal(err)
		}
		others := append(append([]int64(nil), ids[:i]...), ids[i+1:]...)
		for _, c := range []struct {
			cols []int64
			want bool
		}{
			{ids, false},
			{[]int64{ids[i]}, false},
			{others, true},
			{[]int64{}, true},
			{[]int64{1000}, true},
		} {
			got, err := RowColumnsEqual(base, b, c.cols)
			if err != nil || got != c.want {
				t.Errorf("column %d changed to %#v: equal on %v = %v, %v; want %v", ids[i], changed[i], c.cols, got, err, c.want)
			}
		}
	}
	// A column written in one value only (added after the other was
	// written) differs; dropped columns (present, not asked for) do not.
	short, err := EncodeRow(ids[1:], vals[1:])
	if err != nil {
		t.Fatal(err)
	}
	if eq, err := RowColumnsEqual(base, short, ids[:1]); err != nil || eq {
		t.Errorf("column present in one value only: equal = %v, %v; want false", eq, err)
	}
	if eq, err := RowColumnsEqual(base, short, ids[1:3]); err != nil || !eq {
		t.Errorf("columns in both: equal = %v, %v; want true", eq, err)
	}
	if _, err := RowColumnsEqual(base, base[:len(base)-1], ids); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated value: got %v, want ErrCorrupt", err)
	}
}

// TestVerbatimSpans checks that RowColumnSpans finds each column's
// encoded value, and that a span IsVerbatimSpan accepts is exactly what
// AppendRow writes for the value DecodeRow returns from it.
func TestVerbatimSpans(t *testing.T) {
	ids, vals := allTypesRow()
	row, err := EncodeRow(ids, vals)
	if err != nil {
		t.Fatal(err)
	}
	spans := make([][]byte, len(ids)+1)
	want := append(append([]int64(nil), ids...), 999) // a column the row lacks
	if err := RowColumnSpans(row, want, spans); err != nil {
		t.Fatal(err)
	}
	if spans[len(ids)] != nil {
		t.Errorf("a missing column's span is %x", spans[len(ids)])
	}
	accepted := 0
	for i, s := range spans[:len(ids)] {
		one, err := EncodeRow([]int64{0}, []any{vals[i]})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(s, one[2:]) {
			t.Errorf("column %d (%T): span %x, encoded %x", ids[i], vals[i], s, one[2:])
		}
		if !IsVerbatimSpan(s) {
			continue
		}
		accepted++
		dec := make([]any, 1)
		if err := DecodeRow(append([]byte{RowFormatV1, 0}, s...), []int64{0}, dec, make([]bool, 1)); err != nil {
			t.Fatal(err)
		}
		again, err := EncodeRow([]int64{0}, dec)
		if err != nil || !bytes.Equal(again[2:], s) {
			t.Errorf("column %d (%T): span %x encodes back as %x (%v)", ids[i], vals[i], s, again, err)
		}
	}
	if accepted < 15 {
		t.Errorf("%d spans taken verbatim, want the NULL, boolean, integer and string ones", accepted)
	}
	if err := RowColumnSpans(row, ids, spans); err == nil {
		t.Error("spans of another length accepted")
	}
}

// TestDecodeColumnMatchesDecodeRow decodes every column of a row of every
// type, and integers at the edges of each tag's range, from its span:
// DecodeColumn returns what DecodeRow does, and ColumnInt reads the same
// integer (or says it holds none) without decoding it.
func TestDecodeColumnMatchesDecodeRow(t *testing.T) {
	ids, vals := allTypesRow()
	for _, v := range []any{int8(math.MinInt8), int8(math.MaxInt8), int16(math.MinInt16), int16(math.MaxInt16),
		int32(math.MinInt32), int32(math.MaxInt32), int64(math.MaxInt64), int64(256), int(-1 << 40),
		uint8(math.MaxUint8), uint16(math.MaxUint16), uint32(math.MaxUint32), uint64(1 << 63), uint(1 << 50)} {
		ids = append(ids, ids[len(ids)-1]+2)
		vals = append(vals, v)
	}
	row, err := EncodeRow(ids, vals)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]any, len(ids))
	if err := DecodeRow(row, ids, want, make([]bool, len(ids))); err != nil {
		t.Fatal(err)
	}
	spans := make([][]byte, len(ids))
	if err := RowColumnSpans(row, ids, spans); err != nil {
		t.Fatal(err)
	}
	for i, span := range spans {
		got, err := DecodeColumn(span)
		if err != nil || !equalValue(got, want[i]) || reflect.TypeOf(got) != reflect.TypeOf(want[i]) {
			t.Errorf("column %d: DecodeColumn %T %v, %v; DecodeRow %T %v", ids[i], got, got, err, want[i], want[i])
		}
		kind, si, ui, err := ColumnInt(span)
		if err != nil {
			t.Errorf("column %d: ColumnInt: %v", ids[i], err)
		}
		var wantKind SpanKind
		switch v := reflect.ValueOf(want[i]); {
		case want[i] == nil:
			wantKind = SpanNull
		case v.CanInt() && v.Type() != reflect.TypeOf(types.Timespan(0)):
			wantKind = SpanSigned
			if si != v.Int() {
				t.Errorf("column %d: ColumnInt %d, want %d", ids[i], si, v.Int())
			}
		case v.CanUint():
			wantKind = SpanUnsigned
			if ui != v.Uint() {
				t.Errorf("column %d: ColumnInt %d, want %d", ids[i], ui, v.Uint())
			}
		}
		if kind != wantKind {
			t.Errorf("column %d (%T): ColumnInt kind %d, want %d", ids[i], want[i], kind, wantKind)
		}
	}
}

// TestColumnIntCorrupt: a value out of its tag's range, a truncated
// varint or bytes after it are corrupt for ColumnInt and DecodeColumn.
func TestColumnIntCorrupt(t *testing.T) {
	for _, span := range [][]byte{
		{tagInt8, 0x80, 0x02},        // 128
		{tagUint8, 0x80, 0x02},       // 256
		{tagInt16, 0x80, 0x80, 0x04}, // 32768
		{tagUint32, 0x80, 0x80, 0x80, 0x80, 0x10},
		{tagInt64, 0x80},
		{tagUint64},
		{tagInt32, 0x02, 0x00},
		{},
	} {
		if _, _, _, err := ColumnInt(span); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ColumnInt(%x): %v, want corrupt", span, err)
		}
		if _, err := DecodeColumn(span); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeColumn(%x): %v, want corrupt", span, err)
		}
	}
}

// TestRowColumnSpansAnyOrder asks for columns in orders other than the
// row's, twice, and absent: each span holds its column's value.
func TestRowColumnSpansAnyOrder(t *testing.T) {
	row, err := EncodeRow([]int64{3, 5, 9, 1}, []any{int64(300), "five", nil, uint8(1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ids := range [][]int64{{5, 3, 5}, {1, 9}, {9, 5, 3, 1}, {7, 3}, {3, 7, 3, 1, 1}, {5}} {
		spans := make([][]byte, len(ids))
		if err := RowColumnSpans(row, ids, spans); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if spans[i] == nil {
				if id != 7 {
					t.Fatalf("%v: column %d: no span", ids, id)
				}
				continue
			}
			got, err := DecodeColumn(spans[i])
			if err != nil {
				t.Fatal(err)
			}
			var wantV any
			switch id {
			case 3:
				wantV = int64(300)
			case 5:
				wantV = "five"
			case 1:
				wantV = uint8(1)
			}
			if got != wantV {
				t.Fatalf("%v: column %d: %v, want %v", ids, id, got, wantV)
			}
		}
	}
}
