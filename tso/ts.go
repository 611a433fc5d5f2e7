package tso

import "time"

// A timestamp is PD's hybrid layout: the wall clock in milliseconds in the
// high bits and a logical counter in the low LogicalBits bits:
//
//	| physical ms since the Unix epoch (46 bits) | logical (18 bits) |
//
// so one oracle can issue 2^18 = 262,144 timestamps per millisecond, and the
// physical part of any timestamp tells roughly when it was issued (lock TTLs
// are measured from the physical part of a transaction's start_ts).
const LogicalBits = 18

// logicalMask keeps the logical part of a timestamp.
const logicalMask = 1<<LogicalBits - 1

// Compose builds a timestamp from its physical (ms) and logical parts.
func Compose(physicalMs int64, logical int64) uint64 {
	return uint64(physicalMs)<<LogicalBits | uint64(logical)&logicalMask
}

// Physical returns the wall-clock milliseconds of ts.
func Physical(ts uint64) int64 { return int64(ts >> LogicalBits) }

// Logical returns the logical counter of ts.
func Logical(ts uint64) int64 { return int64(ts & logicalMask) }

// FromTime returns the smallest timestamp at wall-clock time t.
func FromTime(t time.Time) uint64 { return Compose(t.UnixMilli(), 0) }

// Time returns the wall-clock time of ts, to the millisecond.
func Time(ts uint64) time.Time { return time.UnixMilli(Physical(ts)) }
