package kv

import (
	"fmt"

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
// values, lock and write records. The notify space is left out: it holds
// hints, not data, bounded by the observers that clear them.
var dataSpaces = []byte{keyspace.Data, keyspace.Lock, keyspace.Write}

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
