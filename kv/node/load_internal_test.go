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

// TestLoadReports: each heartbeat reports, for the regions it leads, the
// counts since the previous heartbeat and the time since (the first
// reports none); a region whose counts began again (it left the node and
// came back) reports them from zero.
func TestLoadReports(t *testing.T) {
	var lt loadTable
	t0 := time.Unix(1000, 0)
	lt.read(1, 10, 100)
	if r := lt.reportLoads(t0, []uint64{1}); r != nil {
		t.Fatalf("first report: %v, want none", r)
	}
	lt.read(1, 20, 400)
	lt.write(1, 4, 80)
	lt.write(2, 2, 10)
	r := lt.reportLoads(t0.Add(1500*time.Millisecond), []uint64{1})
	if l := r[1]; l.GetReadKeys() != 20 || l.GetReadBytes() != 400 || l.GetWrittenKeys() != 4 || l.GetWrittenBytes() != 80 || l.GetIntervalMs() != 1500 ||
		l.GetEndUnixMs() != uint64(t0.Add(1500*time.Millisecond).UnixMilli()) {
		t.Errorf("region 1's report %v, want 20 keys and 400 bytes read, 4 and 80 written, over 1500 ms", l)
	}
	if _, ok := r[2]; ok || len(r) != 1 {
		t.Errorf("report %v, want region 1's only (2 is not led)", r)
	}
	// An early heartbeat (a leadership changed) reports its short
	// interval; the next one the rest, nothing twice.
	lt.write(1, 1, 10)
	if l := lt.reportLoads(t0.Add(1600*time.Millisecond), []uint64{1})[1]; l.GetWrittenKeys() != 1 || l.GetIntervalMs() != 100 {
		t.Errorf("early report %v, want 1 key written over 100 ms", l)
	}
	lt.roll(t0.Add(1700*time.Millisecond), func(id uint64) bool { return id != 1 })
	lt.write(1, 3, 30)
	if l := lt.reportLoads(t0.Add(2600*time.Millisecond), []uint64{1})[1]; l.GetWrittenKeys() != 3 || l.GetReadKeys() != 0 || l.GetIntervalMs() != 1000 {
		t.Errorf("report after region 1 came back %v, want its 3 keys written anew over 1000 ms", l)
	}
}
