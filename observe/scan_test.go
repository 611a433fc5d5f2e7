package observe

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestRandomKeyBetween: random starts fall between the keys where
// notifications were seen, and spread over that range.
func TestRandomKeyBetween(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lo, hi := rowKey(docsTable, 1), rowKey(docsTable, 1000)
	var below, above int
	mid := rowKey(docsTable, 500)
	for range 1000 {
		k := randomKeyBetween(rng, lo, hi)
		if bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) > 0 {
			t.Fatalf("key %x outside [%x, %x]", k, lo, hi)
		}
		if bytes.Compare(k, mid) < 0 {
			below++
		} else {
			above++
		}
	}
	if below < 300 || above < 300 {
		t.Errorf("keys not spread: %d below the middle, %d above", below, above)
	}
	if k := randomKeyBetween(rng, lo, lo); !bytes.Equal(k, lo) {
		t.Errorf("an empty range gave %x", k)
	}
}
