package observe

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// Tables of the tests: rows of docs are watched; observers write counts
// and results to the others.
const (
	docsTable   = 1
	countsTable = 2
	hashTable   = 3
)

func rowKey(table, h int64) []byte { return tablecodec.RowKey(nil, table, tablecodec.IntHandle(h)) }

// env is a kv store with a txn Store over it.
type env struct {
	kv     *kv.Store
	oracle txn.Oracle
	s      *txn.Store
}

func newEnv(t *testing.T, dir string) *env {
	t.Helper()
	opts := kv.Options{SyncWrites: kv.SyncNone, InMemory: dir == ""}
	ks, err := kv.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{kv: ks, oracle: txntest.NewClockOracle(0)}
	e.s = e.store(t)
	t.Cleanup(func() { e.close() })
	return e
}

// store opens another txn Store over e's kv store, as another process
// would.
func (e *env) store(t *testing.T) *txn.Store {
	s := txn.NewStore(kv.NewLocalClient(e.kv), e.oracle, txn.Options{})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func (e *env) close() {
	_ = e.s.Close()
	_ = e.kv.Close()
}

// write commits value to row h of docs, notifying observers.
func (e *env) write(t *testing.T, h int64, value string, observers ...string) uint64 {
	t.Helper()
	ctx := context.Background()
	tx, err := e.s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	k := rowKey(docsTable, h)
	if err := tx.Set(k, []byte(value)); err != nil {
		t.Fatal(err)
	}
	for _, o := range observers {
		if err := tx.Notify(k, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return tx.CommitTS()
}

// counter is an observer that counts its committed runs per row in the
// counts table, transactionally, and its calls in calls.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *counter) run(ctx context.Context, tx *txn.Txn, key []byte) error {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = make(map[string]int)
	}
	c.calls[string(key)]++
	c.mu.Unlock()
	return incr(ctx, tx, countKey(key))
}

func countKey(docKey []byte) []byte {
	_, h, _ := tablecodec.DecodeRowKey(docKey, false)
	return rowKey(countsTable, h.Int)
}

// incr adds one to the counter at key.
func incr(ctx context.Context, tx *txn.Txn, key []byte) error {
	v, found, err := tx.Get(ctx, key)
	if err != nil {
		return err
	}
	n := uint64(0)
	if found {
		n = binary.BigEndian.Uint64(v)
	}
	return tx.Set(key, binary.BigEndian.AppendUint64(nil, n+1))
}

// committedRuns reads the counter of docs row h.
func (e *env) committedRuns(t *testing.T, h int64) uint64 {
	t.Helper()
	v, found, err := e.s.PointGet(context.Background(), rowKey(countsTable, h))
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// pending returns the notify entries of column left in the store.
func (e *env) pending(t *testing.T, column string) int {
	t.Helper()
	n := 0
	var start []byte
	for {
		entries, next, err := e.s.ScanNotify(context.Background(), start, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			if string(en.Column) == column {
				n++
			}
		}
		if next == nil {
			return n
		}
		start = next
	}
}

// start runs r until the test ends or the returned stop is called.
func start(t *testing.T, r *Runner) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitUntil polls cond until it holds; it fails the test after a minute,
// which no correct run comes near (it is a hang detector, not a timing
// assertion).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func newRunner(t *testing.T, s *txn.Store, opts Options) *Runner {
	opts.OnError = func(observer string, key []byte, err error) {
		if !errors.Is(err, context.Canceled) {
			t.Logf("observer %q on %q: %v", observer, key, err)
		}
	}
	return New(s, opts)
}

// TestEveryChangeRunsOnce: every notified change runs the observer, and
// exactly one run per change commits.
func TestEveryChangeRunsOnce(t *testing.T) {
	e := newEnv(t, "")
	var c counter
	r := newRunner(t, e.s, Options{Scanners: 3, PageSize: 4})
	if err := r.Register(context.Background(), Observer{Name: "count", Run: c.run}); err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	const rows = 40
	for h := int64(1); h <= rows; h++ {
		e.write(t, h, fmt.Sprint("doc", h), "count")
	}
	waitUntil(t, "the notifications to clear", func() bool { return e.pending(t, "count") == 0 })
	stop()
	for h := int64(1); h <= rows; h++ {
		if n := e.committedRuns(t, h); n != 1 {
			t.Errorf("row %d: %d committed runs, want 1", h, n)
		}
	}
	if st := r.Stats(); st.Committed != rows {
		t.Errorf("stats: %+v, want %d committed runs", st, rows)
	}
}

// TestMessageCollapsing: N writes to one row before a run cause one run.
func TestMessageCollapsing(t *testing.T) {
	e := newEnv(t, "")
	const n = 10
	for i := range n {
		e.write(t, 1, fmt.Sprint("version", i), "count")
	}
	if p := e.pending(t, "count"); p != 1 {
		t.Fatalf("%d notify entries after %d writes, want 1", p, n)
	}
	var c counter
	r := newRunner(t, e.s, Options{})
	if err := r.Register(context.Background(), Observer{Name: "count", Run: c.run}); err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	waitUntil(t, "the notification to clear", func() bool { return e.pending(t, "count") == 0 })
	stop()
	if got := e.committedRuns(t, 1); got != 1 {
		t.Errorf("%d committed runs for %d writes, want 1", got, n)
	}
	if st := r.Stats(); st.Runs != 1 {
		t.Errorf("%d runs for %d writes, want 1", st.Runs, n)
	}
}

// TestUnregisteredColumnsStay: a Runner leaves the notifications of
// observers it does not run, and weak observers run without acks.
func TestUnregisteredColumnsStay(t *testing.T) {
	e := newEnv(t, "")
	e.write(t, 1, "a", "weak", "elsewhere")
	var c counter
	r := newRunner(t, e.s, Options{})
	if err := r.Register(context.Background(), Observer{Name: "weak", Weak: true, Run: c.run}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(context.Background(), Observer{Name: "weak", Run: c.run}); err == nil {
		t.Fatal("a second observer of the same name was registered")
	}
	stop := start(t, r)
	waitUntil(t, "the weak notification to clear", func() bool { return e.pending(t, "weak") == 0 })
	stop()
	if p := e.pending(t, "elsewhere"); p != 1 {
		t.Errorf("%d notifications of the unregistered observer, want 1", p)
	}
	// At least once: a scanner that read the entry before another's run
	// cleared it may run it again.
	if got := e.committedRuns(t, 1); got < 1 {
		t.Errorf("%d committed weak runs, want at least 1", got)
	}
	ack, _ := tablecodec.AckKey(nil, rowKey(docsTable, 1), "weak")
	if _, found, _ := e.s.PointGet(context.Background(), ack); found {
		t.Error("a weak observer wrote an acknowledgement")
	}
}

// TestConcurrentRunnersCommitOnce: two Runners (two processes' worth of
// scanners over one store) run the same notifications; each call waits
// for a second call of the same row for a while, so that runs overlap.
// Whatever overlaps, one run per change commits.
func TestConcurrentRunnersCommitOnce(t *testing.T) {
	e := newEnv(t, "")
	const rows = 16
	for h := int64(1); h <= rows; h++ {
		e.write(t, h, "doc", "count")
	}
	var mu sync.Mutex
	arrived := make(map[string]chan struct{})
	calls := make(map[string]int)
	var c counter
	slow := func(ctx context.Context, tx *txn.Txn, key []byte) error {
		mu.Lock()
		calls[string(key)]++
		n := calls[string(key)]
		ch, ok := arrived[string(key)]
		if !ok {
			ch = make(chan struct{})
			arrived[string(key)] = ch
		}
		mu.Unlock()
		switch {
		case n == 2:
			close(ch)
		case n == 1:
			select {
			case <-ch:
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return c.run(ctx, tx, key)
	}
	var runners []*Runner
	for range 2 {
		r := newRunner(t, e.store(t), Options{Scanners: 2, MaxRuns: rows})
		if err := r.Register(context.Background(), Observer{Name: "count", Run: slow}); err != nil {
			t.Fatal(err)
		}
		runners = append(runners, r)
	}
	stops := []func(){start(t, runners[0]), start(t, runners[1])}
	waitUntil(t, "the notifications to clear", func() bool { return e.pending(t, "count") == 0 })
	for _, stop := range stops {
		stop()
	}
	overlapped := 0
	for h := int64(1); h <= rows; h++ {
		if n := e.committedRuns(t, h); n != 1 {
			t.Errorf("row %d: %d committed runs, want 1", h, n)
		}
		if c.calls[string(rowKey(docsTable, h))] > 1 {
			overlapped++
		}
	}
	var committed uint64
	for _, r := range runners {
		committed += r.Stats().Committed
	}
	if committed != rows {
		t.Errorf("%d committed runs in all, want %d", committed, rows)
	}
	t.Logf("%d of %d rows were run by both runners; stats %+v, %+v", overlapped, rows, runners[0].Stats(), runners[1].Stats())
}

// TestRunnersOfDifferentObservers: two Runners over one store, each with
// an observer the other lacks, both finish their notifications: a
// scanner is handed, and holds back from the other scanners, only the
// notifications of the observers its Runner runs. (Were it to hold every
// entry it read, each Runner would keep the other's notifications for
// good, refreshing its hold every lap.)
func TestRunnersOfDifferentObservers(t *testing.T) {
	e := newEnv(t, "")
	const rows = 8
	for h := int64(1); h <= rows; h++ {
		e.write(t, h, "doc", "x", "y")
	}
	var cx, cy counter
	for _, o := range []Observer{{Name: "x", Run: cx.run, Weak: true}, {Name: "y", Run: cy.run, Weak: true}} {
		r := newRunner(t, e.store(t), Options{Scanners: 2})
		if err := r.Register(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		start(t, r)
	}
	waitUntil(t, "both observers' notifications to clear", func() bool { return e.pending(t, "x") == 0 && e.pending(t, "y") == 0 })
}

// TestKilledRunIsRerun: a run whose Runner stops mid-way (its context
// cancelled), then the whole process (store closed and reopened from
// disk), leaves its notification, and the next Runner runs it.
func TestKilledRunIsRerun(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, dir)
	e.write(t, 7, "doc", "count")
	entered := make(chan struct{}, 1)
	hang := func(ctx context.Context, tx *txn.Txn, key []byte) error {
		if err := incr(ctx, tx, countKey(key)); err != nil {
			return err
		}
		entered <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}
	r := newRunner(t, e.s, Options{})
	if err := r.Register(context.Background(), Observer{Name: "count", Run: hang}); err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	<-entered
	stop()
	if p := e.pending(t, "count"); p != 1 {
		t.Fatalf("%d notifications after a killed run, want 1", p)
	}
	e.close()

	e = newEnv(t, dir)
	var c counter
	r = newRunner(t, e.s, Options{})
	if err := r.Register(context.Background(), Observer{Name: "count", Run: c.run}); err != nil {
		t.Fatal(err)
	}
	stop = start(t, r)
	waitUntil(t, "the notification to clear", func() bool { return e.pending(t, "count") == 0 })
	stop()
	if got := e.committedRuns(t, 7); got != 1 {
		t.Errorf("%d committed runs after the restart, want 1", got)
	}
}

// TestChain: an observer's writes notify a second observer; both
// converge. docs -> hash table (the content's hash, counting the
// documents with it) -> counts (per hash row, how often it was reported).
func TestChain(t *testing.T) {
	e := newEnv(t, "")
	hashOf := func(v []byte) int64 {
		var h int64
		for _, b := range v {
			h = h*31 + int64(b)
		}
		return h & 0xffff
	}
	index := func(ctx context.Context, tx *txn.Txn, key []byte) error {
		v, found, err := tx.Get(ctx, key)
		if err != nil || !found {
			return err
		}
		hk := rowKey(hashTable, hashOf(v))
		if err := incr(ctx, tx, hk); err != nil {
			return err
		}
		return tx.Notify(hk, "report")
	}
	reported := func(ctx context.Context, tx *txn.Txn, key []byte) error {
		_, h, err := tablecodec.DecodeRowKey(key, false)
		if err != nil {
			return err
		}
		return incr(ctx, tx, rowKey(countsTable, h.Int))
	}
	r := newRunner(t, e.s, Options{})
	for _, o := range []Observer{{Name: "index", Run: index}, {Name: "report", Run: reported}} {
		if err := r.Register(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	stop := start(t, r)
	docs := []string{"alpha", "beta", "alpha", "gamma", "beta", "alpha"}
	for i, d := range docs {
		e.write(t, int64(i+1), d, "index")
	}
	waitUntil(t, "both observers to finish", func() bool { return e.pending(t, "index")+e.pending(t, "report") == 0 })
	stop()
	for _, d := range []string{"alpha", "beta", "gamma"} {
		h := hashOf([]byte(d))
		v, _, err := e.s.PointGet(context.Background(), rowKey(hashTable, h))
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, x := range docs {
			if x == d {
				want++
			}
		}
		if got := binary.BigEndian.Uint64(v); got != uint64(want) {
			t.Errorf("hash of %q counts %d documents, want %d", d, got, want)
		}
		// The second observer ran at least once per hash row, at most
		// once per change to it.
		if got := e.committedRuns(t, h); got < 1 || got > uint64(want) {
			t.Errorf("hash of %q reported %d times, want 1..%d", d, got, want)
		}
	}
}

// TestPanickingObserver: an observer that panics fails its run, which
// rolls back and leaves the notification; the process goes on, and once
// the observer is fixed the change is run.
func TestPanickingObserver(t *testing.T) {
	e := newEnv(t, "")
	e.write(t, 3, "doc", "count")
	var failures sync.Map
	r := New(e.s, Options{OnError: func(_ string, key []byte, err error) { failures.Store(string(key), err) }})
	var fixed atomic.Bool
	var c counter
	run := func(ctx context.Context, tx *txn.Txn, key []byte) error {
		if fixed.Load() {
			return c.run(ctx, tx, key)
		}
		if err := incr(ctx, tx, countKey(key)); err != nil { // rolled back
			return err
		}
		panic("observer bug")
	}
	if err := r.Register(context.Background(), Observer{Name: "count", Run: run}); err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	waitUntil(t, "the panic to be reported", func() bool {
		_, ok := failures.Load(string(rowKey(docsTable, 3)))
		return ok
	})
	if got := e.committedRuns(t, 3); got != 0 {
		t.Fatalf("a panicking run committed %d times", got)
	}
	fixed.Store(true)
	waitUntil(t, "the notification to clear", func() bool { return e.pending(t, "count") == 0 })
	stop()
	if got := e.committedRuns(t, 3); got != 1 {
		t.Errorf("%d committed runs once fixed, want 1", got)
	}
	v, _ := failures.Load(string(rowKey(docsTable, 3)))
	if err, _ := v.(error); err == nil || !strings.Contains(err.Error(), "panic: observer bug") {
		t.Errorf("reported %v, want the panic", v)
	}
}

// TestFailingRunBacksOff: a run that fails leaves its notification, which
// waits out Options.FailureBackoff before it runs again (the scanners
// defer it meanwhile), so an observer that fails for good does not spin;
// ObserverStats keeps the failure; the Func learns its notification from
// EntryOf; and once the backoff is over and the observer fixed, the
// change commits once.
func TestFailingRunBacksOff(t *testing.T) {
	e := newEnv(t, "")
	notified := e.write(t, 5, "doc", "count")
	var calls atomic.Int64
	var fixed atomic.Bool
	var entry kv.NotifyEntry
	var c counter
	run := func(ctx context.Context, tx *txn.Txn, key []byte) error {
		calls.Add(1)
		entry, _ = EntryOf(ctx)
		if !fixed.Load() {
			return errors.New("not yet")
		}
		return c.run(ctx, tx, key)
	}
	r := newRunner(t, e.s, Options{FailureBackoff: time.Hour})
	if err := r.Register(context.Background(), Observer{Name: "count", Run: run}); err != nil {
		t.Fatal(err)
	}
	stop := start(t, r)
	waitUntil(t, "the scanners to defer the failed notification", func() bool { return r.Stats().Deferred >= 3 })
	stop()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d calls within the backoff, want 1", n)
	}
	if entry.TS != notified || !bytes.Equal(entry.Key, rowKey(docsTable, 5)) || string(entry.Column) != "count" {
		t.Errorf("EntryOf gave %+v, want row 5's notification at %d", entry, notified)
	}
	st := r.ObserverStats()["count"]
	if st.Runs != 1 || st.Committed != 0 || st.Failed != 1 || !strings.Contains(st.LastError, "not yet") || st.LastErrorAt.IsZero() {
		t.Fatalf("observer stats %+v, want one failed run", st)
	}

	fixed.Store(true)
	r = newRunner(t, e.s, Options{FailureBackoff: time.Millisecond})
	if err := r.Register(context.Background(), Observer{Name: "count", Run: run}); err != nil {
		t.Fatal(err)
	}
	start(t, r)
	waitUntil(t, "the notification to clear", func() bool { return e.pending(t, "count") == 0 })
	if got := e.committedRuns(t, 5); got != 1 {
		t.Errorf("%d committed runs, want 1", got)
	}
	r.Unregister("count")
	if got := r.names(); len(got) != 0 {
		t.Errorf("observers after Unregister: %q", got)
	}
}
