package observe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/internal/ctxtime"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
)

// Func is an observer's work for one notified row: it reads and writes
// through tx, which the Runner commits when Func returns nil. Func must
// not commit or roll back tx. An error rolls the run back; the
// notification stays and runs again in a later pass.
type Func func(ctx context.Context, tx *txn.Txn, rowKey []byte) error

// Observer is one registered observer.
type Observer struct {
	// Name identifies the observer: it names its notifications and its
	// acknowledgements, so it must stay the same across restarts.
	Name string
	// Table ("db.table") and Columns are what the observer watches. When
	// the Runner has a Catalog, Register records the watch there, so that
	// every write changing one of the columns notifies the observer.
	Table   string
	Columns []string
	// Run is the observer's work.
	Run Func
	// Weak: no acknowledgement, at-least-once runs (see doc.go).
	Weak bool
}

// Catalog records watches: after Watch returns, every transaction that
// changes one of columns of table (or inserts or deletes a row) marks the
// row notified for observer. Package sql implements it.
type Catalog interface {
	Watch(ctx context.Context, table, observer string, columns []string) error
}

// TxnSource begins and ends the transactions of runs. The default
// begins them on the Runner's store; an observer that writes SQL tables
// takes the SQL node's (sql.Server.ObserverTxns), which keeps the rules
// of online schema change.
type TxnSource interface {
	Begin(ctx context.Context) (*txn.Txn, error)
	Commit(ctx context.Context, tx *txn.Txn) error
	Rollback(ctx context.Context, tx *txn.Txn) error
}

// storeTxns is the default TxnSource.
type storeTxns struct{ s *txn.Store }

func (t storeTxns) Begin(ctx context.Context) (*txn.Txn, error)   { return t.s.Begin(ctx) }
func (storeTxns) Commit(ctx context.Context, tx *txn.Txn) error   { return tx.Commit(ctx) }
func (storeTxns) Rollback(ctx context.Context, tx *txn.Txn) error { return tx.Rollback(ctx) }

// Options tunes a Runner. Zero values take the defaults.
type Options struct {
	// Scanners is the number of scanner goroutines (default 2).
	Scanners int
	// MaxRuns bounds the observer transactions running at once (default
	// 4).
	MaxRuns int
	// PageSize is how many notify entries a scanner reads at once
	// (default 64).
	PageSize int
	// Idle is how long, at least, a scanner rests after a pass over the
	// whole key space that started fewer than PageSize runs (default
	// 10ms; longer when the pass took long, see scan).
	Idle time.Duration
	// MaxAttempts bounds the attempts of one run that conflicts (default
	// 5); the notification then waits for a later pass.
	MaxAttempts int
	// Catalog, when set, records the watches of registered observers.
	Catalog Catalog
	// Txns, when set, begins and ends the runs' transactions.
	Txns TxnSource
	// OnError, when set, is told of every failed run and scan.
	OnError func(observer string, rowKey []byte, err error)
	// FailureBackoff is how long a notification whose run failed (an
	// error of its Func or its commit, or MaxAttempts conflicts) waits
	// before this Runner runs it again (default 100ms); it doubles with
	// each failure in a row, up to MaxFailureBackoff (default 30s). A
	// run that fails for good (an observer's bug, a privilege it lacks)
	// so costs a run per MaxFailureBackoff, not a spinning scanner.
	FailureBackoff    time.Duration
	MaxFailureBackoff time.Duration
}

func (o Options) withDefaults() Options {
	if o.Scanners <= 0 {
		o.Scanners = 2
	}
	if o.MaxRuns <= 0 {
		o.MaxRuns = 4
	}
	if o.PageSize <= 0 {
		o.PageSize = 64
	}
	if o.Idle <= 0 {
		o.Idle = 10 * time.Millisecond
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.FailureBackoff <= 0 {
		o.FailureBackoff = 100 * time.Millisecond
	}
	if o.MaxFailureBackoff <= 0 {
		o.MaxFailureBackoff = 30 * time.Second
	}
	o.MaxFailureBackoff = max(o.MaxFailureBackoff, o.FailureBackoff)
	return o
}

// Stats counts what a Runner did.
type Stats struct {
	// Runs counts calls of observers' Funcs.
	Runs uint64
	// Committed counts runs whose transaction committed.
	Committed uint64
	// Acknowledged counts notifications found already processed by a
	// committed run (the ack was newer), cleared without a call.
	Acknowledged uint64
	// Conflicts counts run attempts that failed to commit on a conflict.
	Conflicts uint64
	// Failed counts runs that ended in an error (the Func's, or a commit
	// error other than a conflict) or were given up after MaxAttempts.
	Failed uint64
	// Scanned counts notify entries the scanners read.
	Scanned uint64
	// Skipped counts notify entries left to another live scanner, of
	// this Runner or of another process, that holds them
	// (kv.ScanNotifyRequest.Scanner).
	Skipped uint64
	// Jumps counts the scanners' jumps to a random key after a page that
	// trailed another scanner.
	Jumps uint64
	// Deferred counts notifications a scanner left for later because
	// their last run failed and their backoff had not passed
	// (Options.FailureBackoff).
	Deferred uint64
}

// ObserverStats counts what a Runner did for one observer.
type ObserverStats struct {
	// Runs counts calls of the observer's Func; Committed the runs
	// whose transaction committed.
	Runs, Committed uint64
	// Failed counts runs that ended in an error (after their conflicts
	// were retried); LastError is the last one's and LastErrorAt its
	// time (zero when none failed).
	Failed      uint64
	LastError   string
	LastErrorAt time.Time
}

// Runner runs registered observers over the notifications of one store.
type Runner struct {
	store *txn.Store
	opts  Options
	slots chan struct{}

	mu        sync.Mutex
	observers map[string]*Observer
	// inflight holds the notifications (key, column) being run, so that
	// a scanner does not start a run of a notification it still holds.
	inflight map[string]struct{}
	// failing holds the notifications whose last run failed: when they
	// may run again, and the backoff after the next failure.
	failing map[string]failure
	// perObserver counts each observer's runs (ObserverStats).
	perObserver map[string]*ObserverStats
	// lo and hi bound the keys where notifications were seen, for random
	// starts.
	lo, hi []byte

	runs, committed, acknowledged, conflicts, failed, scanned, skipped, jumps, deferred atomic.Uint64
}

// failure is a notification's backoff after failed runs.
type failure struct {
	until time.Time
	next  time.Duration
}

// maxFailing bounds Runner.failing: past it, entries whose backoff is
// over are dropped (their notifications may have been run elsewhere).
const maxFailing = 10000

// New returns a Runner over store. Register observers, then call Run.
func New(store *txn.Store, opts Options) *Runner {
	opts = opts.withDefaults()
	if opts.Txns == nil {
		opts.Txns = storeTxns{store}
	}
	return &Runner{
		store:       store,
		opts:        opts,
		slots:       make(chan struct{}, opts.MaxRuns),
		observers:   make(map[string]*Observer),
		inflight:    make(map[string]struct{}),
		failing:     make(map[string]failure),
		perObserver: make(map[string]*ObserverStats),
	}
}

// Register adds an observer, and records its watch in the Catalog when
// the Runner has one and o names a table.
func (r *Runner) Register(ctx context.Context, o Observer) error {
	if o.Name == "" || o.Run == nil {
		return errors.New("observe: an observer needs a Name and a Run")
	}
	r.mu.Lock()
	_, dup := r.observers[o.Name]
	r.mu.Unlock()
	if dup {
		return fmt.Errorf("observe: observer %q registered twice", o.Name)
	}
	if r.opts.Catalog != nil && o.Table != "" {
		if err := r.opts.Catalog.Watch(ctx, o.Table, o.Name, o.Columns); err != nil {
			return fmt.Errorf("observe: watch %s (%v) for %q: %w", o.Table, o.Columns, o.Name, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observers[o.Name] = &o
	if r.perObserver[o.Name] == nil {
		r.perObserver[o.Name] = &ObserverStats{}
	}
	return nil
}

// Unregister removes the observer named name, which may be registered
// again later. Its runs in progress finish; its notifications stay in the
// store for whichever Runner runs it.
func (r *Runner) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.observers, name)
}

// ObserverStats returns the counters of each observer ever registered.
func (r *Runner) ObserverStats() map[string]ObserverStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]ObserverStats, len(r.perObserver))
	for name, st := range r.perObserver {
		out[name] = *st
	}
	return out
}

// countRun adds to observer's counters under r.mu.
func (r *Runner) countRun(observer string, f func(*ObserverStats)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.perObserver[observer]; st != nil {
		f(st)
	}
}

// Stats returns the Runner's counters.
func (r *Runner) Stats() Stats {
	return Stats{
		Runs:         r.runs.Load(),
		Committed:    r.committed.Load(),
		Acknowledged: r.acknowledged.Load(),
		Conflicts:    r.conflicts.Load(),
		Failed:       r.failed.Load(),
		Scanned:      r.scanned.Load(),
		Skipped:      r.skipped.Load(),
		Jumps:        r.jumps.Load(),
		Deferred:     r.deferred.Load(),
	}
}

// Run scans for notifications and runs observers until ctx ends, then
// waits for the runs in progress (which see ctx end) and returns nil. A
// Runner runs once at a time: call Run again only after it returned.
func (r *Runner) Run(ctx context.Context) error {
	var runs sync.WaitGroup
	var scanners sync.WaitGroup
	seed := rand.Uint64()
	for i := range r.opts.Scanners {
		scanners.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			// The scanner's name to the store: random, so that the
			// scanners of every process differ (a clash only makes two
			// scanners share their claims).
			r.scan(ctx, rng.Uint64()|1, rng, &runs)
		})
	}
	scanners.Wait()
	runs.Wait()
	return nil
}

// scan is the loop of the scanner the store knows as id. The store tells
// it of the other scanners, of this process or another: it leaves out the
// entries they hold, and says when the scanner trails one.
func (r *Runner) scan(ctx context.Context, id uint64, rng *rand.Rand, runs *sync.WaitGroup) {
	pos := r.randomStart(rng)
	started := 0            // runs started since the scan last wrapped around
	var spent time.Duration // time spent reading since then
	for ctx.Err() == nil {
		names := r.names()
		if len(names) == 0 {
			// Nothing to run (and an empty list would ask for every
			// observer's notifications).
			_ = ctxtime.Sleep(ctx, r.opts.Idle)
			continue
		}
		began := time.Now()
		page, err := r.store.ScanNotifyPage(ctx, pos, nil, r.opts.PageSize, id, names)
		spent += time.Since(began)
		if err != nil {
			if ctx.Err() == nil {
				r.report("", pos, fmt.Errorf("scan notify entries from %q: %w", pos, err))
				_ = ctxtime.Sleep(ctx, r.opts.Idle)
			}
			continue
		}
		entries, next := page.Entries, page.Next
		r.scanned.Add(uint64(len(entries) + page.Skipped))
		r.skipped.Add(uint64(page.Skipped))
		r.seen(entries)
		for _, e := range entries {
			if r.dispatch(ctx, e, runs) {
				started++
			}
		}
		switch {
		case next == nil:
			// Wrapped around: rest unless the lap started a page's
			// worth of runs. A lap walks every entry of the key space,
			// and the versions and tombstones of rewritten and cleared
			// ones until compaction drops them; a scanner that went
			// round again at once would spend the machine re-reading
			// entries whose runs are in flight. The rest is Idle, or
			// nine times the lap's reading when that is longer (a
			// scanner reads at most a tenth of the time), up to ten
			// times Idle (the lap's time is wall time, which a loaded
			// machine stretches); it bounds how late a notification
			// set during it is found.
			if started < r.opts.PageSize {
				_ = ctxtime.Sleep(ctx, min(max(r.opts.Idle, 9*spent), 10*r.opts.Idle))
			}
			started, spent = 0, 0
			pos = nil
		case page.Trailing:
			// Another scanner reads next inside the page this one just
			// read: it has just read the same entries, and would again.
			// The paper's remedy for such convoys: jump elsewhere.
			r.jumps.Add(1)
			pos = r.randomStart(rng)
		default:
			pos = next
		}
	}
}

// names returns the names of the registered observers: a scanner is
// handed (and holds) only their notifications, never one that another
// process's Runner would run and this one would not.
func (r *Runner) names() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([][]byte, 0, len(r.observers))
	for name := range r.observers {
		out = append(out, []byte(name))
	}
	return out
}

// seen widens the range of keys where notifications were seen.
func (r *Runner) seen(entries []kv.NotifyEntry) {
	if len(entries) == 0 {
		return
	}
	first, last := entries[0].Key, entries[len(entries)-1].Key
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lo == nil || bytes.Compare(first, r.lo) < 0 {
		r.lo = bytes.Clone(first)
	}
	if r.hi == nil || bytes.Compare(last, r.hi) > 0 {
		r.hi = bytes.Clone(last)
	}
}

// randomStart returns a random key between the first and the last key
// where notifications were seen (nil, the start of the key space, before
// any was seen).
func (r *Runner) randomStart(rng *rand.Rand) []byte {
	r.mu.Lock()
	lo, hi := r.lo, r.hi
	r.mu.Unlock()
	if lo == nil || bytes.Equal(lo, hi) {
		return lo
	}
	return randomKeyBetween(rng, lo, hi)
}

// keyPrefixLen is how many leading bytes of a key randomKeyBetween reads
// as a number.
const keyPrefixLen = 24

// randomKeyBetween returns a key k with lo <= k <= hi, spread evenly over
// the first keyPrefixLen bytes of the keys read as numbers.
func randomKeyBetween(rng *rand.Rand, lo, hi []byte) []byte {
	num := func(k []byte) *big.Int {
		b := make([]byte, keyPrefixLen)
		copy(b, k)
		return new(big.Int).SetBytes(b)
	}
	l, h := num(lo), num(hi)
	span := new(big.Int).Sub(h, l)
	if span.Sign() <= 0 {
		return bytes.Clone(lo)
	}
	raw := make([]byte, keyPrefixLen+8) // 8 bytes more than span: the modulo bias is negligible
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	off := new(big.Int).Mod(new(big.Int).SetBytes(raw), span)
	k := new(big.Int).Add(l, off).FillBytes(make([]byte, keyPrefixLen))
	if bytes.Compare(k, lo) < 0 {
		return bytes.Clone(lo)
	}
	return k
}

// dispatch starts a run of e's observer when this Runner has it and is not
// running that notification already. It waits for a free run slot.
func (r *Runner) dispatch(ctx context.Context, e kv.NotifyEntry, runs *sync.WaitGroup) bool {
	id := string(e.Key) + "\x00" + string(e.Column)
	r.mu.Lock()
	o := r.observers[string(e.Column)]
	_, busy := r.inflight[id]
	if o == nil || busy {
		r.mu.Unlock()
		return false
	}
	if f, ok := r.failing[id]; ok && time.Now().Before(f.until) {
		r.mu.Unlock()
		r.deferred.Add(1)
		return false
	}
	r.inflight[id] = struct{}{}
	r.mu.Unlock()
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		r.done(id)
		return false
	}
	runs.Go(func() {
		defer func() { <-r.slots }()
		defer r.done(id)
		err := r.process(ctx, o, e)
		switch {
		case err == nil:
			r.succeeded(id)
		case ctx.Err() == nil:
			r.failed.Add(1)
			r.backOff(id, o.Name, err)
			r.report(o.Name, e.Key, err)
		}
	})
	return true
}

// succeeded forgets the failures of notification id.
func (r *Runner) succeeded(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failing, id)
}

// backOff records that a run of notification id of observer failed with
// err: the notification waits before it runs again, twice as long as
// last time, up to Options.MaxFailureBackoff.
func (r *Runner) backOff(id, observer string, err error) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.failing[id]
	if !ok {
		f.next = r.opts.FailureBackoff
	}
	f.until = now.Add(f.next)
	f.next = min(2*f.next, r.opts.MaxFailureBackoff)
	if !ok && len(r.failing) >= maxFailing {
		for k, old := range r.failing {
			if now.After(old.until) {
				delete(r.failing, k)
			}
		}
	}
	r.failing[id] = f
	if st := r.perObserver[observer]; st != nil {
		st.Failed++
		st.LastError, st.LastErrorAt = err.Error(), now
	}
}

// done forgets a finished run.
func (r *Runner) done(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.inflight, id)
}

// report passes an error to Options.OnError.
func (r *Runner) report(observer string, key []byte, err error) {
	if r.opts.OnError != nil {
		r.opts.OnError(observer, key, err)
	}
}

// process runs o for the notification e (doc.go, steps 1-4), retrying
// conflicts with backoff.
func (r *Runner) process(ctx context.Context, o *Observer, e kv.NotifyEntry) error {
	ctx = context.WithValue(ctx, entryKey{}, e)
	var ackKey []byte
	if !o.Weak {
		var err error
		if ackKey, err = tablecodec.AckKey(nil, e.Key, o.Name); err != nil {
			return err
		}
	}
	pause := time.Millisecond
	for attempt := 1; ; attempt++ {
		done, err := r.attempt(ctx, o, e, ackKey)
		if err == nil {
			if done {
				return r.store.ClearNotify(ctx, []kv.NotifyEntry{e})
			}
			return nil
		}
		if !retryable(err) {
			return err
		}
		r.conflicts.Add(1)
		if attempt >= r.opts.MaxAttempts {
			return fmt.Errorf("gave up after %d attempts, until the next pass: %w", attempt, err)
		}
		_ = ctxtime.Sleep(ctx, pause/2+rand.N(pause/2+1))
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// attempt is one transaction of a run. done reports that the notification
// is processed (a committed run, or an ack showing one).
func (r *Runner) attempt(ctx context.Context, o *Observer, e kv.NotifyEntry, ackKey []byte) (done bool, err error) {
	tx, err := r.opts.Txns.Begin(ctx)
	if err != nil {
		return false, err
	}
	committed := false
	defer func() {
		if !committed {
			_ = r.opts.Txns.Rollback(context.WithoutCancel(ctx), tx)
		}
	}()
	if _, _, err := tx.Get(ctx, e.Key); err != nil {
		return false, fmt.Errorf("observer %q: read %q: %w", o.Name, e.Key, err)
	}
	if ackKey != nil {
		run, err := tx.Acknowledge(ctx, ackKey, e.TS)
		if err != nil {
			return false, fmt.Errorf("observer %q: %w", o.Name, err)
		}
		if !run {
			r.acknowledged.Add(1)
			return true, nil
		}
	}
	// The reads of the row and of the ack are a statement of their own,
	// before the Func's: a pessimistic run whose Func moves its snapshot
	// past a newer commit (txn.Txn.RefreshSnapshot) must have them
	// validated, or it could move past another run's acknowledgement of
	// the same change and commit its own over it (its ack is an ordinary
	// write, checked for conflicts at the moved snapshot).
	tx.BeginStatement()
	r.runs.Add(1)
	r.countRun(o.Name, func(st *ObserverStats) { st.Runs++ })
	if err := call(ctx, o, tx, e.Key); err != nil {
		return false, fmt.Errorf("observer %q on %q: %w", o.Name, e.Key, err)
	}
	committed = true
	if err := r.opts.Txns.Commit(ctx, tx); err != nil {
		return false, fmt.Errorf("observer %q on %q: commit: %w", o.Name, e.Key, err)
	}
	r.committed.Add(1)
	r.countRun(o.Name, func(st *ObserverStats) { st.Committed++ })
	return true, nil
}

// entryKey keys the notification of a run in its context.
type entryKey struct{}

// EntryOf returns the notification the run of ctx (the context a Func is
// called with) is for: its row key, its observer and the commit_ts of
// the newest change it tells of.
func EntryOf(ctx context.Context) (kv.NotifyEntry, bool) {
	e, ok := ctx.Value(entryKey{}).(kv.NotifyEntry)
	return e, ok
}

// call runs o's Func, turning a panic into an error: observers run inside
// the node's process, which one faulty observer must not bring down. The
// run is rolled back and its notification stays.
func call(ctx context.Context, o *Observer, tx *txn.Txn, key []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return o.Run(ctx, tx, key)
}

// retryable reports whether a run that failed with err may succeed if run
// again now: it lost a race with another transaction.
func retryable(err error) bool {
	return errors.Is(err, txn.ErrWriteConflict) || errors.Is(err, txn.ErrLockWaitTimeout) ||
		errors.Is(err, txn.ErrTxnAborted) || errors.Is(err, txn.ErrAlreadyExists)
}

// Pending counts the notifications of this Runner's observers that wait
// in the store: zero once every change they were told of has been run.
func (r *Runner) Pending(ctx context.Context) (int, error) {
	n := 0
	var start []byte
	for {
		entries, next, err := r.store.ScanNotify(ctx, start, nil, 1024)
		if err != nil {
			return 0, err
		}
		r.mu.Lock()
		for _, e := range entries {
			if r.observers[string(e.Column)] != nil {
				n++
			}
		}
		r.mu.Unlock()
		if next == nil {
			return n, nil
		}
		start = next
	}
}
