// Command observebench measures percdb's observers (docs/benchmarks.md,
// "Observers"), as the Percolator paper's Fig. 8 does: the cost of
// notifications to the writers, the latency from a write's commit to the
// commit of the observer run that saw it, and the observers' throughput.
//
// One in-process node; writers are MySQL clients, each updating random
// rows of t (id BIGINT PRIMARY KEY, v BIGINT) with autocommit UPDATEs.
// The observer "copy" watches t.v and writes the row's value into t2 in
// its own transaction. Phases:
//
//  1. writers alone, no watch (Unwatch);
//
//  2. writers with the watch, observers not running (the cost of setting
//     notify entries);
//
//  3. writers with the observers running (notify entries plus the
//     observers' load on the same machine), and the latency of each run;
//
//     (phases 1-3 run in turn, -rounds times; medians are reported)
//
//  4. a backlog of notifications (writes with the observers stopped)
//     drained by the observers alone: runs per second.
//
//     go run ./examples/observebench -writers 4 -rows 1000 -duration 10s
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/examples/internal/node"
	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/observe"
	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/txn"
)

func main() {
	writers := flag.Int("writers", 4, "concurrent writer connections")
	rows := flag.Int("rows", 1000, "rows in the watched table")
	duration := flag.Duration("duration", 10*time.Second, "length of each writing phase")
	backlog := flag.Int("backlog", 5000, "notifications drained in phase 4")
	var opts observe.Options
	flag.IntVar(&opts.Scanners, "scanners", 2, "scanner goroutines")
	flag.IntVar(&opts.MaxRuns, "max-runs", 8, "observer transactions at once")
	flag.DurationVar(&opts.Idle, "idle", 0, "scanners' rest after an idle lap (0: the default)")
	rounds := flag.Int("rounds", 3, "rounds of phases 1-3")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the last round's phase 3 to this file")
	flag.Parse()
	profile = *cpuProfile
	if err := run(*writers, *rows, *duration, *backlog, *rounds, opts); err != nil {
		log.Fatal(err)
	}
}

func run(writers, rows int, duration time.Duration, backlog, rounds int, opts observe.Options) error {
	ctx := context.Background()
	nd, err := node.Start(ctx, "", "127.0.0.1:0", false)
	if err != nil {
		return err
	}
	defer nd.Close()
	srv, db := nd.Srv, nd.DB
	db.SetMaxOpenConns(writers + 2)
	for _, q := range []string{
		"CREATE DATABASE b",
		"CREATE TABLE b.t (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)",
		"CREATE TABLE b.t2 (id BIGINT PRIMARY KEY, v BIGINT NOT NULL)",
	} {
		if _, err := db.Exec(q); err != nil {
			return err
		}
	}
	for i := 0; i < rows; i += 100 {
		q := "INSERT INTO b.t VALUES "
		for j := i; j < min(i+100, rows); j++ {
			if j > i {
				q += ","
			}
			q += fmt.Sprintf("(%d, 0)", j)
		}
		if _, err := db.Exec(q); err != nil {
			return err
		}
	}
	w := &workload{db: db, rows: rows}
	fmt.Printf("observebench: %d writers, %d rows, %v per phase, %d rounds\n", writers, rows, duration, rounds)

	lat := &latencies{}
	txns := &timedTxns{ObserverTxns: srv.ObserverTxns(), w: w, lat: lat}
	opts.Catalog, opts.Txns = srv, txns
	r := observe.New(srv.TxnStore(), opts)
	if err := r.Register(ctx, observe.Observer{Name: "copy", Table: "b.t", Columns: []string{"v"}, Run: txns.copyRow}); err != nil {
		return err
	}
	// Phases 1-3 run in turn, rounds times, so that the machine's load
	// (shared with other work) weighs on each alike.
	var base, notified, observed []float64
	for round := 1; round <= rounds; round++ {
		if err := srv.Unwatch(ctx, "b.t", "copy"); err != nil {
			return err
		}
		base = append(base, w.write(writers, duration))
		if err := srv.Watch(ctx, "b.t", "copy", []string{"v"}); err != nil {
			return err
		}
		notified = append(notified, w.write(writers, duration))
		stop := start(ctx, r)
		if err := drain(ctx, r); err != nil { // the backlog phase 2 left
			stop()
			return err
		}
		if round == rounds && profile != "" {
			f, err := os.Create(profile)
			if err != nil {
				stop()
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				stop()
				return err
			}
		}
		before := r.Stats()
		// Only the runs of this phase's writes are timed, not those of
		// phase 2's backlog.
		lat.active.Store(true)
		observed = append(observed, w.write(writers, duration))
		if round == rounds && profile != "" {
			pprof.StopCPUProfile()
		}
		err := drain(ctx, r)
		lat.active.Store(false)
		after := r.Stats()
		stop()
		if err != nil {
			return err
		}
		fmt.Printf("round %d: writers alone %.0f/s, with notify entries %.0f/s, with observers running %.0f/s; %d committed runs for %.0f writes\n",
			round, base[round-1], notified[round-1], observed[round-1], after.Committed-before.Committed, observed[round-1]*duration.Seconds())
	}
	b, nt, ob := median(base), median(notified), median(observed)
	fmt.Printf("1. writers alone:                  %8.0f writes/s (median of %d)\n", b, rounds)
	fmt.Printf("2. writers, notify entries:        %8.0f writes/s (%+.1f%%)\n", nt, 100*(nt/b-1))
	fmt.Printf("3. writers, observers running:     %8.0f writes/s (%+.1f%%)\n", ob, 100*(ob/b-1))
	p50, p99, n := lat.percentiles()
	fmt.Printf("   notification latency (write commit -> observer commit): p50 %v, p99 %v over %d runs\n",
		p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), n)

	// 4. A backlog: distinct rows written with the observers stopped.
	for i := 0; i < backlog; i++ {
		if _, err := db.Exec("UPDATE b.t SET v = v + 1 WHERE id = ?", i%rows); err != nil {
			return err
		}
	}
	pending, err := r.Pending(ctx)
	if err != nil {
		return err
	}
	before := r.Stats()
	began := time.Now()
	stop := start(ctx, r)
	defer stop()
	if err := drain(ctx, r); err != nil {
		return err
	}
	took := time.Since(began)
	stop()
	after := r.Stats()
	fmt.Printf("4. backlog of %d notifications (%d writes) drained in %v: %.0f observer runs/s\n",
		pending, backlog, took.Round(time.Millisecond), float64(after.Committed-before.Committed)/took.Seconds())
	fmt.Printf("   scanners read %d entries, left %d to another scanner, jumped %d times; %d conflicts\n",
		after.Scanned-before.Scanned, after.Skipped-before.Skipped, after.Jumps-before.Jumps, after.Conflicts-before.Conflicts)
	return nil
}

// profile is the -cpuprofile file.
var profile string

// start runs r in the background; the returned stop ends it and waits,
// and may be called more than once.
func start(ctx context.Context, r *observe.Runner) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	return func() { cancel(); <-done }
}

// workload is the writers' side.
type workload struct {
	db   *sql.DB
	rows int
	// next is the last value written; committed[v] is when the write of
	// value v returned.
	next      atomic.Int64
	committed sync.Map
}

// write runs n writers for d and returns their writes per second.
func (w *workload) write(n int, d time.Duration) float64 {
	var total atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			for time.Now().Before(deadline) {
				v := w.next.Add(1)
				_, err := w.db.Exec("UPDATE b.t SET v = ? WHERE id = ?", v, rng.IntN(w.rows))
				var me *mysql.MySQLError
				if errors.As(err, &me) && me.Number == 1213 {
					continue // a conflict with an observer or another writer
				}
				if err != nil {
					log.Fatal(err)
				}
				w.committed.Store(v, time.Now())
				total.Add(1)
			}
		})
	}
	wg.Wait()
	return float64(total.Load()) / d.Seconds()
}

// drain waits until no notification is pending.
func drain(ctx context.Context, r *observe.Runner) error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		n, err := r.Pending(ctx)
		if err != nil || n == 0 {
			return err
		}
		time.Sleep(time.Millisecond)
	}
	return errors.New("the observers did not catch up in 5 minutes")
}

// timedTxns are the SQL node's observer transactions, timed: a run's
// commit records the latency from the commit of the value it read.
type timedTxns struct {
	*percsql.ObserverTxns
	w   *workload
	lat *latencies
	mu  sync.Mutex
	// seen is the value each running transaction read.
	seen map[*txn.Txn]int64
}

// copyRow is the observer: t2 gets t's row.
func (x *timedTxns) copyRow(ctx context.Context, tx *txn.Txn, key []byte) error {
	t, dec, err := x.Table(ctx, tx, "b.t")
	if err != nil {
		return err
	}
	t2, dec2, err := x.Table(ctx, tx, "b.t2")
	if err != nil {
		return err
	}
	_, h, err := tablecodec.DecodeRowKey(key, false)
	if err != nil {
		return err
	}
	row, found, err := executor.GetRow(ctx, tx, t, dec, h)
	if err != nil || !found {
		return err
	}
	x.mu.Lock()
	if x.seen == nil {
		x.seen = make(map[*txn.Txn]int64)
	}
	x.seen[tx] = row[1].(int64)
	x.mu.Unlock()
	old, had, err := executor.GetRow(ctx, tx, t2, dec2, h)
	if err != nil {
		return err
	}
	if !had {
		return executor.AddRecord(ctx, tx, t2, h, row)
	}
	return executor.UpdateRecord(ctx, tx, t2, h, h, old, row)
}

// Commit commits and records the latency of the value the run read.
func (x *timedTxns) Commit(ctx context.Context, tx *txn.Txn) error {
	err := x.ObserverTxns.Commit(ctx, tx)
	x.mu.Lock()
	v, ok := x.seen[tx]
	delete(x.seen, tx)
	x.mu.Unlock()
	if err == nil && ok {
		if at, found := x.w.committed.Load(v); found {
			x.lat.add(time.Since(at.(time.Time)))
		}
	}
	return err
}

// Rollback forgets the run.
func (x *timedTxns) Rollback(ctx context.Context, tx *txn.Txn) error {
	x.mu.Lock()
	delete(x.seen, tx)
	x.mu.Unlock()
	return x.ObserverTxns.Rollback(ctx, tx)
}

// median returns the median of xs.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// latencies collects durations.
type latencies struct {
	// active: durations are collected.
	active atomic.Bool
	mu     sync.Mutex
	d      []time.Duration
}

func (l *latencies) add(d time.Duration) {
	if !l.active.Load() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.d = append(l.d, d)
}

func (l *latencies) percentiles() (p50, p99 time.Duration, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(l.d)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100], len(s)
}
