package node

import (
	"context"
	"fmt"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc"
)

// Proposer is the seam between a region's route and its data: every
// command the node accepts for a region, read or write, goes through the
// region's proposer, with the region already checked (id, epoch, keys in
// range) and addressed to the store's own region (RegionCtx of the whole
// key space).
//
// In this version a region has one replica and directProposer runs the
// command on the local store at once: the store decides under its latches
// and applies the write batch to Pebble. With replication, a raft
// proposer takes its place per region: on the leader it runs the command's
// decision under the latches as now, proposes the resulting write batch
// (the store's applier seam, kv/batch.go) through the region's
// raft.RawNode, and answers when the batch is applied; reads are served
// under the leader lease or after a ReadIndex; a follower answers
// NotLeader with the leader's address. The node, the wire and the client
// do not change.
type Proposer interface {
	kvrpc.Backend
}

// directProposer applies a region's commands to the local store at once.
type directProposer struct{ *kv.Store }

// route checks that the node serves rc at its epoch and that every key
// lies in the region, and returns the region's replica; otherwise a
// *kv.RegionError the client re-routes on.
func (n *Node) route(rc kv.RegionCtx, keys ...[]byte) (*replica, error) {
	n.mu.RLock()
	r, ok := n.regions[rc.RegionID]
	n.mu.RUnlock()
	if !ok {
		return nil, &kv.RegionError{RegionID: rc.RegionID, Reason: kvrpc.ReasonNotFound}
	}
	if r.info.Epoch != rc.Epoch {
		cur := r.info
		return nil, &kv.RegionError{RegionID: rc.RegionID, Reason: kvrpc.ReasonEpochNotMatch, Current: &cur}
	}
	for _, k := range keys {
		if !r.info.Contains(k) {
			cur := r.info
			return nil, &kv.RegionError{RegionID: rc.RegionID, Reason: fmt.Sprintf("%s: %q", kvrpc.ReasonKeyNotInRange, k), Current: &cur}
		}
	}
	return r, nil
}

// Get implements kvrpc.Backend.
func (n *Node) Get(ctx context.Context, rc kv.RegionCtx, key []byte, version uint64) ([]byte, error) {
	r, err := n.route(rc, key)
	if err != nil {
		return nil, err
	}
	return r.proposer.Get(ctx, n.whole, key, version)
}

// BatchGet implements kvrpc.Backend.
func (n *Node) BatchGet(ctx context.Context, rc kv.RegionCtx, keys [][]byte, version uint64) ([]kv.KvPair, error) {
	r, err := n.route(rc, keys...)
	if err != nil {
		return nil, err
	}
	return r.proposer.BatchGet(ctx, n.whole, keys, version)
}

// Scan implements kvrpc.Backend. An empty End is the region's end, and an
// End past it is cut to it, as the store does for its own regions.
func (n *Node) Scan(ctx context.Context, req *kv.ScanRequest) ([]kv.KvPair, error) {
	r, err := n.route(req.Region, req.Start)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.End = n.whole, r.cutEnd(req.End)
	return r.proposer.Scan(ctx, &in)
}

// mutationKeys lists the keys of a prewrite.
func mutationKeys(ms []kv.Mutation) [][]byte {
	keys := make([][]byte, len(ms))
	for i, m := range ms {
		keys[i] = m.Key
	}
	return keys
}

// Prewrite implements kvrpc.Backend.
func (n *Node) Prewrite(ctx context.Context, req *kv.PrewriteRequest) (*kv.PrewriteResponse, error) {
	r, err := n.route(req.Region, mutationKeys(req.Mutations)...)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region = n.whole
	return r.proposer.Prewrite(ctx, &in)
}

// Commit implements kvrpc.Backend.
func (n *Node) Commit(ctx context.Context, req *kv.CommitRequest) error {
	r, err := n.route(req.Region, req.Keys...)
	if err != nil {
		return err
	}
	in := *req
	in.Region = n.whole
	return r.proposer.Commit(ctx, &in)
}

// BatchRollback implements kvrpc.Backend.
func (n *Node) BatchRollback(ctx context.Context, rc kv.RegionCtx, keys [][]byte, startTS uint64) error {
	r, err := n.route(rc, keys...)
	if err != nil {
		return err
	}
	return r.proposer.BatchRollback(ctx, n.whole, keys, startTS)
}

// Cleanup implements kvrpc.Backend.
func (n *Node) Cleanup(ctx context.Context, rc kv.RegionCtx, key []byte, startTS, currentTS uint64) error {
	r, err := n.route(rc, key)
	if err != nil {
		return err
	}
	return r.proposer.Cleanup(ctx, n.whole, key, startTS, currentTS)
}

// CheckTxnStatus implements kvrpc.Backend.
func (n *Node) CheckTxnStatus(ctx context.Context, req *kv.CheckTxnStatusRequest) (*kv.CheckTxnStatusResponse, error) {
	r, err := n.route(req.Region, req.PrimaryKey)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region = n.whole
	return r.proposer.CheckTxnStatus(ctx, &in)
}

// ResolveLock implements kvrpc.Backend. Without keys it resolves the
// transaction's locks over the whole store, not only the region: the
// store keeps no other region's keys but this node's, and resolving a
// transaction's locks is right wherever they are.
func (n *Node) ResolveLock(ctx context.Context, req *kv.ResolveLockRequest) error {
	r, err := n.route(req.Region, req.Keys...)
	if err != nil {
		return err
	}
	in := *req
	in.Region = n.whole
	return r.proposer.ResolveLock(ctx, &in)
}

// TxnHeartBeat implements kvrpc.Backend.
func (n *Node) TxnHeartBeat(ctx context.Context, rc kv.RegionCtx, primary []byte, startTS, adviseTTL uint64) (uint64, error) {
	r, err := n.route(rc, primary)
	if err != nil {
		return 0, err
	}
	return r.proposer.TxnHeartBeat(ctx, n.whole, primary, startTS, adviseTTL)
}

// AcquirePessimisticLock implements kvrpc.Backend.
func (n *Node) AcquirePessimisticLock(ctx context.Context, req *kv.AcquirePessimisticLockRequest) (*kv.AcquirePessimisticLockResponse, error) {
	keys := make([][]byte, len(req.Keys))
	for i, k := range req.Keys {
		keys[i] = k.Key
	}
	r, err := n.route(req.Region, keys...)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region = n.whole
	return r.proposer.AcquirePessimisticLock(ctx, &in)
}

// PessimisticRollback implements kvrpc.Backend.
func (n *Node) PessimisticRollback(ctx context.Context, rc kv.RegionCtx, keys [][]byte, startTS, forUpdateTS uint64) error {
	r, err := n.route(rc, keys...)
	if err != nil {
		return err
	}
	return r.proposer.PessimisticRollback(ctx, n.whole, keys, startTS, forUpdateTS)
}

// cutEnd cuts a range read's end to the region's: an empty end is the
// region's end, and an end past it is cut to it, as the store does for
// its own regions.
func (r *replica) cutEnd(end []byte) []byte {
	if re := r.info.End; len(re) != 0 && (len(end) == 0 || string(end) > string(re)) {
		return re
	}
	return end
}

// ValidateReads implements kvrpc.Backend. Every key and the start of every
// range must lie in the region; ranges are cut to it.
func (n *Node) ValidateReads(ctx context.Context, req *kv.ValidateReadsRequest) (*kv.ValidateReadsResponse, error) {
	keys := append([][]byte(nil), req.Keys...)
	for _, kr := range req.Ranges {
		keys = append(keys, kr.Start)
	}
	r, err := n.route(req.Region, keys...)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region = n.whole
	in.Ranges = make([]kv.KeyRange, len(req.Ranges))
	for i, kr := range req.Ranges {
		in.Ranges[i] = kv.KeyRange{Start: kr.Start, End: r.cutEnd(kr.End)}
	}
	return r.proposer.ValidateReads(ctx, &in)
}

// ScanNotify implements kvrpc.Backend.
func (n *Node) ScanNotify(ctx context.Context, req *kv.ScanNotifyRequest) ([]kv.NotifyEntry, error) {
	r, err := n.route(req.Region, req.Start)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.End = n.whole, r.cutEnd(req.End)
	return r.proposer.ScanNotify(ctx, &in)
}

// ClearNotify implements kvrpc.Backend.
func (n *Node) ClearNotify(ctx context.Context, rc kv.RegionCtx, entries []kv.NotifyEntry) error {
	keys := make([][]byte, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	r, err := n.route(rc, keys...)
	if err != nil {
		return err
	}
	return r.proposer.ClearNotify(ctx, n.whole, entries)
}

// ScanChanges implements kvrpc.Backend.
func (n *Node) ScanChanges(ctx context.Context, req *kv.ScanChangesRequest) ([]kv.Change, error) {
	r, err := n.route(req.Region, req.Start)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.End = n.whole, r.cutEnd(req.End)
	return r.proposer.ScanChanges(ctx, &in)
}

// Coprocessor implements kvrpc.Backend.
func (n *Node) Coprocessor(ctx context.Context, req *kv.CoprocessorRequest) (*kv.CoprocessorResponse, error) {
	r, err := n.route(req.Region, req.Start)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.End = n.whole, r.cutEnd(req.End)
	return r.proposer.Coprocessor(ctx, &in)
}
