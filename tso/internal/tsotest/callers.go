package tsotest

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// GetRange asks for timestamps on behalf of caller (0 to callers-1) and
// returns the last of count consecutive ones it was granted.
type GetRange func(ctx context.Context, caller int) (last uint64, count uint32, err error)

// Callers runs callers goroutines that each call get rounds times, and
// returns every caller's timestamps in the order it received them.
func Callers(t testing.TB, callers, rounds int, get GetRange) [][]uint64 {
	t.Helper()
	per := make([][]uint64, callers)
	var wg sync.WaitGroup
	for w := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				last, count, err := get(context.Background(), w)
				if err != nil {
					t.Error(err)
					return
				}
				for ts := last - uint64(count) + 1; ts <= last; ts++ {
					per[w] = append(per[w], ts)
				}
			}
		}()
	}
	wg.Wait()
	return per
}

// CheckIssued fails t unless each caller's timestamps strictly rise and no
// timestamp went to two callers (or twice to one). It returns them all,
// sorted.
func CheckIssued(t testing.TB, per [][]uint64) []uint64 {
	t.Helper()
	var all []uint64
	for w, got := range per {
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("caller %d: timestamp %d after %d", w, got[i], got[i-1])
			}
		}
		all = append(all, got...)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("timestamp %d issued twice", all[i])
		}
	}
	return all
}
