package sql

import (
	"testing"

	"github.com/dolthub/vitess/go/sqltypes"
)

func TestPadFraction(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"2024-02-03 04:05:06", 6, "2024-02-03 04:05:06.000000"},
		{"2024-02-03 04:05:06.5", 6, "2024-02-03 04:05:06.500000"},
		{"2024-02-03 04:05:06.5", 3, "2024-02-03 04:05:06.500"},
		{"2024-02-03 04:05:06.123456", 6, "2024-02-03 04:05:06.123456"},
		{"0000-00-00 00:00:00", 2, "0000-00-00 00:00:00.00"},
		{"2024-02-03", 6, "2024-02-03"}, // not a DATETIME: left alone
	} {
		got, _ := padFraction([]byte(c.in), c.n)
		if string(got) != c.want {
			t.Errorf("padFraction(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestIsZeroDate(t *testing.T) {
	for _, c := range []struct {
		v    sqltypes.Value
		want bool
	}{
		{sqltypes.MakeTrusted(sqltypes.Date, []byte("0000-00-00")), true},
		{sqltypes.MakeTrusted(sqltypes.Datetime, []byte("0000-00-00 00:00:00.000000")), true},
		{sqltypes.MakeTrusted(sqltypes.Timestamp, []byte("0000-00-00 00:00:00")), true},
		{sqltypes.MakeTrusted(sqltypes.Date, []byte("2000-00-00")), false},
		{sqltypes.MakeTrusted(sqltypes.Datetime, []byte("0000-00-00 00:00:01")), false},
		{sqltypes.MakeTrusted(sqltypes.VarChar, []byte("0000-00-00")), false},
		{sqltypes.NULL, false},
	} {
		if got := isZeroDate(c.v); got != c.want {
			t.Errorf("isZeroDate(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}
