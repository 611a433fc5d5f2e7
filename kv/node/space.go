package node

import (
	"io/fs"
	"path/filepath"

	"github.com/percdb/percdb/pd/pdpb"
)

// space describes the store's disk for its heartbeat (pd's placement
// avoids stores low on space): the file system's size, or Config.Capacity
// when that is smaller; the bytes the data directory holds; what is
// available, the file system's free bytes, and no more than the capacity
// less what the directory holds; and whether the disk protection refuses
// writes. nil when the store has no file system (in memory) or its space
// cannot be read: pd then counts the store as having room, as before.
func (n *Node) space() *pdpb.StoreSpace {
	ds, err := n.store.DiskSpace()
	if err != nil || ds.Total == 0 {
		return nil
	}
	used := dirSize(n.cfg.DataDir)
	sp := &pdpb.StoreSpace{Capacity: ds.Total, Available: ds.Available, Used: used, DiskFull: ds.Full}
	if c := uint64(n.cfg.Capacity); c > 0 && c < sp.Capacity {
		sp.Capacity = c
		sp.Available = min(sp.Available, c-min(used, c))
	}
	return sp
}

// dirSize sums the sizes of the files under dir (files that vanish while
// it walks, as compactions delete them, count as nothing).
func dirSize(dir string) uint64 {
	var total uint64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			total += uint64(info.Size())
		}
		return nil
	})
	return total
}
