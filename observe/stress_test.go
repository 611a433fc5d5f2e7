package observe

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/txntest"
)

// stressMode is one configuration of TestStrongNotificationsStress.
type stressMode struct {
	name string
	// pessimisticWriters: the writers lock the rows they change first,
	// as percdb's SQL transactions in pessimistic mode do.
	pessimisticWriters bool
	// pessimisticRuns: the runs' transactions are pessimistic and their
	// Func writes as a pessimistic SQL statement does: it locks the key
	// it writes and, when the lock meets a newer commit, moves the
	// snapshot (RefreshSnapshot) and writes again. The Func does not mark
	// a statement of its own (BeginStatement).
	pessimisticRuns bool
	// twoPC: the runs' output lives in another region than their
	// acknowledgement, so every run commits in two phases.
	twoPC bool
	// lease is the scanners' lease in the store: short, scanners hand the
	// same notification to several runs at once.
	lease time.Duration
}

// TestStrongNotificationsStress: strong notifications under contention.
// Three Runners, each over a txn.Store of its own (as processes would
// be), run one observer over three hot rows that three writers keep
// changing (a write every half millisecond or so each); each run takes a
// while (it sleeps up to 2 ms between its read and its write) and counts
// itself in an output row. In every mode
// (optimistic and pessimistic writers and runs, one- and two-phase
// commits, scanners' claims that expire at once or hold), each round ends
// with every row's history read back (ReadHistory): no two committed runs
// without a change between them, a run after the last change, and as
// many committed runs as the Runners counted and the output rows hold.
// PERCDB_OBSERVE_STRESS_ROUNDS sets the rounds per mode (default 2).
func TestStrongNotificationsStress(t *testing.T) {
	rounds := 2
	if s := os.Getenv("PERCDB_OBSERVE_STRESS_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("PERCDB_OBSERVE_STRESS_ROUNDS=%q: want a positive number", s)
		}
		rounds = n
	}
	modes := []stressMode{
		{name: "optimistic"},
		{name: "optimistic-claims", lease: kv.DefaultScannerLease},
		{name: "optimistic-2pc", twoPC: true},
		{name: "pessimistic-writers", pessimisticWriters: true},
		{name: "pessimistic-runs", pessimisticWriters: true, pessimisticRuns: true},
		{name: "pessimistic-runs-2pc", pessimisticRuns: true, twoPC: true},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			for round := range rounds {
				stressRound(t, m, round)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// stressRound runs one round of TestStrongNotificationsStress.
func stressRound(t *testing.T, m stressMode, round int) {
	const (
		rows    = 3
		writers = 3
		writes  = 40
		runners = 3
	)
	ctx := context.Background()
	lease := m.lease
	if lease == 0 {
		lease = time.Microsecond
	}
	ks, err := kv.Open("", kv.Options{SyncWrites: kv.SyncNone, InMemory: true, ScannerLease: lease})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ks.Close() }()
	if m.twoPC {
		if _, _, err := ks.SplitRegion(ctx, rowKey(countsTable, 0)); err != nil {
			t.Fatal(err)
		}
	}
	oracle := txntest.NewClockOracle(0)
	newStore := func() *txn.Store {
		s := txn.NewStore(kv.NewLocalClient(ks), oracle, txn.Options{})
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	writerStore := newStore()

	run := func(ctx context.Context, tx *txn.Txn, key []byte) error {
		if _, _, err := tx.Get(ctx, key); err != nil {
			return err
		}
		// A run that takes a while: others of the same change start
		// meanwhile.
		time.Sleep(time.Duration(rand.N(2000)) * time.Microsecond)
		if !m.pessimisticRuns {
			return incr(ctx, tx, countKey(key))
		}
		return pessimisticStatement(ctx, tx, func() error {
			ts, err := tx.SnapshotTS(ctx)
			if err != nil {
				return err
			}
			if err := tx.LockKeys(ctx, ts, countKey(key)); err != nil {
				return err
			}
			return incr(ctx, tx, countKey(key))
		})
	}
	var rs []*Runner
	var stops []func()
	for range runners {
		s := newStore()
		opts := Options{Scanners: 2, MaxRuns: 4, Idle: time.Millisecond, MaxAttempts: 3}
		if m.pessimisticRuns {
			opts.Txns = pessimisticTxns{s}
		}
		r := newRunner(t, s, opts)
		if err := r.Register(ctx, Observer{Name: "count", Run: run}); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
		stops = append(stops, start(t, r))
	}

	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range writes {
				// Writes spread over the runs, so that runs of one
				// row overlap its next changes.
				time.Sleep(time.Duration(rand.N(1000)) * time.Microsecond)
				h := int64(1 + (w+i)%rows)
				if err := stressWrite(ctx, writerStore, h, m.pessimisticWriters); err != nil {
					t.Errorf("write row %d: %v", h, err)
					return
				}
			}
		})
	}
	wg.Wait()
	waitUntil(t, "every notification to be run", func() bool {
		n, err := rs[0].Pending(ctx)
		return err == nil && n == 0
	})
	for _, stop := range stops {
		stop()
	}

	now, err := oracle.GetTimestamp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var committed, runsInAcks uint64
	for _, r := range rs {
		committed += r.Stats().Committed
	}
	for h := int64(1); h <= rows; h++ {
		hist, err := ReadHistory(ctx, writerStore, rowKey(docsTable, h), "count", now)
		if err != nil {
			t.Fatal(err)
		}
		for _, pair := range hist.RunTwice() {
			t.Errorf("round %d, row %d: committed runs started at %d and %d with no change between: a notification run twice (changes near them %v)",
				round, h, pair[0], pair[1], near(hist.Changes, min(pair[0], pair[1]), max(pair[0], pair[1])))
		}
		if hist.Unobserved() {
			t.Errorf("round %d, row %d: last change at %d, committed runs %v: a change not observed", round, h, hist.Changes[len(hist.Changes)-1], hist.Runs)
		}
		v, found, err := writerStore.PointGet(ctx, countKey(rowKey(docsTable, h)))
		if err != nil {
			t.Fatal(err)
		}
		var counted uint64
		if found {
			counted = binary.BigEndian.Uint64(v)
		}
		if counted != uint64(len(hist.Runs)) {
			t.Errorf("round %d, row %d: the output counts %d committed runs, the ack %d", round, h, counted, len(hist.Runs))
		}
		runsInAcks += uint64(len(hist.Runs))
	}
	if committed != runsInAcks {
		t.Errorf("round %d: the Runners committed %d runs, the acks hold %d", round, committed, runsInAcks)
	}
	var conflicts, acknowledged uint64
	for _, r := range rs {
		st := r.Stats()
		conflicts += st.Conflicts
		acknowledged += st.Acknowledged
	}
	t.Logf("round %d: %d writes, %d committed runs, %d conflicts, %d found acknowledged", round, writers*writes, committed, conflicts, acknowledged)
}

// near returns the timestamps of tss from the last one below lo to the
// first one above hi: what a failure report needs of a long history.
func near(tss []uint64, lo, hi uint64) []uint64 {
	from, to := 0, len(tss)
	for i, ts := range tss {
		if ts < lo {
			from = i
		}
		if ts > hi && to == len(tss) {
			to = i + 1
		}
	}
	return tss[from:to]
}

// pessimisticTxns begins pessimistic transactions for runs.
type pessimisticTxns struct{ s *txn.Store }

func (p pessimisticTxns) Begin(ctx context.Context) (*txn.Txn, error) {
	tx, err := p.s.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := tx.SetPessimistic(); err != nil {
		_ = tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

func (pessimisticTxns) Commit(ctx context.Context, tx *txn.Txn) error   { return tx.Commit(ctx) }
func (pessimisticTxns) Rollback(ctx context.Context, tx *txn.Txn) error { return tx.Rollback(ctx) }

// pessimisticStatement runs fn as percdb's SQL layer runs a statement of a
// pessimistic transaction: in a stage of the writes, and, when its lock
// met a commit newer than the snapshot, again at a moved snapshot
// (RefreshSnapshot refuses the move when an earlier read changed).
func pessimisticStatement(ctx context.Context, tx *txn.Txn, fn func() error) error {
	for attempt := 1; ; attempt++ {
		h := tx.Staging()
		err := fn()
		if err == nil {
			tx.Release(h)
			return nil
		}
		tx.Cleanup(h)
		if !errors.Is(err, txn.ErrForUpdateConflict) || attempt >= 5 {
			return err
		}
		if err := tx.RefreshSnapshot(ctx); err != nil {
			return err
		}
	}
}

// stressWrite adds one to row h of docs and notifies "count", retrying
// conflicts.
func stressWrite(ctx context.Context, s *txn.Store, h int64, pessimistic bool) error {
	k := rowKey(docsTable, h)
	for {
		err := func() error {
			tx, err := s.Begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(ctx) }()
			if pessimistic {
				if err := tx.SetPessimistic(); err != nil {
					return err
				}
				if err := pessimisticStatement(ctx, tx, func() error {
					ts, err := tx.SnapshotTS(ctx)
					if err != nil {
						return err
					}
					return tx.LockKeys(ctx, ts, k)
				}); err != nil {
					return err
				}
			}
			if err := incr(ctx, tx, k); err != nil {
				return err
			}
			if err := tx.Notify(k, "count"); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}()
		if err == nil || !retryable(err) {
			return err
		}
	}
}
