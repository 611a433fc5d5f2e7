package txn

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/percdb/percdb/kv"
)

func TestReadYourWritesAndCommit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	mustCommit(t, e.s, "a", "1", "b", "2")

	tx, err := e.s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("a"), []byte("10")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Delete([]byte("b")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := tx.Get(ctx, []byte("a")); err != nil || !ok || string(v) != "10" {
		t.Fatalf("get own write: %q %v %v", v, ok, err)
	}
	if _, ok, err := tx.Get(ctx, []byte("b")); err != nil || ok {
		t.Fatalf("get own delete: found=%v err=%v", ok, err)
	}
	got, err := tx.BatchGet(ctx, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	if err != nil || len(got) != 1 || string(got["a"]) != "10" {
		t.Fatalf("batch get = %v, %v", got, err)
	}
	// Another transaction does not see the buffered writes.
	if v := pointGet(t, e.s, "a"); v != "1" {
		t.Fatalf("uncommitted write visible: a=%q", v)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if tx.CommitTS() == 0 {
		t.Fatal("CommitTS is 0 after a commit that wrote")
	}
	if a, b := pointGet(t, e.s, "a"), pointGet(t, e.s, "b"); a != "10" || b != "" {
		t.Fatalf("after commit a=%q b=%q", a, b)
	}
	if err := tx.Set([]byte("x"), nil); !errors.Is(err, ErrTxnFinished) {
		t.Fatalf("write after commit: %v", err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrTxnFinished) {
		t.Fatalf("second commit: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	tx, _ := e.s.Begin(ctx)
	if err := tx.Set(nil, []byte("v")); err == nil {
		t.Fatal("Set with an empty key succeeded")
	}
	if _, _, err := tx.Get(ctx, []byte{}); err == nil {
		t.Fatal("Get with an empty key succeeded")
	}
	if _, _, err := e.s.PointGet(ctx, nil); err == nil {
		t.Fatal("PointGet with an empty key succeeded")
	}
	if err := (Options{LockTTL: -1}).Validate(); err == nil {
		t.Fatal("negative LockTTL accepted")
	}
	bad := NewStore(e.client, e.oracle, Options{LockTTL: 100 * 1e6, HeartbeatInterval: 200 * 1e6})
	defer bad.Close()
	if _, err := bad.Begin(ctx); err == nil {
		t.Fatal("Begin on a Store with a heartbeat slower than its TTL succeeded")
	}
	if _, _, err := NewStore(nil, nil, Options{}).PointGet(ctx, []byte("k")); err == nil {
		t.Fatal("PointGet on a Store without a client succeeded")
	}
}

func TestOracleCallsPerCommitPath(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	calls := func(f func()) uint64 {
		before := e.s.OracleCalls()
		f()
		return e.s.OracleCalls() - before
	}
	// Nothing written: no timestamp at all.
	if n := calls(func() {
		tx, _ := e.s.Begin(ctx)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("empty transaction made %d oracle calls", n)
	}
	// commitCalls counts the oracle calls of a commit alone, the start_ts
	// being fetched before.
	commitCalls := func(s *Store, pairs ...string) uint64 {
		tx, _ := s.Begin(ctx)
		if _, err := tx.StartTS(ctx); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(pairs); i += 2 {
			_ = tx.Set([]byte(pairs[i]), []byte(pairs[i+1]))
		}
		before := s.OracleCalls()
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return s.OracleCalls() - before
	}
	// One region: 1PC calculates the commit_ts.
	if n := commitCalls(e.s, "a", "1", "b", "2"); n != 0 {
		t.Fatalf("1PC commit made %d oracle calls, want 0", n)
	}
	// The next transaction's start_ts is above that 1PC commit_ts (which
	// may be the oracle's next timestamp), so it can write the same keys.
	if n := commitCalls(e.s, "a", "2"); n != 0 {
		t.Fatalf("second 1PC commit made %d oracle calls, want 0", n)
	}
	// Two regions: the commit_ts comes from the oracle.
	if n := commitCalls(e.s, "a", "3", "z", "4"); n != 1 {
		t.Fatalf("2PC commit made %d oracle calls, want 1", n)
	}
	// 1PC disabled: a commit_ts from the oracle even in one region.
	if n := commitCalls(e.newStore(t, Options{EnableOnePC: new(false)}), "a", "5"); n != 1 {
		t.Fatalf("with 1PC off a one-key commit made %d oracle calls, want 1", n)
	}
	// Too big for 1PC.
	if n := commitCalls(e.newStore(t, Options{OnePCMaxBytes: 4}), "a", "123456"); n != 1 {
		t.Fatalf("a commit above OnePCMaxBytes made %d oracle calls, want 1", n)
	}
	if v := pointGet(t, e.s, "a"); v != "123456" {
		t.Fatalf("a = %q", v)
	}
}

func TestWriteConflictFirstCommitterWins(t *testing.T) {
	for _, splits := range [][]string{nil, {"b"}} {
		t.Run(fmt.Sprintf("splits=%v", splits), func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, Options{}, splits...)
			mustCommit(t, e.s, "a", "0", "c", "0")
			t1, _ := e.s.Begin(ctx)
			t2, _ := e.s.Begin(ctx)
			for _, tx := range []*Txn{t1, t2} {
				if _, _, err := tx.Get(ctx, []byte("a")); err != nil { // fixes start_ts
					t.Fatal(err)
				}
				_ = tx.Set([]byte("a"), []byte("x"))
				_ = tx.Set([]byte("c"), []byte("x"))
			}
			if err := t1.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			err := t2.Commit(ctx)
			var wc *kv.WriteConflictError
			if !errors.Is(err, ErrWriteConflict) || !errors.As(err, &wc) {
				t.Fatalf("second committer: %v, want ErrWriteConflict wrapping *kv.WriteConflictError", err)
			}
			if wc.ConflictCommitTS != t1.CommitTS() {
				t.Fatalf("conflict names commit_ts %d, want %d", wc.ConflictCommitTS, t1.CommitTS())
			}
			// The loser left no lock: a reader sees t1's writes at once.
			if a, c := pointGet(t, e.s, "a"), pointGet(t, e.s, "c"); a != "x" || c != "x" {
				t.Fatalf("a=%q c=%q", a, c)
			}
			r, _ := e.s.Begin(ctx)
			if got := readAll(t, r, "a", "z", false); !slices.Equal(got, []string{"a=x", "c=x"}) {
				t.Fatalf("scan = %v", got)
			}
		})
	}
}

func TestInsert(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	mustCommit(t, e.s, "a", "1")

	tx, _ := e.s.Begin(ctx)
	_ = tx.Insert([]byte("a"), []byte("dup"))
	_ = tx.Set([]byte("z"), []byte("other region"))
	err := tx.Commit(ctx)
	var ae *kv.AlreadyExistsError
	if !errors.Is(err, ErrAlreadyExists) || !errors.As(err, &ae) || string(ae.Key) != "a" {
		t.Fatalf("insert over an existing key: %v", err)
	}
	if v := pointGet(t, e.s, "z"); v != "" {
		t.Fatalf("failed transaction left z=%q", v)
	}

	// Insert then delete of an existing key still fails: the statement that
	// inserted claimed the key did not exist.
	tx, _ = e.s.Begin(ctx)
	_ = tx.Insert([]byte("a"), []byte("dup"))
	_ = tx.Delete([]byte("a"))
	_ = tx.Set([]byte("b"), []byte("2"))
	if err := tx.Commit(ctx); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("insert+delete over an existing key: %v", err)
	}

	// Insert of a new key, then an update of it, commits; inserting a key
	// this transaction already wrote fails at once.
	tx, _ = e.s.Begin(ctx)
	if err := tx.Insert([]byte("n"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	_ = tx.Set([]byte("n"), []byte("2"))
	if err := tx.Insert([]byte("n"), []byte("3")); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("insert over an own write: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v := pointGet(t, e.s, "n"); v != "2" {
		t.Fatalf("n = %q", v)
	}

	// Delete then insert of an existing key is an update.
	tx, _ = e.s.Begin(ctx)
	_ = tx.Delete([]byte("a"))
	if err := tx.Insert([]byte("a"), []byte("re")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v := pointGet(t, e.s, "a"); v != "re" {
		t.Fatalf("a = %q", v)
	}
}

func TestLockKeysDetectsConflict(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	mustCommit(t, e.s, "row", "1")

	t1, _ := e.s.Begin(ctx)
	if err := t1.LockKeys(ctx, 0, []byte("row")); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := t1.Get(ctx, []byte("row")); string(v) != "1" {
		t.Fatalf("a locked key reads %q, want the snapshot's value", v)
	}
	if t1.IsReadOnly() {
		t.Fatal("a transaction with locked keys claims to be read-only")
	}
	mustCommit(t, e.s, "row", "2") // a concurrent write commits first
	_ = t1.Set([]byte("other"), []byte("x"))
	if err := t1.Commit(ctx); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("commit after a concurrent write to a locked key: %v", err)
	}

	// Without a concurrent write the lock commits, leaving the value.
	t2, _ := e.s.Begin(ctx)
	_ = t2.LockKeys(ctx, 0, []byte("row"))
	if err := t2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v := pointGet(t, e.s, "row"); v != "2" {
		t.Fatalf("row = %q after a lock-only commit", v)
	}
}

func TestTxnStaging(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	tx, _ := e.s.Begin(ctx)
	_ = tx.Set([]byte("a"), []byte("1"))
	h := tx.Staging()
	_ = tx.Set([]byte("a"), []byte("2"))
	_ = tx.Set([]byte("b"), []byte("2"))
	tx.Cleanup(h) // the failed statement
	h = tx.Staging()
	_ = tx.Set([]byte("c"), []byte("3"))
	tx.Release(h) // the statement that succeeded
	if tx.Len() != 2 || tx.Size() != 4 {
		t.Fatalf("Len %d Size %d", tx.Len(), tx.Size())
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r, _ := e.s.Begin(ctx)
	if got := readAll(t, r, "a", "z", false); !slices.Equal(got, []string{"a=1", "c=3"}) {
		t.Fatalf("committed %v", got)
	}
}

func TestRollbackLeavesNothing(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	tx, _ := e.s.Begin(ctx)
	_ = tx.Set([]byte("a"), []byte("1"))
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrTxnFinished) {
		t.Fatalf("commit after rollback: %v", err)
	}
	if v := pointGet(t, e.s, "a"); v != "" {
		t.Fatalf("rolled back write visible: %q", v)
	}
}

// TestIterAgainstModel runs random committed data and buffered writes over
// several regions with a tiny page size, and compares Iter and IterReverse
// on random ranges with a model.
func TestIterAgainstModel(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{ScanPageSize: 3}, "k10", "k20", "k25", "k40")
	rng := rand.New(rand.NewPCG(7, 8))
	key := func() string { return fmt.Sprintf("k%02d", rng.IntN(50)) }
	committed := map[string]string{}
	for range 5 {
		tx, _ := e.s.Begin(ctx)
		for range 15 {
			k := key()
			if rng.IntN(4) == 0 {
				_ = tx.Delete([]byte(k))
				delete(committed, k)
			} else {
				v := fmt.Sprint(rng.IntN(1000))
				_ = tx.Set([]byte(k), []byte(v))
				committed[k] = v
			}
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rounds := 30
	if testing.Short() {
		rounds = 10
	}
	for round := range rounds {
		tx, _ := e.s.Begin(ctx)
		view := maps.Clone(committed)
		for range rng.IntN(20) {
			k := key()
			switch rng.IntN(3) {
			case 0:
				_ = tx.Delete([]byte(k))
				delete(view, k)
			case 1:
				_ = tx.LockKeys(ctx, 0, []byte(k)) // no change to what is read
			default:
				v := fmt.Sprintf("own%d", round)
				_ = tx.Set([]byte(k), []byte(v))
				view[k] = v
			}
		}
		lo, hi := key(), key()
		if hi < lo {
			lo, hi = hi, lo
		}
		if rng.IntN(5) == 0 {
			hi = "" // to +infinity
		}
		var want []string
		for k, v := range view {
			if k >= lo && (hi == "" || k < hi) {
				want = append(want, k+"="+v)
			}
		}
		slices.Sort(want)
		for _, reverse := range []bool{false, true} {
			if got := readAll(t, tx, lo, hi, reverse); !slices.Equal(got, want) {
				t.Fatalf("round %d [%s, %s) reverse=%v:\n got %v\nwant %v", round, lo, hi, reverse, got, want)
			}
		}
		_ = tx.Rollback(ctx)
	}
}

// TestInsertThenDeleteOnly: a transaction whose only writes are keys it
// inserted and deleted again locks nothing; it still fails if one of the
// keys existed.
func TestInsertThenDeleteOnly(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	mustCommit(t, e.s, "a", "1")
	for _, c := range []struct {
		key  string
		want error
	}{{"a", ErrAlreadyExists}, {"new", nil}} {
		tx, _ := e.s.Begin(ctx)
		_ = tx.Insert([]byte(c.key), []byte("x"))
		_ = tx.Delete([]byte(c.key))
		if err := tx.Commit(ctx); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Fatalf("insert+delete of %q: %v, want %v", c.key, err, c.want)
		}
	}
	if a, n := pointGet(t, e.s, "a"), pointGet(t, e.s, "new"); a != "1" || n != "" {
		t.Fatalf("a=%q new=%q", a, n)
	}
}

func TestClosedStore(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	s := e.newStore(t, Options{})
	tx, _ := s.Begin(ctx)
	_ = tx.Set([]byte("k"), []byte("v"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrStoreClosed) {
		t.Fatalf("commit on a closed Store: %v", err)
	}
	if _, err := s.Begin(ctx); !errors.Is(err, ErrStoreClosed) {
		t.Fatalf("begin on a closed Store: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestBatchPointGetInOneRegionNeedsNoTimestamp: keys of one region, no
// lock in the way: one request at kv.MaxTS, no oracle call. Keys over two
// regions take one timestamp, for a snapshot.
func TestBatchPointGetInOneRegionNeedsNoTimestamp(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	// One region per commit: 1PC, so that no secondary lock is left for
	// the background to commit while the reads run.
	mustCommit(t, e.s, "a", "1", "b", "2")
	mustCommit(t, e.s, "z", "3")
	r := e.newStore(t, Options{})
	got, err := r.BatchPointGet(ctx, [][]byte{[]byte("b"), []byte("a"), []byte("c"), []byte("a")})
	if err != nil || len(got) != 2 || string(got["a"]) != "1" || string(got["b"]) != "2" {
		t.Fatalf("one region: %v, %v", got, err)
	}
	if n := r.OracleCalls(); n != 0 {
		t.Fatalf("one-region batch point get made %d oracle calls", n)
	}
	got, err = r.BatchPointGet(ctx, [][]byte{[]byte("a"), []byte("z")})
	if err != nil || len(got) != 2 || string(got["z"]) != "3" {
		t.Fatalf("two regions: %v, %v", got, err)
	}
	if n := r.OracleCalls(); n != 1 {
		t.Fatalf("two-region batch point get made %d oracle calls, want 1", n)
	}
	if _, err := r.BatchPointGet(ctx, [][]byte{[]byte("a"), nil}); err == nil {
		t.Fatal("batch point get of an empty key succeeded")
	}
}
