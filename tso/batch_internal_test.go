package tso

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// gatedSource issues timestamps from a counter and records the count of
// every call; while gate is non-nil, calls wait for it to close (or their
// ctx to end), which holds the dispatcher busy so that callers pile up.
type gatedSource struct {
	mu     sync.Mutex
	next   uint64
	counts []uint32
	gate   chan struct{}
	// started receives once per call, if non-nil.
	started chan struct{}
}

func (s *gatedSource) GetTimestamps(ctx context.Context, count uint32) (uint64, error) {
	s.mu.Lock()
	s.counts = append(s.counts, count)
	gate, started := s.gate, s.started
	s.mu.Unlock()
	if started != nil {
		started <- struct{}{}
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next += uint64(count)
	return s.next, nil
}

func (s *gatedSource) calls() []uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.counts)
}

// waitJoined yields until n callers wait in c's batches not yet taken by
// the dispatcher. It polls state, never the clock.
func waitJoined(c *BatchClient, n uint32) {
	for {
		c.mu.Lock()
		var joined uint32
		for _, b := range c.full {
			joined += b.n
		}
		if c.open != nil {
			joined += c.open.n
		}
		c.mu.Unlock()
		if joined >= n {
			return
		}
		runtime.Gosched()
	}
}

type result struct {
	ts  uint64
	err error
}

// startCallers starts n GetTimestamp calls and returns where their results
// arrive.
func startCallers(ctx context.Context, c *BatchClient, n int) <-chan result {
	out := make(chan result, n)
	for range n {
		go func() {
			ts, err := c.GetTimestamp(ctx)
			out <- result{ts, err}
		}()
	}
	return out
}

// holdDispatcher makes the dispatcher busy with a one-caller batch whose
// Source call waits for src.gate, and returns that caller's result channel.
func holdDispatcher(t *testing.T, c *BatchClient, src *gatedSource) <-chan result {
	t.Helper()
	first := startCallers(context.Background(), c, 1)
	<-src.started
	return first
}

func TestBatchClientBatches(t *testing.T) {
	const n = 50
	src := &gatedSource{gate: make(chan struct{}), started: make(chan struct{}, n+1)}
	c := NewBatchClient(src, ClientOptions{})
	defer c.Close()

	first := holdDispatcher(t, c, src)
	rest := startCallers(context.Background(), c, n)
	waitJoined(c, n)
	close(src.gate)

	seen := map[uint64]bool{}
	for range n + 1 {
		var r result
		select {
		case r = <-first:
			first = nil
		case r = <-rest:
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.ts < 1 || r.ts > n+1 || seen[r.ts] {
			t.Fatalf("timestamp %d: outside [1, %d] or given twice", r.ts, n+1)
		}
		seen[r.ts] = true
	}
	if got, want := src.calls(), []uint32{1, n}; !slices.Equal(got, want) {
		t.Fatalf("%d callers made Source calls with counts %v, want %v", n+1, got, want)
	}
	if st := c.Stats(); st.Calls != 2 || st.Timestamps != n+1 || st.Failures != 0 || st.CallTime <= 0 {
		t.Fatalf("Stats after two calls serving %d: %+v", n+1, st)
	}
}

func TestBatchClientMaxBatch(t *testing.T) {
	const n, max = 10, 4
	src := &gatedSource{gate: make(chan struct{}), started: make(chan struct{}, n+1)}
	c := NewBatchClient(src, ClientOptions{MaxBatch: max})
	defer c.Close()

	first := holdDispatcher(t, c, src)
	rest := startCallers(context.Background(), c, n)
	waitJoined(c, n)
	close(src.gate)
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	for range n {
		if r := <-rest; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if got, want := src.calls(), []uint32{1, 4, 4, 2}; !slices.Equal(got, want) {
		t.Fatalf("Source call counts %v, want %v", got, want)
	}
}

func TestBatchClientCallerContext(t *testing.T) {
	src := &gatedSource{gate: make(chan struct{}), started: make(chan struct{}, 3)}
	c := NewBatchClient(src, ClientOptions{})
	defer c.Close()

	first := holdDispatcher(t, c, src)
	ctx, cancel := context.WithCancel(context.Background())
	waiting := startCallers(ctx, c, 1)
	waitJoined(c, 1)
	cancel()
	if r := <-waiting; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("canceled caller: %d, %v; want context.Canceled", r.ts, r.err)
	}
	// The others are unaffected; the abandoned slot is simply unused.
	close(src.gate)
	if r := <-first; r.err != nil {
		t.Fatal(r.err)
	}
	if _, err := c.GetTimestamp(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestBatchClientCloseFailsWaiters(t *testing.T) {
	src := &gatedSource{gate: make(chan struct{}), started: make(chan struct{}, 2)}
	c := NewBatchClient(src, ClientOptions{})
	first := holdDispatcher(t, c, src)
	waiting := startCallers(context.Background(), c, 3)
	waitJoined(c, 3)
	c.Close()
	// The call under way ends with its Source's error (ctx canceled by
	// Close); the callers not yet dispatched get ErrClosed.
	if r := <-first; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("caller in flight at Close: %d, %v", r.ts, r.err)
	}
	for range 3 {
		if r := <-waiting; !errors.Is(r.err, ErrClosed) {
			t.Fatalf("caller waiting at Close: %d, %v; want ErrClosed", r.ts, r.err)
		}
	}
	if _, err := c.GetTimestamp(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v, want ErrClosed", err)
	}
	c.Close()
}

// TestBatchClientTimeout: a Source that never answers fails its callers
// with context.DeadlineExceeded after the client's Timeout, even callers
// whose own context never ends, and the client serves the next callers.
func TestBatchClientTimeout(t *testing.T) {
	src := &gatedSource{gate: make(chan struct{})}
	c := NewBatchClient(src, ClientOptions{Timeout: 20 * time.Millisecond})
	defer c.Close()
	if _, err := c.GetTimestamp(context.Background()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("caller of a stuck Source: %v, want context.DeadlineExceeded", err)
	}
	src.mu.Lock()
	src.gate = nil
	src.mu.Unlock()
	if ts, err := c.GetTimestamp(context.Background()); err != nil || ts == 0 {
		t.Fatalf("after the Source recovered: %d, %v", ts, err)
	}
}

type failingSource struct{ err error }

func (s failingSource) GetTimestamps(context.Context, uint32) (uint64, error) { return 0, s.err }

func TestBatchClientSourceError(t *testing.T) {
	boom := errors.New("boom")
	c := NewBatchClient(failingSource{boom}, ClientOptions{})
	defer c.Close()
	if _, err := c.GetTimestamp(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("err %v, want the Source's", err)
	}
	if st := c.Stats(); st.Calls != 1 || st.Failures != 1 || st.Timestamps != 0 {
		t.Fatalf("Stats after one failed call: %+v", st)
	}
}

func TestBatchClientNilSource(t *testing.T) {
	c := NewBatchClient(nil, ClientOptions{})
	defer c.Close()
	if _, err := c.GetTimestamp(context.Background()); err == nil {
		t.Fatal("a client without a Source gave a timestamp")
	}
}

type zeroSource struct{}

func (zeroSource) GetTimestamps(context.Context, uint32) (uint64, error) { return 0, nil }

func TestBatchClientImpossibleRange(t *testing.T) {
	c := NewBatchClient(zeroSource{}, ClientOptions{})
	defer c.Close()
	if ts, err := c.GetTimestamp(context.Background()); err == nil {
		t.Fatalf("a Source granting no room for the range gave timestamp %d", ts)
	}
}
