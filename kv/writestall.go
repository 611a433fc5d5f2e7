package kv

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
)

// Writes on a full disk whose storage cannot flush (issue 22).
//
// Pebble makes a write wait (its write stall) while its memtables wait
// for a flush, and a write waiting there cannot be cancelled: Pebble's
// Apply takes no context, and every later write queues behind it. On a
// full disk a flush can fail for want of space until space is freed
// (the compaction gate keeps compactions from taking what the ballast
// gave back, but another program can take it). So while Pebble reports a
// stall and the space guard counts the disk as full, the store refuses
// every write before it reaches Pebble, the ones a full disk otherwise
// accepts (commits, rollbacks, deletes) included, with a *DiskFullError
// that says so: the statement fails at once with 1021 instead of
// hanging, and what it prewrote is rolled back (or resolved by the locks'
// owners and readers) once space is freed. Reads go on.
type writeStall struct {
	// stalled counts the writers Pebble holds in its write stall
	// (WriteStallBegin less WriteStallEnd).
	stalled atomic.Int32
	// now is time.Now; replaced in tests.
	now func() time.Time

	// mu guards the stall's clock: since is when the running stall
	// began (stalled went from 0 to 1), total the time of the stalls
	// that ended, stalls how many began.
	mu     sync.Mutex
	since  time.Time
	total  time.Duration
	stalls uint64
}

func newWriteStall() *writeStall { return &writeStall{now: time.Now} }

// listen adds the stall's handlers to Pebble's event listener. Pebble
// calls them holding its DB mutex: they only count.
func (w *writeStall) listen(l *pebble.EventListener) {
	l.WriteStallBegin = func(pebble.WriteStallBeginInfo) { w.begin() }
	l.WriteStallEnd = w.end
}

// begin counts a writer Pebble holds; the first starts the clock.
func (w *writeStall) begin() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled.Add(1) == 1 {
		w.since = w.now()
		w.stalls++
	}
}

// end counts a writer Pebble let go; the last stops the clock.
func (w *writeStall) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled.Add(-1) == 0 {
		w.total += w.now().Sub(w.since)
	}
}

// figures returns whether writes are stalled now, how many stalls began
// and their time in all, the running one's included.
func (w *writeStall) figures() (stalled bool, stalls uint64, total time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	total = w.total
	if w.stalled.Load() > 0 {
		stalled = true
		total += w.now().Sub(w.since)
	}
	return stalled, w.stalls, total
}

// refuseWhileStalled returns a *DiskFullError when Pebble is stalled and
// the disk is full, or a compaction can never fit (compactgate.go: level 0
// then only grows, and a stall on its depth never ends by itself); nil
// otherwise.
func (s *Store) refuseWhileStalled() error {
	if s.stall.stalled.Load() <= 0 || s.space == nil {
		return nil
	}
	return s.space.stalledError(s.gate.neverFitting())
}
