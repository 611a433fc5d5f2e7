package node

import (
	"bytes"
	"context"
	"fmt"

	"github.com/percdb/percdb/kv"
)

// The garbage collector's commands (kv.GCClient) on a KV node.
//
// ScanLock and GC are served by the region's leader like every command,
// over the region's range (kv.ScanLockRequest.Within: the store
// underneath is one region over every key the node holds).
// GC's write batches, the versions it deletes and the safe point it
// records, go through the region's raft group: every replica applies the
// same deletions in log order, so the replicas stay identical (a
// snapshot or a new leader carries exactly what the others hold) and a
// follower that becomes leader refuses the reads below the safe point
// too. This was preferred to collecting on every replica on its own (as
// TiKV's compaction filter does): it reuses the one replicated write
// path, and a GC batch is bounded (kv.DefaultGCBatchKeys keys), so its
// log entries are too.
//
// UnsafeDestroyRange is sent to every store (kvrpc.Client lists them
// through pd) and carried out locally on each: the range's data is
// dead (its DDL committed below the safe point), so no replica needs it
// to agree with the others. Before it destroys anything the store raises
// its own safe point to pd's, so that it refuses the reads below it.

// gcReplica checks that the region of a GC command is served here and
// returns what the command may touch: the region's part of the store's
// one region (the store's GC walks its region; its deletions may only go
// through the raft group of the region that holds them).
func (n *Node) gcReplica(ctx context.Context, rc kv.RegionCtx, start []byte) (context.Context, *kv.KeyRange, error) {
	var keys [][]byte
	if len(start) > 0 {
		keys = append(keys, start)
	}
	ctx, sv, err := n.serve(ctx, rc, keys...)
	if err != nil {
		return nil, nil, err
	}
	return ctx, sv.within(nil), nil
}

// ScanLock implements kvrpc.Backend.
func (n *Node) ScanLock(ctx context.Context, req *kv.ScanLockRequest) (*kv.ScanLockResponse, error) {
	ctx, within, err := n.gcReplica(ctx, req.Region, req.Start)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.Within = n.whole, within
	out, err := n.store.ScanLock(ctx, &in)
	return out, n.fix(err)
}

// GC implements kvrpc.Backend.
func (n *Node) GC(ctx context.Context, req *kv.GCRequest) (*kv.GCResponse, error) {
	ctx, within, err := n.gcReplica(ctx, req.Region, req.Start)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.Within = n.whole, within
	out, err := n.store.GC(ctx, &in)
	return out, n.fix(err)
}

// UnsafeDestroyRange implements kvrpc.Backend: the store raises its safe
// point to pd's, then destroys the range locally.
func (n *Node) UnsafeDestroyRange(ctx context.Context, start, end []byte) (*kv.DestroyRangeResponse, error) {
	if len(end) != 0 && bytes.Compare(end, start) <= 0 {
		return nil, fmt.Errorf("kv node: destroy range [%q, %q): end is not after start", start, end)
	}
	sp, err := n.pd.GCSafePoint(ctx)
	if err != nil {
		return nil, fmt.Errorf("kv node: destroy range: %w", err)
	}
	if sp == 0 {
		return nil, fmt.Errorf("kv node: destroy range [%q, %q): pd has no GC safe point yet", start, end)
	}
	if _, err := n.store.AdvanceGCSafePoint(ctx, sp); err != nil {
		return nil, fmt.Errorf("kv node: destroy range: %w", err)
	}
	return n.store.UnsafeDestroyRange(ctx, start, end)
}

// learnSafePoint raises the store's GC safe point to pd's (sent with
// every heartbeat), so that every store, leader or not, refuses the reads
// below it soon after pd's safe point moves.
func (n *Node) learnSafePoint(ctx context.Context, sp uint64) {
	if sp == 0 || sp <= n.store.GCSafePoint() {
		return
	}
	if _, err := n.store.AdvanceGCSafePoint(ctx, sp); err != nil {
		n.cfg.Logger.Warn("kv node: record the GC safe point", "safe_point", sp, "err", err)
	}
}
