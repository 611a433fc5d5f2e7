// Package ctxtime waits for a time that a context can cut short: the
// pauses of background work (auto-analyze's pacing, GC's rate limit,
// retries' backoff) must end at once when their statement is killed or
// their process stops.
package ctxtime

import (
	"context"
	"time"
)

// Sleep waits d and returns nil, or returns ctx.Err() as soon as ctx
// ends. A d of zero or less returns at once (ctx.Err() if ctx has ended).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
