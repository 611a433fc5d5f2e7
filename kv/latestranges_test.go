package kv

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percdb/percdb/kv/internal/keyspace"
)

// rangeKey returns a user key of table's rows (the range `t{table}_r`).
func rangeKey(table, i int) []byte { return fmt.Appendf(nil, "t%08d_r%05d", table, i) }

func TestLatestRangeOfEncoded(t *testing.T) {
	for _, k := range [][]byte{
		nil, []byte("t"), []byte("t0000000"), []byte("t00000001"), []byte("t00000001_"),
		[]byte("t00000001_r"), []byte("t00000001_r1"), []byte("t00000001_r12345678"), rangeKey(7, 3),
		[]byte("t\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"),
	} {
		want, wantOK := latestRangeOfKey(k)
		for _, sk := range [][]byte{keyspace.WriteKey(k, 5), keyspace.LatestKey(k)} {
			got, ok := latestRangeOfStoreKey(sk)
			if ok != wantOK || got != want {
				t.Errorf("key %q, store key %x: range %q %v, want %q %v", k, sk, got[:], ok, want[:], wantOK)
			}
		}
	}
	for _, tc := range []struct {
		start, end string
		ok         bool
	}{
		{"t00000001_r", "t00000001_s", true},
		{"t00000001_r00001", "t00000001_r00009", true},
		{"t00000001_r", "t00000001_s\x00", false},
		{"t00000001_r", "t00000002", false},
		{"t00000001_r", "", false},
		{"t00000001_", "t00000001_s", false},
		{"t00000001_r", "t00000001_r\xff", true},
		{"t00000001_r", "t00000001_r\x00", true},
		{"t00000001_r", "t00000001`", false},
		{"t0000000\xff_\xff", "t0000000\xff`", true},
		{"t0000000\xff_\xff", "t0000000\xff_\xff\x01", true},
		{"t0000000\xff_\xff", "t0000000\xff``", false},
	} {
		if want := tc.end != "" && len(tc.start) >= latestRangeLen && bytes.Compare([]byte(tc.end), keyspace.PrefixEnd([]byte(tc.start)[:latestRangeLen])) <= 0; want != tc.ok {
			t.Errorf("span [%q, %q): the table says %v, the bytes %v", tc.start, tc.end, tc.ok, want)
		}
		var end []byte
		if tc.end != "" {
			end = []byte(tc.end)
		}
		if _, ok := latestRangeOfSpan([]byte(tc.start), end); ok != tc.ok {
			t.Errorf("span [%q, %q): one range %v, want %v", tc.start, tc.end, ok, tc.ok)
		}
	}
}

// TestLatestRangeSwitchUnderWrites: one range's copies switched on and off
// while writers commit to it and to a range beside it and GC collects,
// concurrently: after every switch on, the space holds exactly the copies
// of the range's keys the write space says and none of the other range's,
// and a walk of the range through a snapshot's view of the set reads what
// the versions say; after every switch off it holds nothing.
func TestLatestRangeSwitchUnderWrites(t *testing.T) {
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone, Latest: LatestAuto})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	const writers, keysEach = 4, 300
	// Writers 0 and 1 write table 1, the others table 2.
	c := churnWithGC(t, s, writers, 1, func(w int, rnd *rand.Rand) []byte {
		return rangeKey(1+w/2, w*keysEach+rnd.Intn(keysEach))
	})
	clock, commits := c.clock, c.commits
	table1 := rangeKey(1, 0)[:latestRangeLen]
	start, end := table1, []byte("t00000001_s")
	// A reader of the live store, as a range read with no locks in the
	// way reads it (its walk through the gate, latestGate), all through
	// the switches: each walk must read what the versions say at its
	// timestamp, taken afterwards from a snapshot; none may read a copy
	// the switches left stale or missing.
	readerDone := make(chan struct{})
	var liveWalks, liveThrough atomic.Uint64
	go func() {
		defer close(readerDone)
		for !t.Failed() && c.commits.Load() < 2600 {
			at, unpin := c.pin(0)
			live := &mvccReader{src: s.db, latestGate: s.latest}
			got, err := collectWalk(ctx, live, start, end, at)
			live.close()
			through := live.walked.latestKeys
			view := s.db.NewSnapshot()
			snap := newMVCCReader(view)
			want, werr := collectWalk(ctx, snap, start, end, at)
			snap.close()
			_ = view.Close()
			unpin()
			if err != nil || werr != nil {
				t.Errorf("live walk: %v, %v", err, werr)
				return
			}
			if !slices.Equal(got, want) {
				t.Errorf("a live walk at %d (%d keys through the copies) read %d pairs, the versions %d", at, through, len(got), len(want))
				return
			}
			liveWalks.Add(1)
			if through > 0 {
				liveThrough.Add(1)
			}
		}
	}()
	stop := func() { <-readerDone; c.stop() }
	check := func(when string, wantOn bool) {
		t.Helper()
		set := s.latest.ranges.set.Load()
		snap := s.db.NewSnapshot()
		defer snap.Close()
		if s.latest.ranges.set.Load() != set {
			t.Fatalf("%s: the set changed with no switch running", when)
		}
		r1, _ := latestRangeOfKey(table1)
		if set.on(r1) != wantOn {
			t.Fatalf("%s: range on %v, want %v", when, set.on(r1), wantOn)
		}
		covered := func(key []byte) bool { r, ok := latestRangeOfKey(key); return ok && set.on(r) }
		if err := latestInvariantOf(snap, covered, s.GCSafePoint()); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		at := clock.Load()
		walk := func(ranges *latestRangeSet) ([]string, uint64) {
			r := newMVCCReader(snap)
			defer r.close()
			r.latestRanges = ranges
			var out []string
			if err := r.visit(ctx, start, end, at, false, false, func(k, v []byte) (bool, error) {
				out = append(out, string(k)+"="+string(v))
				return false, nil
			}); err != nil {
				t.Fatal(err)
			}
			return out, r.walked.latestKeys
		}
		versions, _ := walk(nil)
		copies, through := walk(set)
		if !slices.Equal(copies, versions) {
			t.Fatalf("%s, at %d: %d pairs through the range's copies, %d through the versions", when, at, len(copies), len(versions))
		}
		// (Table 1 may have no key yet: the writers of table 2 can make
		// the first 200 commits before those of table 1 start.)
		if (through > 0) != wantOn && (len(versions) > 0 || !wantOn) {
			t.Fatalf("%s: the walk read %d keys through the copies, range on %v", when, through, wantOn)
		}
	}
	for i := range 12 {
		for commits.Load() < uint64(200*(i+1)) && !t.Failed() {
			runtime.Gosched()
		}
		if err := s.EnableLatestRange(ctx, table1); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("switch %d on", i), true)
		if i%2 == 1 {
			if err := s.DisableLatestRange(ctx, table1); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("switch %d off", i), false)
		}
	}
	stop()
	// Most runs cross the switches (tens of walks through the copies and
	// more through the versions); a run whose reader was starved or ran
	// while table 1 was still empty may not, and proves less.
	t.Logf("%d live walks, %d of them through the copies", liveWalks.Load(), liveThrough.Load())
	if err := latestInvariant(s); err != nil {
		t.Fatal(err)
	}
	// Switched on at every even i, on still at the odd ones, then off.
	if st := s.LatestSpaceStats(); st.On || st.RangesOn != 0 || st.SwitchedOn != 6 || st.SwitchedOff != 6 {
		t.Fatalf("stats %+v: want the whole space off and six switches of the range on and off", st)
	}
}

// TestLatestAutoRangeSwitch: in the automatic mode, walks over one
// range's churned keys switch that range's copies on, while a range
// beside it that only takes writes keeps none; walks then read the
// copies; writes with no walks switch the range off again and clear it.
func TestLatestAutoRangeSwitch(t *testing.T) {
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	s.latest.windowKeys, s.latest.offCopies = 2_000, 20_000
	rc := s.Regions()[0].Ctx()
	const n = 1000
	ts := uint64(10)
	rewrite := func(table int) {
		t.Helper()
		rewriteRange(t, s, rc, table, n, ts)
		ts += 10
	}
	scan := func(table int) {
		t.Helper()
		pairs, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: rangeKey(table, 0), End: fmt.Appendf(nil, "t%08d_s", table), Version: ts})
		if err != nil || len(pairs) != n {
			t.Fatalf("scan: %d pairs, %v", len(pairs), err)
		}
	}
	waitFor := func(on int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); s.LatestSpaceStats().RangesOn != on || s.latest.busy.Load(); {
			if time.Now().After(deadline) {
				t.Fatalf("%d ranges on after a minute, want %d", s.LatestSpaceStats().RangesOn, on)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Writes alone: no copies.
	for range 30 {
		rewrite(1)
		rewrite(2)
	}
	if st := s.LatestSpaceStats(); st.On || st.RangesOn != 0 || st.SwitchedOn != 0 {
		t.Fatalf("writes alone switched copies on: %+v", st)
	}
	// Walks over table 1's 30 versions a key: its range on, table 2's not.
	for range 5 {
		scan(1)
	}
	waitFor(1)
	if err := latestInvariant(s); err != nil {
		t.Fatal(err)
	}
	r1, _ := latestRangeOfKey(rangeKey(1, 0))
	if !s.latest.ranges.set.Load().on(r1) {
		t.Fatal("the range on is not table 1's")
	}
	// The scans after the switch on read through the copies, how many of
	// them depends on when the build finished: the off window starts
	// here, so that its reads are the one scan below.
	st1 := s.latest.ranges.statsOf(r1, false)
	st1.reads.Store(0)
	st1.copies.Store(0)
	// Writes to table 2 derive no copies; table 1's do.
	rewrite(2)
	rewrite(1)
	if err := latestInvariant(s); err != nil {
		t.Fatal(err)
	}
	before := s.ScanCost()
	scan(1)
	if after := s.ScanCost(); after.Points-before.Points > uint64(2*n) || after.Keys-before.Keys != n {
		t.Fatalf("a walk with the range on merged %d points for %d keys", after.Points-before.Points, after.Keys-before.Keys)
	}
	// Writes with no walks: off, and the copies cleared.
	for range 25 {
		rewrite(1)
	}
	waitFor(0)
	if err := latestInvariant(s); err != nil {
		t.Fatal(err)
	}
	scan(1)
	st := s.LatestSpaceStats()
	t.Logf("%+v", st)
	if st.SwitchedOn != 1 || st.SwitchedOff != 1 || st.On {
		t.Fatalf("switches: %+v, want one range on and off", st)
	}
}

// TestLatestAutoSwitchWeighsCopies checks the automatic mode's rule for
// switching a range on over one window: the walks' hidden points must
// outweigh the write records written to the range meanwhile at
// latestCopySteps steps a copy, not one for one (a write-heavy mix whose
// walks step over a few deleted rows, TPC-C's Delivery among New-Orders,
// keeps the copies off).
func TestLatestAutoSwitchWeighsCopies(t *testing.T) {
	r, _ := latestRangeOfKey(rangeKey(1, 0))
	for _, tc := range []struct {
		name                  string
		written, keys, hidden uint64
		wantSwitch            bool
	}{
		{name: "no writes, churned walks", written: 0, keys: 1000, hidden: 1000, wantSwitch: true},
		{name: "hidden points twice the writes", written: 1000, keys: 1000, hidden: 2000, wantSwitch: false},
		{name: "hidden points just below the copies' cost", written: 1000, keys: 10_000, hidden: latestCopySteps * 1000, wantSwitch: false},
		{name: "hidden points beyond the copies' cost", written: 1000, keys: 10_000, hidden: latestCopySteps*1000 + 1, wantSwitch: true},
		{name: "beyond the cost but few a key", written: 10, keys: 10_000, hidden: 2000, wantSwitch: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []bool
			l := &latestSpace{mode: LatestAuto, windowKeys: tc.keys}
			l.ranges.switchTo = func(got latestRange, on bool) {
				if got != r {
					t.Errorf("switch asked for range %q, want %q", got[:], r[:])
				}
				asked = append(asked, on)
			}
			st := l.ranges.statsOf(r, true)
			st.written.Add(tc.written)
			l.walked(&walkCost{keys: tc.keys, points: tc.keys + tc.hidden, rng: r, rangeState: walkRangeOne})
			if got := len(asked) == 1 && asked[0]; got != tc.wantSwitch || len(asked) > 1 {
				t.Fatalf("written %d, %d keys walked over %d hidden points: asked %v, want a switch on: %v", tc.written, tc.keys, tc.hidden, asked, tc.wantSwitch)
			}
			if st.walkKeys.Load() != 0 || st.walkHidden.Load() != 0 || st.written.Load() != 0 {
				t.Fatalf("the window was not restarted: %d keys, %d hidden, %d written", st.walkKeys.Load(), st.walkHidden.Load(), st.written.Load())
			}
			// Walks of two ranges at once count for neither.
			asked = nil
			l.walked(&walkCost{keys: tc.keys, points: tc.keys + tc.hidden, rng: r, rangeState: walkRangeMixed})
			if len(asked) != 0 || st.walkKeys.Load() != 0 {
				t.Fatalf("walks over two ranges counted: asked %v, %d keys", asked, st.walkKeys.Load())
			}
		})
	}
}

// collectWalk returns the pairs a forward walk of r over [start, end)
// reads at ts, as "key=value".
func collectWalk(ctx context.Context, r *mvccReader, start, end []byte, ts uint64) ([]string, error) {
	var out []string
	err := r.visit(ctx, start, end, ts, false, false, func(k, v []byte) (bool, error) {
		out = append(out, string(k)+"="+string(v))
		return false, nil
	})
	return out, err
}

// TestLatestAutoRangeOffWindowBySize: a range's off window is scaled to
// the keys its backfill visited (latestOffPerKey copies a key), not the
// store-wide 1,000,000 copies: a 1,000-key range whose walks stopped goes
// off within a few rewrites of every key, and its copies are cleared.
func TestLatestAutoRangeOffWindowBySize(t *testing.T) {
	ctx := context.Background()
	s, err := Open("", Options{InMemory: true, SyncWrites: SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	s.latest.windowKeys = 2_000 // offCopies stays latestOffCopies
	rc := s.Regions()[0].Ctx()
	const n = 1000
	ts := uint64(10)
	rewrite := func() {
		t.Helper()
		rewriteRange(t, s, rc, 1, n, ts)
		ts += 10
	}
	for range 30 {
		rewrite()
	}
	// Scans over 30 versions a key switch the range on.
	for i := 0; s.LatestSpaceStats().RangesOn != 1 || s.latest.busy.Load(); i++ {
		if i == 60_000 {
			t.Fatal("the range did not switch on")
		}
		if i%1000 == 0 {
			if _, err := s.Scan(ctx, &ScanRequest{Region: rc, Start: rangeKey(1, 0), End: []byte("t00000001_s"), Version: ts}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Millisecond)
	}
	r, _ := latestRangeOfKey(rangeKey(1, 0))
	if w := s.latest.ranges.statsOf(r, false).offWindow.Load(); w != latestOffPerKey*n {
		t.Fatalf("off window %d copies, want %d (latestOffPerKey a key of %d)", w, latestOffPerKey*n, n)
	}
	// Writes alone, a few times the range's size: off.
	for range latestOffPerKey + 1 {
		rewrite()
	}
	for deadline := time.Now().Add(time.Minute); s.LatestSpaceStats().RangesOn != 0 || s.latest.busy.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the range is still on after %d rewrites of its %d keys without walks: %+v", latestOffPerKey+1, n, s.LatestSpaceStats())
		}
	}
	if err := latestInvariant(s); err != nil {
		t.Fatal(err)
	}
	if st := s.LatestSpaceStats(); st.SwitchedOn != 1 || st.SwitchedOff != 1 {
		t.Fatalf("switches: %+v, want one on and one off", st)
	}
}

// rewriteRange writes keys 0..n-1 of table's rows range once more, in one
// transaction starting at ts and committed at ts+1.
func rewriteRange(t *testing.T, s *Store, rc RegionCtx, table, n int, ts uint64) {
	t.Helper()
	ctx := context.Background()
	muts := make([]Mutation, n)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = rangeKey(table, i)
		muts[i] = Mutation{Op: OpPut, Key: keys[i], Value: fmt.Appendf(nil, "v%d", ts)}
	}
	if resp, err := s.Prewrite(ctx, &PrewriteRequest{Region: rc, Mutations: muts, Primary: keys[0], StartTS: ts, LockTTL: 1000}); err != nil || len(resp.Errors) > 0 {
		t.Fatal(resp, err)
	}
	if err := s.Commit(ctx, &CommitRequest{Region: rc, Keys: keys, StartTS: ts, CommitTS: ts + 1}); err != nil {
		t.Fatal(err)
	}
}
