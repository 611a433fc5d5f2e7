package txn

import (
	"context"
	"testing"

	"github.com/percdb/percdb/kv"
)

// TestRepeatableReadWithCalculatedCommitTS is the seed's example for
// calculated commit timestamps: Txn2 (start 200) reads k1; then Txn1
// (start 100) writes k1 and commits in one phase. Txn1's commit_ts must
// land above the read at 200 (the region's max_read_ts), or Txn2's second
// read would see a value its first read did not.
func TestRepeatableReadWithCalculatedCommitTS(t *testing.T) {
	ctx := context.Background()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Close()
	// Every timestamp the test will use, in order; a call beyond them
	// fails, so a 1PC commit that asked the oracle would fail.
	oracle := &scriptedOracle{tss: []uint64{10, 100, 200, 300}}
	e := newEnvOn(t, ks, oracle, Options{})

	if ts := mustCommit(t, e.s, "k1", "old"); ts != 11 {
		t.Fatalf("setup commit_ts %d, want 11 (1PC at start_ts+1)", ts)
	}
	txn1, _ := e.s.Begin(ctx)
	if ts, _ := txn1.StartTS(ctx); ts != 100 {
		t.Fatalf("txn1 start %d", ts)
	}
	txn2, _ := e.s.Begin(ctx)
	first, _, err := txn2.Get(ctx, []byte("k1")) // start_ts 200
	if err != nil {
		t.Fatal(err)
	}
	if ts, _ := txn2.StartTS(ctx); ts != 200 || string(first) != "old" {
		t.Fatalf("txn2 start %d read %q", ts, first)
	}

	_ = txn1.Set([]byte("k1"), []byte("new"))
	calls := e.s.OracleCalls()
	if err := txn1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.s.OracleCalls() - calls; n != 0 {
		t.Fatalf("1PC commit made %d oracle calls", n)
	}
	// max(start 100, max_read_ts 200) + 1, within MaxCommitTS = 200 + 1.
	if got := txn1.CommitTS(); got != 201 {
		t.Fatalf("txn1 commit_ts %d, want 201", got)
	}

	second, _, err := txn2.Get(ctx, []byte("k1"))
	if err != nil {
		t.Fatal(err)
	}
	if string(second) != string(first) {
		t.Fatalf("repeatable read broken: first %q, second %q", first, second)
	}
	// A transaction that starts after the commit returned sees it.
	txn3, _ := e.s.Begin(ctx)
	if v, _, _ := txn3.Get(ctx, []byte("k1")); string(v) != "new" {
		t.Fatalf("txn3 (start 300) reads %q", v)
	}
}

// TestOnePCFallsBackToTwoPhase: when the calculated commit_ts would exceed
// MaxCommitTS (a read with a later timestamp, from another Store, reached
// the region), the store prewrites instead and the commit finishes in two
// phases with a commit_ts from the oracle.
func TestOnePCFallsBackToTwoPhase(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	other := e.newStore(t, Options{})
	w, _ := e.s.Begin(ctx)
	if _, err := w.StartTS(ctx); err != nil {
		t.Fatal(err)
	}
	// The other Store's reader takes a later timestamp than any e.s has
	// seen and reads the region: e.s's bound maxTS+1 is now too low.
	r, _ := other.Begin(ctx)
	if _, _, err := r.Get(ctx, []byte("k")); err != nil {
		t.Fatal(err)
	}
	readTS, _ := r.StartTS(ctx)
	_ = w.Set([]byte("k"), []byte("v"))
	calls := e.s.OracleCalls()
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.s.OracleCalls() - calls; n != 1 {
		t.Fatalf("fallback commit made %d oracle calls, want 1 (the commit_ts)", n)
	}
	if w.CommitTS() <= readTS {
		t.Fatalf("commit_ts %d not above the read at %d", w.CommitTS(), readTS)
	}
	if v := pointGet(t, e.s, "k"); v != "v" {
		t.Fatalf("k = %q", v)
	}
}

// seqAboveOracle is seqOracle that also issues a timestamp above a floor
// in one call, as tso's BatchClient does (two consecutive timestamps,
// the smaller above the floor).
type seqAboveOracle struct{ seqOracle }

func (o *seqAboveOracle) GetTimestampAbove(ctx context.Context, floor uint64) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	last := o.last.Add(2)
	if last-1 > floor {
		return last - 1, nil
	}
	return last, nil
}

// TestStartAfterOnePCOneOracleCall: one client alone, every transaction a
// 1PC commit of the same key (sysbench's autocommit UPDATEs at one
// thread). Each commit_ts is calculated as the newest timestamp seen plus
// one, the oracle's next; the next transaction's start_ts must be above
// it (else its write would conflict with that commit) and costs one
// oracle call through an AboveOracle, where a plain oracle is asked
// twice.
func TestStartAfterOnePCOneOracleCall(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		o     Oracle
		calls uint64
	}{
		{"above", &seqAboveOracle{}, 1},
		{"plain", &seqOracle{}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone})
			if err != nil {
				t.Fatal(err)
			}
			defer ks.Close()
			e := newEnvOn(t, ks, tc.o, Options{})
			mustCommit(t, e.s, "k", "0")
			for i := 1; i <= 20; i++ {
				tx, _ := e.s.Begin(ctx)
				before := e.s.OracleCalls()
				start, err := tx.StartTS(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n := e.s.OracleCalls() - before; n != tc.calls {
					t.Fatalf("round %d: start_ts after a 1PC commit made %d oracle calls, want %d", i, n, tc.calls)
				}
				if start <= e.s.maxOnePCTS.Load() {
					t.Fatalf("round %d: start_ts %d at or below the last 1PC commit_ts %d", i, start, e.s.maxOnePCTS.Load())
				}
				_ = tx.Set([]byte("k"), []byte{byte('0' + i%10)})
				if err := tx.Commit(ctx); err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
				if tx.CommitTS() != start+1 {
					t.Fatalf("round %d: commit_ts %d, want a 1PC commit at start_ts+1 = %d", i, tx.CommitTS(), start+1)
				}
			}
		})
	}
}
