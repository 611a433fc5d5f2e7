package tpcc

import "testing"

func TestConstants(t *testing.T) {
	for seed := range int64(2000) {
		c := NewConstants(seed)
		delta := (c.LastRun - c.LastLoad + 256) % 256
		if delta < 65 || delta > 119 || delta == 96 || delta == 112 {
			t.Fatalf("seed %d: C_LAST load %d, run %d: delta %d breaks clause 2.1.6.1", seed, c.LastLoad, c.LastRun, delta)
		}
	}
}

func TestLastName(t *testing.T) {
	for n, want := range map[int]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING"} {
		if got := LastName(n); got != want {
			t.Errorf("LastName(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestRandRanges(t *testing.T) {
	r := NewRand(1, NewConstants(1))
	for range 10000 {
		if id := r.ItemID(100000); id < 1 || id > 100000 {
			t.Fatalf("item id %d", id)
		}
		if id := r.CustomerID(30); id < 1 || id > 30 {
			t.Fatalf("customer id %d of 30", id)
		}
		if s := r.AString(26, 50); len(s) < 26 || len(s) > 50 {
			t.Fatalf("a-string of %d characters", len(s))
		}
	}
	mix := map[TxnType]int{}
	for range 100000 {
		mix[r.pick()]++
	}
	for ty, p := range mixPercent {
		if got := mix[TxnType(ty)] / 1000; got < p-1 || got > p+1 {
			t.Errorf("%s: %d%% of the mix, want %d%%", TxnType(ty), got, p)
		}
	}
}

func TestDecimals(t *testing.T) {
	for units, want := range map[int]string{0: "0.00", 5: "0.05", -1000: "-10.00", 300000000: "3000000.00"} {
		if got := formatUnits(units, 2); got != want {
			t.Errorf("formatUnits(%d, 2) = %s, want %s", units, got, want)
		}
	}
	for s, want := range map[string]int{"12.34": 1234, "-10.00": -1000, "7.5": 750, "3": 300} {
		if got, err := cents(s); err != nil || got != want {
			t.Errorf("cents(%s) = %d, %v; want %d", s, got, err, want)
		}
	}
}
