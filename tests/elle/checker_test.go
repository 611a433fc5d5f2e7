package elle

import (
	"bytes"
	"strings"
	"testing"
)

// ok returns a committed transaction that ran concurrently with every other
// one built this way (same invocation and completion times), so that no
// real-time edge links them.
func ok(ops ...MicroOp) Txn { return Txn{Status: OK, Invoke: 0, Complete: 100, Ops: ops} }

// at returns a committed transaction that ran from invoke to complete.
func at(invoke, complete int64, ops ...MicroOp) Txn {
	return Txn{Status: OK, Invoke: invoke, Complete: complete, Ops: ops}
}

func failed(ops ...MicroOp) Txn {
	return Txn{Status: Fail, Invoke: 0, Complete: 100, Ops: ops, Err: "Error 1213"}
}

func info(ops ...MicroOp) Txn {
	return Txn{Status: Info, Invoke: 0, Complete: 100, Ops: ops, Err: "invalid connection"}
}

func ap(k, v int) MicroOp       { return AppendOp(k, v) }
func r(k int, l ...int) MicroOp { return ReadOp(k, append([]int{}, l...)) }

func check(t *testing.T, h []Txn, opts CheckOptions) *Result {
	t.Helper()
	res, err := Check(h, opts)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	var b bytes.Buffer
	if err := res.WriteReport(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", b.String())
	return res
}

// wantOnly asserts that the result has exactly the given anomalies, each
// found at least once.
func wantOnly(t *testing.T, res *Result, want ...Anomaly) {
	t.Helper()
	wanted := make(map[Anomaly]bool)
	for _, a := range want {
		wanted[a] = true
		if res.Counts[a] == 0 {
			t.Errorf("anomaly %s not found; found %v", a, res.Counts)
		}
	}
	for a, n := range res.Counts {
		if n > 0 && !wanted[a] {
			t.Errorf("unexpected anomaly %s (%d): %v", a, n, res.Examples[a])
		}
	}
	valid := true
	for _, a := range want {
		valid = valid && res.allowed(a)
	}
	if res.Valid() != valid {
		t.Errorf("Valid() = %v, want %v", res.Valid(), valid)
	}
}

func TestValidHistory(t *testing.T) {
	h := []Txn{
		at(0, 10, ap(1, 1), ap(2, 1)),
		at(20, 30, r(1, 1), ap(1, 2), r(1, 1, 2)),
		at(20, 30, r(2, 1), ap(3, 1)),
		at(40, 50, r(1, 1, 2), r(2, 1), r(3, 1)),
		// Concurrent with T1 and T2: may see T1 and not T2.
		at(25, 55, r(1, 1, 2), r(3)),
		at(60, 70, r(4), ap(4, 1)),
		failed(ap(4, 2)),
		info(ap(5, 1)), // never read: may or may not have committed
	}
	res := check(t, h, CheckOptions{})
	wantOnly(t, res)
	if res.Checked != 6 {
		t.Errorf("Checked = %d, want the 6 committed transactions", res.Checked)
	}
	if res.Edges["rt"] == 0 || res.Edges["wr"] == 0 || res.Edges["ww"] == 0 || res.Edges["rw"] == 0 {
		t.Errorf("edges %v: every kind should occur in this history", res.Edges)
	}
}

// TestAnomalyClasses checks one hand-built history per anomaly class: the
// checker must find that class and nothing else, and name the expected
// cycle first.
func TestAnomalyClasses(t *testing.T) {
	cases := []struct {
		name  string
		h     []Txn
		want  []Anomaly
		cycle string // prefix of the first example, when set
	}{
		{
			// T0 and T1 append to keys 1 and 2 in opposite orders.
			name: "G0",
			h: []Txn{
				ok(ap(1, 1), ap(2, 2)),
				ok(ap(1, 3), ap(2, 4)),
				ok(r(1, 1, 3), r(2, 4, 2)),
			},
			want:  []Anomaly{G0},
			cycle: "T0 -ww-> T1 -ww-> T0",
		},
		{
			// T1's outcome is unknown, but T2 read its appends: it
			// committed, and takes part in the cycle.
			name: "G0 through an info transaction",
			h: []Txn{
				ok(ap(1, 1), ap(2, 2)),
				info(ap(1, 3), ap(2, 4)),
				ok(r(1, 1, 3), r(2, 4, 2)),
			},
			want:  []Anomaly{G0},
			cycle: "T0 -ww-> T1 -ww-> T0",
		},
		{
			name: "G1a",
			h: []Txn{
				failed(ap(1, 1)),
				ok(r(1, 1)),
			},
			want: []Anomaly{G1a},
		},
		{
			// T1 saw T0's first append but not its second, which is also
			// a cycle with one anti-dependency: T0 -wr-> T1 -rw-> T0.
			name: "G1b",
			h: []Txn{
				ok(ap(1, 1), ap(1, 2)),
				ok(r(1, 1)),
				ok(r(1, 1, 2)),
			},
			want: []Anomaly{G1b, GSingle},
		},
		{
			// Each transaction read the other's append.
			name: "G1c",
			h: []Txn{
				ok(ap(1, 1), r(2, 2)),
				ok(ap(2, 2), r(1, 1)),
			},
			want:  []Anomaly{G1c},
			cycle: "T0 -wr-> T1 -wr-> T0",
		},
		{
			// T1 saw T0's append to key 2 but not its append to key 1.
			name: "G-single read skew",
			h: []Txn{
				ok(ap(1, 1), ap(2, 1)),
				ok(r(1), r(2, 1)),
				ok(r(1, 1)),
			},
			want:  []Anomaly{GSingle},
			cycle: "T1 -rw-> T0 -wr-> T1",
		},
		{
			// Both read the empty list and appended: the second committer
			// should have been refused (P4, first committer wins).
			name: "G-single lost update",
			h: []Txn{
				ok(r(1), ap(1, 1)),
				ok(r(1), ap(1, 2)),
				ok(r(1, 1, 2)),
			},
			want:  []Anomaly{GSingle},
			cycle: "T1 -rw-> T0 -ww-> T1",
		},
		{
			// The way back from the rw edge crosses components of the
			// ww/wr subgraph.
			name: "G-single long cycle",
			h: []Txn{
				ok(r(1), r(3, 1)),
				ok(ap(1, 1), ap(2, 1)),
				ok(ap(2, 2), ap(3, 1)),
				ok(r(1, 1), r(2, 1, 2)),
			},
			want:  []Anomaly{GSingle},
			cycle: "T0 -rw-> T1 -ww-> T2 -wr-> T0",
		},
		{
			// Write skew: each read both keys empty and appended to a
			// different one. Allowed: the result stays valid.
			name: "G2-item",
			h: []Txn{
				ok(r(1), r(2), ap(1, 1)),
				ok(r(1), r(2), ap(2, 1)),
				ok(r(1, 1), r(2, 1)),
			},
			want:  []Anomaly{G2Item},
			cycle: "T0 -rw-> T1 -rw-> T0",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := check(t, tc.h, CheckOptions{})
			wantOnly(t, res, tc.want...)
			// The same anomalies at READ COMMITTED, where G-single
			// is allowed.
			wantOnly(t, check(t, tc.h, CheckOptions{ReadCommitted: true}), tc.want...)
			if tc.cycle == "" {
				return
			}
			if ex := res.Examples[tc.want[0]]; len(ex) != 1 || !strings.HasPrefix(ex[0], tc.cycle) {
				t.Errorf("examples %q, want one, the cycle %s", ex, tc.cycle)
			}
		})
	}
}

func TestRealTime(t *testing.T) {
	cases := []struct {
		name string
		h    []Txn
		want Anomaly
	}{
		{
			// T1 began after T0 committed, yet did not see it.
			name: "stale read",
			h: []Txn{
				at(0, 10, ap(1, 1)),
				at(20, 30, r(1)),
				at(40, 50, r(1, 1)),
			},
			want: GSingleRealTime,
		},
		{
			// T1 began after T0 committed, yet its version comes first.
			name: "write ordered before an earlier commit",
			h: []Txn{
				at(0, 10, ap(1, 1)),
				at(20, 30, ap(1, 2)),
				at(40, 50, r(1, 2, 1)),
			},
			want: G0RealTime,
		},
		{
			// T0 completed before T1 began, yet read T1's append.
			name: "read from the future",
			h: []Txn{
				at(0, 10, r(1, 1)),
				at(20, 30, ap(1, 1)),
			},
			want: G1cRealTime,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantOnly(t, check(t, tc.h, CheckOptions{}), tc.want)
			// Without real-time edges the same history is fine.
			wantOnly(t, check(t, tc.h, CheckOptions{SkipRealTime: true}))
		})
	}
}

// TestReadAnomalies covers the anomalies found in single reads rather than
// in cycles.
func TestReadAnomalies(t *testing.T) {
	cases := []struct {
		name string
		h    []Txn
		want Anomaly
	}{
		{
			name: "own append missing",
			h:    []Txn{ok(ap(1, 5), r(1))},
			want: Internal,
		},
		{
			name: "second read is not the first plus own appends",
			h: []Txn{
				ok(ap(1, 1)),
				ok(ap(1, 3)),
				ok(r(1, 1), ap(1, 7), r(1, 1, 3, 7)),
			},
			want: Internal,
		},
		{
			name: "duplicate elements",
			h:    []Txn{ok(ap(1, 1)), ok(r(1, 1, 1))},
			want: DuplicateElements,
		},
		{
			name: "garbage read",
			h:    []Txn{ok(ap(1, 1)), ok(r(1, 1, 99))},
			want: GarbageRead,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := check(t, tc.h, CheckOptions{})
			if res.Counts[tc.want] != 1 || res.Valid() {
				t.Errorf("want one %s and an invalid result, got %v", tc.want, res.Counts)
			}
		})
	}
}

func TestIncompatibleOrder(t *testing.T) {
	h := []Txn{
		ok(ap(1, 1)),
		ok(ap(1, 2)),
		ok(ap(1, 3)),
		ok(r(1, 1, 2)),
		ok(r(1, 1, 3)),
	}
	wantOnly(t, check(t, h, CheckOptions{}), IncompatibleOrder)
}

func TestMalformedHistory(t *testing.T) {
	cases := map[string][]Txn{
		"element appended twice": {ok(ap(1, 1)), ok(ap(1, 1))},
		"unknown status":         {{Status: 9, Ops: []MicroOp{ap(1, 1)}}},
		"unknown kind":           {ok(MicroOp{Kind: 7, Key: 1})},
		"committed read with no result": {
			ok(ReadOp(1, nil)),
		},
	}
	for name, h := range cases {
		if _, err := Check(h, CheckOptions{}); err == nil {
			t.Errorf("%s: Check returned no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

func TestHistoryRoundTrip(t *testing.T) {
	h := []Txn{
		at(1, 2, ap(1, 1), r(1, 1), r(2)),
		{Process: 3, Status: Fail, Invoke: 5, Complete: 6, Ops: []MicroOp{ap(2, 1), ReadOp(2, nil)}, Err: "Error 1213"},
	}
	var b bytes.Buffer
	if err := WriteHistory(&b, h); err != nil {
		t.Fatal(err)
	}
	got, err := ReadHistory(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(h) {
		t.Fatalf("read %d transactions, wrote %d", len(got), len(h))
	}
	for i := range h {
		if got[i].String() != h[i].String() || got[i].Invoke != h[i].Invoke || got[i].Complete != h[i].Complete {
			t.Errorf("transaction %d: read %v, wrote %v", i, got[i], h[i])
		}
	}
	if got[0].Ops[2].List == nil || got[1].Ops[1].List != nil {
		t.Error("empty and unknown reads must stay distinct")
	}
	if _, err := ReadHistory(strings.NewReader(`{"status":"maybe"}`)); err == nil {
		t.Error("ReadHistory accepted an unknown status")
	}
}

// TestReadCommittedReads: at READ COMMITTED a second read of a key may
// see a commit the first did not (it counts as a read of others' data,
// here closing an allowed G-single cycle), but a read after the
// transaction's own appends must still end with them.
func TestReadCommittedReads(t *testing.T) {
	nonRepeatable := []Txn{
		ok(ap(1, 1)),
		at(200, 300, r(1, 1), r(1, 1, 2)),
		at(210, 220, ap(1, 2)),
	}
	wantOnly(t, check(t, nonRepeatable, CheckOptions{}), Internal)
	rc := check(t, nonRepeatable, CheckOptions{ReadCommitted: true})
	wantOnly(t, rc, GSingle)
	if !rc.Valid() {
		t.Errorf("a non-repeatable read is invalid at READ COMMITTED")
	}
	lostOwn := []Txn{
		ok(ap(1, 1)),
		ok(ap(1, 2), r(1, 1)),
	}
	wantOnly(t, check(t, lostOwn, CheckOptions{ReadCommitted: true}), Internal)
}
