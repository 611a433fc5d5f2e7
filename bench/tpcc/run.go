package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand"
	"slices"
	"sync"
	"time"
)

// RunOptions configure Run.
type RunOptions struct {
	Scale Scale
	// Threads is the number of terminals, each on its own connection.
	// Terminal i's home is warehouse i mod W + 1.
	Threads int
	// Duration is the measured interval.
	Duration time.Duration
	// Grace is how long transactions still running at the end of Duration
	// may take to finish before they are cancelled. Default: 10 s.
	Grace time.Duration
	// Retry runs a transaction that failed with a retryable error (see
	// Retryable) again with the same input, until it ends otherwise or the
	// interval is over.
	Retry bool
	// StockIN makes New-Order read and lock its stock rows with one
	// row-constructor IN instead of one SELECT per line.
	StockIN bool
	// Seed is the load's seed: the NURand constants of the run derive
	// from it (clause 2.1.6.1 relates the run's C_LAST constant to the
	// load's).
	Seed int64
	// Stream varies the terminals' random inputs from run to run on the
	// same database.
	Stream int64
	// Transactions, when positive, ends a terminal after that many
	// transactions even if the interval is not over (for tests, which must
	// not depend on the machine's speed).
	Transactions int
	// Progress, when set, is called about once a second with the time
	// since the start and the New-Orders committed so far.
	Progress func(elapsed time.Duration, newOrders int64)
}

// TxnStats are the figures of one transaction type over a run.
type TxnStats struct {
	Name string
	// Committed counts transactions that committed within the interval.
	Committed int64
	// RolledBack counts New-Orders that rolled back by design (1%).
	RolledBack int64
	// Failed counts transactions that ended in an error within the
	// interval (after retries, if any).
	Failed int64
	// Retries counts attempts that failed with a retryable error and were
	// run again.
	Retries int64
	// Late counts transactions that ended after the interval, within the
	// grace period; they are in no other count.
	Late int64
	// Errors counts every error, retried or not, by Code.
	Errors map[string]int64
	// FirstError is the text of the first error of each code, for the
	// report.
	FirstError map[string]string
	// Latency percentiles and mean of the transactions that completed
	// (committed or rolled back by design) within the interval, retries
	// included, in milliseconds.
	P50, P95, P99, Mean, Max float64

	latencies []time.Duration
}

// RunResult is what Run measured.
type RunResult struct {
	Threads  int
	Duration time.Duration
	Retry    bool
	StockIN  bool
	// Txns holds one entry per transaction type, in TxnType order.
	Txns []TxnStats
	// NewOrders is the New-Orders committed within the interval, TpmC
	// that per minute.
	NewOrders int64
	TpmC      float64
	// Unfinished counts transactions still running at the end of the
	// grace period, cancelled.
	Unfinished int
	// Elapsed is the wall time of the run, grace included.
	Elapsed time.Duration
}

// Errors returns the errors of every type, by code.
func (r *RunResult) Errors() map[string]int64 {
	all := map[string]int64{}
	for _, t := range r.Txns {
		for c, n := range t.Errors {
			all[c] += n
		}
	}
	return all
}

// outcome is how one business transaction ended.
type outcome struct {
	t          TxnType
	err        error // nil, errRollback or the error
	retries    int
	errs       []error // every error met, retried ones included
	latency    time.Duration
	late       bool
	unfinished bool
}

// Run runs the mix on db (connected to the loaded database) from
// opts.Threads terminals for opts.Duration and returns the figures. It
// returns an error only when no terminal could connect or ctx ended.
func Run(ctx context.Context, db *sql.DB, opts RunOptions) (*RunResult, error) {
	if err := opts.Scale.Validate(); err != nil {
		return nil, err
	}
	if opts.Threads < 1 || opts.Duration <= 0 {
		return nil, fmt.Errorf("tpcc run: %d threads for %v: want at least 1 thread and a duration", opts.Threads, opts.Duration)
	}
	if opts.Grace <= 0 {
		opts.Grace = 10 * time.Second
	}
	res := &RunResult{Threads: opts.Threads, Duration: opts.Duration, Retry: opts.Retry, StockIN: opts.StockIN}
	stats := make([]TxnStats, numTxnTypes)
	for t := range stats {
		stats[t] = TxnStats{Name: TxnType(t).String(), Errors: map[string]int64{}, FirstError: map[string]string{}}
	}
	start := time.Now()
	end := start.Add(opts.Duration)
	// Statements still running at end+grace are cancelled.
	runCtx, cancel := context.WithDeadline(ctx, end.Add(opts.Grace))
	defer cancel()

	var mu sync.Mutex
	record := func(o outcome) {
		mu.Lock()
		defer mu.Unlock()
		st := &stats[o.t]
		st.Retries += int64(o.retries)
		for _, e := range o.errs {
			c := Code(e)
			st.Errors[c]++
			if _, ok := st.FirstError[c]; !ok {
				st.FirstError[c] = e.Error()
			}
		}
		switch {
		case o.unfinished:
			res.Unfinished++
		case o.late:
			st.Late++
		case o.err == nil:
			st.Committed++
			st.latencies = append(st.latencies, o.latency)
			if o.t == NewOrder {
				res.NewOrders++
			}
		case errors.Is(o.err, errRollback):
			st.RolledBack++
			st.latencies = append(st.latencies, o.latency)
		default:
			st.Failed++
		}
	}

	consts := NewConstants(opts.Seed)
	var wg sync.WaitGroup
	connErrs := make(chan error, opts.Threads)
	for i := range opts.Threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := &session{db: db}
			defer sess.drop()
			if err := sess.ensure(runCtx); err != nil {
				connErrs <- err
				return
			}
			r := NewRand((opts.Seed*7919+opts.Stream)*1009+int64(i)+1, consts)
			jitter := rand.New(rand.NewSource(int64(i)))
			w := i%opts.Scale.Warehouses + 1
			d := (i/opts.Scale.Warehouses)%opts.Scale.Districts + 1
			for n := 0; time.Now().Before(end) && runCtx.Err() == nil; n++ {
				if opts.Transactions > 0 && n >= opts.Transactions {
					break
				}
				t := r.pick()
				in := r.draw(t, opts.Scale, w, d, opts.StockIN)
				record(runOne(runCtx, sess, t, in, opts.Retry, end, jitter))
			}
		}()
	}
	if opts.Progress != nil {
		go func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-runCtx.Done():
					return
				case <-tick.C:
					mu.Lock()
					n := res.NewOrders
					mu.Unlock()
					opts.Progress(time.Since(start), n)
				}
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	close(connErrs)
	var errs []error
	for err := range connErrs {
		errs = append(errs, err)
	}
	if len(errs) == opts.Threads {
		return res, fmt.Errorf("tpcc run: no terminal connected: %w", errors.Join(errs...))
	}
	for t := range stats {
		stats[t].summarize()
	}
	res.Txns = stats
	res.TpmC = float64(res.NewOrders) / opts.Duration.Minutes()
	return res, ctx.Err()
}

// maxBackoff bounds the pause before a retry.
const maxBackoff = 20 * time.Millisecond

// runOne runs one business transaction, retrying when asked, and says how
// it ended.
func runOne(ctx context.Context, s *session, t TxnType, in txnInput, retry bool, end time.Time, jitter *rand.Rand) outcome {
	o := outcome{t: t}
	began := time.Now()
	for attempt := 0; ; attempt++ {
		err := s.ensure(ctx)
		if err == nil {
			err = in.run(ctx, s)
		}
		if err != nil && badConn(err) {
			s.drop()
		}
		o.err = err
		if err == nil || errors.Is(err, errRollback) {
			break
		}
		o.errs = append(o.errs, err)
		if !retry || !Retryable(err) || !time.Now().Before(end) || ctx.Err() != nil {
			break
		}
		o.retries++
		// A short random pause, growing with the attempts, so that two
		// transactions that conflicted do not meet again at once.
		pause := time.Duration(jitter.Int63n(int64(min(maxBackoff, time.Millisecond<<min(attempt, 5))) + 1))
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
	}
	o.latency = time.Since(began)
	switch {
	case ctx.Err() != nil && o.err != nil:
		o.unfinished = true
	case time.Now().After(end):
		o.late = true
	}
	return o
}

// summarize computes the latency figures.
func (st *TxnStats) summarize() {
	ls := st.latencies
	if len(ls) == 0 {
		return
	}
	slices.Sort(ls)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	// Nearest rank: the smallest latency with at least p of them at or
	// below it.
	pct := func(p float64) float64 { return ms(ls[max(0, int(math.Ceil(p*float64(len(ls))))-1)]) }
	st.P50, st.P95, st.P99, st.Max = pct(0.50), pct(0.95), pct(0.99), ms(ls[len(ls)-1])
	var sum time.Duration
	for _, l := range ls {
		sum += l
	}
	st.Mean = ms(sum / time.Duration(len(ls)))
}

// ErrorCodes returns the codes of errs sorted.
func ErrorCodes[V any](errs map[string]V) []string {
	return slices.Sorted(maps.Keys(errs))
}
