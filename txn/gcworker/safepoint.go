package gcworker

import (
	"context"

	"github.com/percdb/percdb/kv"
)

// LocalSafePoint is the SafePointSource of a single node: the safe point
// is this node's candidate, kept by the node's store itself (in its meta
// space, kv.Store.AdvanceGCSafePoint), where it also makes the store
// refuse reads below it.
type LocalSafePoint struct {
	Store *kv.Store
}

// SafePoint returns the safe point in force.
func (l *LocalSafePoint) SafePoint(context.Context) (uint64, error) {
	return l.Store.GCSafePoint(), nil
}

// Advance raises the safe point to candidate if it is higher.
func (l *LocalSafePoint) Advance(ctx context.Context, candidate uint64) (uint64, error) {
	return l.Store.AdvanceGCSafePoint(ctx, candidate)
}
