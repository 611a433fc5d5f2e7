package copr

import (
	"math"
	"math/rand"
	"testing"

	"github.com/shopspring/decimal"
)

// TestSlotDecimalSum checks that a sum slot fed DECIMALs unboxed
// (addDecimal), integers and NULLs in any mix, with exponents that differ
// and coefficients near the int64 bounds (the sum spills into a
// decimal), holds the exact sum decimal arithmetic gives.
func TestSlotDecimalSum(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	coefs := []int64{0, 1, -1, 5, -250, 12345, math.MaxInt64, math.MinInt64 + 1, math.MaxInt64 / 7, -math.MaxInt64 / 3}
	for round := 0; round < 2000; round++ {
		var s slot
		want := decimal.Zero
		any := false
		for i := 0; i < 1+r.Intn(12); i++ {
			switch r.Intn(4) {
			case 0:
				v := int64(r.Intn(2000) - 1000)
				if !s.addNum(AggSum, numOf(v)) {
					s.add(AggSum, v)
				}
				want, any = want.Add(decimal.NewFromInt(v)), true
			case 1:
				s.add(AggSum, nil)
			default:
				c := coefs[r.Intn(len(coefs))]
				if r.Intn(2) == 0 {
					c = r.Int63n(1_000_000) - 500_000
				}
				exp := int32(r.Intn(7) - 4)
				d := decimal.New(c, exp)
				if !s.addDecimal(c, exp) {
					s.add(AggSum, d)
				}
				want, any = want.Add(d), true
			}
		}
		got := s.value(AggSum)
		if !any {
			if got != nil {
				t.Fatalf("round %d: %v over no values, want NULL", round, got)
			}
			continue
		}
		if !exactDecimal(got).Equal(want) {
			t.Fatalf("round %d: sum %v, want %v", round, got, want)
		}
	}
}
