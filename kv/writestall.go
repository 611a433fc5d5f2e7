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

	// refusal returns the error of a write refused now for the stall
	// (Store.stallRefusal), nil when none is; set by Open before the
	// store takes writes, nil before (nothing then waits to be told).
	refusal func() *DiskFullError
	// poll is stallPoll; replaced in tests.
	poll time.Duration
	// refuse is the signal's channel: closed while the store refuses
	// writes for the stall, replaced by an open one once it does not.
	// Stored under mu, loaded without it.
	refuse atomic.Pointer[chan struct{}]
	// watching: a watcher runs (under mu).
	watching bool
}

// stallPoll is how often the watcher reads the state of a stalled store:
// how long a wait on a write held in Pebble lasts, at most, once the
// store refuses writes.
const stallPoll = 50 * time.Millisecond

func newWriteStall() *writeStall {
	w := &writeStall{now: time.Now, poll: stallPoll}
	ch := make(chan struct{})
	w.refuse.Store(&ch)
	return w
}

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
	if !w.watching && w.refusal != nil {
		w.watching = true
		go w.watch()
	}
}

// setRefusal sets refusal, and starts the watcher if Pebble stalled
// before it was set.
func (w *writeStall) setRefusal(refusal func() *DiskFullError) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.refusal = refusal
	if !w.watching && w.stalled.Load() > 0 {
		w.watching = true
		go w.watch()
	}
}

// watch closes the signal's channel once the stalled store refuses
// writes, and returns when the stall ends.
func (w *writeStall) watch() {
	t := time.NewTicker(w.poll)
	defer t.Stop()
	for {
		w.mu.Lock()
		if w.stalled.Load() <= 0 {
			w.watching = false
			w.mu.Unlock()
			return
		}
		w.refreshLocked()
		w.mu.Unlock()
		<-t.C
	}
}

// refreshLocked sets the signal from the store's state: its channel
// closed if the store refuses writes now, open if not. Called with mu
// held.
func (w *writeStall) refreshLocked() {
	ch := w.refuse.Load()
	refusing := w.refusal != nil && w.refusal() != nil
	closed := isClosed(*ch)
	switch {
	case refusing && !closed:
		close(*ch)
	case !refusing && closed:
		fresh := make(chan struct{})
		w.refuse.Store(&fresh)
	}
}

// refusing returns a channel that is closed while the store refuses
// writes for a stall on a full disk: a wait on a write Pebble holds ends
// when it is (see the type's comment).
func (w *writeStall) refusing() <-chan struct{} {
	ch := *w.refuse.Load()
	if !isClosed(ch) {
		return ch
	}
	// Closed: the store refused writes when last looked at. If it
	// accepts them again, a waiter must wait anew, on an open channel.
	w.mu.Lock()
	defer w.mu.Unlock()
	w.refreshLocked()
	return *w.refuse.Load()
}

// isClosed reports whether ch is closed.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
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

// refuseWhileStalled returns, and counts, a *DiskFullError when the
// store refuses every write (stallRefusal); nil otherwise.
func (s *Store) refuseWhileStalled() error {
	if e := s.stallRefusal(); e != nil {
		s.space.countStalled()
		return e
	}
	return nil
}

// stallRefusal returns the *DiskFullError of a write refused because the
// storage cannot take it without meeting a stall that does not end by
// itself: Pebble is stalled and the disk is full, or a compaction can
// never fit (compactgate.go: level 0 then only grows, and a stall on its
// depth never ends by itself); or a memtable flush failed for want of
// space and the disk is full (the next memtable to fill meets the
// stall). nil otherwise.
func (s *Store) stallRefusal() *DiskFullError {
	if s.space == nil {
		return nil
	}
	if s.stall.stalled.Load() > 0 {
		return s.space.stalledError(s.gate.neverFitting())
	}
	if s.events.flushFailing.Load() {
		return s.space.stalledError(false)
	}
	return nil
}
