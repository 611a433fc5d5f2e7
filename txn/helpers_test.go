package txn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc/kvrpctest"
	"github.com/percdb/percdb/txn/txntest"
)

// scriptedOracle hands out the timestamps it was given, in order, and
// fails when they run out, so that a test controls every timestamp and
// sees any call it did not expect.
type scriptedOracle struct {
	mu  sync.Mutex
	tss []uint64
}

func (o *scriptedOracle) GetTimestamp(context.Context) (uint64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.tss) == 0 {
		return 0, errors.New("scripted oracle: no timestamp left")
	}
	ts := o.tss[0]
	o.tss = o.tss[1:]
	return ts, nil
}

// testEnv is an in-memory kv store with a txn Store over it.
type testEnv struct {
	kv     *kv.Store
	client kv.Client
	oracle Oracle
	s      *Store
}

// newEnv opens an in-memory store split at splits, and a Store with opts
// and the clock oracle. Both are closed when the test ends.
func newEnv(t testing.TB, opts Options, splits ...string) *testEnv {
	t.Helper()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	return newEnvOn(t, ks, txntest.NewClockOracle(0), opts, splits...)
}

// newEnvOn is newEnv over an open kv store and a given oracle.
func newEnvOn(t testing.TB, ks *kv.Store, oracle Oracle, opts Options, splits ...string) *testEnv {
	t.Helper()
	for _, sk := range splits {
		if _, _, err := ks.SplitRegion(context.Background(), []byte(sk)); err != nil {
			t.Fatalf("split at %q: %v", sk, err)
		}
	}
	e := &testEnv{kv: ks, client: kvrpctest.ClientFor(t, ks), oracle: oracle}
	e.s = e.newStore(t, opts)
	return e
}

// newStore opens another Store over the same kv store and oracle.
func (e *testEnv) newStore(t testing.TB, opts Options) *Store {
	t.Helper()
	s := NewStore(e.client, e.oracle, opts)
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// dyingStore opens a Store whose commits stop after prewrite, as if the
// client died there (Commit returns errAbandon), leaving locks that live
// ttl. Two-phase always, so that there are locks to leave.
func (e *testEnv) dyingStore(t testing.TB, ttl time.Duration) *Store {
	t.Helper()
	return e.newStore(t, Options{
		LockTTL:     ttl,
		EnableOnePC: new(false),
		Hooks:       &CommitHooks{AfterPrewrite: func(uint64) error { return errAbandon }},
	})
}

// mustCommit writes pairs (key, value, key, value...) in one transaction.
func mustCommit(t testing.TB, s *Store, pairs ...string) uint64 {
	t.Helper()
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := tx.Set([]byte(pairs[i]), []byte(pairs[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit %v: %v", pairs, err)
	}
	return tx.CommitTS()
}

// openIter opens Iter, or IterReverse when reverse, over [start, end).
func openIter(ctx context.Context, tx *Txn, start, end string, reverse bool) (Iterator, error) {
	if reverse {
		return tx.IterReverse(ctx, []byte(start), []byte(end))
	}
	return tx.Iter(ctx, []byte(start), []byte(end))
}

// readAll returns every pair of [start, end) as one new transaction sees
// it, through Iter (or IterReverse, returned in ascending order).
func readAll(t testing.TB, tx *Txn, start, end string, reverse bool) []string {
	t.Helper()
	ctx := context.Background()
	it, err := openIter(ctx, tx, start, end, reverse)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []string
	for it.Valid() {
		out = append(out, fmt.Sprintf("%s=%s", it.Key(), it.Value()))
		if err := it.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if reverse {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// pointGet reads key with Store.PointGet, "" when not found.
func pointGet(t testing.TB, s *Store, key string) string {
	t.Helper()
	v, ok, err := s.PointGet(context.Background(), []byte(key))
	if err != nil {
		t.Fatalf("point get %q: %v", key, err)
	}
	if !ok {
		return ""
	}
	return string(v)
}

// abandon is a hook error: the client "dies" where the hook runs.
var errAbandon = errors.New("test: client abandoned the commit")
