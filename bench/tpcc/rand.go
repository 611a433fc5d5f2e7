package tpcc

import (
	"math/rand"
	"strconv"
	"strings"
)

// Rand draws the random values of clause 2.1 and 4.3.2 from a seeded
// source. One Rand belongs to one goroutine.
type Rand struct {
	r *rand.Rand
	c Constants
}

// Constants are the run-time constants C of NURand (clause 2.1.6). The
// loader and the workers must use values that satisfy clause 2.1.6.1 for
// C_LAST; NewConstants picks such a pair.
type Constants struct {
	// LastLoad is C for C_LAST during the load, LastRun during the run.
	LastLoad, LastRun int
	// CID is C for customer numbers, OLIID for item numbers.
	CID, OLIID int
}

// NewConstants draws the constants from seed: C_LAST's run value differs
// from its load value by 65..119, not 96 or 112 (clause 2.1.6.1).
func NewConstants(seed int64) Constants {
	r := rand.New(rand.NewSource(seed))
	c := Constants{LastLoad: r.Intn(256), CID: r.Intn(1024), OLIID: r.Intn(8192)}
	for {
		delta := 65 + r.Intn(55)
		if delta == 96 || delta == 112 {
			continue
		}
		c.LastRun = (c.LastLoad + delta) % 256
		return c
	}
}

// NewRand returns a Rand on seed with the constants c.
func NewRand(seed int64, c Constants) *Rand {
	return &Rand{r: rand.New(rand.NewSource(seed)), c: c}
}

// Int returns a uniform integer in [lo, hi].
func (r *Rand) Int(lo, hi int) int { return lo + r.r.Intn(hi-lo+1) }

// NURand is the non-uniform random function of clause 2.1.6 with constant
// c: (((random(0, a) | random(x, y)) + c) % (y - x + 1)) + x.
func (r *Rand) NURand(a, c, x, y int) int {
	return (((r.Int(0, a) | r.Int(x, y)) + c) % (y - x + 1)) + x
}

// CustomerID draws a customer number of a district with n customers.
func (r *Rand) CustomerID(n int) int { return r.NURand(1023, r.c.CID, 1, n) }

// ItemID draws an item number among n items.
func (r *Rand) ItemID(n int) int { return r.NURand(8191, r.c.OLIID, 1, n) }

// LastNameRun draws a customer last name for a transaction, among the
// names a district of n customers has (all 1,000 at the standard scale).
func (r *Rand) LastNameRun(n int) string {
	return LastName(r.NURand(255, r.c.LastRun, 0, min(999, n-1)))
}

// lastNameLoad draws the last name of customer cid at load time (clause
// 4.3.3.1): the first 1,000 customers take the names 0..999 in order, the
// others a NURand one.
func (r *Rand) lastNameLoad(cid, n int) string {
	if cid <= 1000 {
		return LastName(cid - 1)
	}
	return LastName(r.NURand(255, r.c.LastLoad, 0, min(999, n-1)))
}

// syllables make up C_LAST (clause 4.3.2.3).
var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// LastName returns the C_LAST of number n in [0, 999]: the syllables of its
// three decimal digits.
func LastName(n int) string {
	return syllables[n/100] + syllables[n/10%10] + syllables[n%10]
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// AString returns a random alphanumeric string of length in [lo, hi]
// (clause 4.3.2.2).
func (r *Rand) AString(lo, hi int) string {
	b := make([]byte, r.Int(lo, hi))
	for i := range b {
		b[i] = alnum[r.r.Intn(len(alnum))]
	}
	return string(b)
}

// NString returns a random numeric string of length in [lo, hi].
func (r *Rand) NString(lo, hi int) string {
	b := make([]byte, r.Int(lo, hi))
	for i := range b {
		b[i] = byte('0' + r.r.Intn(10))
	}
	return string(b)
}

// data returns I_DATA or S_DATA: 26..50 characters, 10% of them with
// "ORIGINAL" at a random position (clause 4.3.3.1).
func (r *Rand) data() string {
	s := r.AString(26, 50)
	if r.Int(1, 10) == 1 {
		at := r.Int(0, len(s)-8)
		s = s[:at] + "ORIGINAL" + s[at+8:]
	}
	return s
}

// zip returns a zip code: 4 random digits and "11111".
func (r *Rand) zip() string { return r.NString(4, 4) + "11111" }

// Fixed returns a random decimal in [lo, hi] with the given number of
// decimals, as text (clause 4.3.2.2's "random within [x .. y]" for
// fixed-point values), drawn uniformly over its units.
func (r *Rand) Fixed(lo, hi float64, decimals int) string {
	scale := 1
	for range decimals {
		scale *= 10
	}
	units := r.Int(int(lo*float64(scale)+0.5), int(hi*float64(scale)+0.5))
	return formatUnits(units, decimals)
}

// formatUnits renders units/10^decimals with exactly decimals digits.
func formatUnits(units, decimals int) string {
	neg := units < 0
	if neg {
		units = -units
	}
	s := strconv.Itoa(units)
	if len(s) <= decimals {
		s = strings.Repeat("0", decimals-len(s)+1) + s
	}
	if decimals > 0 {
		s = s[:len(s)-decimals] + "." + s[len(s)-decimals:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
