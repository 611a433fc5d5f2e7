package crash

import (
	"context"
	"database/sql"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"
)

func TestMain(m *testing.M) {
	// go-mysql-server (in the in-process servers) logs every connection
	// and failed query through logrus; go-sql-driver logs every connection
	// a kill breaks; Pebble logs its WAL recovery (countLocks) on the
	// standard logger. The tests report what matters themselves.
	logrus.SetLevel(logrus.FatalLevel)
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// Environment of the long runs.
const (
	// envCycles is the number of SIGKILLs TestServerKill injects.
	envCycles = "PERCDB_CRASH_CYCLES"
	// envClientKills is the number of client processes
	// TestClientKilledMidCommit kills.
	envClientKills = "PERCDB_CRASH_CLIENT_KILLS"
	// envAbandonTxns is the number of transactions per client of
	// TestAbandonedCommits.
	envAbandonTxns = "PERCDB_CRASH_ABANDON_TXNS"
)

// Bounds of the waits of the workload and the checks. Generous, for two
// loaded cores; reaching one fails the test as a hang, not as slowness.
const (
	// progressTimeout bounds the wait for a workload to get going.
	progressTimeout = 3 * time.Minute
	// checkTimeout bounds a check, including the waits of reads and
	// writes for the locks a crash left (at most the lock TTL each).
	checkTimeout = 5 * time.Minute
)

// workers is the number of concurrent clients of the crash tests.
const workers = 4

// TestServerKill runs the workload against the percdb binary and
// SIGKILLs the server at a random moment of it, PERCDB_CRASH_CYCLES times
// (default 3). After each kill it counts the locks the dead process left
// in the store, restarts the server on the same data directory, and
// checks the data against the history (Checker.Check): nothing
// acknowledged is lost, transactions of unknown outcome are all or
// nothing, the bank's sum holds, indexes agree with their tables. The
// checks read through the leftover locks; at the end a writer pass over
// every account and counters row must commit through them too, and the
// server must stop cleanly.
func TestServerKill(t *testing.T) {
	cycles := envInt(t, envCycles, 3)
	rng := rand.New(rand.NewPCG(envSeed(t), 0))
	bin := buildPercdb(t)
	dir := t.TempDir()
	cfg := Config{}
	h := NewHistory()
	ids := NewIDs(0)

	srv := startServer(t, bin, dir)
	if err := Setup(context.Background(), openDB(t, srv.addr, ""), cfg); err != nil {
		t.Fatal(err)
	}
	seqs := make([]int64, workers)
	var left lockCount
	for cycle := 1; cycle <= cycles; cycle++ {
		pools := openPools(t, srv.addr, cfg.withDefaults().Database)
		stop := runWorkers(t, pools, cfg, h, ids, rng, seqs, 0)
		waitProgress(t, h, h.Len()+20)
		// A random moment within the running workload at which a commit
		// is in flight.
		time.Sleep(time.Duration(rng.Int64N(int64(500 * time.Millisecond))))
		waitInFlight(t, h.InFlight)
		srv.kill(stop)
		for _, db := range pools {
			db.Close()
		}

		locks := countLocks(t, dir)
		left.locks += locks.locks
		left.txns += locks.txns
		srv = startServer(t, bin, dir)
		rep := check(t, srv.addr, cfg, h)
		t.Logf("kill %d/%d: %v left; after restart %s", cycle, cycles, locks, rep)
	}

	db := openDB(t, srv.addr, cfg.withDefaults().Database)
	writeEverything(t, db, cfg, h, ids)
	rep := check(t, srv.addr, cfg, h)
	srv.stop()
	end := countLocks(t, dir)
	t.Logf("%d kills: %s; %v left by the kills, %v remain unresolved at the end (on keys no one read again); final check: %s",
		cycles, h.Summary(), left, end, rep)
}

// runWorkers starts one goroutine per worker running the workload until
// the returned stop is called; stop waits for them. Worker i uses pool
// i%len(pools). seqs holds each worker's next item sequence number,
// carried from run to run. Worker ids start at firstWorker.
func runWorkers(t *testing.T, pools []*sql.DB, cfg Config, rec Recorder, ids *IDs, rng *rand.Rand, seqs []int64, firstWorker int) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range seqs {
		w := &Worker{ID: firstWorker + i, DB: pools[i%len(pools)], Cfg: cfg, IDs: ids, Rand: rand.New(rand.NewPCG(rng.Uint64(), uint64(i))), Rec: rec, NextSeq: seqs[i]}
		wg.Go(func() {
			w.Run(ctx)
			seqs[i] = w.NextSeq
		})
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// waitProgress waits until the history holds at least n transactions.
func waitProgress(t *testing.T, h *History, n int) {
	t.Helper()
	deadline := time.Now().Add(progressTimeout)
	for h.Len() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the workload recorded %d transactions of %d within %v: %s", h.Len(), n, progressTimeout, h.Summary())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitInFlight waits until inFlight reports a commit in flight.
func waitInFlight(t *testing.T, inFlight func() int) {
	t.Helper()
	deadline := time.Now().Add(progressTimeout)
	for inFlight() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no commit in flight within %v", progressTimeout)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// check checks the data on the server at addr against h and fails the
// test on a violation.
func check(t *testing.T, addr string, cfg Config, h *History) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	db := openDB(t, addr, cfg.withDefaults().Database)
	defer db.Close()
	rep, err := (&Checker{DB: db, Cfg: cfg}).Check(ctx, h)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("after %s: %s", h.Summary(), rep)
	}
	return rep
}

// writeEverything writes every account (a transfer out of each) and every
// counters row of the workers (an order each), retrying conflicts, so
// that writers meet whatever locks are left and must get through them.
func writeEverything(t *testing.T, db *sql.DB, cfg Config, h *History, ids *IDs) {
	t.Helper()
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	// A lock left by a killed transaction stays alive for up to its TTL
	// (3 s) after the restart, and a younger writer that meets it fails
	// at once (wait-die) rather than wait: the attempts are spaced so
	// that together they outlast the TTL.
	const attempts = 100
	const pause = 100 * time.Millisecond
	retry := func(what string, do func() Txn) {
		for range attempts {
			switch tx := do(); tx.Outcome {
			case Committed:
				return
			case Unknown:
				t.Fatalf("%s: outcome unknown on a live server (%v)", what, ctx.Err())
			}
			time.Sleep(pause)
		}
		t.Fatalf("%s: failed %d times", what, attempts)
	}
	w := &Worker{DB: db, Cfg: cfg, IDs: ids, Rec: h}
	for a := range cfg.Accounts {
		retry("transfer out of every account", func() Txn { return w.Transfer(ctx, a, (a+1)%cfg.Accounts, 1) })
	}
	for id := range cfg.Workers {
		w.ID = id
		retry("order of every worker", func() Txn { return w.Order(ctx, []Line{{Qty: 1, Pad: 10}}) })
	}
}
