package stmtsummary

import (
	"math"
	"testing"
	"time"
)

func obs(latency time.Duration, at int64, q string) *Observation {
	return &Observation{DigestText: "select ?", Query: q, Latency: latency, RowsSent: 1, RowsExamined: 2, End: time.Unix(at, 0)}
}

func TestRecordAggregates(t *testing.T) {
	s := New(10)
	k := Key{Schema: "db", Digest: "d1"}
	s.Record(k, obs(3*time.Millisecond, 100, "select 1"))
	s.Record(k, obs(1*time.Millisecond, 101, "select 2"))
	o := obs(2*time.Millisecond, 99, "select 3")
	o.Error = true
	s.Record(k, o)
	s.Record(Key{Schema: "db", Digest: "d0"}, obs(time.Millisecond, 100, "x"))

	rows := s.Rows()
	if len(rows) != 2 || rows[0].Digest != "d0" || rows[1].Digest != "d1" {
		t.Fatalf("rows = %+v", rows)
	}
	r := rows[1]
	if r.Count != 3 || r.SumLatency != 6*time.Millisecond || r.MinLatency != time.Millisecond ||
		r.MaxLatency != 3*time.Millisecond || r.AvgLatency() != 2*time.Millisecond {
		t.Errorf("latencies: %+v", r)
	}
	if r.RowsSent != 3 || r.RowsExamined != 6 || r.Errors != 1 {
		t.Errorf("counts: %+v", r)
	}
	if r.FirstSeen != time.Unix(100, 0) || r.LastSeen != time.Unix(101, 0) {
		t.Errorf("seen %v .. %v", r.FirstSeen, r.LastSeen)
	}
	if r.Sample != "select 1" || r.SampleLatency != 3*time.Millisecond {
		t.Errorf("sample %q %v", r.Sample, r.SampleLatency)
	}
}

func TestOverflowAndReset(t *testing.T) {
	s := New(2)
	for i, d := range []string{"a", "b", "c", "d", "a"} {
		s.Record(Key{Digest: d}, obs(time.Millisecond, int64(i), d))
	}
	rows := s.Rows()
	if len(rows) != 3 {
		t.Fatalf("rows = %+v", rows)
	}
	if rows[0].Digest != "a" || rows[0].Count != 2 || rows[1].Digest != "b" || rows[1].Count != 1 {
		t.Errorf("held rows: %+v", rows[:2])
	}
	of := rows[2]
	if !of.Overflow || of.Count != 2 || of.Digest != "" || of.DigestText != "" || of.Sample != "" {
		t.Errorf("overflow row: %+v", of)
	}
	s.Reset()
	if rows := s.Rows(); len(rows) != 0 {
		t.Errorf("after Reset: %+v", rows)
	}
	s.Record(Key{Digest: "c"}, obs(time.Millisecond, 9, "c"))
	if rows := s.Rows(); len(rows) != 1 || rows[0].Digest != "c" {
		t.Errorf("after Reset and Record: %+v", rows)
	}
}

func TestQuantiles(t *testing.T) {
	s := New(1)
	k := Key{Digest: "q"}
	// 98 statements of 100 µs, one of 10 ms, one of 1 s.
	for i := 0; i < 98; i++ {
		s.Record(k, obs(100*time.Microsecond, 1, ""))
	}
	s.Record(k, obs(10*time.Millisecond, 1, ""))
	s.Record(k, obs(time.Second, 1, ""))
	r := s.Rows()[0]
	within := func(name string, got, want time.Duration) {
		t.Helper()
		// A bucket's bound is at most 2^(1/4) above what it holds.
		if got < want || float64(got) > float64(want)*1.19 {
			t.Errorf("%s = %v, want %v to 19%% above", name, got, want)
		}
	}
	within("P95", r.P95, 100*time.Microsecond)
	within("P99", r.P99, 10*time.Millisecond)
	if r.P999 != time.Second {
		t.Errorf("P999 = %v, want the maximum, 1s", r.P999)
	}
}

// TestBuckets checks that a latency goes to the first bucket whose
// bound is at or above it: for latencies on, around and between every
// bound, and for some far beyond the last.
func TestBuckets(t *testing.T) {
	ds := []time.Duration{0, time.Microsecond, 1500 * time.Nanosecond, time.Millisecond, 3 * time.Second, 1000 * time.Hour, math.MaxInt64}
	for i := 0; i < numBuckets; i++ {
		b := bucketBound(i)
		ds = append(ds, b-1, b, b+1, b+b/10)
	}
	for _, d := range ds {
		i := bucketOf(d)
		if i < 0 || i >= numBuckets {
			t.Fatalf("bucketOf(%v) = %d", d, i)
		}
		if i < numBuckets-1 && bucketBound(i) < d {
			t.Errorf("bucketOf(%v) = %d with bound %v below it", d, i, bucketBound(i))
		}
		if i > 0 && bucketBound(i-1) >= d {
			t.Errorf("bucketOf(%v) = %d but bucket %d (bound %v) holds it", d, i, i-1, bucketBound(i-1))
		}
	}
}

// TestSlot checks recording through a Slot: it counts in the same row as
// Record; a row emptied by Reset is made again rather than counted in
// the forgotten one; another key is counted under that key; and a key
// past the bound goes to the overflow row and is retried afterwards.
func TestSlot(t *testing.T) {
	s := New(2)
	k1, k2 := Key{Schema: "db", Digest: "d1"}, Key{Schema: "other", Digest: "d1"}
	var slot Slot
	s.RecordSlot(&slot, k1, obs(time.Millisecond, 100, "a"))
	s.Record(k1, obs(time.Millisecond, 101, "b"))
	s.RecordSlot(&slot, k1, obs(time.Millisecond, 102, "c"))
	if rows := s.Rows(); len(rows) != 1 || rows[0].Count != 3 {
		t.Fatalf("after three statements of one key: %+v", rows)
	}
	s.Reset()
	s.RecordSlot(&slot, k1, obs(time.Millisecond, 103, "d"))
	if rows := s.Rows(); len(rows) != 1 || rows[0].Count != 1 || rows[0].FirstSeen != time.Unix(103, 0) {
		t.Fatalf("after a reset: %+v", rows)
	}
	s.RecordSlot(&slot, k2, obs(time.Millisecond, 104, "e"))
	rows := s.Rows()
	if len(rows) != 2 || rows[0].Key != k1 || rows[0].Count != 1 || rows[1].Key != k2 || rows[1].Count != 1 {
		t.Fatalf("after another key: %+v", rows)
	}
	k3 := Key{Schema: "db", Digest: "d3"}
	var full Slot
	s.RecordSlot(&full, k3, obs(time.Millisecond, 105, "f"))
	if rows := s.Rows(); len(rows) != 3 || !rows[2].Overflow || rows[2].Count != 1 {
		t.Fatalf("past the bound: %+v", rows)
	}
	s.Reset()
	s.RecordSlot(&full, k3, obs(time.Millisecond, 106, "g"))
	if rows := s.Rows(); len(rows) != 1 || rows[0].Key != k3 || rows[0].Count != 1 {
		t.Fatalf("a key that overflowed, after a reset: %+v", rows)
	}
}
