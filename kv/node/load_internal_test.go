package node

import (
	"testing"
	"time"
)

// TestLoadRates: roll turns the counts since the last roll into rates
// per second and into the interval's counts a heartbeat reports, starts
// from nothing at the first roll, and forgets the regions the node no
// longer holds.
func TestLoadRates(t *testing.T) {
	var lt loadTable
	t0 := time.Unix(1000, 0)
	lt.read(1, 10, 100)
	lt.roll(t0, func(uint64) bool { return true })
	if _, r := lt.get(1); r != (Rates{}) {
		t.Fatalf("rates after the first roll: %+v, want none (no interval yet)", r)
	}
	if l := lt.report(1); l != nil {
		t.Fatalf("report after the first roll: %v, want none", l)
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
	l := lt.report(1)
	if l.GetReadKeys() != 20 || l.GetReadBytes() != 400 || l.GetWrittenKeys() != 4 || l.GetWrittenBytes() != 80 || l.GetIntervalMs() != 2000 {
		t.Errorf("region 1's report %v, want 20 keys and 400 bytes read, 4 and 80 written, over 2000 ms", l)
	}
	if s, r := lt.get(2); s != (loadSample{}) || r != (Rates{}) {
		t.Errorf("region 2, no longer held: %+v %+v, want forgotten", s, r)
	}
}
