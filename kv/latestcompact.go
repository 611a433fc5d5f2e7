package kv

import (
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// Compacting the latest space under churn. Every commit rewrites its
// key's copy in place, and the copy it shadows stays in the memtable or
// a level-0 table until a compaction brings the two together: a walk
// through the space steps over each such copy (a hidden point, Pebble's
// merging iterator's Next over the older copy). GC's compactions drop
// them only by the way: GC deletes versions of the write space, never
// copies, and its compactions are of the write space's spans, which
// reach copies only in the level-0 tables that hold both. Under
// sysbench-like churn at 1,400 updates a second on 100,000 rows
// (gcbench, issue 16) a churned scan with the space on ran at 1.13-1.34x
// a fresh one, Pebble's steps between user keys 22% of its profile
// (docs/benchmarks.md, branch latest5).
//
// Walks cannot pay for compacting them (latest.go, visitLatest: under
// sysbench oltp_read_write the walks' reports made 25-33 compactions in
// 15 s that the next updates undid), so the writes do: once the copies
// derived since the space was last compacted add up to 1/latestCompactShare
// of its bytes in table files (at least latestCompactMinBytes), the
// space is handed to the GC compactor, which compacts it with the
// spans GC cleaned, one compaction at a time and resting as long as
// each took (gccompact.go). A copy then shadows another for at most
// that share of the space's rewrites; the cost is a rewrite of the
// space per that many copies' bytes, about the write amplification of
// one more level, and only while the space is kept (on or building).

const (
	// latestCompactShare: the space is compacted once the copies
	// derived since its last compaction make 1/latestCompactShare of its
	// bytes in table files (compressed, so somewhat more of its copies).
	latestCompactShare = 2
	// latestCompactMinBytes: and at least this many bytes of copies.
	latestCompactMinBytes = 1 << 20
	// latestCompactCheck is the bytes of copies between two looks at the
	// space's size (a look reads the file metadata).
	latestCompactCheck = 256 << 10
)

// churned counts the bytes of copies (and of their deletions) an apply
// derived, and asks for a compaction of the space once they make a share
// of its size.
func (l *latestSpace) churned(bytes uint64) {
	if bytes == 0 || l.compact == nil {
		return
	}
	c := l.churn.Add(bytes)
	if c < latestCompactMinBytes || c-bytes >= latestCompactMinBytes && c/latestCompactCheck == (c-bytes)/latestCompactCheck {
		return // below the minimum, or no new step of latestCompactCheck crossed
	}
	if c*latestCompactShare < l.size() {
		return
	}
	if l.churn.CompareAndSwap(c, 0) {
		l.compact()
	}
}

// latestSpan is the whole latest space as a compactor's span ([lo, hi]).
func latestSpan() deletedSpan {
	return deletedSpan{lo: keyspace.SpaceStart(keyspace.Latest), hi: keyspace.SpaceEnd(keyspace.Latest)}
}

// opBytes is the bytes of keys and values of wb's ops from index from on.
func (wb *writeBatch) opBytes(from int) uint64 {
	n := 0
	for i := from; i < len(wb.ops); i++ {
		n += len(wb.ops[i].key) + len(wb.ops[i].value)
	}
	return uint64(n)
}
