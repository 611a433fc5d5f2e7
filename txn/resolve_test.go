package txn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestReadersReadPastLiveLocks: a transaction prewrote and is still alive
// (its lock has a long TTL). Readers that started after it — snapshot
// reads, scans both ways, point reads without a timestamp — return the
// committed versions under its locks without waiting (a lock wait would
// fail: LockWaitTimeout is tiny).
func TestReadersReadPastLiveLocks(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "c")
	mustCommit(t, e.s, "a", "a0", "b", "b0", "c", "c0", "d", "d0", "e", "e0")
	slow := e.dyingStore(t, time.Minute)
	tx, _ := slow.Begin(ctx)
	_ = tx.Set([]byte("b"), []byte("b1"))
	_ = tx.Delete([]byte("d"))
	_ = tx.Set([]byte("bb"), []byte("new"))
	if err := tx.Commit(ctx); !errors.Is(err, errAbandon) {
		t.Fatal(err)
	}

	r := e.newStore(t, Options{LockWaitTimeout: time.Nanosecond, ScanPageSize: 2})
	rt, _ := r.Begin(ctx)
	want := "a=a0 b=b0 c=c0 d=d0 e=e0"
	for _, reverse := range []bool{false, true} {
		if got := strings.Join(readAll(t, rt, "a", "z", reverse), " "); got != want {
			t.Fatalf("scan reverse=%v: %s, want %s", reverse, got, want)
		}
	}
	if v, _, err := rt.Get(ctx, []byte("d")); err != nil || string(v) != "d0" {
		t.Fatalf("get d = %q, %v", v, err)
	}
	got, err := rt.BatchGet(ctx, [][]byte{[]byte("b"), []byte("bb"), []byte("d")})
	if err != nil || len(got) != 2 || string(got["b"]) != "b0" || string(got["d"]) != "d0" {
		t.Fatalf("batch get = %v, %v", got, err)
	}
	if v := pointGet(t, r, "b"); v != "b0" {
		t.Fatalf("point get b = %q", v)
	}
	bp, err := r.BatchPointGet(ctx, [][]byte{[]byte("b"), []byte("d"), []byte("e")})
	if err != nil || len(bp) != 3 || string(bp["d"]) != "d0" {
		t.Fatalf("batch point get = %v, %v", bp, err)
	}
}

// TestLockWaitTimeout: an older writer waits for a younger transaction's
// live lock, and gives up after LockWaitTimeout.
func TestLockWaitTimeout(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	older := e.newStore(t, Options{LockWaitTimeout: 50 * time.Millisecond})
	o, _ := older.Begin(ctx)
	if _, err := o.StartTS(ctx); err != nil {
		t.Fatal(err)
	}
	young := e.dyingStore(t, time.Minute)
	y, _ := young.Begin(ctx)
	_ = y.Set([]byte("k"), []byte("young"))
	if err := y.Commit(ctx); !errors.Is(err, errAbandon) {
		t.Fatal(err)
	}
	_ = o.Set([]byte("k"), []byte("old"))
	if err := o.Commit(ctx); !errors.Is(err, ErrLockWaitTimeout) {
		t.Fatalf("older writer behind a live younger lock: %v", err)
	}
	// A younger writer than the lock's owner does not wait: it dies.
	n, _ := e.s.Begin(ctx)
	_ = n.Set([]byte("k"), []byte("newest"))
	if err := n.Commit(ctx); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("younger writer behind a live older lock: %v", err)
	}
}

// TestHeartbeatKeepsSlowCommitAlive: a commit stalls after prewrite for
// several lock TTLs. Its heartbeat keeps the primary alive, so a writer
// that meets the lock meanwhile does not roll it back, and the commit
// succeeds.
func TestHeartbeatKeepsSlowCommitAlive(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for several lock TTLs")
	}
	ctx := context.Background()
	e := newEnv(t, Options{})
	const ttl = time.Second
	prewritten, resume := make(chan uint64), make(chan struct{})
	slow := e.newStore(t, Options{
		LockTTL:           ttl,
		HeartbeatInterval: ttl / 10,
		EnableOnePC:       new(false),
		Hooks: &CommitHooks{AfterPrewrite: func(startTS uint64) error {
			prewritten <- startTS
			<-resume
			return nil
		}},
	})
	tx, _ := slow.Begin(ctx)
	_ = tx.Set([]byte("k"), []byte("slow"))
	done := make(chan error)
	go func() { done <- tx.Commit(ctx) }()
	startTS := <-prewritten
	time.Sleep(2 * ttl) // without heartbeats the lock would now be expired

	w, _ := e.s.Begin(ctx)
	_ = w.Set([]byte("k"), []byte("writer"))
	if err := w.Commit(ctx); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("writer meeting the live lock of an older commit: %v", err)
	}
	if !lockedBy(t, e, "k", startTS) {
		t.Fatal("the slow commit's lock is gone")
	}
	close(resume)
	if err := <-done; err != nil {
		t.Fatalf("slow commit: %v", err)
	}
	if v := pointGet(t, e.s, "k"); v != "slow" {
		t.Fatalf("k = %q", v)
	}
}

// TestCommitAboveReaderThatReadPast: a reader reads past the primary lock
// of a transaction between its prewrite and its commit, pushing its
// min_commit_ts; the commit_ts fetched before that is now too low, so the
// committer fetches another and the reader's snapshot stays unchanged.
func TestCommitAboveReaderThatReadPast(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	mustCommit(t, e.s, "k", "old")
	// Every timestamp from here is scripted, above the setup commit's.
	base, _ := e.oracle.GetTimestamp(ctx)
	oracle := &scriptedOracle{tss: []uint64{
		base + 100, // writer start_ts
		base + 300, // reader start_ts
		base + 301, // reader's CheckTxnStatus current_ts
		base + 200, // writer commit_ts: below the reader
		base + 400, // writer commit_ts, second try
	}}
	rs := NewStore(e.client, oracle, Options{})
	defer rs.Close()
	var reader *Txn
	w := NewStore(e.client, oracle, Options{
		EnableOnePC: new(false),
		Hooks: &CommitHooks{AfterPrewrite: func(uint64) error {
			reader, _ = rs.Begin(ctx)
			v, _, err := reader.Get(ctx, []byte("k"))
			if err != nil || string(v) != "old" {
				t.Errorf("reader: %q, %v", v, err)
			}
			return nil
		}},
	})
	defer w.Close()
	tx, _ := w.Begin(ctx)
	_ = tx.Set([]byte("k"), []byte("new"))
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if tx.CommitTS() != base+400 {
		t.Fatalf("commit_ts %d, want %d (above the reader at %d)", tx.CommitTS(), base+400, base+300)
	}
	if v, _, _ := reader.Get(ctx, []byte("k")); string(v) != "old" {
		t.Fatalf("reader's second read = %q", v)
	}
}
