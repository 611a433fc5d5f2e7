package kv

import (
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/txntypes"
)

// lockSet records in memory which keys hold a lock in the lock space, so
// that a read of a key without a lock (nearly every read) skips the Pebble
// lookup of its lock, which misses through every level.
//
// The set may hold a key that has no lock, never the reverse. The applier
// keeps it so (lockSet.beforeApply and afterApply around every batch):
//
//   - a key whose lock a batch writes is added before the batch is applied,
//     so a lock is never in Pebble without being in the set;
//   - a key whose lock a batch deletes is removed only after the batch is
//     applied, so the set never drops a lock Pebble still holds;
//   - a batch that fails to apply removes nothing (what it added stays: a
//     key in the set without a lock costs a Pebble lookup, nothing more).
//
// Every change of a key's lock happens under the key's latch, so for a
// command holding a key's latch the set is exact on that key: absent means
// no lock. A reader takes no latches; it reads with lockSet.probe and
// lockSetProbe.unchanged around its Pebble reads. Each shard counts its
// changes (a seqlock: odd while one is under way), and a key absent at the
// probe, in a shard that did not change until after the reads, had no lock
// at any instant in between, in particular at the instant of the reads.
// A changed shard sends the reader to Pebble's lock space.
//
// The set is rebuilt from the lock space when the store opens
// (loadLockSet). A replicated store maintains it in its raft applier,
// where the single-node store does in pebbleApplier: every replica applies
// the same batches in the same order.
type lockSet struct {
	seed maphash.Seed
	// all counts the keys of every shard, and adds the keys ever added (an
	// add counts in all before it counts in adds).
	all  atomic.Int64
	adds atomic.Uint64
	// blocking and blockingAdds are all and adds for the locks that may
	// block a read: a range read needs none of those in the whole set
	// (probeBlocking, noBlockingAddsSince). Pessimistic locks and
	// lock-type locks never block a read (blocksRead); a transaction
	// holding a pessimistic lock on any row used to send every range read
	// of the store to the lock space, which under sysbench oltp_read_write
	// at 4 threads was nearly every one. A key whose lock becomes one that
	// blocks (a pessimistic lock prewritten) counts then; one whose kind
	// is not known counts as blocking.
	blocking     atomic.Int64
	blockingAdds atomic.Uint64
	shards       [lockSetShards]lockSetShard
}

// lockSetShards is the number of shards: a power of two, large enough that
// a reader rarely shares a shard with a concurrent writer.
const lockSetShards = 256

// lockSetShard is one shard of a lockSet.
type lockSetShard struct {
	// seq counts the shard's changes: odd while one is under way, bumped
	// under mu. Readers load it without mu.
	seq atomic.Uint64
	// n is len(keys), readable without mu: most probes meet an empty
	// shard.
	n  atomic.Int64
	mu sync.Mutex
	// keys are the locked keys (user keys, not lock-space keys), each
	// with whether its lock may block a read.
	keys map[string]bool
	// pad keeps neighbouring shards off each other's cache lines.
	_ [64]byte
}

func newLockSet() *lockSet {
	s := &lockSet{seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].keys = map[string]bool{}
	}
	return s
}

// loadLockSet builds the set from the lock space of db.
func loadLockSet(db pebble.Reader) (*lockSet, error) {
	s := newLockSet()
	r := newMVCCReader(db)
	defer r.close()
	var keys [][]byte
	err := r.locks(nil, nil, false, func(key []byte, _ *txntypes.Lock) bool {
		keys = append(keys, key)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("load lock set: %w", err)
	}
	s.add(keys)
	return s, nil
}

func (s *lockSet) shard(key []byte) *lockSetShard {
	return &s.shards[maphash.Bytes(s.seed, key)&(lockSetShards-1)]
}

// add records locks on keys, all of which may block a read.
func (s *lockSet) add(keys [][]byte) { s.addKinds(keys, nil) }

// addKinds records locks on keys; quiet[i] tells that the lock of keys[i]
// never blocks a read (nil: every one may).
func (s *lockSet) addKinds(keys [][]byte, quiet []bool) {
	for i, k := range keys {
		blocks := quiet == nil || !quiet[i]
		sh := s.shard(k)
		sh.mu.Lock()
		was, ok := sh.keys[string(k)]
		switch {
		case !ok:
			sh.seq.Add(1)
			sh.keys[string(k)] = blocks
			sh.n.Add(1)
			s.all.Add(1)
			s.adds.Add(1)
			if blocks {
				s.blocking.Add(1)
				s.blockingAdds.Add(1)
			}
			sh.seq.Add(1)
		case blocks && !was:
			// A quiet lock replaced by one that blocks. (The reverse
			// keeps counting as blocking until the key is removed.)
			sh.seq.Add(1)
			sh.keys[string(k)] = true
			s.blocking.Add(1)
			s.blockingAdds.Add(1)
			sh.seq.Add(1)
		}
		sh.mu.Unlock()
	}
}

// remove forgets the locks of keys.
func (s *lockSet) remove(keys [][]byte) {
	for _, k := range keys {
		sh := s.shard(k)
		sh.mu.Lock()
		if blocks, ok := sh.keys[string(k)]; ok {
			sh.seq.Add(1)
			delete(sh.keys, string(k))
			sh.n.Add(-1)
			s.all.Add(-1)
			if blocks {
				s.blocking.Add(-1)
			}
			sh.seq.Add(1)
		}
		sh.mu.Unlock()
	}
}

// has reports whether key is in the set. Exact for a caller holding key's
// latch; for others see probe.
func (s *lockSet) has(key []byte) bool {
	sh := s.shard(key)
	if sh.n.Load() == 0 {
		return false
	}
	sh.mu.Lock()
	_, ok := sh.keys[string(key)]
	sh.mu.Unlock()
	return ok
}

// lockSetProbe is what a latch-free reader saw of one key's shard.
type lockSetProbe struct {
	sh  *lockSetShard
	seq uint64
}

// probe looks key up for a reader that holds no latch. free reports that
// key had no lock that may block a read (none, or a pessimistic or
// lock-type one, which blocksRead passes) at the instant of the probe; the
// reader then reads Pebble and calls unchanged, which tells whether that
// still held throughout the reads.
func (s *lockSet) probe(key []byte) (p lockSetProbe, free bool) {
	sh := s.shard(key)
	seq := sh.seq.Load()
	if seq&1 != 0 {
		return lockSetProbe{}, false
	}
	if sh.n.Load() != 0 {
		sh.mu.Lock()
		blocks := sh.keys[string(key)]
		sh.mu.Unlock()
		if blocks {
			return lockSetProbe{}, false
		}
	}
	return lockSetProbe{sh: sh, seq: seq}, true
}

// unchanged reports whether the probed shard has not changed since the
// probe: then the key had no lock from the probe until now.
func (p lockSetProbe) unchanged() bool { return p.sh.seq.Load() == p.seq }

// probeBlocking is probe for a reader of a range: none reports that no
// key held a lock that may block a read at the instant of the probe. The
// reader then reads Pebble and calls noBlockingAddsSince(adds): true
// means that no such lock was written until then either. (A lock added
// before the probe counts in blocking, one added after it counts in
// blockingAdds before it reaches Pebble.)
func (s *lockSet) probeBlocking() (adds uint64, none bool) {
	adds = s.blockingAdds.Load()
	return adds, s.blocking.Load() == 0
}

// noBlockingAddsSince reports whether no lock that may block a read was
// added since probeBlocking returned adds.
func (s *lockSet) noBlockingAddsSince(adds uint64) bool { return s.blockingAdds.Load() == adds }

// beforeApply records the locks wb writes; the applier calls it before it
// applies wb.
func (s *lockSet) beforeApply(wb *writeBatch) {
	if len(wb.lockPuts) > 0 {
		quiet := wb.lockQuiet
		if len(quiet) != len(wb.lockPuts) {
			quiet = nil // kinds unknown (a replicated batch of version 1): all block
		}
		s.addKinds(wb.lockPuts, quiet)
	}
}

// afterApply forgets the locks wb deleted (unless wb also writes them
// again); the applier calls it once wb is applied.
func (s *lockSet) afterApply(wb *writeBatch) {
	if len(wb.lockDels) == 0 {
		return
	}
	if len(wb.lockPuts) == 0 {
		s.remove(wb.lockDels)
		return
	}
	put := make(map[string]bool, len(wb.lockPuts))
	for _, k := range wb.lockPuts {
		put[string(k)] = true
	}
	var gone [][]byte
	for _, k := range wb.lockDels {
		if !put[string(k)] {
			gone = append(gone, k)
		}
	}
	s.remove(gone)
}

// LockSetStats counts the locks a store holds now.
type LockSetStats struct {
	// Locks counts the keys that hold a lock.
	Locks int64
	// Blocking counts those whose lock may block a read (not a
	// pessimistic or lock-type lock): while it is above 0, range reads
	// check the lock space.
	Blocking int64
	// LockedRangeReads counts the range reads (Scan, Coprocessor) since
	// the store opened that read the lock space: the set could not show
	// that no lock that may block them was there.
	LockedRangeReads uint64
}

// LockSetStats returns the store's lock counts now.
func (s *Store) LockSetStats() LockSetStats {
	return LockSetStats{Locks: s.locks.all.Load(), Blocking: s.locks.blocking.Load(), LockedRangeReads: s.lockedRangeReads.Load()}
}
