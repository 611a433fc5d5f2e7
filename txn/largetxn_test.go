package txn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/tso"
)

// envLargeTxnKeys sets the row count of TestDeadLargeTxn (default
// 20,000 rows, two keys each; the case is 200,000).
const envLargeTxnKeys = "PERCDB_TXN_LARGE_ROWS"

// largeTxnRows is the row count of the large-transaction tests.
func largeTxnRows(t testing.TB) int {
	n := 20_000
	if s := os.Getenv(envLargeTxnKeys); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("%s=%q: want a positive integer", envLargeTxnKeys, s)
		}
		n = v
	}
	return n
}

// largeTxnPairs returns the pairs of a transaction writing n "rows": a
// row key and an index key each, as a table with one secondary index.
func largeTxnPairs(n int) []string {
	pairs := make([]string, 0, 4*n)
	for i := range n {
		pairs = append(pairs,
			fmt.Sprintf("t_r%08d", i), fmt.Sprintf("value of row %d, long enough to be a row", i),
			fmt.Sprintf("t_i%08d", i), "")
	}
	return pairs
}

// waitLockExpired sleeps until the lock on key has expired by the
// oracle's clock (which follows the wall clock).
func waitLockExpired(t testing.TB, e *testEnv, key string) {
	t.Helper()
	l := lockOn(t, e, key)
	if l == nil {
		t.Fatalf("%s is not locked", key)
	}
	time.Sleep(time.Until(tso.Time(l.StartTS).Add(time.Duration(l.TTL)*time.Millisecond + 20*time.Millisecond)))
}

// countRange counts the pairs of [start, end) a new transaction reads.
func countRange(t testing.TB, s *Store, start, end string) int {
	t.Helper()
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := tx.Iter(ctx, []byte(start), []byte(end))
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for it.Valid() {
		n++
		if err := it.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// TestDeadLargeTxn: a transaction of many rows (two keys each) dies after
// prewriting everything, or after committing its primary. A reader of the
// whole table (the rows, then the index) must return none of it or all of
// it, resolving the dead transaction's locks on the way; the time it took
// is logged (go test -v), since a test must not time itself.
func TestDeadLargeTxn(t *testing.T) {
	n := largeTxnRows(t)
	for _, tc := range []struct {
		name  string
		hooks *CommitHooks
		want  int
	}{
		{"after-prewrite", &CommitHooks{AfterPrewrite: func(uint64) error { return errAbandon }}, 0},
		{"after-primary-commit", &CommitHooks{AfterPrimaryCommit: func(uint64, uint64) error { return errAbandon }}, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Three regions: the dead transaction's locks are resolved
			// region by region.
			e := newEnv(t, Options{}, fmt.Sprintf("t_i%08d", n/2), fmt.Sprintf("t_r%08d", n/3))
			startTS := abandonedCommit(t, e, tc.hooks, largeTxnPairs(n)...)
			last := fmt.Sprintf("t_r%08d", n-1)
			if !lockedBy(t, e, last, startTS) {
				t.Fatal("want the last row locked by the dead transaction")
			}
			// Its locks live for the time the transaction took to build
			// plus the TTL, and the primary's as long again as the
			// heartbeat kept it alive while it was prewritten: wait for
			// that, so that readers roll it back rather than read past it.
			if tc.want == 0 {
				waitLockExpired(t, e, "t_i00000000")
			}
			began := time.Now()
			if got := countRange(t, e.s, "t_r", "t_s"); got != tc.want {
				t.Fatalf("rows: %d, want %d", got, tc.want)
			}
			rows := time.Since(began)
			if got := countRange(t, e.s, "t_i", "t_j"); got != tc.want {
				t.Fatalf("index entries: %d, want %d", got, tc.want)
			}
			t.Logf("%d rows: rows read in %v, index in %v more", n, rows, time.Since(began)-rows)
			for _, k := range []string{"t_r00000000", fmt.Sprintf("t_i%08d", n/2), fmt.Sprintf("t_r%08d", n-1)} {
				if lockedBy(t, e, k, startTS) {
					t.Fatalf("%s still locked", k)
				}
			}
		})
	}
}

// TestLiveLargeTxn: a reader meets the locks of a large transaction that
// is alive (prewritten, not committed, its TTL far off) and reads past
// them without waiting (its lock wait would time out at once), whichever
// way it scans, leaving them in place.
func TestLiveLargeTxn(t *testing.T) {
	n := largeTxnRows(t)
	e := newEnv(t, Options{}, fmt.Sprintf("t_r%08d", n/2))
	mustCommit(t, e.s, "t_r", "before")
	slow := e.dyingStore(t, time.Minute)
	tx, _ := slow.Begin(context.Background())
	pairs := largeTxnPairs(n)
	for i := 0; i < len(pairs); i += 2 {
		_ = tx.Set([]byte(pairs[i]), []byte(pairs[i+1]))
	}
	startTS, _ := tx.StartTS(context.Background())
	if err := tx.Commit(context.Background()); !errors.Is(err, errAbandon) {
		t.Fatal(err)
	}
	r := e.newStore(t, Options{LockWaitTimeout: time.Nanosecond})
	rt, _ := r.Begin(context.Background())
	for _, reverse := range []bool{false, true} {
		if got := readAll(t, rt, "t_", "t_z", reverse); len(got) != 1 || got[0] != "t_r=before" {
			t.Fatalf("reverse=%v: read %d pairs, want only t_r=before", reverse, len(got))
		}
	}
	if !lockedBy(t, e, fmt.Sprintf("t_r%08d", n-1), startTS) {
		t.Fatal("the live transaction's lock is gone")
	}
}

// BenchmarkResolveDeadTxn measures how long a reader takes to read a
// range through the locks of one dead transaction of n keys (run with
// -benchtime=1x; the figures are in docs/reliability.md): the
// transaction's primary is rolled back (its TTL ran out) or committed
// (roll forward), and the reader counts the range, resolving every lock
// on the way. The store is on disk and syncs every write, as a node's is.
//
//	go test ./txn -run '^$' -bench ResolveDeadTxn -benchtime 1x
func BenchmarkResolveDeadTxn(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		for _, mode := range []string{"rollback", "rollforward"} {
			b.Run(fmt.Sprintf("keys=%d/%s", n, mode), func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					s := benchStore(b, true)
					deadTxn(b, s, n, mode == "rollforward")
					b.StartTimer()
					got := countRange(b, s, "t_r", "t_s")
					if want := map[bool]int{false: 0, true: n}[mode == "rollforward"]; got != want {
						b.Fatalf("read %d keys, want %d", got, want)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/lock")
			})
		}
	}
}

// deadTxn leaves the locks of a transaction of n keys whose client died,
// its TTL already run out, after prewrite or (committed) after the commit
// of its primary, as kv requests of 1,000 keys each.
func deadTxn(b *testing.B, s *Store, n int, committed bool) {
	b.Helper()
	ctx := context.Background()
	startTS, err := s.timestamp(ctx)
	if err != nil {
		b.Fatal(err)
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "t_r%08d", i) }
	reg, err := s.client.LocateKey(ctx, key(0))
	if err != nil {
		b.Fatal(err)
	}
	for lo := 0; lo < n; lo += 1000 {
		muts := make([]kv.Mutation, 0, 1000)
		for i := lo; i < min(n, lo+1000); i++ {
			muts = append(muts, kv.Mutation{Op: kv.OpPut, Key: key(i), Value: []byte("value-of-a-row-of-about-sixty-bytes-like-a-sysbench-row-pad")})
		}
		resp, err := s.client.Prewrite(ctx, &kv.PrewriteRequest{
			Region: reg.Ctx(), Mutations: muts, Primary: key(0), StartTS: startTS, LockTTL: 1, TxnSize: uint64(n),
		})
		if err != nil || len(resp.Errors) > 0 {
			b.Fatalf("prewrite: %v %v", err, resp)
		}
	}
	if committed {
		commitTS, err := s.timestamp(ctx)
		if err == nil {
			err = s.client.Commit(ctx, &kv.CommitRequest{Region: reg.Ctx(), Keys: [][]byte{key(0)}, StartTS: startTS, CommitTS: commitTS})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond) // the 1 ms TTL runs out
}

// regionResolveCounter is a kv.Client that counts the ResolveLock
// requests that resolve a whole region.
type regionResolveCounter struct {
	kv.Client
	whole atomic.Int64
}

func (c *regionResolveCounter) ResolveLock(ctx context.Context, req *kv.ResolveLockRequest) error {
	if len(req.Keys) == 0 {
		c.whole.Add(1)
	}
	return c.Client.ResolveLock(ctx, req)
}

// TestDeadLargeTxnConcurrentReaders: readers that meet one dead large
// transaction at once, through its rows and its index, scan each region
// for its locks once between them, and all read the table right.
func TestDeadLargeTxnConcurrentReaders(t *testing.T) {
	n := largeTxnRows(t)
	e := newEnv(t, Options{}, fmt.Sprintf("t_i%08d", n/2), fmt.Sprintf("t_r%08d", n/3))
	startTS := abandonedCommit(t, e, &CommitHooks{AfterPrewrite: func(uint64) error { return errAbandon }}, largeTxnPairs(n)...)
	waitLockExpired(t, e, "t_i00000000")
	counter := &regionResolveCounter{Client: e.client}
	s := NewStore(counter, e.oracle, Options{})
	defer s.Close()
	const readers = 4
	counts := make(chan int, 2*readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			// Half the readers start with the index, half with the rows.
			ranges := [][2]string{{"t_r", "t_s"}, {"t_i", "t_j"}}
			if i%2 == 1 {
				ranges[0], ranges[1] = ranges[1], ranges[0]
			}
			for _, r := range ranges {
				counts <- countRange(t, s, r[0], r[1])
			}
		})
	}
	wg.Wait()
	close(counts)
	for c := range counts {
		if c != 0 {
			t.Fatalf("a reader counted %d keys of the rolled back transaction", c)
		}
	}
	if got := counter.whole.Load(); got != 3 {
		t.Errorf("%d region-wide ResolveLock requests for the transaction's 3 regions", got)
	}
	if lockedBy(t, e, fmt.Sprintf("t_r%08d", n-1), startTS) {
		t.Fatal("a lock is left")
	}
}
