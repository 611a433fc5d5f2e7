package txn

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn/txntest"
)

// latestCounts are a Store's oracle calls and latest fallbacks.
type latestCounts struct{ oracle, fallbacks uint64 }

func countsOf(s *Store) latestCounts {
	return latestCounts{s.OracleCalls(), s.Stats().LatestFallbacks}
}

// counted reports whether a read that fell back falls times (0 or 1) from
// the latest state asked the oracle accordingly: not at all without a
// fallback, at least once with one (twice when its first timestamp was a
// one-phase commit's, Store.startTimestamp).
func counted(falls uint64, before, after latestCounts) bool {
	calls := after.oracle - before.oracle
	return after.fallbacks-before.fallbacks == falls && (falls == 0) == (calls == 0)
}

// commitEach commits each pair (key, value) of pairs in a transaction of
// its own.
func commitEach(t testing.TB, s *Store, pairs ...string) {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		mustCommit(t, s, pairs[i], pairs[i+1])
	}
}

// TestLatestIter checks a latest transaction's scans: one request that
// ends the walk is read without a timestamp; a walk that needs more
// (another region, another page) is read at a start_ts instead, whole;
// a full first page asked for is handed out and more of it is refused,
// as is a second read; writes are refused.
func TestLatestIter(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name       string
		splits     []string
		start, end string
		reverse    bool
		first      int
		// want is what the walk returns before it ends or fails
		// with ErrLatestSpent (spent).
		want  string
		spent bool
		falls uint64
	}{
		{name: "one region", start: "a", end: "z", want: "k10 k20 k25 k40"},
		{name: "one region backwards", start: "a", end: "z", reverse: true, want: "k40 k25 k20 k10"},
		{name: "part of a region", splits: []string{"k3"}, start: "k1", end: "k25", want: "k10 k20"},
		{name: "two regions", splits: []string{"k22"}, start: "a", end: "z", want: "k10 k20 k25 k40", falls: 1},
		{name: "two regions backwards", splits: []string{"k22"}, start: "a", end: "", reverse: true, want: "k40 k25 k20 k10", falls: 1},
		{name: "pages", start: "a", end: "z", first: 0, want: "k10 k20 k25 k40"}, // ScanPageSize 3 below: see pageSize
		{name: "first page ends the walk", start: "a", end: "z", first: 10, want: "k10 k20 k25 k40"},
		{name: "first page full", start: "a", end: "z", first: 2, want: "k10 k20", spent: true},
		{name: "first page full backwards", start: "a", end: "z", first: 1, reverse: true, want: "k40", spent: true},
		{name: "first page full over two regions", splits: []string{"k22"}, start: "a", end: "z", first: 1, want: "k10", spent: true},
		{name: "first page short at a region's end", splits: []string{"k22"}, start: "a", end: "z", first: 3, want: "k10 k20 k25 k40", falls: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := Options{}
			if c.name == "pages" {
				opts.ScanPageSize = 3
				c.falls = 1
			}
			e := newEnv(t, opts, c.splits...)
			// One commit per key, in one phase: no secondary's lock is
			// left for a background commit to clear.
			commitEach(t, e.s, "k10", "a", "k20", "b", "k25", "c", "k40", "d")
			before := countsOf(e.s)
			tx, err := e.s.BeginLatest(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			it, err := tx.IterWith(ctx, []byte(c.start), []byte(c.end), IterOptions{Reverse: c.reverse, FirstPage: c.first})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for it.Valid() && err == nil {
				got = append(got, string(it.Key()))
				err = it.Next(ctx)
			}
			it.Close()
			if strings.Join(got, " ") != c.want {
				t.Fatalf("walked %q, want %q", got, c.want)
			}
			if c.spent != errors.Is(err, ErrLatestSpent) || !c.spent && err != nil {
				t.Fatalf("walk ended with %v, want ErrLatestSpent: %v", err, c.spent)
			}
			after := countsOf(e.s)
			if !counted(c.falls, before, after) {
				t.Fatalf("oracle calls, fallbacks %d, %d, want %d", after.oracle-before.oracle, after.fallbacks-before.fallbacks, c.falls)
			}
			// After a read at the latest state, nothing more can be
			// read; after a fallback the transaction is an ordinary
			// one at its start_ts.
			_, _, err = tx.Get(ctx, []byte("k10"))
			if latest := c.falls == 0; latest != errors.Is(err, ErrLatestSpent) || !latest && err != nil {
				t.Fatalf("a second read: %v (read at the latest state: %v)", err, latest)
			}
			if err := tx.Set([]byte("k50"), []byte("e")); c.falls == 0 && !errors.Is(err, ErrLatestWrite) {
				t.Fatalf("a write: %v", err)
			}
		})
	}
}

// TestLatestCoprocessor checks a latest transaction's coprocessor walk:
// one response that ends it is read without a timestamp; one that stops
// early (a full page), or a walk over two regions, or a dead
// transaction's lock met, is dropped and the walk is read again at a
// start_ts, its outputs those of an ordinary transaction.
func TestLatestCoprocessor(t *testing.T) {
	ctx := context.Background()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone, Coprocessor: keysCoprocessor{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	e := newEnvOn(t, ks, txntest.NewClockOracle(0), Options{}, "m")
	commitEach(t, e.s, "a", "1", "b", "2", "c", "3", "n", "4", "p", "5")
	cases := []struct {
		start, end string
		want       string
		falls      uint64
	}{
		{start: "c", end: "d", want: "c;|"},             // one key: the page is not full
		{start: "a", end: "c", want: "a;b;|", falls: 1}, // a full page (keysProgram: full after two)
		{start: "c", end: "o", want: "c;|n;|", falls: 1},
		{start: "x", end: "", want: ""},
	}
	for _, c := range cases {
		before := countsOf(e.s)
		tx, err := e.s.BeginLatest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		it, err := tx.Coprocessor(ctx, []byte(c.start), []byte(c.end), nil)
		got := strings.Join(drainCopr(t, it, err), "|")
		if got != "" {
			got += "|"
		}
		after := countsOf(e.s)
		if got != c.want || !counted(c.falls, before, after) {
			t.Fatalf("[%s, %s): outputs %q, fallbacks %d, oracle calls %d; want %q, %d", c.start, c.end, got, after.fallbacks-before.fallbacks, after.oracle-before.oracle, c.want, c.falls)
		}
		_ = tx.Rollback(ctx)
	}

	// A dead transaction's lock in the range: read at a start_ts, where
	// the lock is resolved.
	dying := e.dyingStore(t, time.Millisecond)
	tx, err := dying.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("c"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, errAbandon) {
		t.Fatalf("dying commit: %v", err)
	}
	time.Sleep(5 * time.Millisecond)
	before := countsOf(e.s)
	reader, err := e.s.BeginLatest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := reader.Coprocessor(ctx, []byte("c"), []byte("d"), nil)
	if got := drainCopr(t, it, err); strings.Join(got, "|") != "c;" {
		t.Fatalf("over a dead lock: %q", got)
	}
	if after := countsOf(e.s); after.fallbacks-before.fallbacks != 1 {
		t.Fatalf("over a dead lock: %d fallbacks, want 1", after.fallbacks-before.fallbacks)
	}
}

// TestLatestReadsAreSnapshots runs transfers between keys in two
// regions, each keeping the sum of the values, against latest readers of
// every kind (a scan of one region, of both, a batch get over both, a
// get); every read must see one state: the sums it reads are those the
// transfers keep. A read at the latest state made of two requests would
// see a transfer in one and not the other.
func TestLatestReadsAreSnapshots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e := newEnv(t, Options{}, "k4")
	const n, each = 8, 100
	var init []string
	keys := make([][]byte, n)
	for i := range n {
		keys[i] = fmt.Appendf(nil, "k%d", i)
		init = append(init, string(keys[i]), strconv.Itoa(each))
	}
	mustCommit(t, e.s, init...)
	// Keys k0..k3 are in the first region, k4..k7 in the second. The
	// transfers move value within the first region (sum 400 there),
	// and between the regions keeping each pair (k3, k4) summing to
	// 200.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load() && ctx.Err() == nil; i++ {
				from, to := keys[i%3], keys[(i+1)%3] // inside region 1
				if w == 1 {
					from, to = keys[3], keys[4] // across the regions
					if i%2 == 0 {
						from, to = to, from
					}
				}
				if moveOne(ctx, e.s, from, to) == nil {
					writes.Add(1)
				}
			}
		}()
	}
	sum := func(vals map[string][]byte, ks ...[]byte) int {
		s := 0
		for _, k := range ks {
			v, _ := strconv.Atoi(string(vals[string(k)]))
			s += v
		}
		return s
	}
	reads := 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline) || writes.Load() < 20; reads++ {
		if ctx.Err() != nil {
			t.Fatal("no progress")
		}
		tx, err := e.s.BeginLatest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		vals := map[string][]byte{}
		switch reads % 3 {
		case 0: // the first region: one request
			err = scanInto(ctx, tx, "k0", "k4", vals)
		case 1: // both regions
			err = scanInto(ctx, tx, "k0", "k8", vals)
		default:
			vals, err = tx.BatchGet(ctx, keys)
		}
		_ = tx.Rollback(ctx)
		if err != nil {
			t.Fatalf("read %d: %v", reads, err)
		}
		check := func() string {
			if s := sum(vals, keys[0], keys[1], keys[2]); s != 3*each {
				return fmt.Sprintf("k0..k2 sum %d", s)
			}
			if s := sum(vals, keys[3], keys[4]); reads%3 != 0 && s != 2*each {
				return fmt.Sprintf("k3+k4 sum %d", s)
			}
			return ""
		}
		if msg := check(); msg != "" {
			t.Fatalf("read %d (kind %d) saw no one state: %s (%q)", reads, reads%3, msg, vals)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d reads, %d transfers, %d fallbacks", reads, writes.Load(), e.s.Stats().LatestFallbacks)
}

// moveOne moves 1 from key from to key to in one transaction.
func moveOne(ctx context.Context, s *Store, from, to []byte) error {
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	vals, err := tx.BatchGet(ctx, [][]byte{from, to})
	if err != nil {
		_ = tx.Rollback(ctx)
		return err
	}
	f, _ := strconv.Atoi(string(vals[string(from)]))
	g, _ := strconv.Atoi(string(vals[string(to)]))
	if err := tx.Set(from, []byte(strconv.Itoa(f-1))); err != nil {
		return err
	}
	if err := tx.Set(to, []byte(strconv.Itoa(g+1))); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// scanInto reads [start, end) through tx into vals.
func scanInto(ctx context.Context, tx *Txn, start, end string, vals map[string][]byte) error {
	it, err := tx.Iter(ctx, []byte(start), []byte(end))
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Valid() {
		vals[string(it.Key())] = append([]byte(nil), it.Value()...)
		if err := it.Next(ctx); err != nil {
			return err
		}
	}
	return nil
}
