package tso_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/tso/internal/tsotest"
)

// fakeClock is a wall clock that tests move by hand, backwards too.
type fakeClock struct{ ms atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ms.Store(t.UnixMilli())
	return c
}

func (c *fakeClock) Now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) Add(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func (c *fakeClock) Physical() int64     { return c.ms.Load() }

// fencedStore wraps a store and refuses saves once fenced: it stands for the
// disk of a process that crashed, so that an oracle abandoned without Close
// can no longer write while its successor runs.
type fencedStore struct {
	tso.WindowStore
	mu     sync.Mutex // held by a save, so that fence waits for one under way
	fenced bool
}

func (s *fencedStore) Save(ctx context.Context, bound uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenced {
		return errors.New("fenced: the process crashed")
	}
	return s.WindowStore.Save(ctx, bound)
}

func (s *fencedStore) fence() {
	s.mu.Lock()
	s.fenced = true
	s.mu.Unlock()
}

func openStore(t testing.TB, dir string) *tso.FileWindowStore {
	t.Helper()
	s, err := tso.OpenFileWindowStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openOracle(t testing.TB, store tso.WindowStore, opts tso.Options) *tso.Oracle {
	t.Helper()
	o, err := tso.Open(context.Background(), store, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return o
}

func get(t testing.TB, s tso.Source, count uint32) uint64 {
	t.Helper()
	last, err := s.GetTimestamps(context.Background(), count)
	if err != nil {
		t.Fatalf("GetTimestamps(%d): %v", count, err)
	}
	return last
}

func TestOracleConcurrentStrictlyIncreasing(t *testing.T) {
	store := openStore(t, t.TempDir())
	// A small window makes requests also cross the save path.
	o := openOracle(t, store, tso.Options{SaveWindow: 2 * time.Millisecond})
	rounds := 1000
	if testing.Short() {
		rounds = 300
	}
	const callers = 16
	rngs := make([]*rand.Rand, callers)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 1))
	}
	per := tsotest.Callers(t, callers, rounds, func(ctx context.Context, caller int) (uint64, uint32, error) {
		count := uint32(1 + rngs[caller].IntN(16))
		last, err := o.GetTimestamps(ctx, count)
		return last, count, err
	})
	for _, ts := range tsotest.CheckIssued(t, per) {
		if tso.Logical(ts) == 0 {
			t.Fatalf("issued logical 0: %d", ts)
		}
	}
}

func TestOracleRestartMany(t *testing.T) {
	dir := t.TempDir()
	cycles := 200
	if testing.Short() {
		cycles = 60
	}
	rng := rand.New(rand.NewPCG(7, 7))
	// The clock mostly follows real time but sometimes jumps back, and
	// restarts come faster than the window, so the saved bound, not the
	// clock, is what keeps timestamps apart.
	clock := newFakeClock(time.Now())
	var prev uint64
	// crashed is the previous oracle, abandoned without Close: its
	// successor opens and serves while it is still running.
	var crashed *tso.Oracle
	defer func() {
		if crashed != nil {
			crashed.Close()
		}
	}()
	for i := range cycles {
		store := &fencedStore{WindowStore: openStore(t, dir)}
		o, err := tso.Open(context.Background(), store, tso.Options{
			SaveWindow:     time.Duration(1+rng.IntN(3)) * time.Millisecond,
			UpdateInterval: 5 * time.Millisecond,
			Now:            clock.Now,
		})
		if err != nil {
			t.Fatalf("cycle %d: open: %v", i, err)
		}
		for range 1 + rng.IntN(5) {
			count := uint32(1 + rng.IntN(tso.MaxCount))
			last := get(t, o, count)
			if first := last - uint64(count) + 1; first <= prev {
				t.Fatalf("cycle %d: timestamp %d not above %d issued before", i, first, prev)
			}
			prev = last
			if crashed != nil {
				crashed.Close()
				crashed = nil
			}
			switch rng.IntN(4) {
			case 0:
				clock.Add(-time.Duration(rng.IntN(5000)) * time.Millisecond)
			case 1:
				clock.Add(time.Duration(rng.IntN(3)) * time.Millisecond)
			}
		}
		if rng.IntN(2) == 0 {
			o.Close()
			continue
		}
		// Crash: the process stops writing, but the successor opens while
		// it is still in memory.
		store.fence()
		crashed = o
	}
}

func TestOracleClockBackwards(t *testing.T) {
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	store := openStore(t, t.TempDir())
	o := openOracle(t, store, tso.Options{SaveWindow: 50 * time.Millisecond, Now: clock.Now})

	before := get(t, o, 10)
	clock.Add(-time.Hour)
	after := get(t, o, 10)
	if after <= before {
		t.Fatalf("clock went back an hour: got %d after %d", after, before)
	}
	if tso.Physical(after) < tso.Physical(before) {
		t.Fatalf("physical part went back: %d after %d", tso.Physical(after), tso.Physical(before))
	}
	// While the clock stays behind, a stream of requests still rises,
	// borrowing milliseconds and saving windows ahead of the oracle's own
	// physical part rather than the clock.
	last := after
	for range 20 {
		ts := get(t, o, tso.MaxCount)
		if ts <= last {
			t.Fatalf("got %d after %d", ts, last)
		}
		last = ts
	}
	// The clock coming back ahead is followed again.
	clock.Add(2 * time.Hour)
	ts := get(t, o, 1)
	if tso.Physical(ts) != clock.Physical() {
		t.Fatalf("physical %d, want the clock's %d", tso.Physical(ts), clock.Physical())
	}

	// A restart with the clock far behind still starts above everything.
	o.Close()
	clock.Add(-24 * time.Hour)
	o2 := openOracle(t, store, tso.Options{SaveWindow: 50 * time.Millisecond, Now: clock.Now})
	if got := get(t, o2, 1); got <= ts {
		t.Fatalf("after restart with the clock a day behind: %d, want above %d", got, ts)
	}
}

func TestOracleLogicalOverflowBorrows(t *testing.T) {
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	o := openOracle(t, openStore(t, t.TempDir()), tso.Options{Now: clock.Now})
	a := get(t, o, tso.MaxCount-5)
	b := get(t, o, 10) // does not fit in a's millisecond
	if tso.Physical(b) != tso.Physical(a)+1 || tso.Logical(b) != 10 {
		t.Fatalf("after %d/%d got %d/%d, want the next millisecond's first 10",
			tso.Physical(a), tso.Logical(a), tso.Physical(b), tso.Logical(b))
	}
	if c := get(t, o, tso.MaxCount); tso.Physical(c) != tso.Physical(b)+1 {
		t.Fatalf("a full millisecond: physical %d, want %d", tso.Physical(c), tso.Physical(b)+1)
	}
}

func TestOracleBadCount(t *testing.T) {
	o := openOracle(t, openStore(t, t.TempDir()), tso.Options{})
	for _, n := range []uint32{0, tso.MaxCount + 1, 1 << 31} {
		if _, err := o.GetTimestamps(context.Background(), n); !errors.Is(err, tso.ErrBadCount) {
			t.Errorf("count %d: err %v, want ErrBadCount", n, err)
		}
	}
}

func TestOracleClosed(t *testing.T) {
	o := openOracle(t, openStore(t, t.TempDir()), tso.Options{})
	o.Close()
	if _, err := o.GetTimestamps(context.Background(), 1); !errors.Is(err, tso.ErrClosed) {
		t.Fatalf("after Close: err %v, want ErrClosed", err)
	}
}

func TestOracleBadOptions(t *testing.T) {
	store := openStore(t, t.TempDir())
	for _, opts := range []tso.Options{
		{SaveWindow: time.Microsecond},
		{SaveWindow: -time.Second},
		{UpdateInterval: -time.Second},
	} {
		if o, err := tso.Open(context.Background(), store, opts); err == nil {
			o.Close()
			t.Errorf("Open(%+v) succeeded", opts)
		}
	}
	if _, err := tso.Open(context.Background(), nil, tso.Options{}); err == nil {
		t.Error("Open(nil store) succeeded")
	}
}

// TestOracleSavesBeforeServing checks the saved bound covers every served
// timestamp, at each moment: the store is read back after every request.
func TestOracleSavesBeforeServing(t *testing.T) {
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	store := openStore(t, t.TempDir())
	o := openOracle(t, store, tso.Options{SaveWindow: 10 * time.Millisecond, Now: clock.Now})
	for i := range 100 {
		ts := get(t, o, uint32(1+i*997%tso.MaxCount))
		bound, err := store.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if ts >= bound {
			t.Fatalf("request %d: served %d at or above the saved bound %d", i, ts, bound)
		}
		clock.Add(time.Duration(i%7) * time.Millisecond)
	}
}

func TestOracleSaveFailure(t *testing.T) {
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	store := &fencedStore{WindowStore: openStore(t, t.TempDir())}
	o := openOracle(t, store, tso.Options{SaveWindow: 10 * time.Millisecond, Now: clock.Now})
	get(t, o, 1)
	store.fence()
	clock.Add(time.Second) // beyond the window
	if _, err := o.GetTimestamps(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("window exhausted and store failing: err %v, want the store's error", err)
	}
}

// blockingStore saves once (Open's save) and then blocks every save until
// its ctx ends: a disk that hangs.
type blockingStore struct {
	tso.WindowStore
	saved atomic.Bool
}

func (s *blockingStore) Save(ctx context.Context, bound uint64) error {
	if s.saved.CompareAndSwap(false, true) {
		return s.WindowStore.Save(ctx, bound)
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestOracleExhaustedWindowHonorsContext(t *testing.T) {
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	store := &blockingStore{WindowStore: openStore(t, t.TempDir())}
	o := openOracle(t, store, tso.Options{SaveWindow: 10 * time.Millisecond, Now: clock.Now})
	get(t, o, 1) // within the window: served from memory
	clock.Add(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Whether the request waits for the background goroutine's save or
	// saves itself, the disk hangs and the request gives up with ctx's
	// error.
	if _, err := o.GetTimestamps(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("window exhausted, disk hung, ctx canceled: err %v", err)
	}
}

func TestCorruptWindowFile(t *testing.T) {
	valid := func(t *testing.T, dir string) []byte {
		store := openStore(t, dir)
		if err := store.Save(context.Background(), tso.Compose(1<<40, 0)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(store.Path())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		corrupt func([]byte) []byte
	}{
		{"empty", func([]byte) []byte { return nil }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }},
		{"longer", func(b []byte) []byte { return append(b, 0) }},
		{"magic", func(b []byte) []byte { b[0] ^= 1; return b }},
		{"bound", func(b []byte) []byte { b[10] ^= 0x80; return b }},
		{"checksum", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }},
		{"text", func([]byte) []byte { return []byte("1234567890\n") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tso.WindowFileName)
			if err := os.WriteFile(path, tc.corrupt(valid(t, dir)), 0o644); err != nil {
				t.Fatal(err)
			}
			o, err := tso.Open(context.Background(), openStore(t, dir), tso.Options{})
			if err == nil {
				o.Close()
				t.Fatal("Open over a corrupt window file succeeded")
			}
			if !errors.Is(err, tso.ErrCorruptWindow) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err %q: want ErrCorruptWindow naming %s", err, path)
			}
		})
	}
}

func TestWindowFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	store := openStore(t, dir)
	if got, err := store.Load(context.Background()); err != nil || got != 0 {
		t.Fatalf("fresh store: %d, %v; want 0, nil", got, err)
	}
	// A temporary file left by a crash in the middle of a save is ignored
	// and then overwritten.
	if err := os.WriteFile(filepath.Join(dir, tso.WindowFileName+".tmp"), []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []uint64{1, tso.Compose(1_800_000_000_000, 0), 1<<64 - 1} {
		if err := store.Save(context.Background(), want); err != nil {
			t.Fatal(err)
		}
		if got, err := openStore(t, dir).Load(context.Background()); err != nil || got != want {
			t.Fatalf("saved %d, loaded %d, %v", want, got, err)
		}
	}
	if _, err := tso.OpenFileWindowStore(""); err == nil {
		t.Fatal("empty directory name accepted")
	}
}
