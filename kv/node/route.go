package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc"
	"github.com/percdb/percdb/kv/raftstore"
)

// served is a command's region as the node serves it: the replica's
// leadership, and the region's range and version the command is decided
// under (its write batch is applied only if they are still the region's).
type served struct {
	l    raftstore.Leadership
	desc raftstore.Descriptor
}

// serve checks that this store's replica of rc's region leads it and
// serves (kv/raftstore: a leader serves once it caught up and raised
// max_read_ts), that rc's epoch version is the region's as the replica
// applied it and that every key lies in the region; then it waits for the
// replica's read barrier, so that the command reads every write committed
// before it arrived, checks that no split was applied meanwhile, and
// returns ctx carrying the leadership, through which the command's
// writes are replicated. Otherwise a *kv.RegionError the client re-routes
// on (NotLeader with the leader's address when one is known).
func (n *Node) serve(ctx context.Context, rc kv.RegionCtx, keys ...[]byte) (context.Context, served, error) {
	n.mu.RLock()
	r, ok := n.regions[rc.RegionID]
	n.mu.RUnlock()
	if !ok {
		return nil, served{}, &kv.RegionError{RegionID: rc.RegionID, Reason: kvrpc.ReasonNotFound}
	}
	l, err := r.raft.Leading()
	if err != nil {
		return nil, served{}, n.fix(err)
	}
	sv := served{l: l, desc: l.Region()}
	if err := n.check(r, rc, sv.desc, keys...); err != nil {
		return nil, served{}, err
	}
	if err := l.ReadBarrier(ctx); err != nil {
		return nil, served{}, n.fix(err)
	}
	// A split applied while the barrier waited: the keys may be another
	// region's now, written by its own log, which this replica may not
	// have applied as far as that region's leader committed.
	if r.raft.Version() != sv.desc.Version {
		return nil, served{}, n.epochError(r, r.raft.Region())
	}
	return kv.WithReplicator(ctx, l), sv, nil
}

// regionInfo describes this store's replica r of a region with desc.
func regionInfo(r *replica, desc raftstore.Descriptor) kv.RegionInfo {
	return kv.RegionInfo{ID: r.raft.ID(), Start: desc.Start, End: desc.End,
		Epoch: kv.RegionEpoch{ConfVer: r.raft.Conf().Ver, Version: desc.Version}}
}

// epochError is the EpochNotMatch of region r, now at desc.
func (n *Node) epochError(r *replica, desc raftstore.Descriptor) error {
	cur := regionInfo(r, desc)
	return &kv.RegionError{RegionID: cur.ID, Reason: kvrpc.ReasonEpochNotMatch, Current: &cur}
}

// fix turns raftstore's errors into the KV protocol's: *NotLeaderError
// into a NotLeader region error with the leader's address, *EpochError
// (a split was applied before the command's batch) into EpochNotMatch,
// a stopping raft store into kv.ErrClosed (all retried by the client).
func (n *Node) fix(err error) error {
	var nl *raftstore.NotLeaderError
	var ee *raftstore.EpochError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &nl) && nl.Unavailable:
		return &kv.RegionError{RegionID: nl.RegionID, Reason: fmt.Sprintf("%s: store %d's replica has known no leader for over two election timeouts (a quorum of the region's replicas is down or cut off)",
			kvrpc.ReasonRegionUnavailable, n.StoreID())}
	case errors.As(err, &nl):
		re := &kv.RegionError{RegionID: nl.RegionID, Reason: kvrpc.ReasonNotLeader}
		if addr := n.storeAddr(nl.Leader); addr != "" {
			re.Current = &kv.RegionInfo{ID: nl.RegionID, Addr: addr}
		}
		return re
	case errors.As(err, &ee):
		n.mu.RLock()
		r := n.regions[ee.RegionID]
		n.mu.RUnlock()
		if r == nil {
			return &kv.RegionError{RegionID: ee.RegionID, Reason: kvrpc.ReasonEpochNotMatch}
		}
		return n.epochError(r, ee.Current)
	case errors.Is(err, raftstore.ErrStopped):
		return fmt.Errorf("%w: %w", kv.ErrClosed, err)
	}
	return err
}

// check checks rc against this store's replica r of its region, at
// desc: the version (the region's range) must match, and every key lie
// in the region; otherwise a *kv.RegionError the client re-routes on. The
// conf_ver may lag or lead the replica's by a conf change, which moves
// no key (as TiKV checks only the version for reads and writes).
func (n *Node) check(r *replica, rc kv.RegionCtx, desc raftstore.Descriptor, keys ...[]byte) error {
	if desc.Version != rc.Epoch.Version {
		return n.epochError(r, desc)
	}
	for _, k := range keys {
		if !desc.Contains(k) {
			cur := regionInfo(r, desc)
			return &kv.RegionError{RegionID: rc.RegionID, Reason: fmt.Sprintf("%s: %q", kvrpc.ReasonKeyNotInRange, k), Current: &cur}
		}
	}
	return nil
}

// Get implements kvrpc.Backend.
func (n *Node) Get(ctx context.Context, rc kv.RegionCtx, key []byte, version uint64) ([]byte, error) {
	ctx, _, err := n.serve(ctx, rc, key)
	if err != nil {
		return nil, err
	}
	out, err := n.store.Get(ctx, n.whole, key, version)
	if err == nil && out != nil {
		n.load.read(rc.RegionID, 1, len(key)+len(out))
	}
	return out, n.fix(err)
}

// BatchGet implements kvrpc.Backend.
func (n *Node) BatchGet(ctx context.Context, rc kv.RegionCtx, keys [][]byte, version uint64) ([]kv.KvPair, error) {
	ctx, _, err := n.serve(ctx, rc, keys...)
	if err != nil {
		return nil, err
	}
	out, err := n.store.BatchGet(ctx, n.whole, keys, version)
	n.load.read(rc.RegionID, len(out), pairBytes(out))
	return out, n.fix(err)
}

// Scan implements kvrpc.Backend. An empty End is the region's end, and an
// End past it is cut to it, as the store does for its own regions.
// Of a request of many ranges, every range must start in the region; the
// last is cut to it.
func (n *Node) Scan(ctx context.Context, req *kv.ScanRequest) ([]kv.KvPair, error) {
	ctx, sv, err := n.serve(ctx, req.Region, rangeStarts(req.Start, req.Ranges)...)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.End = n.whole, sv.cutEnd(req.End)
	if len(req.Ranges) > 0 {
		in.End, in.Ranges = req.End, cutLastRange(sv, req.Ranges)
	}
	out, err := n.store.Scan(ctx, &in)
	n.load.read(req.Region.RegionID, len(out), pairBytes(out))
	return out, n.fix(err)
}

// pairBytes is the bytes of the keys and values of ps.
func pairBytes(ps []kv.KvPair) int {
	b := 0
	for _, p := range ps {
		b += len(p.Key) + len(p.Value)
	}
	return b
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
	ctx, _, err := n.serve(ctx, req.Region, mutationKeys(req.Mutations)...)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region = n.whole
	out, err := n.store.Prewrite(ctx, &in)
	if err == nil {
		b := 0
		for _, m := range req.Mutations {
			b += len(m.Key) + len(m.Value)
		}
		n.load.write(req.Region.RegionID, len(req.Mutations), b)
	}
	return out, n.fix(err)
}

// Commit implements kvrpc.Backend.
func (n *Node) Commit(ctx context.Context, req *kv.CommitRequest) error {
	ctx, _, err := n.serve(ctx, req.Region, req.Keys...)
	if err != nil {
		return err
	}
	in := *req
	in.Region = n.whole
	return n.fix(n.store.Commit(ctx, &in))
}

// BatchRollback implements kvrpc.Backend.
func (n *Node) BatchRollback(ctx context.Context, rc kv.RegionCtx, keys [][]byte, startTS uint64) error {
	ctx, _, err := n.serve(ctx, rc, keys...)
	if err != nil {
		return err
	}
	return n.fix(n.store.BatchRollback(ctx, n.whole, keys, startTS))
}

// Cleanup implements kvrpc.Backend.
func (n *Node) Cleanup(ctx context.Context, rc kv.RegionCtx, key []byte, startTS, currentTS uint64) error {
	ctx, _, err := n.serve(ctx, rc, key)
	if err != nil {
		return err
	}
	return n.fix(n.store.Cleanup(ctx, n.whole, key, startTS, currentTS))
}

// CheckTxnStatus implements kvrpc.Backend.
func (n *Node) CheckTxnStatus(ctx context.Context, req *kv.CheckTxnStatusRequest) (*kv.CheckTxnStatusResponse, error) {
	ctx, _, err := n.serve(ctx, req.Region, req.PrimaryKey)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region = n.whole
	out, err := n.store.CheckTxnStatus(ctx, &in)
	return out, n.fix(err)
}

// ResolveLock implements kvrpc.Backend. Without keys it resolves the
// transaction's locks in the region's range: the store holds other
// regions' keys too, whose writes go through their own raft groups.
func (n *Node) ResolveLock(ctx context.Context, req *kv.ResolveLockRequest) error {
	ctx, sv, err := n.serve(ctx, req.Region, req.Keys...)
	if err != nil {
		return err
	}
	in := *req
	in.Region, in.Within = n.whole, sv.within(req.Within)
	return n.fix(n.store.ResolveLock(ctx, &in))
}

// within is the part of the store's one region a command over the
// region's range may touch: the region's range, cut to w when given.
func (sv served) within(w *kv.KeyRange) *kv.KeyRange {
	out := &kv.KeyRange{Start: sv.desc.Start, End: sv.desc.End}
	if w != nil {
		if string(w.Start) > string(out.Start) {
			out.Start = w.Start
		}
		out.End = sv.cutEnd(w.End)
	}
	return out
}

// TxnHeartBeat implements kvrpc.Backend.
func (n *Node) TxnHeartBeat(ctx context.Context, rc kv.RegionCtx, primary []byte, startTS, adviseTTL uint64) (uint64, error) {
	ctx, _, err := n.serve(ctx, rc, primary)
	if err != nil {
		return 0, err
	}
	out, err := n.store.TxnHeartBeat(ctx, n.whole, primary, startTS, adviseTTL)
	return out, n.fix(err)
}

// AcquirePessimisticLock implements kvrpc.Backend.
func (n *Node) AcquirePessimisticLock(ctx context.Context, req *kv.AcquirePessimisticLockRequest) (*kv.AcquirePessimisticLockResponse, error) {
	keys := make([][]byte, len(req.Keys))
	for i, k := range req.Keys {
		keys[i] = k.Key
	}
	if req.Range != nil {
		// A locking range read: its range as a Scan's.
		keys = [][]byte{req.Range.Start}
	}
	ctx, sv, err := n.serve(ctx, req.Region, keys...)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region = n.whole
	if req.Range != nil {
		lr := *req.Range
		lr.End = sv.cutEnd(lr.End)
		in.Range = &lr
	}
	out, err := n.store.AcquirePessimisticLock(ctx, &in)
	return out, n.fix(err)
}

// PessimisticRollback implements kvrpc.Backend.
func (n *Node) PessimisticRollback(ctx context.Context, rc kv.RegionCtx, keys [][]byte, startTS, forUpdateTS uint64) error {
	ctx, _, err := n.serve(ctx, rc, keys...)
	if err != nil {
		return err
	}
	return n.fix(n.store.PessimisticRollback(ctx, n.whole, keys, startTS, forUpdateTS))
}

// cutEnd cuts a range read's end to the region's: an empty end is the
// region's end, and an end past it is cut to it, as the store does for
// its own regions.
func (sv served) cutEnd(end []byte) []byte {
	if re := sv.desc.End; len(re) != 0 && (len(end) == 0 || string(end) > string(re)) {
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
	ctx, sv, err := n.serve(ctx, req.Region, keys...)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region = n.whole
	in.Ranges = make([]kv.KeyRange, len(req.Ranges))
	for i, kr := range req.Ranges {
		in.Ranges[i] = kv.KeyRange{Start: kr.Start, End: sv.cutEnd(kr.End)}
	}
	out, err := n.store.ValidateReads(ctx, &in)
	return out, n.fix(err)
}

// ScanNotify implements kvrpc.Backend.
func (n *Node) ScanNotify(ctx context.Context, req *kv.ScanNotifyRequest) (*kv.ScanNotifyResponse, error) {
	ctx, sv, err := n.serve(ctx, req.Region, req.Start)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.End = n.whole, sv.cutEnd(req.End)
	out, err := n.store.ScanNotify(ctx, &in)
	return out, n.fix(err)
}

// ClearNotify implements kvrpc.Backend.
func (n *Node) ClearNotify(ctx context.Context, rc kv.RegionCtx, entries []kv.NotifyEntry) error {
	keys := make([][]byte, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	ctx, _, err := n.serve(ctx, rc, keys...)
	if err != nil {
		return err
	}
	return n.fix(n.store.ClearNotify(ctx, n.whole, entries))
}

// ScanChanges implements kvrpc.Backend.
func (n *Node) ScanChanges(ctx context.Context, req *kv.ScanChangesRequest) ([]kv.Change, error) {
	ctx, sv, err := n.serve(ctx, req.Region, req.Start)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.End = n.whole, sv.cutEnd(req.End)
	out, err := n.store.ScanChanges(ctx, &in)
	return out, n.fix(err)
}

// Coprocessor implements kvrpc.Backend.
// Of a request of many ranges, every range must start in the region; the
// last is cut to it.
func (n *Node) Coprocessor(ctx context.Context, req *kv.CoprocessorRequest) (*kv.CoprocessorResponse, error) {
	ctx, sv, err := n.serve(ctx, req.Region, rangeStarts(req.Start, req.Ranges)...)
	if err != nil {
		return nil, err
	}
	in := *req
	in.Region, in.End = n.whole, sv.cutEnd(req.End)
	if len(req.Ranges) > 0 {
		in.End, in.Ranges = req.End, cutLastRange(sv, req.Ranges)
	}
	out, err := n.store.Coprocessor(ctx, &in)
	if err == nil {
		// The pairs the program read; their bytes are not counted.
		n.load.read(req.Region.RegionID, int(out.Visited), 0)
	}
	return out, n.fix(err)
}

// rangeStarts is the keys a request of [start, ...) or of ranges must
// find in the region: start, or every range's start.
func rangeStarts(start []byte, ranges []kv.KeyRange) [][]byte {
	if len(ranges) == 0 {
		return [][]byte{start}
	}
	keys := make([][]byte, len(ranges))
	for i, kr := range ranges {
		keys[i] = kr.Start
	}
	return keys
}

// cutLastRange returns a copy of ranges whose last range is cut to the
// region sv serves (an empty End: the region's end).
func cutLastRange(sv served, ranges []kv.KeyRange) []kv.KeyRange {
	out := append([]kv.KeyRange(nil), ranges...)
	last := &out[len(out)-1]
	last.End = sv.cutEnd(last.End)
	return out
}
