package node

import (
	"context"
	"time"

	"github.com/percdb/percdb/pd/pdpb"
)

// spaceRefreshEvery is how old the store's used size may be before the
// heartbeat loop has it refreshed (off its path: refreshUsed runs in a
// goroutine of its own, as a split check does).
const spaceRefreshEvery = 10 * time.Second

// space describes the store's disk for its heartbeat (pd's placement
// avoids stores low on space): the file system's size, or Config.Capacity
// when that is smaller; the bytes the store's engines hold (usedBytes, as
// last refreshed); what is available, the file system's free bytes, and
// no more than the capacity less what the engines hold; and whether the
// disk protection refuses writes. nil when the store has no file system
// (in memory) or its space cannot be read: pd then counts the store as
// having room, as before.
func (n *Node) space() *pdpb.StoreSpace {
	ds, err := n.store.DiskSpace()
	if err != nil || ds.Total == 0 {
		return nil
	}
	used := uint64(n.usedBytes.Load())
	sp := &pdpb.StoreSpace{Capacity: ds.Total, Available: ds.Available, Used: used, DiskFull: ds.Full}
	if c := uint64(n.cfg.Capacity); c > 0 && c < sp.Capacity {
		sp.Capacity = c
		sp.Available = min(sp.Available, c-min(used, c))
	}
	return sp
}

// refreshUsed takes the bytes the store's engines hold on disk from
// their Pebble metrics (live and obsolete table files, logs, manifests,
// compactions under way): the KV store's and the raft engine's, which
// are what the data directory holds besides the node's state file. It
// replaced a walk of the directory at every heartbeat, whose cost grew
// with the files it holds. It keeps the previous figure when the store
// is closed.
func (n *Node) refreshUsed() {
	m, err := n.store.Metrics()
	if err != nil {
		return
	}
	raftBytes, err := n.raft.DiskUsage()
	if err != nil {
		return
	}
	n.usedBytes.Store(int64(m.DiskSpaceUsage() + raftBytes))
	n.usedAt.Store(time.Now().UnixNano())
}

// startSpaceRefresh refreshes the used size in a goroutine of its own
// when it is older than spaceRefreshEvery, unless a refresh runs already.
func (n *Node) startSpaceRefresh(ctx context.Context) {
	if time.Since(time.Unix(0, n.usedAt.Load())) < spaceRefreshEvery || ctx.Err() != nil || !n.refreshing.CompareAndSwap(false, true) {
		return
	}
	n.bg.Add(1)
	go func() {
		defer n.bg.Done()
		defer n.refreshing.Store(false)
		n.refreshUsed()
	}()
}
