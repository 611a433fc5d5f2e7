package wire

import (
	"bytes"
	"testing"

	"github.com/dolthub/vitess/go/sqltypes"
)

// TestBinaryValues checks the binary protocol's form of values of each
// kind of type, as MySQL's documentation lays them out.
func TestBinaryValues(t *testing.T) {
	for _, tc := range []struct {
		v    sqltypes.Value
		want []byte
	}{
		{sqltypes.MakeTrusted(sqltypes.Int8, []byte("-2")), []byte{0xfe}},
		{sqltypes.MakeTrusted(sqltypes.Uint16, []byte("65535")), []byte{0xff, 0xff}},
		{sqltypes.MakeTrusted(sqltypes.Year, []byte("2024")), []byte{0xe8, 0x07}},
		{sqltypes.MakeTrusted(sqltypes.Int32, []byte("-1")), []byte{0xff, 0xff, 0xff, 0xff}},
		{sqltypes.MakeTrusted(sqltypes.Int64, []byte("258")), []byte{2, 1, 0, 0, 0, 0, 0, 0}},
		{sqltypes.MakeTrusted(sqltypes.Float64, []byte("1.5")), []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}},
		{sqltypes.MakeTrusted(sqltypes.Float32, []byte("1.5")), []byte{0, 0, 0xc0, 0x3f}},
		{sqltypes.MakeTrusted(sqltypes.Decimal, []byte("1.25")), []byte{4, '1', '.', '2', '5'}},
		{sqltypes.MakeTrusted(sqltypes.Date, []byte("2020-01-02")), []byte{4, 0xe4, 0x07, 1, 2}},
		{sqltypes.MakeTrusted(sqltypes.Date, nil), []byte{0}},
		{sqltypes.MakeTrusted(sqltypes.Datetime, []byte("0000-00-00 00:00:00")), []byte{0}},
		{sqltypes.MakeTrusted(sqltypes.Datetime, []byte("2020-01-02 03:04:05")), []byte{7, 0xe4, 0x07, 1, 2, 3, 4, 5}},
		{sqltypes.MakeTrusted(sqltypes.Timestamp, []byte("2020-01-02 03:04:05.5")), []byte{11, 0xe4, 0x07, 1, 2, 3, 4, 5, 0x20, 0xa1, 0x07, 0}},
		{sqltypes.MakeTrusted(sqltypes.Time, []byte("-34:00:01")), []byte{8, 1, 1, 0, 0, 0, 10, 0, 1}},
		{sqltypes.MakeTrusted(sqltypes.Time, []byte("00:00:00")), []byte{0}},
		{sqltypes.MakeTrusted(sqltypes.Time, []byte("01:02:03.000004")), []byte{12, 0, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0}},
	} {
		got, err := appendBinaryValue(nil, tc.v)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%v %q: % x (%v), want % x", tc.v.Type(), tc.v.Raw(), got, err, tc.want)
		}
	}
	// A row: 0x00, the NULL bitmap from bit 2, then the values.
	row, err := binaryRow([]sqltypes.Value{sqltypes.NULL, sqltypes.MakeTrusted(sqltypes.Int8, []byte("7"))})
	if want := []byte{0, 0x04, 7}; err != nil || !bytes.Equal(row, want) {
		t.Errorf("row: % x (%v), want % x", row, err, want)
	}
	if _, err := appendBinaryValue(nil, sqltypes.MakeTrusted(sqltypes.Int32, []byte("x"))); err == nil {
		t.Error("an INT of text x encoded")
	}
}
