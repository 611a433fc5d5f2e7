package compat

import (
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// TestFastDecimalComparisons holds that every comparison
// FastDecimalComparisons replaces answers what the comparison it
// replaces answers (GMS's conversions, the round trips and bounds checks
// included), for values on both sides of every fast-path condition:
// digits beyond the type's scale, values at and past a CAST's bounds,
// integers of every width, unsigned values past int64, and NULLs.
func TestFastDecimalComparisons(t *testing.T) {
	dec := func(s string) any { return decimal.RequireFromString(s) }
	values := []any{
		nil, dec("0"), dec("-0.00"), dec("1.5"), dec("1.50"), dec("1.505"), dec("1.504999"),
		dec("-10.00"), dec("9999999999.99"), dec("99999999999.99"), dec("-99999999999.995"),
		dec("123456789012345678901234567.89"), dec("1e30"), dec("1.5e-3"), dec("100e2"),
		int64(0), int64(2), int64(-3), int64(1 << 40), int8(-7), int16(300), int32(-70000), int(15),
		uint8(200), uint16(60000), uint32(4000000000), uint64(1 << 63), uint64(1<<63 - 1), uint64(12),
	}
	col := func(i int, typ gsql.Type) gsql.Expression {
		return expression.NewGetField(i, typ, fmt.Sprintf("c%d", i), true)
	}
	d122 := types.MustCreateColumnDecimalType(12, 2)
	d132 := types.MustCreateDecimalType(13, 2)
	cast := func(e gsql.Expression, p, s int) gsql.Expression {
		return expression.NewConvertWithLengthAndScale(e, expression.ConvertToDecimal, p, s)
	}
	type pair struct {
		name string
		l, r gsql.Expression
	}
	pairs := []pair{
		{"column type", col(0, d122), col(1, d122)},
		{"expression type", col(0, d132), col(1, d132)},
		{"casts to (28,3)", cast(col(0, d122), 28, 3), cast(col(1, types.Int64), 28, 3)},
		{"casts to (13,2)", cast(col(0, d132), 13, 2), cast(col(1, types.Uint64), 13, 2)},
		{"casts to (20,0)", cast(col(0, types.Int64), 20, 0), cast(col(1, types.Uint64), 20, 0)},
		{"casts to (65,30)", cast(col(0, d132), 65, 30), cast(col(1, d122), 65, 30)},
	}
	comparisons := []func(l, r gsql.Expression) gsql.Expression{
		func(l, r gsql.Expression) gsql.Expression { return expression.NewEquals(l, r) },
		func(l, r gsql.Expression) gsql.Expression { return expression.NewLessThan(l, r) },
		func(l, r gsql.Expression) gsql.Expression { return expression.NewLessThanOrEqual(l, r) },
		func(l, r gsql.Expression) gsql.Expression { return expression.NewGreaterThan(l, r) },
		func(l, r gsql.Expression) gsql.Expression { return expression.NewGreaterThanOrEqual(l, r) },
		func(l, r gsql.Expression) gsql.Expression { return expression.NewNot(expression.NewEquals(l, r)) },
	}
	ctx := gsql.NewEmptyContext()
	for _, p := range pairs {
		for _, newCmp := range comparisons {
			orig := newCmp(p.l, p.r)
			fast, ok := FastDecimalComparisons(orig)
			if !ok {
				t.Fatalf("%s: %s not replaced", p.name, orig)
			}
			if fast.String() != orig.String() {
				t.Errorf("%s: replaced %s prints as %s", p.name, orig, fast)
			}
			for _, a := range values {
				for _, b := range values {
					row := gsql.Row{a, b}
					want, wantErr := orig.Eval(ctx, row)
					got, gotErr := fast.Eval(ctx, row)
					if want != got || (wantErr == nil) != (gotErr == nil) {
						t.Errorf("%s: %s of %v (%T), %v (%T): got %v, %v; GMS %v, %v", p.name, orig, a, a, b, b, got, gotErr, want, wantErr)
					}
				}
			}
		}
	}
}

// TestFastDecimalComparisonsLeaves holds that comparisons outside the
// fast path's reach are left as they are: NULL-safe equality, DECIMALs
// of two types, a DECIMAL beside a DOUBLE, a CAST beside a column.
func TestFastDecimalComparisonsLeaves(t *testing.T) {
	col := func(i int, typ gsql.Type) gsql.Expression {
		return expression.NewGetField(i, typ, fmt.Sprintf("c%d", i), true)
	}
	d122 := types.MustCreateColumnDecimalType(12, 2)
	d132 := types.MustCreateDecimalType(13, 2)
	for _, e := range []gsql.Expression{
		expression.NewNullSafeEquals(col(0, d122), col(1, d122)),
		expression.NewEquals(col(0, d122), col(1, d132)),
		expression.NewEquals(col(0, d122), col(1, types.Float64)),
		expression.NewEquals(expression.NewConvertWithLengthAndScale(col(0, d132), expression.ConvertToDecimal, 12, 2), col(1, d122)),
	} {
		if got, ok := FastDecimalComparisons(e); ok {
			t.Errorf("%s replaced: %#v", e, got)
		}
	}
}

// TestFastDecimalMistyped holds that a DECIMAL compared with a column
// typed DOUBLE whose value is a DECIMAL (a derived table's SUM) is
// compared exactly, as MySQL compares its DECIMAL column, and any other
// value as GMS compares it.
func TestFastDecimalMistyped(t *testing.T) {
	dec := func(s string) any { return decimal.RequireFromString(s) }
	values := []any{
		nil, dec("12345678901234567.01"), dec("12345678901234567.02"), dec("1.5"), dec("-0.00"),
		float64(1.5), float64(12345678901234567.01), int64(2), dec("2"),
	}
	d302 := types.MustCreateColumnDecimalType(30, 2)
	sum := expression.NewGetField(0, d302, "a", true)
	mistyped := expression.NewGetField(1, types.Float64, "sm", true)
	toDouble := func(e gsql.Expression) gsql.Expression {
		return expression.NewConvert(e, expression.ConvertToDouble)
	}
	ctx := gsql.NewEmptyContext()
	for _, orig := range []gsql.Expression{
		expression.NewEquals(toDouble(sum), mistyped),
		expression.NewLessThan(toDouble(sum), mistyped),
		expression.NewGreaterThanOrEqual(mistyped, toDouble(sum)),
	} {
		fast, ok := FastDecimalComparisons(orig)
		if !ok {
			t.Fatalf("%s not replaced", orig)
		}
		want, _ := comparisonWant(orig)
		for _, a := range values {
			for _, b := range values {
				row := gsql.Row{a, b}
				got, err := fast.Eval(ctx, row)
				if err != nil {
					t.Fatal(err)
				}
				da, aDec := a.(decimal.Decimal)
				db, bDec := b.(decimal.Decimal)
				var expect any
				switch {
				case aDec && bDec:
					c := da.Cmp(db)
					if _, swapped := orig.(*expression.GreaterThanOrEqual); swapped {
						c = db.Cmp(da)
					}
					expect = want(c)
				default:
					expect, _ = orig.Eval(ctx, row)
				}
				if got != expect {
					t.Errorf("%s of %v (%T), %v (%T): got %v, want %v", orig, a, a, b, b, got, expect)
				}
			}
		}
	}
}
