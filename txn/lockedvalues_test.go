package txn

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/percdb/percdb/kv"
)

// countingReads is a kv.Client that counts the keys its Get and BatchGet
// requests ask for.
type countingReads struct {
	kv.Client
	keys atomic.Int64
}

func (c *countingReads) Get(ctx context.Context, region kv.RegionCtx, key []byte, version uint64) ([]byte, error) {
	c.keys.Add(1)
	return c.Client.Get(ctx, region, key, version)
}

func (c *countingReads) BatchGet(ctx context.Context, region kv.RegionCtx, keys [][]byte, version uint64) ([]kv.KvPair, error) {
	c.keys.Add(int64(len(keys)))
	return c.Client.BatchGet(ctx, region, keys, version)
}

// TestLockedValuesServeRereads: a pessimistic transaction that read a
// key at its snapshot and then locked it (SELECT ... FOR UPDATE; UPDATE)
// reads it again without asking the store, and gets what the store would
// return: the value at the lock (absent stays absent), its own writes
// first, a copy the caller may change. A read below a newer commit the
// lock met is not kept: until the snapshot moves past that commit, the
// store answers (the old value); after, the new one.
func TestLockedValuesServeRereads(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	mustCommit(t, e.s, "a", "1", "b", "2", "c", "3", "d", "4", "e", "6")
	client := &countingReads{Client: e.client}
	s := NewStore(client, e.oracle, Options{})
	defer s.Close()
	tx := beginPessimistic(t, s)
	asks := func(step string, want int64, read func() error) {
		t.Helper()
		before := client.keys.Load()
		if err := read(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if got := client.keys.Load() - before; got != want {
			t.Errorf("%s asked the store for %d keys, want %d", step, got, want)
		}
	}
	getIs := func(key, want string) func() error {
		return func() error {
			v, ok, err := tx.Get(ctx, []byte(key))
			switch {
			case err != nil:
				return err
			case want == "" && ok:
				return errors.New(key + " = " + string(v) + ", want absent")
			case want != "" && string(v) != want:
				return errors.New(key + " = " + string(v) + ", want " + want)
			}
			return nil
		}
	}

	// SELECT a, z (absent) FOR UPDATE; then reads of them.
	tx.BeginStatement()
	asks("first read of a", 1, getIs("a", "1"))
	asks("first read of z", 1, getIs("z", ""))
	if err := lockNow(ctx, tx, "a", "z"); err != nil {
		t.Fatal(err)
	}
	tx.BeginStatement()
	asks("read of locked a", 0, getIs("a", "1"))
	asks("read of locked absent z", 0, getIs("z", ""))
	v, _, err := tx.Get(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	v[0] = 'X' // the caller's copy
	asks("read of a after the caller changed its copy", 0, getIs("a", "1"))

	// The transaction's own writes come first.
	if err := tx.Set([]byte("a"), []byte("own")); err != nil {
		t.Fatal(err)
	}
	asks("read of a written", 0, getIs("a", "own"))

	// BatchGet, then lock, then BatchGet.
	tx.BeginStatement()
	asks("first batch read", 2, func() error {
		_, err := tx.BatchGet(ctx, [][]byte{[]byte("b"), []byte("c")})
		return err
	})
	if err := lockNow(ctx, tx, "b", "c"); err != nil {
		t.Fatal(err)
	}
	tx.BeginStatement()
	asks("batch read of locked b, c, z and unlocked e", 1, func() error {
		got, err := tx.BatchGet(ctx, [][]byte{[]byte("b"), []byte("c"), []byte("e"), []byte("z")})
		if err == nil && (string(got["b"]) != "2" || string(got["c"]) != "3" || string(got["e"]) != "6" || len(got) != 3) {
			err = errors.New("batch read of b, c, e, z: wrong answer")
		}
		return err
	})

	// d is read, then changed by a commit after the snapshot, then locked:
	// the lock meets the newer commit, and the read is not kept.
	tx.BeginStatement()
	asks("read of d", 1, getIs("d", "4"))
	mustCommit(t, e.s, "d", "5")
	if err := lockNow(ctx, tx, "d"); !errors.Is(err, ErrForUpdateConflict) {
		t.Fatalf("lock of d after a newer commit: %v, want ErrForUpdateConflict", err)
	}
	asks("read of d at the old snapshot", 1, getIs("d", "4"))
	if err := tx.RefreshSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	tx.BeginStatement()
	asks("read of d after the move", 1, getIs("d", "5"))
	asks("read of d again", 0, getIs("d", "5"))

	// Rollback forgets the values with the locks.
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if tx.pess.values != nil || len(tx.pess.pending) != 0 {
		t.Errorf("after rollback: %d values, %d pending reads kept", len(tx.pess.values), len(tx.pess.pending))
	}
}

// TestLockedValuesAfterOthersCommit: the kept value of a locked key is
// what its readers get while others commit elsewhere and the snapshot
// moves; after the transaction commits, the store has its write.
func TestLockedValuesAfterOthersCommit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	mustCommit(t, e.s, "k", "1", "x", "1")
	tx := beginPessimistic(t, e.s)
	tx.BeginStatement()
	if _, _, err := tx.Get(ctx, []byte("k")); err != nil {
		t.Fatal(err)
	}
	if err := lockNow(ctx, tx, "k"); err != nil {
		t.Fatal(err)
	}
	// Another transaction commits x; this one's statement on x meets it
	// and moves its snapshot (nothing it read changed).
	mustCommit(t, e.s, "x", "2")
	tx.BeginStatement()
	if err := lockNow(ctx, tx, "x"); !errors.Is(err, ErrForUpdateConflict) {
		t.Fatalf("lock of x: %v, want ErrForUpdateConflict", err)
	}
	if err := tx.RefreshSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	tx.BeginStatement()
	v, _, err := tx.Get(ctx, []byte("k"))
	if err != nil || string(v) != "1" {
		t.Fatalf("k after the move = %q, %v; want 1", v, err)
	}
	if err := tx.Set([]byte("k"), append(v, '+')); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := pointGet(t, e.s, "k"); got != "1+" {
		t.Fatalf("k after commit = %q, want 1+", got)
	}
}

// TestLockKeysReading: a pessimistic statement that locks keys before it
// reads them (LockKeysReading) gets their values with the locks: its
// reads that follow ask the store for nothing and return what the store
// holds, over two regions, for an absent key too (which is locked all
// the same: another transaction cannot take it). A key whose newest
// commit is after the snapshot is locked with that commit's value, kept
// for reads at or above it: the read at the old snapshot still goes to
// the store, the statement run again after the move does not. An
// optimistic transaction's LockKeysReading is LockKeys (its conflict
// shows at commit).
func TestLockKeysReading(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	mustCommit(t, e.s, "a", "1", "d", "4", "n", "14")
	client := &countingReads{Client: e.client}
	s := NewStore(client, e.oracle, Options{})
	defer s.Close()
	tx := beginPessimistic(t, s)
	asks := func(step string, want int64, key, value string) {
		t.Helper()
		before := client.keys.Load()
		v, ok, err := tx.Get(ctx, []byte(key))
		switch {
		case err != nil:
			t.Fatalf("%s: %v", step, err)
		case value == "" && ok:
			t.Errorf("%s: %s = %q, want absent", step, key, v)
		case value != "" && string(v) != value:
			t.Errorf("%s: %s = %q (found %v), want %q", step, key, v, ok, value)
		}
		if got := client.keys.Load() - before; got != want {
			t.Errorf("%s asked the store for %d keys, want %d", step, got, want)
		}
	}
	lockReading := func(keys ...string) error { return lockNowWith(ctx, tx, tx.LockKeysReading, keys...) }
	tx.BeginStatement()
	if err := lockReading("a", "n", "z"); err != nil {
		t.Fatal(err)
	}
	if got := client.keys.Load(); got != 0 {
		t.Fatalf("LockKeysReading asked %d keys by reads, want 0", got)
	}
	asks("read of a (region 1)", 0, "a", "1")
	asks("read of n (region 2)", 0, "n", "14")
	asks("read of absent z", 0, "z", "")

	other := beginPessimistic(t, e.s)
	other.SetLockNoWait(true)
	if err := lockNow(ctx, other, "z"); !errors.Is(err, ErrLockNotWaited) {
		t.Fatalf("another transaction's lock of z: %v, want ErrLockNotWaited", err)
	}
	if err := other.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// d changes after the snapshot: locked with the newer value.
	mustCommit(t, e.s, "d", "5")
	tx.BeginStatement()
	if err := lockReading("d"); !errors.Is(err, ErrForUpdateConflict) {
		t.Fatalf("lock of d after a newer commit: %v, want ErrForUpdateConflict", err)
	}
	asks("read of d at the old snapshot", 1, "d", "4")
	if err := tx.RefreshSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	tx.BeginStatement()
	if err := lockReading("d"); err != nil {
		t.Fatalf("lock of d again after the move: %v", err)
	}
	asks("read of d after the move", 0, "d", "5")

	if err := tx.Set([]byte("d"), []byte("6")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("z"), []byte("26")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": "1", "d": "6", "n": "14", "z": "26"} {
		if got := pointGet(t, e.s, k); got != want {
			t.Errorf("%s after commit = %q, want %q", k, got, want)
		}
	}

	// Optimistic: no lock in the store, the conflict at commit.
	opt, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := opt.SnapshotTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := opt.LockKeysReading(ctx, ts, []byte("a")); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, e.s, "a", "2")
	if err := opt.Commit(ctx); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("optimistic commit after a's change: %v, want ErrWriteConflict", err)
	}
}

// TestLockKeysReadingIfExist: the keys with values are locked and come
// back with them, the absent ones are not locked (another transaction
// locks them at once) and read absent at the statement's snapshot
// without asking the store; the primary is the first key locked, in
// whichever region, and the transaction commits over it. A transaction
// with its own write to a key, or optimistic, is refused (ok false) with
// nothing locked.
func TestLockKeysReadingIfExist(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	mustCommit(t, e.s, "d", "4", "n", "14", "p", "16")
	client := &countingReads{Client: e.client}
	s := NewStore(client, e.oracle, Options{})
	defer s.Close()
	lockIfExist := func(tx *Txn, keys ...string) bool {
		t.Helper()
		var ok bool
		err := lockNowWith(ctx, tx, func(ctx context.Context, ts uint64, keys ...[]byte) error {
			var err error
			ok, err = tx.LockKeysReadingIfExist(ctx, ts, keys...)
			return err
		}, keys...)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	lockedByOther := func(key string) bool {
		t.Helper()
		other := beginPessimistic(t, e.s)
		other.SetLockNoWait(true)
		err := lockNow(ctx, other, key)
		if err != nil && !errors.Is(err, ErrLockNotWaited) {
			t.Fatal(err)
		}
		if err := other.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		return err != nil
	}
	for _, c := range []struct {
		keys, present []string
		primary       string
	}{
		// b absent before d in region 1; z absent in region 2.
		{[]string{"z", "n", "d", "b"}, []string{"d", "n"}, "d"},
		// Nothing in region 1: the primary is in region 2.
		{[]string{"b", "c", "p"}, []string{"p"}, "p"},
	} {
		tx := beginPessimistic(t, s)
		tx.BeginStatement()
		if !lockIfExist(tx, c.keys...) {
			t.Fatalf("%v: refused", c.keys)
		}
		if got := string(tx.pess.primary); got != c.primary {
			t.Errorf("%v: primary %q, want %q", c.keys, got, c.primary)
		}
		before := client.keys.Load()
		bs := make([][]byte, len(c.keys))
		for i, k := range c.keys {
			bs[i] = []byte(k)
		}
		got, err := tx.BatchGet(ctx, bs)
		if err != nil {
			t.Fatal(err)
		}
		if n := client.keys.Load() - before; n != 0 {
			t.Errorf("%v: the read after the locks asked the store for %d keys, want 0", c.keys, n)
		}
		if len(got) != len(c.present) {
			t.Errorf("%v: read %d keys, want %v", c.keys, len(got), c.present)
		}
		for _, k := range c.keys {
			present := false
			for _, p := range c.present {
				present = present || p == k
			}
			if _, found := got[k]; found != present {
				t.Errorf("%v: %s found %v, want %v", c.keys, k, found, present)
			}
			if lockedByOther(k) != present {
				t.Errorf("%v: %s locked %v, want %v", c.keys, k, !present, present)
			}
		}
		if err := tx.Set([]byte(c.present[0]), []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatalf("%v: commit: %v", c.keys, err)
		}
		if got := pointGet(t, e.s, c.present[0]); got != "x" {
			t.Errorf("%v: %s after commit = %q", c.keys, c.present[0], got)
		}
	}

	// Its own write to a key: refused, nothing locked.
	tx := beginPessimistic(t, s)
	if err := tx.Set([]byte("d"), []byte("7")); err != nil {
		t.Fatal(err)
	}
	if lockIfExist(tx, "d", "n") {
		t.Error("LockKeysReadingIfExist over the transaction's own write: not refused")
	}
	if lockedByOther("n") {
		t.Error("a refused LockKeysReadingIfExist locked n")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	opt, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lockIfExist(opt, "n") {
		t.Error("LockKeysReadingIfExist in an optimistic transaction: not refused")
	}
	if err := opt.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}
