package node

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/raftstore"
)

// TestUsedSpaceIsCachedOffTheHeartbeat: the used space a heartbeat
// reports is the engines' disk usage (Pebble's metrics of the KV store
// and the raft engine) as last refreshed, not a walk of the data
// directory at every heartbeat (its cost grew with the files there): a
// file no engine holds changes nothing, and the heartbeat loop has the
// figure refreshed, in a goroutine of its own, only once it is older
// than spaceRefreshEvery.
func TestUsedSpaceIsCachedOffTheHeartbeat(t *testing.T) {
	dir := t.TempDir()
	store, err := kv.Open(filepath.Join(dir, "kv"), kv.Options{ReserveSpace: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rs, err := raftstore.Open(raftstore.Config{StoreID: 1, Dir: filepath.Join(dir, "raft"), Applier: nopApplier{}, Transport: nopTransport{},
		FreshTS: func(context.Context) (uint64, error) { return 1, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	n := &Node{cfg: Config{DataDir: dir, Capacity: 1 << 40}, store: store, raft: rs, regions: map[uint64]*replica{}}
	n.refreshUsed()
	used := n.space().GetUsed()
	m, err := store.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	if used == 0 || used < m.DiskSpaceUsage() {
		t.Fatalf("used space %d, the KV store alone holds %d", used, m.DiskSpaceUsage())
	}
	if err := os.WriteFile(filepath.Join(dir, "not-the-store"), make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := n.space().GetUsed(); got != used {
		t.Fatalf("used space %d after a file no engine holds was written, %d before", got, used)
	}

	// A fresh figure is not refreshed; an old one is, in the background.
	n.usedBytes.Store(1)
	n.startSpaceRefresh(context.Background())
	n.bg.Wait()
	if got := n.space().GetUsed(); got != 1 {
		t.Fatalf("a figure younger than %v was refreshed: %d", spaceRefreshEvery, got)
	}
	n.usedAt.Store(0)
	n.startSpaceRefresh(context.Background())
	n.bg.Wait()
	if got := n.space().GetUsed(); got <= 1 {
		t.Fatalf("an old figure was not refreshed: %d (the engines hold about %d)", got, used)
	}
}
