package kv

import (
	"fmt"
	"time"

	"github.com/percdb/percdb/kv/internal/keyspace"
)

// DiskSpace is the state of the store's file system as its disk
// protection (space.go) sees it, for an operator's storage page.
type DiskSpace struct {
	// Dir is the store's directory.
	Dir string
	// Available and Total are the file system's free bytes (to this
	// process) and size, read now.
	Available, Total uint64
	// Reserve is the disk protection's reserve; 0 when protection is off
	// (Options.ReserveSpace < 0) or the platform cannot read free space.
	Reserve uint64
	// Full: the store refuses writes that add data until Available is
	// twice Reserve.
	Full bool
}

// DiskSpace reads the store's file system now; a store in memory has
// none and gets the zero DiskSpace.
func (s *Store) DiskSpace() (DiskSpace, error) {
	if err := s.enter(); err != nil {
		return DiskSpace{}, fmt.Errorf("disk space: %w", err)
	}
	defer s.exit()
	out := DiskSpace{Dir: s.dir}
	if s.dir == "" {
		return out, nil // in memory: no file system
	}
	u, err := statfsUsage(s.dir)
	if err != nil {
		return out, fmt.Errorf("disk space of %s: %w", s.dir, err)
	}
	out.Available, out.Total = u.avail, u.total
	if g := s.space; g != nil {
		g.mu.Lock()
		out.Reserve, out.Full = g.reserve, g.full
		g.mu.Unlock()
	}
	return out, nil
}

// ApproximateSize estimates the disk space of the user keys in [start,
// end) (end nil: to the end of the key space): their locks, write records
// and long values, from the sizes of the table files that hold them
// (Pebble's EstimateDiskUsage), so it reads no key. Data still in
// memtables counts as nothing until it is flushed.
func (s *Store) ApproximateSize(start, end []byte) (uint64, error) {
	if err := s.enter(); err != nil {
		return 0, fmt.Errorf("approximate size: %w", err)
	}
	defer s.exit()
	var total uint64
	for _, sp := range dataSpaces {
		if sp == keyspace.Latest && s.latest.load()&3 == latestStateOff && len(s.latest.ranges.set.Load().rangesOrNil()) == 0 {
			// Off, the space holds nothing (or what its clearing left
			// for compaction), and Pebble's estimate of an empty range
			// inside a table file is the size of the block around it.
			continue
		}
		lo, hi := spaceBounds(sp, start, end)
		n, err := s.db.EstimateDiskUsage(lo, hi)
		if err != nil {
			return 0, fmt.Errorf("approximate size of [%q, %q): %w", start, end, err)
		}
		total += n
	}
	return total, nil
}

// dataSpaces are the key spaces that hold a user key's data: its long
// values, lock and write records and the copies of its newest ones. The
// notify space is left out: it holds hints, not data, bounded by the
// observers that clear them.
var dataSpaces = []byte{keyspace.Data, keyspace.Latest, keyspace.Lock, keyspace.Write}

// Flush writes the memtables to table files and waits for it, so that
// ApproximateSize counts what was written before the call.
func (s *Store) Flush() error {
	if err := s.enter(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	defer s.exit()
	if err := s.db.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}

// DiskProtectionStats are the disk protection's counters since Open, for
// an operator's metrics: how long Pebble held writes, how many writes
// the store refused, how many compactions waited for room.
type DiskProtectionStats struct {
	// Stalled: Pebble holds writes in its write stall now (its memtables
	// wait for a flush). WriteStalls counts the stalls that began and
	// StallTime is their time in all, the running one's included. A stall
	// on a disk that is not full is a flush falling behind, which ends by
	// itself.
	Stalled     bool
	WriteStalls uint64
	StallTime   time.Duration
	// WritesRefusedFull counts the writes refused with *DiskFullError
	// because the free space was below the reserve (or a waiting
	// compaction's room); WritesRefusedStalled those refused because the
	// storage was stalled on the full disk (DiskFullError.Stalled).
	WritesRefusedFull, WritesRefusedStalled uint64
	// CompactionsWaited counts the compactions that waited for disk room
	// before writing (compactgate.go), CompactionsGaveUp those of them
	// that gave up after compactionMaxWait (Pebble picks them again).
	// CompactionsNeverFit counts the compactions that needed more room
	// than the disk could ever give the store, given up on so that writes
	// go on while level 0 grows (compactgate.go).
	CompactionsWaited, CompactionsGaveUp, CompactionsNeverFit uint64
	// WritesInDoubt counts the writes whose callers stopped waiting (their
	// context ended) while the storage held them, as in a write stall;
	// WritesInDoubtPending those of them not yet applied or failed
	// (inflight.go).
	WritesInDoubt        uint64
	WritesInDoubtPending int64
}

// DiskProtectionStats returns the disk protection's counters; a store in
// memory, or one without protection, counts its write stalls only.
func (s *Store) DiskProtectionStats() DiskProtectionStats {
	var out DiskProtectionStats
	out.Stalled, out.WriteStalls, out.StallTime = s.stall.figures()
	if g := s.space; g != nil {
		g.mu.Lock()
		out.WritesRefusedFull, out.WritesRefusedStalled = g.refused, g.refusedStalled
		g.mu.Unlock()
	}
	if s.gate != nil {
		out.CompactionsWaited, out.CompactionsGaveUp, out.CompactionsNeverFit = s.gate.counts()
	}
	out.WritesInDoubt, out.WritesInDoubtPending = s.inflight.abandoned.Load(), s.inflight.pending.Load()
	return out
}
