package txn

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestEstimateKeysIgnoresLocks: EstimateKeys counts the committed keys
// of a range under a live transaction's locks without waiting (the
// reader's lock wait would time out at once), resolving or pushing
// anything, across regions, and stops at its limit and when its context
// ends.
func TestEstimateKeysIgnoresLocks(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "k05")
	var pairs []string
	for i := range 10 {
		pairs = append(pairs, fmt.Sprintf("k%02d", i), "v")
	}
	mustCommit(t, e.s, pairs...)
	// The estimate counts committed versions only: let a reader roll the
	// secondaries forward that the commit may still be committing.
	rt, _ := e.s.Begin(ctx)
	if got := readAll(t, rt, "k", "l", false); len(got) != 10 {
		t.Fatalf("setup: read %v", got)
	}
	slow := e.dyingStore(t, time.Minute)
	tx, _ := slow.Begin(ctx)
	_ = tx.Delete([]byte("k01"))
	_ = tx.Set([]byte("k03x"), []byte("new"))
	_ = tx.Set([]byte("k07"), []byte("changed"))
	startTS, _ := tx.StartTS(ctx)
	if err := tx.Commit(ctx); !errors.Is(err, errAbandon) {
		t.Fatal(err)
	}

	r := e.newStore(t, Options{LockWaitTimeout: time.Nanosecond, ScanPageSize: 3})
	for _, tc := range []struct {
		start, end  string
		limit, want int
	}{
		{"k", "l", 100, 10},
		{"k", "", 100, 10},
		{"k02", "k08", 100, 6},
		{"k", "l", 4, 4},
		{"l", "", 100, 0},
	} {
		got, err := r.EstimateKeys(ctx, []byte(tc.start), []byte(tc.end), tc.limit)
		if err != nil || got != tc.want {
			t.Errorf("EstimateKeys(%q, %q, %d) = %d, %v; want %d", tc.start, tc.end, tc.limit, got, err, tc.want)
		}
	}
	for _, k := range []string{"k01", "k03x", "k07"} {
		if !lockedBy(t, e, k, startTS) {
			t.Errorf("%s: the live transaction's lock is gone", k)
		}
	}
	if l := lockOn(t, e, "k01"); l == nil || l.MinCommitTS > startTS+1 {
		t.Errorf("the estimate pushed the live transaction: %+v", l)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.EstimateKeys(cancelled, []byte("k"), []byte("l"), 100); !errors.Is(err, context.Canceled) {
		t.Errorf("EstimateKeys with a cancelled context: %v", err)
	}
}
