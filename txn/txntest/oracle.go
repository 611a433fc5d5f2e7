// Package txntest holds test support shared by the tests of txn and of the
// packages built on it. It imports nothing of txn, so txn's own in-package
// tests can use it too.
package txntest

import (
	"context"
	"sync"
	"time"

	"github.com/percdb/percdb/tso"
)

// ClockOracle is an oracle for tests: wall-clock milliseconds in the tso
// layout, strictly increasing, never at or below the floor it was made
// with. It satisfies txn.Oracle without a window file or goroutines.
type ClockOracle struct {
	mu   sync.Mutex
	last uint64
}

// NewClockOracle returns a ClockOracle whose timestamps are all above
// floor (0: any).
func NewClockOracle(floor uint64) *ClockOracle { return &ClockOracle{last: floor} }

// GetTimestamp returns the next timestamp.
func (o *ClockOracle) GetTimestamp(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	ts := tso.Compose(time.Now().UnixMilli(), 0)
	if ts <= o.last {
		ts = o.last + 1
	}
	o.last = ts
	return ts, nil
}
