package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/percdb/percdb/internal/ctxtime"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/raftstore"
)

// Splits on a KV node, after TiKV's: a region is split by its leader,
// on request (SplitRegion, from a SQL node's SPLIT TABLE) or when its
// split check finds it larger than Config.SplitSize. Either way the node
// asks pd for the new region's id (TiKV's AskBatchSplit; pd's AllocID
// here: a split names no new peers, since a region's raft ids are store
// ids and the new region has the parent's stores) and proposes the split
// through the region's raft group (raftstore.Leadership.Split), which
// every replica applies: the parent keeps the keys below the split key,
// the new region takes the rest, both at the next epoch version. pd's
// directory follows the stores' reports of their regions (their ranges
// and versions, with every heartbeat, and one at once after a split).

// DefaultSplitSize is Config.SplitSize's default: TiKV's region split
// size.
const DefaultSplitSize = 96 << 20

// SplitRegion implements kvrpc.RegionSplitter: this store's replica,
// leading the region, splits it at key.
func (n *Node) SplitRegion(ctx context.Context, rc kv.RegionCtx, key []byte) (left, right kv.RegionInfo, err error) {
	_, sv, err := n.serve(ctx, rc, key)
	if err != nil {
		return left, right, err
	}
	if left, right, err = n.split(ctx, sv, key); err != nil {
		return left, right, err
	}
	// pd learns both regions before the caller, who routes by pd, goes
	// on; the split stands if this fails (the next heartbeat tells pd).
	if err := n.report(ctx); err != nil {
		n.cfg.Logger.Warn("kv node: report a split", "region", left.ID, "err", err)
	}
	return left, right, nil
}

// splitConfChangeWait bounds how long split waits for a region's
// membership change to end.
const splitConfChangeWait = 10 * time.Second

// split splits the region sv leads at key with an id from pd.
//
// A split refused because the region's membership is changing (pd moving
// a replica: placement runs beside splits) is tried again, with a new id,
// until the change is done or splitConfChangeWait passes: a move takes
// well under a second, and the caller (SPLIT TABLE, the split check) has
// nothing better to do than wait for it.
func (n *Node) split(ctx context.Context, sv served, key []byte) (left, right kv.RegionInfo, err error) {
	var id uint64
	var ld, rd raftstore.Descriptor
	deadline := time.Now().Add(splitConfChangeWait)
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		if id, err = n.pd.AllocID(ctx, 1); err != nil {
			return left, right, fmt.Errorf("kv node: split: new region id: %w", err)
		}
		ld, rd, err = sv.l.Split(ctx, key, id)
		if err == nil {
			break
		}
		if errors.Is(err, raftstore.ErrConfChangeUnderWay) && time.Now().Add(wait).Before(deadline) {
			if err := ctxtime.Sleep(ctx, wait); err != nil {
				return left, right, fmt.Errorf("kv node: split: %w", err)
			}
			continue
		}
		if errors.Is(err, raftstore.ErrSplitRefused) {
			return left, right, fmt.Errorf("kv node: %w", err)
		}
		return left, right, n.fix(err)
	}
	// Served at once (raftstore's OnSplit says so too, from its own
	// goroutine, maybe later).
	n.splitDone(sv.l.RegionID(), id)
	n.mu.RLock()
	parent, child := n.regions[sv.l.RegionID()], n.regions[id]
	n.mu.RUnlock()
	if parent != nil {
		left = regionInfo(parent, ld)
	}
	if child != nil {
		right = regionInfo(child, rd)
	} else {
		right = kv.RegionInfo{ID: id, Start: rd.Start, End: rd.End, Epoch: kv.RegionEpoch{ConfVer: left.Epoch.ConfVer, Version: rd.Version}}
	}
	left.ID = sv.l.RegionID()
	return left, right, nil
}

// startSplitCheck runs a split check in its own goroutine unless one
// runs already: a split waits for its raft entry's fate, which a region
// without a quorum does not settle, and the heartbeat must go on.
func (n *Node) startSplitCheck(ctx context.Context) {
	if !n.checking.CompareAndSwap(false, true) {
		return
	}
	n.bg.Add(1)
	go func() {
		defer n.bg.Done()
		defer n.checking.Store(false)
		n.splitCheck(ctx)
	}()
}

// splitCheck checks the size of each region this store leads whose
// replica applied at least an eighth of Config.SplitSize since its last
// check (every region once after the node started), and splits the ones
// larger than SplitSize at their middle key. One at a time
// (startSplitCheck).
func (n *Node) splitCheck(ctx context.Context) {
	type candidate struct {
		r     *replica
		bytes uint64
	}
	var todo []candidate
	n.mu.RLock()
	for id, r := range n.regions {
		applied := r.raft.AppliedBytes()
		last, seen := n.checked[id]
		if seen && applied-last < uint64(n.cfg.SplitSize)/8 {
			continue
		}
		if _, err := r.raft.Leading(); err != nil {
			continue
		}
		todo = append(todo, candidate{r, applied})
	}
	n.mu.RUnlock()
	for _, c := range todo {
		n.checked[c.r.raft.ID()] = c.bytes
		d := c.r.raft.Region()
		size, middle, err := n.store.SplitCheck(ctx, d.Start, d.End)
		if err != nil {
			n.cfg.Logger.Warn("kv node: split check", "region", c.r.raft.ID(), "err", err)
			continue
		}
		if size <= uint64(n.cfg.SplitSize) || middle == nil {
			continue
		}
		l, err := c.r.raft.Leading()
		if err != nil {
			continue
		}
		sv := served{l: l, desc: l.Region()}
		if !sv.desc.Contains(middle) {
			continue // split meanwhile
		}
		left, right, err := n.split(ctx, sv, middle)
		if err != nil {
			n.cfg.Logger.Warn("kv node: split by size", "region", c.r.raft.ID(), "size", size, "err", err)
			continue
		}
		n.cfg.Logger.Info("kv node: region split by size", "region", left.ID, "size", size, "new_region", right.ID,
			"key", fmt.Sprintf("%q", middle))
		// Both halves are checked again at the next heartbeat.
		delete(n.checked, left.ID)
	}
}
