package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Go's collector, at its default target (GOGC=100), collects whenever the
// heap has doubled since the last collection. percdb's live heap is small
// (about 20 MiB under sysbench: Pebble's block cache is not on the Go heap)
// while every statement allocates, so the node collected about four times
// a second per 1,000 statements and the collector's marking took 7-9% of
// the server's CPU in a sysbench oltp_read_only profile. A target of 400
// collects a quarter as often; a soft memory limit (runtime/debug
// SetMemoryLimit) makes the collector work harder as the heap nears it, so
// that a large live heap (a big transaction's buffered writes, a sort) is
// not allowed to grow five-fold past what the machine has. This is what
// TiDB's GOGC tuner does too (GOGC up to 500 below its memory limit).

// defaultGCPercent is --gc-percent's default.
const defaultGCPercent = 400

// memoryLimitShare is the share of the machine's memory --memory-limit
// auto sets the soft limit to.
const memoryLimitShare = 0.75

// gcSettings are the collector's settings a node starts with: what the
// flags ask, unless the environment (GOGC, GOMEMLIMIT) already set them
// and the flags were not given.
type gcSettings struct {
	// percent is the GOGC to set; 0 leaves the runtime's.
	percent int
	// limit is the soft memory limit to set in bytes; 0 leaves the
	// runtime's.
	limit int64
}

// gcFromFlags decides the collector's settings from --gc-percent and
// --memory-limit (given tells whether each was on the command line),
// getenv and the machine's memory in bytes (0: unknown).
func gcFromFlags(percent int, percentGiven bool, limit string, limitGiven bool, getenv func(string) string, machine int64) (gcSettings, error) {
	var s gcSettings
	if percent < -1 || percent == 0 {
		return s, fmt.Errorf("--gc-percent %d: want a positive percentage, or -1 to turn the collector off", percent)
	}
	if percentGiven || getenv("GOGC") == "" {
		s.percent = percent
	}
	if !limitGiven && getenv("GOMEMLIMIT") != "" {
		return s, nil
	}
	if strings.EqualFold(strings.TrimSpace(limit), "auto") {
		if machine > 0 {
			s.limit = int64(float64(machine) * memoryLimitShare)
		}
		return s, nil
	}
	n, err := parseByteSize(limit)
	if err != nil {
		return s, fmt.Errorf("--memory-limit %q: want auto, 0 or a size such as 4GiB", limit)
	}
	if n == 0 {
		n = math.MaxInt64 // no limit, the runtime's default
	}
	s.limit = n
	return s, nil
}

// apply sets the collector's target and limit.
func (s gcSettings) apply() {
	if s.percent != 0 {
		debug.SetGCPercent(s.percent)
	}
	if s.limit != 0 {
		debug.SetMemoryLimit(s.limit)
	}
}

// machineMemory returns the machine's memory in bytes (MemTotal of
// /proc/meminfo), or 0 where it is not known.
func machineMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 && kb < math.MaxInt64>>10 {
				return kb << 10
			}
		}
	}
	return 0
}
