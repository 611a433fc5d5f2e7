package kv

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble"
)

// Pebble's messages and background errors, made fit for a server.
//
// Pebble logs through its Logger (informational lines such as "WAL
// replayed" at every open) and reports every failed flush and compaction to
// EventListener.BackgroundError, then schedules the work again at once. On
// a full disk that is a loop: hundreds of thousands of identical lines a
// minute and a core or two of CPU (issue 22). pebbleEvents sends Pebble's
// lines to the store's slog logger at debug level, logs each kind of
// background error at most once per logInterval with the count of those it
// did not log, and backs off: the n-th error in a row (none for
// errorRunReset) makes the failing flush or compaction wait
// min(50ms * 2^n, maxErrorBackoff) before Pebble retries it. Pebble calls
// BackgroundError holding its DB mutex, so the wait also holds back other
// flushes and compactions and the writes waiting for room in the memtable;
// on a failing disk that is the point, and the wait is bounded so that
// Close still finishes promptly.
type pebbleEvents struct {
	log *slog.Logger
	// onDiskFull, when set, is called for a background error that ran
	// out of space (the store's spaceGuard.storageFull).
	onDiskFull func()
	sleep      func(time.Duration) // time.Sleep; replaced in tests
	now        func() time.Time
	// flushesFailed counts the memtable flushes that failed (any
	// cause): on a full disk, flushes must get the space (compactgate.go).
	flushesFailed atomic.Uint64
	// flushFailing is set while the last memtable flush failed for want
	// of space (writestall.go: writes are refused meanwhile on a full
	// disk), cleared by the next that does not.
	flushFailing atomic.Bool
	// outOfSpace counts the flushes and compactions whose writes failed
	// for want of space (not those the compaction gate held back).
	outOfSpace atomic.Uint64

	mu      sync.Mutex
	lastErr time.Time
	run     int                 // background errors in a row
	kinds   map[string]*errKind // by errorKind
}

// errKind is the log state of one kind of background error.
type errKind struct {
	logged     time.Time
	suppressed int
}

const (
	logInterval     = 10 * time.Second
	errorRunReset   = 10 * time.Second
	maxErrorBackoff = time.Second
)

func newPebbleEvents(log *slog.Logger) *pebbleEvents {
	return &pebbleEvents{log: log, sleep: time.Sleep, now: time.Now, kinds: make(map[string]*errKind)}
}

// Infof implements pebble.Logger: Pebble's informational lines, at debug.
func (p *pebbleEvents) Infof(format string, args ...any) {
	p.log.Debug("pebble: " + fmt.Sprintf(format, args...))
}

// Fatalf implements pebble.Logger: Pebble found the store unusable
// (corruption); it expects the process to end, as its default logger does.
func (p *pebbleEvents) Fatalf(format string, args ...any) {
	p.log.Error("pebble: fatal: " + fmt.Sprintf(format, args...))
	os.Exit(1)
}

// flushEnd is Pebble's EventListener.FlushEnd.
func (p *pebbleEvents) flushEnd(info pebble.FlushInfo) {
	if info.Err != nil {
		p.flushesFailed.Add(1)
	}
	// Any other outcome (an empty flush's "error" included) is not for
	// want of space.
	p.flushFailing.Store(errors.Is(info.Err, syscall.ENOSPC))
}

// backgroundError is Pebble's EventListener.BackgroundError.
func (p *pebbleEvents) backgroundError(err error) {
	now := p.now()
	kind := errorKind(err)
	p.mu.Lock()
	if now.Sub(p.lastErr) > errorRunReset {
		p.run = 0
	}
	p.lastErr = now
	wait := min(50*time.Millisecond<<min(p.run, 10), maxErrorBackoff)
	if isCompactionRoomError(err) {
		// The compaction gate waited already, holding no lock of
		// Pebble's; waiting here would hold up flushes and writes.
		wait = 0
	} else {
		p.run++
	}
	k := p.kinds[kind]
	if k == nil {
		k = &errKind{}
		p.kinds[kind] = k
	}
	logNow := k.logged.IsZero() || now.Sub(k.logged) >= logInterval
	suppressed := k.suppressed
	if logNow {
		k.logged, k.suppressed = now, 0
	} else {
		k.suppressed++
	}
	p.mu.Unlock()
	if logNow && wait == 0 {
		p.log.Warn("storage background error", "kind", kind, "err", err.Error(), "not_logged_since_last", suppressed)
	} else if logNow {
		// err.Error(), not err: slog would print Pebble's errors with
		// their stack traces.
		p.log.Warn("storage background error; retrying with backoff", "kind", kind, "err", err.Error(), "not_logged_since_last", suppressed, "backoff", wait)
	}
	if kind == kindDiskFull && wait > 0 {
		p.outOfSpace.Add(1)
	}
	if kind == kindDiskFull && p.onDiskFull != nil {
		p.onDiskFull()
	}
	if wait > 0 {
		p.sleep(wait)
	}
}

// kindDiskFull is the errorKind of running out of space.
const kindDiskFull = "disk full"

// errorKind names the class of a background error for rate limiting.
func errorKind(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return kindDiskFull
	case errors.Is(err, syscall.EIO):
		return "I/O error"
	case errors.Is(err, syscall.EROFS):
		return "read-only file system"
	}
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return fmt.Sprintf("%T", err)
		}
		err = inner
	}
}
