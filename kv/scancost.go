package kv

import (
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/percdb/percdb/kv/internal/keyspace"
)

// This file measures what range reads step over in the write space, and
// hands the spans where they step over much that a compaction would drop
// to the compactor (gccompact.go): read-triggered compaction.
//
// A walk (visit) asks Pebble for one record per user key and version:
// its positioning calls (seeks and steps) each return one record. Below
// them Pebble merges the memtables and the sstables of every level, and
// the internal points it merges are those records plus what it hides:
// the point tombstones GC left and the records they delete, and older
// copies of a rewritten record, until a compaction brings them together
// and drops them. The points beyond the calls are that hidden work,
// which a scan pays for on every pass (a collected version not compacted
// costs two points: its record and its tombstone). Pebble's own read
// sampling (Options.Experimental.ReadSamplingMultiplier) does not see
// them: it samples only the keys an iterator returns (its
// Iterator.maybeSampleRead says so), and it never compacts a memtable.

// walkCost is what one reader's walks stepped over.
type walkCost struct {
	// keys counts the user keys visited, records the records Pebble
	// returned (its positioning calls), points the internal points it
	// merged to return them.
	keys, records, points uint64
	// latestKeys counts the keys visited through the latest space.
	latestKeys uint64
	// prefixSkips counts the NextPrefix calls that left a decided key
	// (decideForward).
	prefixSkips uint64
	// spans are the raw write-space spans of the walks that stepped over
	// at least scanReportHidden hidden points, each with their number.
	spans []deletedSpan
	// rng is the latest-space range (latestranges.go) of the forward
	// walks, when rangeState is walkRangeOne: all lay in it.
	rng        latestRange
	rangeState uint8
}

const (
	// scanReportHidden is the hidden points a walk must step over for
	// its span to be reported to the compactor; fewer are not worth the
	// report (a copy of two keys).
	scanReportHidden = 256
	// scanReportShare: and they must be at least 1/scanReportShare of the
	// records it read, so that a walk over many records with a few
	// tombstones among them does not count.
	scanReportShare = 4
)

// add records one walk: before are the iterator's stats when the walk
// began, lower and upper the raw bounds it walked within, last the last
// user key it visited (nil: none), exhausted whether its last call found
// no record (it counts as a call, not as a record).
func (c *walkCost) add(before *pebble.IteratorStats, iter *pebble.Iterator, lower, upper, last []byte, reverse, exhausted bool) {
	after := iter.Stats()
	const call = pebble.InterfaceCall
	calls := uint64(after.ForwardSeekCount[call] + after.ForwardStepCount[call] + after.ReverseSeekCount[call] + after.ReverseStepCount[call] -
		before.ForwardSeekCount[call] - before.ForwardStepCount[call] - before.ReverseSeekCount[call] - before.ReverseStepCount[call])
	if exhausted && calls > 0 {
		calls--
	}
	points := after.InternalStats.PointCount - before.InternalStats.PointCount
	// A NextPrefix that leaves a key with more versions merges the first
	// of them (Pebble's NextPrefix begins with a Next) and jumps over the
	// rest unmerged: that point is a record, not a hidden one. A key
	// with no more versions costs no such point, and Pebble's counters
	// do not tell the two apart, so each skip is taken for one record
	// (bounded by the points). A walk skips only where the keys keep
	// older versions (decideForward), so the hidden points are
	// undercounted only by a key of a single record among them, one
	// each; overcounting would instead compact, on every scan, ranges of
	// live versions that a compaction cannot shrink.
	calls = max(calls, min(calls+c.prefixSkips, points))
	c.prefixSkips = 0
	c.records += calls
	c.points += points
	if last == nil || points < calls+scanReportHidden || (points-calls)*scanReportShare < calls {
		return
	}
	sp := deletedSpan{count: int(points - calls)}
	if reverse {
		sp.lo, sp.hi = keyspace.WritePrefix(last), upper
	} else {
		// The last key's oldest possible version ends the span.
		sp.lo, sp.hi = lower, keyspace.WriteKey(last, 0)
	}
	c.spans = append(c.spans, sp)
}

// ScanCost is what the store's range reads (Scan, Coprocessor) stepped
// over in the write space since it opened.
type ScanCost struct {
	// Keys counts the user keys visited, Records the write records read
	// (versions, Lock and Rollback records included), Points the internal
	// points Pebble merged to read them: Points - Records were hidden
	// (GC's tombstones and the records they delete, not compacted yet).
	Keys, Records, Points uint64
	// Reported counts the hidden points of the walks reported to the
	// compactor (scanReportHidden).
	Reported uint64
}

// scanCounters accumulate ScanCost.
type scanCounters struct {
	keys, records, points, reported atomic.Uint64
	// off keeps the spans from the compactor (Options.testingNoScanReports).
	off bool
}

// noteWalks adds a reader's walks to the store's counters and hands the
// spans worth compacting to the compactor.
func (s *Store) noteWalks(c *walkCost) {
	if c.keys == 0 && c.records == 0 {
		return
	}
	s.latest.walked(c)
	s.scans.keys.Add(c.keys)
	s.scans.records.Add(c.records)
	s.scans.points.Add(c.points)
	for _, sp := range c.spans {
		if s.scans.off {
			break
		}
		s.scans.reported.Add(uint64(sp.count))
		s.compactor.read(sp)
	}
	*c = walkCost{}
}

// ScanCost returns what the store's range reads stepped over so far.
func (s *Store) ScanCost() ScanCost {
	return ScanCost{Keys: s.scans.keys.Load(), Records: s.scans.records.Load(), Points: s.scans.points.Load(), Reported: s.scans.reported.Load()}
}
