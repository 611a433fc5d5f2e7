package node

import (
	"testing"
	"time"
)

// TestLoadRates: roll turns the counts since the last roll into rates
// per second, starts from nothing at the first roll, and forgets the
// regions the node no longer holds.
func TestLoadRates(t *testing.T) {
	var lt loadTable
	t0 := time.Unix(1000, 0)
	lt.read(1, 10, 100)
	lt.roll(t0, func(uint64) bool { return true })
	if _, r := lt.get(1); r != (Rates{}) {
		t.Fatalf("rates after the first roll: %+v, want none (no interval yet)", r)
	}
	lt.read(1, 20, 400)
	lt.write(1, 4, 80)
	lt.write(2, 2, 10)
	lt.roll(t0.Add(2*time.Second), func(id uint64) bool { return id == 1 })
	s, r := lt.get(1)
	if want := (Rates{ReadKeys: 10, ReadBytes: 200, WriteKeys: 2, WriteBytes: 40}); r != want {
		t.Errorf("region 1 rates %+v, want %+v", r, want)
	}
	if s.readKeys != 30 || s.writeKeys != 4 {
		t.Errorf("region 1 totals %+v, want 30 read, 4 written", s)
	}
	if s, r := lt.get(2); s != (loadSample{}) || r != (Rates{}) {
		t.Errorf("region 2, no longer held: %+v %+v, want forgotten", s, r)
	}
}
