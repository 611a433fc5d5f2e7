package tablemeta

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql/types"
)

// TestFloatScaleText round-trips the stored text of FLOAT(M,D) and
// DOUBLE(M,D) and checks that other types are not read as one.
func TestFloatScaleText(t *testing.T) {
	for _, s := range []FloatScale{{M: 7, D: 4}, {Double: true, M: 10, D: 2}, {M: 30, D: 0}, {Double: true, M: 255, D: 30}} {
		got, ok := ParseFloatScale(s.String())
		if !ok || got != s {
			t.Errorf("%s read back as %+v, %v", s, got, ok)
		}
		typ, err := parseType(s.String())
		if err != nil || typ != s.Base() {
			t.Errorf("parseType(%s) = %v, %v; want %v", s, typ, err, s.Base())
		}
	}
	if typ, _ := parseType("float(30,4)"); typ != types.Float32 {
		t.Errorf("float(30,4) is %v, want FLOAT (GMS's FLOAT(30) is a DOUBLE)", typ)
	}
	for _, s := range []string{"float", "double", "float(7)", "float(7,)", "decimal(7,4)", "float(a,b)"} {
		if _, ok := ParseFloatScale(s); ok {
			t.Errorf("%q read as a scaled float", s)
		}
	}
}

// TestFloatScaleRound rounds as MySQL stores FLOAT(M,D) values: to D
// decimals, half to even on the scaled value, out of range beyond M
// digits.
func TestFloatScaleRound(t *testing.T) {
	f74 := FloatScale{M: 7, D: 4}
	d52 := FloatScale{Double: true, M: 5, D: 2}
	for _, c := range []struct {
		s    FloatScale
		in   any
		want any
		ok   bool
	}{
		{f74, float32(3.14159), float32(3.1416), true},
		{f74, float32(-999.99994), float32(-999.9999), true},
		{d52, 999.996, 999.996, false}, // rounds to 1000.00
		{f74, float32(1000), float32(1000), false},
		{d52, 123.456, 123.46, true},
		{d52, 0.125, 0.12, true},
		{d52, -999.994, -999.99, true},
		{d52, 1000.0, 1000.0, false},
		{d52, "x", "x", true},
	} {
		got, ok := c.s.Round(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("%s of %v: %v, %v; want %v, %v", c.s, c.in, got, ok, c.want, c.ok)
		}
	}
}
