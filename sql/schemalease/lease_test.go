package schemalease

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"
)

// fakePD keeps leases as pd does, by a clock the test moves: a node's
// entry lives until its expiry, a report after it grants a new lease.
type fakePD struct {
	mu      sync.Mutex
	now     func() time.Time
	latest  uint64
	nodes   map[string]fakeEntry
	changed chan struct{}
	down    bool
}

type fakeEntry struct {
	version uint64
	expires time.Time
}

var errPDDown = errors.New("pd unreachable")

func newFakePD(now func() time.Time) *fakePD {
	return &fakePD{now: now, nodes: map[string]fakeEntry{}, changed: make(chan struct{})}
}

func (p *fakePD) notifyLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

func (p *fakePD) expireLocked() {
	for n, e := range p.nodes {
		if !p.now().Before(e.expires) {
			delete(p.nodes, n)
		}
	}
}

func (p *fakePD) ReportSchemaVersion(_ context.Context, node string, version uint64, ttl time.Duration) (uint64, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return 0, false, errPDDown
	}
	p.expireLocked()
	_, renewed := p.nodes[node]
	p.nodes[node] = fakeEntry{version: version, expires: p.now().Add(ttl)}
	p.notifyLocked()
	return p.latest, renewed, nil
}

func (p *fakePD) PublishSchemaVersion(_ context.Context, v uint64) (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return 0, errPDDown
	}
	if v > p.latest {
		p.latest = v
		p.notifyLocked()
	}
	return p.latest, nil
}

func (p *fakePD) WatchSchema(ctx context.Context, newerThan, syncedAt uint64, wait time.Duration) (uint64, map[string]uint64, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			return 0, nil, errPDDown
		}
		p.expireLocked()
		nodes := map[string]uint64{}
		synced := true
		for n, e := range p.nodes {
			nodes[n] = e.version
			synced = synced && e.version >= syncedAt
		}
		latest, changed := p.latest, p.changed
		p.mu.Unlock()
		if latest > newerThan || (syncedAt != 0 && synced) {
			return latest, nodes, nil
		}
		select {
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		case <-timer.C:
			return latest, nodes, nil
		case <-changed:
		case <-time.After(5 * time.Millisecond): // the clock may have moved
		}
	}
}

// clock is a test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// schema is a test loader: the version it loads and the tables it says
// changed.
type schema struct {
	mu      sync.Mutex
	version uint64
	tables  []int64
}

func (s *schema) load(context.Context) (uint64, []int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, s.tables, nil
}

func (s *schema) set(v uint64, tables ...int64) {
	s.mu.Lock()
	s.version, s.tables = v, tables
	s.mu.Unlock()
}

func newTestLease(t *testing.T, node string, pd *fakePD, clk *clock, sc *schema) *Lease {
	t.Helper()
	return NewLease(LeaseConfig{Node: node, TTL: time.Second, PD: pd, Tracker: New(), Load: sc.load,
		Wait: 50 * time.Millisecond, Grace: 20 * time.Millisecond, Now: clk.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// leaseAt3 returns node a's lease, not started, over a fake pd and
// clock, with a loader that loads version 3.
func leaseAt3(t *testing.T) (*Lease, *fakePD, *clock) {
	t.Helper()
	clk := &clock{now: time.Unix(1000, 0)}
	pd := newFakePD(clk.Now)
	return newTestLease(t, "a", pd, clk, &schema{version: 3}), pd, clk
}

// TestLeaseCheck: commits are refused before the lease is taken, allowed
// while it is held, refused with ErrLeaseExpired once it may have ended
// in pd (less the margin), and, after a renewal that found it had ended,
// refused with ErrSchemaChanged for transactions begun before.
func TestLeaseCheck(t *testing.T) {
	l, pd, clk := leaseAt3(t)
	ctx := context.Background()
	if err := l.Check(l.Token()); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Check before Start: %v, want ErrLeaseExpired", err)
	}
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := pd.nodes["a"].version; got != 3 {
		t.Fatalf("pd holds version %d for the node, want 3", got)
	}
	before := l.Token()
	if err := l.Check(before); err != nil {
		t.Fatalf("Check right after Start: %v", err)
	}
	clk.Add(850 * time.Millisecond)
	if err := l.Check(before); err != nil {
		t.Fatalf("Check within TTL less the margin: %v", err)
	}
	clk.Add(100 * time.Millisecond) // 950 ms: past 1 s less a tenth
	if err := l.Check(before); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Check past TTL less the margin: %v, want ErrLeaseExpired", err)
	}
	// Renewed before pd's entry ended: the same epoch goes on.
	if err := l.Report(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(before); err != nil {
		t.Fatalf("Check after a renewal without a gap: %v", err)
	}
	// pd's entry ends; the next renewal is a new lease.
	clk.Add(time.Second)
	if err := l.Report(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Check(before); !errors.Is(err, ErrSchemaChanged) {
		t.Fatalf("Check of a transaction begun before the lease ended: %v, want ErrSchemaChanged", err)
	}
	if err := l.Check(l.Token()); err != nil {
		t.Fatalf("Check of a transaction begun after the new lease: %v", err)
	}
	// pd unreachable: the lease runs out.
	defer func() {
		// Leaving: nothing commits, and pd holds nothing back for the node.
		pd.mu.Lock()
		pd.down = false
		pd.mu.Unlock()
		if err := l.Report(ctx); err != nil {
			t.Fatal(err)
		}
		if err := l.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		if err := l.Check(l.Token()); !errors.Is(err, ErrLeaseExpired) {
			t.Fatalf("Check after Leave: %v, want ErrLeaseExpired", err)
		}
		if _, nodes, err := pd.WatchSchema(ctx, math.MaxUint64, 1000, 0); err != nil || nodes["a"] != math.MaxUint64 {
			t.Fatalf("pd after Leave: %v, %v; want the node at the highest version", nodes, err)
		}
	}()
	pd.mu.Lock()
	pd.down = true
	pd.mu.Unlock()
	if err := l.Report(ctx); !errors.Is(err, errPDDown) {
		t.Fatalf("Report with pd down: %v", err)
	}
	clk.Add(time.Second)
	if err := l.Check(l.Token()); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Check with pd down past the lease: %v, want ErrLeaseExpired", err)
	}
}

// TestLeaseCurrent: the node's loaded schema may be read with unchecked
// only while its lease is held and it knows of no newer version than it
// reports: not before Start, not once the lease may have ended, not while
// it is behind a published version (a renewal that learns one, or a
// Sync), and not after Leave.
func TestLeaseCurrent(t *testing.T) {
	l, pd, clk := leaseAt3(t)
	ctx := context.Background()
	want := func(current bool, when string) {
		t.Helper()
		if l.Current() != current {
			t.Fatalf("Current %s: %v, want %v", when, !current, current)
		}
	}
	want(false, "before Start")
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	want(true, "right after Start")
	clk.Add(950 * time.Millisecond) // past 1 s less a tenth
	want(false, "past the lease less the margin")
	if err := l.Report(ctx); err != nil {
		t.Fatal(err)
	}
	want(true, "after a renewal")
	// Another node publishes version 4: the renewal learns of it.
	if _, err := pd.PublishSchemaVersion(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := l.Report(ctx); err != nil {
		t.Fatal(err)
	}
	want(false, "while behind a published version")
	l.Loaded(4)
	want(true, "once the published version is loaded")
	if err := l.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	want(false, "after Leave")
}

// TestLeaseFollowsPublishedVersion: a version published by another node
// is loaded; the node reports it only once its transaction that wrote a
// changed table under the older version is gone, or marked stale when it
// outlives the wait, and then a Sync on that version completes.
func TestLeaseFollowsPublishedVersion(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	pd := newFakePD(clk.Now)
	sc := &schema{version: 1}
	l := newTestLease(t, "b", pd, clk, sc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	tr := l.Tracker()
	writer := tr.Begin()
	writer.Observe(1)
	writer.Wrote(7)
	other := tr.Begin() // wrote another table: not waited for
	other.Observe(1)
	other.Wrote(8)
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()

	// Another node publishes version 2, which changed table 7.
	sc.set(2, 7)
	peer := newTestLease(t, "a", pd, clk, sc)
	if err := peer.Start(ctx); err != nil {
		t.Fatal(err)
	}
	synced := make(chan error, 1)
	go func() { synced <- peer.Sync(ctx, 2) }()
	// The wait (50 ms) ends and the writer is marked stale.
	awaitSync(t, synced, l, 2)
	if l.Reported() != 2 {
		t.Fatalf("node b reports %d after the sync, want 2", l.Reported())
	}
	if err := writer.BeginCommit(); !errors.Is(err, ErrSchemaChanged) {
		t.Fatalf("the writer of the changed table after the wait: %v, want ErrSchemaChanged", err)
	}
	if err := other.BeginCommit(); err != nil {
		t.Fatalf("the writer of another table: %v", err)
	}
	other.End()
	writer.End()

	// Version 3 changes table 9, which a transaction that is already
	// committing wrote: the node waits for its commit to end.
	committing := tr.Begin()
	committing.Observe(2)
	committing.Wrote(9)
	if err := committing.BeginCommit(); err != nil {
		t.Fatal(err)
	}
	sc.set(3, 9)
	peer.Loaded(3) // as its own schema change does
	if err := peer.Report(ctx); err != nil {
		t.Fatal(err)
	}
	go func() { synced <- peer.Sync(ctx, 3) }()
	select {
	case err := <-synced:
		t.Fatalf("Sync(3) returned (%v) while a commit of the older version was under way", err)
	case <-time.After(200 * time.Millisecond):
	}
	committing.End()
	awaitSync(t, synced, l, 3)
	cancel()
	<-done
}

// awaitSync waits for a Sync on version v to succeed; l is the node it
// waits for.
func awaitSync(t *testing.T, synced <-chan error, l *Lease, v uint64) {
	t.Helper()
	select {
	case err := <-synced:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("Sync(%d) did not return; the node reports %d", v, l.Reported())
	}
}

// TestLeaseStopsRenewingWhenBehind: a node that cannot load a published
// version stops renewing its lease after the wait and a lease, so that
// schema changes stop waiting for it once pd's entry ends, and its
// commits fail meanwhile.
func TestLeaseStopsRenewingWhenBehind(t *testing.T) {
	clk := &clock{now: time.Unix(1000, 0)}
	pd := newFakePD(clk.Now)
	sc := &schema{version: 1}
	l := newTestLease(t, "b", pd, clk, sc)
	ctx := context.Background()
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := pd.PublishSchemaVersion(ctx, 2); err != nil {
		t.Fatal(err)
	}
	// The node learns of version 2 from a renewal but never loads it
	// (its follower does not run).
	if err := l.Report(ctx); err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 2; step++ {
		clk.Add(400 * time.Millisecond)
		if err := l.Report(ctx); err != nil {
			t.Fatalf("renewal %d, within the wait and a lease of falling behind: %v", step, err)
		}
	}
	clk.Add(400 * time.Millisecond) // 1.2 s behind: past 50 ms + 1 s
	if err := l.Report(ctx); !errors.Is(err, errBehind) {
		t.Fatalf("renewal past the catch-up bound: %v, want errBehind", err)
	}
	clk.Add(time.Second)
	_, nodes, err := pd.WatchSchema(ctx, math.MaxUint64, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := nodes["b"]; ok {
		t.Fatalf("pd still holds the lagging node's lease: %v", nodes)
	}
	if err := l.Check(l.Token()); !errors.Is(err, ErrLeaseExpired) {
		t.Fatalf("Check on the lagging node: %v, want ErrLeaseExpired", err)
	}
}
