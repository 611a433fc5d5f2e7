package tablemeta

import (
	"context"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// TestTimeTypeRoundTrip: a TIME(n) column's type is stored as time(n)
// (time(0) too, since "time" reads back as GMS's six-digit TIME) and read
// back as the same type; TIME(6) is GMS's own.
func TestTimeTypeRoundTrip(t *testing.T) {
	for n := 0; n <= 6; n++ {
		typ, err := NewTimeType(n)
		if err != nil {
			t.Fatal(err)
		}
		back, err := parseType(typeString(typ))
		if err != nil {
			t.Fatalf("time(%d): %v", n, err)
		}
		if !back.Equals(typ) || !typ.Equals(back) {
			t.Errorf("time(%d) stored as %q reads back as %s", n, typeString(typ), back)
		}
	}
	if typ, _ := NewTimeType(6); typ != types.Time {
		t.Errorf("TIME(6) is %T, want GMS's TIME", typ)
	}
	if _, err := NewTimeType(7); err == nil {
		t.Error("TIME(7) accepted")
	}
}

// TestTimeTypeValues: values are rounded to the column's digits, half
// away from zero, as MySQL rounds them, and written with exactly those
// digits.
func TestTimeTypeValues(t *testing.T) {
	ctx := gsql.NewEmptyContext()
	for _, c := range []struct {
		fsp     int
		in, out string
	}{
		{0, "12:00:00.5", "12:00:01"},
		{0, "12:00:00.4999", "12:00:00"},
		{0, "-00:00:00.5", "-00:00:01"},
		{3, "-01:02:03.4567", "-01:02:03.457"},
		{3, "01:02:03", "01:02:03.000"},
		{3, "838:59:59.9999", "838:59:59.000"},
		{2, "23:59:59.995", "24:00:00.00"},
		{5, "00:00:00.000001", "00:00:00.00000"},
		{1, "100:00:00.06", "100:00:00.1"},
		{3, "2020-01-02 03:04:05.6789", "03:04:05.679"},
	} {
		typ, _ := NewTimeType(c.fsp)
		v, _, err := typ.Convert(context.Background(), c.in)
		if err != nil {
			t.Fatalf("time(%d) %s: %v", c.fsp, c.in, err)
		}
		sqlv, err := typ.SQL(ctx, nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if got := sqlv.ToString(); got != c.out {
			t.Errorf("time(%d) %s: %s, want %s", c.fsp, c.in, got, c.out)
		}
	}
}
