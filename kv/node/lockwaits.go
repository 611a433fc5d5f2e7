package node

import (
	"context"

	"github.com/percdb/percdb/kv"
)

// LockWaitInfo implements kvrpc.Backend: the waits of the node's store,
// whichever region their keys are in (the store keeps one wait table for
// every region it leads).
func (n *Node) LockWaitInfo(context.Context) ([]kv.LockWait, error) { return n.store.LockWaits(), nil }

// LockWaitCounts implements kvrpc.Backend: the lock-wait counts of the
// node's store.
func (n *Node) LockWaitCounts(context.Context) (kv.LockWaitStats, error) {
	return n.store.LockWaitStats(), nil
}
