package txn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// backoff sleeps between retries, doubling the pause up to a cap, with
// jitter so that transactions waiting on the same lock do not retry in
// lockstep.
type backoff struct {
	next, max time.Duration
}

// Backoff schedules. Lock waits start short because most locks in an OLTP
// load are held for well under a millisecond by a commit in progress;
// region errors need a moment for the route to settle.
func lockBackoff() backoff   { return backoff{next: 200 * time.Microsecond, max: 10 * time.Millisecond} }
func regionBackoff() backoff { return backoff{next: time.Millisecond, max: 100 * time.Millisecond} }

// wait sleeps for the current pause (in [pause/2, pause]) or until ctx
// ends.
func (b *backoff) wait(ctx context.Context) error {
	d := b.next/2 + rand.N(b.next/2+1)
	b.next = min(2*b.next, b.max)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// lockWaiter bounds the total time one operation spends waiting for live
// locks of other transactions (Options.LockWaitTimeout).
type lockWaiter struct {
	deadline time.Time
	bo       backoff
}

func newLockWaiter(timeout time.Duration) lockWaiter {
	return lockWaiter{deadline: time.Now().Add(timeout), bo: lockBackoff()}
}

// wait backs off once before the caller retries, or fails with
// ErrLockWaitTimeout once the deadline has passed. what names the lock
// waited for, for the error.
func (w *lockWaiter) wait(ctx context.Context, what string) error {

	if !time.Now().Before(w.deadline) {
		return fmt.Errorf("%w: waiting for %s", ErrLockWaitTimeout, what)
	}
	return w.bo.wait(ctx)
}

// regionRetrier bounds how long one request is re-routed: at least
// Options.MaxRegionRetries times and until Options.RegionRetryTimeout has
// passed, so that the budget outlasts a raft election (a region's leader
// lost with its store: 1-2 s until the next one serves) however quickly
// the retries come.
type regionRetrier struct {
	left     int
	deadline time.Time
	retried  bool
	bo       backoff
}

func newRegionRetrier(o Options) regionRetrier {
	return regionRetrier{left: o.MaxRegionRetries, deadline: time.Now().Add(o.RegionRetryTimeout), bo: regionBackoff()}
}

// retry backs off before a re-routed attempt, or returns an error wrapping
// cause once the retries are used up. The first retry is immediate: a
// stale route is usually fixed by reloading it.
func (r *regionRetrier) retry(ctx context.Context, cause error) error {
	if r.left <= 0 && !time.Now().Before(r.deadline) {
		return fmt.Errorf("too many region errors: %w", cause)
	}
	r.left--
	if !r.retried {
		r.retried = true
		return nil
	}
	return r.bo.wait(ctx)
}
