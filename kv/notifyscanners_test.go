package kv

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestScannersTrailing: a scanner trails another when the other's
// position (where it reads next) lies in (start, end] of the page it just
// read; its own position and expired ones do not count.
func TestScannersTrailing(t *testing.T) {
	now := time.Unix(1000, 0)
	a, b, c, d := []byte("a"), []byte("b"), []byte("c"), []byte("d")
	s := newScanners(DefaultScannerLease)
	s.page(1, a, b, nil, now)
	s.page(2, c, d, nil, now)
	check := func(scanner uint64, start, end []byte, want bool, at time.Time) {
		t.Helper()
		if _, _, got := s.page(scanner, start, end, nil, at); got != want {
			t.Errorf("scanner %d page (%q, %q] at %v: trailing %v, want %v", scanner, start, end, at.Sub(now), got, want)
		}
	}
	check(3, nil, a, false, now)                                         // 1 is at b, 2 at d
	check(3, a, b, true, now)                                            // 1 at b, the page's end
	check(3, b, c, false, now)                                           // 3 at c now; 1 at b is not after b
	check(1, b, d, true, now)                                            // 2 at d (3 at c too)
	check(4, d, nil, false, now)                                         // 1 and 2 at d: not after d; the end of the key space is no position
	check(5, c, d, true, now)                                            // 1 and 2 at d
	check(6, c, d, false, now.Add(DefaultScannerLease+time.Millisecond)) // everyone else's lease ran out
}

// TestScannersClaims: entries a live scanner was handed are left out of
// another scanner's pages until the claim is released or its lease ends;
// the scanner holding them gets them again; claims stop at maxClaims.
func TestScannersClaims(t *testing.T) {
	s := newScanners(DefaultScannerLease)
	now := time.Unix(1000, 0)
	keys := [][]byte{[]byte("n1"), []byte("n2"), []byte("n3")}
	kept := func(keep []bool) []string {
		var out []string
		for i, k := range keep {
			if k {
				out = append(out, string(keys[i]))
			}
		}
		return out
	}
	keep, skipped, _ := s.page(1, nil, nil, keys[:2], now)
	if got := kept(keep); !slices.Equal(got, []string{"n1", "n2"}) || skipped != 0 {
		t.Fatalf("first page: kept %v, skipped %d", got, skipped)
	}
	keep, skipped, _ = s.page(2, nil, nil, keys, now)
	if got := kept(keep); !slices.Equal(got, []string{"n3"}) || skipped != 2 {
		t.Fatalf("second scanner: kept %v, skipped %d, want [n3] and 2", got, skipped)
	}
	keep, skipped, _ = s.page(1, nil, nil, keys, now)
	if got := kept(keep); !slices.Equal(got, []string{"n1", "n2"}) || skipped != 1 {
		t.Fatalf("first scanner again: kept %v, skipped %d, want [n1 n2] and 1", got, skipped)
	}
	s.release(keys[:1])
	keep, _, _ = s.page(2, nil, nil, keys, now)
	if got := kept(keep); !slices.Equal(got, []string{"n1", "n3"}) {
		t.Fatalf("after n1's release: kept %v, want [n1 n3]", got)
	}
	keep, _, _ = s.page(3, nil, nil, keys, now.Add(DefaultScannerLease+time.Millisecond))
	if got := kept(keep); !slices.Equal(got, []string{"n1", "n2", "n3"}) {
		t.Fatalf("after the leases: kept %v, want all", got)
	}

	// A full table hands entries out unclaimed.
	s = newScanners(DefaultScannerLease)
	for i := range maxClaims {
		s.claims[fmt.Sprint(i)] = claim{scanner: 9, expires: now.Add(time.Hour)}
	}
	s.page(1, nil, nil, keys, now)
	if keep, _, _ := s.page(2, nil, nil, keys, now); len(kept(keep)) != 3 || len(s.claims) != maxClaims {
		t.Fatalf("full claims: kept %v, %d claims", kept(keep), len(s.claims))
	}
}
