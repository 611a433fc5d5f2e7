package tso

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Source issues ranges of timestamps: GetTimestamps returns the last of
// count consecutive timestamps, so the caller owns [last-count+1, last]. An
// in-process *Oracle and the remote client of package tso/tsorpc are
// Sources.
type Source interface {
	GetTimestamps(ctx context.Context, count uint32) (last uint64, err error)
}

// nilSource stands in for a missing Source, so that a client built without
// one fails its calls instead of crashing its dispatcher.
type nilSource struct{}

func (nilSource) GetTimestamps(context.Context, uint32) (uint64, error) {
	return 0, errors.New("no timestamp Source")
}

// ClientOptions tunes a BatchClient. The zero value gives the defaults.
type ClientOptions struct {
	// MaxBatch caps the callers served by one Source call; callers beyond
	// it wait for the next call. Values above MaxCount are lowered to it,
	// since an oracle cannot issue more in one call. Default 10,000 (PD's
	// client default).
	MaxBatch uint32
	// Timeout bounds one Source call: when it runs out, the callers the
	// call serves fail with an error wrapping context.DeadlineExceeded,
	// instead of waiting as long as a stuck Source does (a remote oracle
	// that stopped answering, a disk that stopped syncing the oracle's
	// window). Callers whose own context has no deadline rely on it.
	// Default 3 s (PD's client default); negative: no bound.
	Timeout time.Duration
}

// batch is the set of callers that one Source call serves. Callers join it
// under BatchClient.mu while it is open; the dispatcher fills first and err
// and then closes done, which publishes them to the callers.
type batch struct {
	n     uint32 // callers joined; caller i gets first+i
	first uint64
	err   error
	done  chan struct{}
}

// BatchClient collects concurrent GetTimestamp calls and serves all callers
// waiting at one moment with one Source call, as PD's client dispatcher
// does. It is safe for concurrent use.
type BatchClient struct {
	src      Source
	maxBatch uint32
	timeout  time.Duration // <= 0: none

	mu sync.Mutex
	// open is the batch that new callers join; nil until the next caller.
	open *batch
	// full holds batches that reached maxBatch, oldest first; they are
	// served before open.
	full   []*batch
	closed bool

	// calls, timestamps, failures and callNanos count the Source calls,
	// the timestamps they served, the calls that failed and the time
	// spent in them (BatchStats).
	calls, timestamps, failures, callNanos atomic.Uint64

	// wake tells the dispatcher that a batch is waiting.
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// NewBatchClient starts a client over src, with one dispatcher goroutine
// that Close stops.
func NewBatchClient(src Source, opts ClientOptions) *BatchClient {
	if src == nil {
		src = nilSource{}
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = 10000
	}
	if opts.Timeout == 0 {
		opts.Timeout = 3 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &BatchClient{
		src:      src,
		maxBatch: min(opts.MaxBatch, MaxCount),
		timeout:  opts.Timeout,
		wake:     make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,
		done:     make(chan struct{}),
	}
	go c.dispatch()
	return c
}

// GetTimestamp returns one timestamp, issued after the call began and
// distinct from every other caller's. If ctx ends first it returns ctx's
// error, and the timestamp reserved for the caller goes unused.
func (c *BatchClient) GetTimestamp(ctx context.Context) (uint64, error) {
	first, err := c.reserve(ctx, 1)
	if err != nil {
		return 0, err
	}
	return first, nil
}

// GetTimestampAbove returns a timestamp issued after the call began,
// distinct from every other caller's and above floor, in one Source call,
// provided floor is at most one above a timestamp the Source issued
// before the call (then the first of two consecutive timestamps issued
// after it is at least floor, and the second above it). It reserves two
// consecutive timestamps of one batch and returns the smaller one above
// floor; the other goes unused. Otherwise the answer may be at or below
// floor, and the caller must check.
//
// Why: a one-phase commit may calculate its commit_ts as the newest
// timestamp the client has seen plus one, exactly the oracle's next
// timestamp when nobody asked for one meanwhile, and a transaction
// starting at the commit_ts of a commit of a key it then writes would
// conflict with it (txn's startTimestamp). Asking again costs a second
// round trip to the oracle on every such start; one timestamp more in the
// same request costs nothing.
func (c *BatchClient) GetTimestampAbove(ctx context.Context, floor uint64) (uint64, error) {
	first, err := c.reserve(ctx, 2)
	if err != nil {
		return 0, err
	}
	if first > floor {
		return first, nil
	}
	return first + 1, nil
}

// reserve joins a batch for n consecutive timestamps (one the open batch
// has room for, else a new one, which may exceed maxBatch by n-1 when
// maxBatch is below n), waits for its Source call and returns the first
// of them.
func (c *BatchClient) reserve(ctx context.Context, n uint32) (uint64, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, ErrClosed
	}
	b := c.open
	if b != nil && b.n+n > c.maxBatch {
		// The slots must be consecutive: this batch is full for them.
		c.full = append(c.full, b)
		c.open, b = nil, nil
	}
	if b == nil {
		b = &batch{done: make(chan struct{})}
		c.open = b
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	i := b.n
	b.n += n
	if b.n >= c.maxBatch {
		c.full = append(c.full, b)
		c.open = nil
	}
	c.mu.Unlock()

	if done := ctx.Done(); done == nil {
		// A context that never ends: a plain receive costs less than a
		// select, and this is the hot path of an in-process oracle.
		<-b.done
	} else {
		select {
		case <-b.done:
		case <-done:
			return 0, fmt.Errorf("tso: get timestamp: %w", ctx.Err())
		}
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.first + uint64(i), nil
}

// dispatch serves batches one Source call at a time until Close, then fails
// the batches left with ErrClosed.
func (c *BatchClient) dispatch() {
	defer close(c.done)
	for {
		select {
		case <-c.wake:
		case <-c.ctx.Done():
			c.failWaiting()
			return
		}
		// Let the callers that are ready to run join the batch first.
		// Without this the dispatcher and the one caller it just woke
		// hand the processor back and forth, and with a fast Source every
		// batch holds one or two callers while the rest wait in the run
		// queue.
		runtime.Gosched()
		for c.ctx.Err() == nil {
			b := c.next()
			if b == nil {
				break
			}
			last, err := c.call(b.n)
			switch {
			case err != nil:
				b.err = fmt.Errorf("tso: get %d timestamps: %w", b.n, err)
			case last < uint64(b.n):
				b.err = fmt.Errorf("tso: get %d timestamps: Source returned last %d", b.n, last)
			default:
				b.first = last - uint64(b.n) + 1
			}
			close(b.done)
		}
	}
}

// call makes one Source call for n timestamps, bounded by the client's
// timeout, and counts it.
func (c *BatchClient) call(n uint32) (uint64, error) {
	start := time.Now()
	ctx := c.ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(c.ctx, c.timeout)
		defer cancel()
	}
	last, err := c.src.GetTimestamps(ctx, n)
	c.calls.Add(1)
	c.callNanos.Add(uint64(time.Since(start)))
	if err != nil {
		c.failures.Add(1)
	} else {
		c.timestamps.Add(uint64(n))
	}
	return last, err
}

// BatchStats are a BatchClient's counts since it started. Timestamps /
// Calls is the mean batch size: how many callers one oracle request
// served; CallTime / Calls the mean time of a request.
type BatchStats struct {
	// Calls counts the Source calls, Failures those that failed.
	Calls, Failures uint64
	// Timestamps counts the timestamps the successful calls served.
	Timestamps uint64
	// CallTime is the time spent in Source calls.
	CallTime time.Duration
}

// Stats returns the client's counts so far.
func (c *BatchClient) Stats() BatchStats {
	return BatchStats{Calls: c.calls.Load(), Failures: c.failures.Load(), Timestamps: c.timestamps.Load(), CallTime: time.Duration(c.callNanos.Load())}
}

// failWaiting fails the batches not yet dispatched with ErrClosed.
func (c *BatchClient) failWaiting() {
	c.mu.Lock()
	left := append(c.full, c.open)
	c.full, c.open = nil, nil
	c.mu.Unlock()
	for _, b := range left {
		if b != nil {
			b.err = ErrClosed
			close(b.done)
		}
	}
}

// next takes the oldest waiting batch out of reach of new callers, so that
// everyone in it asked before its Source call starts.
func (c *BatchClient) next() *batch {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.full) > 0 {
		b := c.full[0]
		c.full[0] = nil
		c.full = c.full[1:]
		return b
	}
	b := c.open
	c.open = nil
	return b
}

// Close stops the dispatcher. Callers waiting, and later calls, get
// ErrClosed (or the error of a Source call already under way). Calling
// Close twice is harmless.
func (c *BatchClient) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	<-c.done
}
