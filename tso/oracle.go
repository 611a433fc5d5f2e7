package tso

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// MaxCount is the largest count one GetTimestamps call may ask for: the
// logical values of one millisecond (logical 0 is never issued).
const MaxCount = 1<<LogicalBits - 1

// maxPhysical is the largest physical part the layout can hold.
const maxPhysical = 1<<(64-LogicalBits) - 1

// ErrClosed is returned by calls on a closed Oracle or BatchClient.
var ErrClosed = errors.New("tso: closed")

// ErrBadCount is wrapped by the error of a GetTimestamps call whose count is
// 0 or above MaxCount.
var ErrBadCount = errors.New("tso: timestamp count out of range")

// Options tunes an Oracle. The zero value gives the defaults.
type Options struct {
	// SaveWindow is how far above the issued timestamps the saved bound
	// runs: the oracle may serve timestamps up to SaveWindow of physical
	// time without touching the store. Larger windows save less often; after
	// a restart the oracle skips whatever was left of the window. It is
	// rounded down to whole milliseconds and must be at least 1 ms.
	// Default 3 s (PD's save interval).
	SaveWindow time.Duration
	// UpdateInterval is how often the background goroutine checks whether
	// less than half of the window remains, so that the window moves with
	// the wall clock even when no request asks (requests also wake it).
	// Default 50 ms (PD's tso-update-physical-interval).
	UpdateInterval time.Duration
	// Now reads the wall clock. Default time.Now. Tests inject clocks that
	// stand still or go backwards.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.SaveWindow == 0 {
		o.SaveWindow = 3 * time.Second
	}
	if o.SaveWindow < time.Millisecond {
		return o, fmt.Errorf("tso: SaveWindow %v is below 1ms", o.SaveWindow)
	}
	if o.UpdateInterval == 0 {
		o.UpdateInterval = 50 * time.Millisecond
	}
	if o.UpdateInterval < 0 {
		return o, fmt.Errorf("tso: negative UpdateInterval %v", o.UpdateInterval)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Oracle issues strictly increasing timestamps, safe across restarts; see
// the package documentation for the protocol. It is safe for concurrent use.
type Oracle struct {
	store    WindowStore
	now      func() time.Time
	windowMs int64

	mu sync.Mutex
	// last is the highest timestamp issued, or Compose(p, 0) after the
	// physical part moved to p and nothing was issued at p yet.
	last uint64
	// limitMs bounds the physical part of every timestamp issued: limitMs
	// (as Compose(limitMs, 0)) has been saved in store.
	limitMs int64
	closed  bool

	// saving holds one token: the holder is the only one calling
	// store.Save. A channel rather than a mutex so waiting honors ctx.
	saving chan struct{}
	// nudge wakes the background goroutine when a request sees less than
	// half of the window left.
	nudge  chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// Open starts an oracle over store: it loads the last saved bound, moves the
// physical part at least one millisecond above it (and up to the clock if
// that is ahead), saves a new window, and only then serves. Close stops it.
func Open(ctx context.Context, store WindowStore, opts Options) (*Oracle, error) {
	if store == nil {
		return nil, errors.New("tso: open: nil WindowStore")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	saved, err := store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("tso: open: %w", err)
	}
	o := &Oracle{
		store:    store,
		now:      opts.Now,
		windowMs: opts.SaveWindow.Milliseconds(),
		saving:   make(chan struct{}, 1),
		nudge:    make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	// Every timestamp served before is below saved; starting one
	// millisecond above it (PD's update guard) also keeps the first
	// timestamps of this run apart from a bound that was saved exactly at
	// the last instant of the previous one.
	start := max(o.nowMs(), Physical(saved)+1)
	if start > maxPhysical {
		return nil, fmt.Errorf("tso: open: saved bound %d is beyond the timestamp layout", saved)
	}
	o.last = Compose(start, 0)
	o.limitMs = start
	if err := o.maybeExtend(ctx); err != nil {
		return nil, fmt.Errorf("tso: open: %w", err)
	}
	bg, cancel := context.WithCancel(context.Background())
	o.cancel = cancel
	go o.run(bg, opts.UpdateInterval)
	return o, nil
}

// GetTimestamps issues count consecutive timestamps and returns the last:
// the caller owns [last-count+1, last]. Every timestamp is above every one
// issued before by this oracle or any earlier oracle over the same store.
// It waits on the store only when the saved window is exhausted.
func (o *Oracle) GetTimestamps(ctx context.Context, count uint32) (uint64, error) {
	if count == 0 || count > MaxCount {
		return 0, fmt.Errorf("%w: %d, want 1 to %d", ErrBadCount, count, MaxCount)
	}
	for {
		last, left, err := o.take(count)
		if err != nil {
			return 0, err
		}
		if last != 0 {
			if left <= o.windowMs/2 {
				select {
				case o.nudge <- struct{}{}:
				default:
				}
			}
			return last, nil
		}
		// The window is exhausted: save the next one ourselves.
		if err := o.maybeExtend(ctx); err != nil {
			return 0, fmt.Errorf("tso: get %d timestamps: %w", count, err)
		}
	}
}

// take issues count timestamps from memory and returns the last and how
// many milliseconds of window are left above it, or last == 0 if the
// window does not hold them.
func (o *Oracle) take(count uint32) (last uint64, leftMs int64, err error) {
	now := o.nowMs()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return 0, 0, ErrClosed
	}
	next := o.last
	if floor := Compose(now, 0); floor > next {
		next = floor // the clock moved ahead: follow it
	}
	if Logical(next)+int64(count) > MaxCount {
		// Borrow the next millisecond rather than wait for the clock.
		next = Compose(Physical(next)+1, 0)
	}
	next += uint64(count)
	if Physical(next) >= o.limitMs {
		return 0, 0, nil
	}
	o.last = next
	return next, o.limitMs - Physical(next), nil
}

// maybeExtend saves a new bound a full window above the oracle's physical
// part (or the clock, if ahead) when half the window or less remains above
// it; someone else may have just done so, then it returns at once.
func (o *Oracle) maybeExtend(ctx context.Context) error {
	select {
	case o.saving <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-o.saving }()

	now := o.nowMs()
	o.mu.Lock()
	base := max(now, Physical(o.last)+1)
	limit := o.limitMs
	o.mu.Unlock()
	if limit-base > o.windowMs/2 {
		return nil
	}
	next := base + o.windowMs
	if next > maxPhysical {
		return fmt.Errorf("tso: physical time %d ms is beyond the timestamp layout", next)
	}
	if err := o.store.Save(ctx, Compose(next, 0)); err != nil {
		return err
	}
	o.mu.Lock()
	// Only the token holder raises limitMs, but keep it monotonic anyway.
	o.limitMs = max(o.limitMs, next)
	o.mu.Unlock()
	return nil
}

// run keeps the window ahead of the clock until ctx is done. A failed save
// is retried at the next tick; requests that exhaust the window meanwhile
// report the error themselves.
func (o *Oracle) run(ctx context.Context, interval time.Duration) {
	defer close(o.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-o.nudge:
		}
		_ = o.maybeExtend(ctx)
	}
}

// Close stops the background goroutine and fails later calls with
// ErrClosed. It does not save anything: the bound already saved covers
// every timestamp issued. Calling Close twice is harmless.
func (o *Oracle) Close() {
	o.mu.Lock()
	wasClosed := o.closed
	o.closed = true
	o.mu.Unlock()
	if wasClosed {
		return
	}
	o.cancel()
	<-o.done
}

func (o *Oracle) nowMs() int64 { return o.now().UnixMilli() }
