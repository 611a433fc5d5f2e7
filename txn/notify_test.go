package txn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/tso"
)

// notifyEntries returns every notify entry as "key/column@ts", scanning
// page by page across regions.
func notifyEntries(t *testing.T, s *Store, limit int) []string {
	t.Helper()
	var out []string
	var start []byte
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("ScanNotify does not advance")
		}
		entries, next, err := s.ScanNotify(context.Background(), start, nil, limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			out = append(out, fmt.Sprintf("%s/%s@%d", e.Key, e.Column, e.TS))
		}
		if next == nil {
			return out
		}
		start = next
	}
}

// TestNotifyCommits checks that Notify marks reach the store with the
// commit, on written and unwritten keys, across regions, and that a
// stage's cleanup takes its marks back.
func TestNotifyCommits(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "m")
	// The secondaries commit in the background: Close waits for them.
	w := e.newStore(t, Options{})
	tx, err := w.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tx.Notify([]byte("a"), "hash"))
	must(tx.Set([]byte("a"), []byte("1"))) // the mark survives the write
	must(tx.Notify([]byte("a"), "hash"))   // and is not doubled
	must(tx.Delete([]byte("z")))
	must(tx.Notify([]byte("z"), "hash"))
	must(tx.Notify([]byte("n"), "other")) // not written: locked to carry it
	h := tx.Staging()
	must(tx.Notify([]byte("b"), "hash"))
	must(tx.Notify([]byte("z"), "undone"))
	tx.Cleanup(h)
	if err := tx.Notify([]byte("a"), ""); err == nil {
		t.Fatal("an empty column was accepted")
	}
	if got := notifyEntries(t, e.s, 0); len(got) != 0 {
		t.Fatalf("entries before commit: %v", got)
	}
	must(tx.Commit(ctx))
	must(w.Close())
	c := tx.CommitTS()
	want := []string{fmt.Sprintf("a/hash@%d", c), fmt.Sprintf("n/other@%d", c), fmt.Sprintf("z/hash@%d", c)}
	for _, limit := range []int{0, 1, 2} {
		if got := notifyEntries(t, e.s, limit); !slices.Equal(got, want) {
			t.Errorf("limit %d: entries %v, want %v", limit, got, want)
		}
	}
	if _, found, _ := readKey(t, e.s, "n"); found {
		t.Error("the lock carrying n's notification wrote a value")
	}
}

// readKey reads key in a new transaction.
func readKey(t *testing.T, s *Store, key string) ([]byte, bool, error) {
	t.Helper()
	tx, err := s.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tx.Get(context.Background(), []byte(key))
}

// TestAcknowledge checks the acknowledgement rules: of two runs for one
// notification at most one commits, a run that starts after a committed
// one finds nothing to do, and a newer notification is run again.
func TestAcknowledge(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{})
	notified := mustCommit(t, e.s, "row", "v1")
	ack := []byte("ack")
	begin := func() *Txn {
		tx, err := e.s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.StartTS(ctx); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	r1, r2 := begin(), begin()
	for _, r := range []*Txn{r1, r2} {
		if run, err := r.Acknowledge(ctx, ack, notified); err != nil || !run {
			t.Fatalf("first acknowledgement: %v, %v", run, err)
		}
	}
	if err := r1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r2.Commit(ctx); !errors.Is(err, ErrWriteConflict) {
		t.Fatalf("second run's commit: %v, want a write conflict", err)
	}
	if run, err := begin().Acknowledge(ctx, ack, notified); err != nil || run {
		t.Fatalf("a run after the committed one: %v, %v; want nothing to do", run, err)
	}
	again := mustCommit(t, e.s, "row", "v2")
	r3 := begin()
	if run, err := r3.Acknowledge(ctx, ack, again); err != nil || !run {
		t.Fatalf("a newer notification: %v, %v; want a run", run, err)
	}
	mustCommit(t, e.s, "ack", "bad")
	if _, err := begin().Acknowledge(ctx, ack, again); err == nil {
		t.Fatal("a malformed acknowledgement was accepted")
	}
}

// TestClearNotifyKeepsNewer checks that clearing an entry an observer ran
// for leaves a newer notification of the key in place.
func TestClearNotifyKeepsNewer(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, Options{}, "k")
	write := func(key string) uint64 {
		tx, err := e.s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Set([]byte(key), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := tx.Notify([]byte(key), "obs"); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		return tx.CommitTS()
	}
	a1, z1 := write("a"), write("z")
	a2 := write("a")
	err := e.s.ClearNotify(ctx, []kv.NotifyEntry{
		{Key: []byte("z"), Column: []byte("obs"), TS: z1},
		{Key: []byte("a"), Column: []byte("obs"), TS: a1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := notifyEntries(t, e.s, 0), []string{fmt.Sprintf("a/obs@%d", a2)}; !slices.Equal(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
}

// TestAcknowledgeSeesACommitAtItsStart: a one-phase commit's calculated
// commit_ts (max(start_ts, max_read_ts)+1) can be exactly the timestamp
// the oracle hands another Store's transaction next. An observer run
// that starts at it reads at it and sees the commit, so the run's
// acknowledgement, at that same timestamp, acknowledges the change: a
// later run told of it finds nothing to do. (It ran again, and both
// committed: TestObserversInCluster failed once so, with the writers on
// one SQL node and the runs on others.)
func TestAcknowledgeSeesACommitAtItsStart(t *testing.T) {
	ctx := context.Background()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	base := tso.Compose(time.Now().UnixMilli(), 1)
	oracle := &scriptedOracle{}
	for i := range uint64(8) {
		oracle.tss = append(oracle.tss, base+i)
	}
	e := newEnvOn(t, ks, oracle, Options{})
	runs := e.newStore(t, Options{}) // the observers' process

	w, err := e.s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Set([]byte("row"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := w.Notify([]byte("row"), "obs"); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	notified := w.CommitTS()
	if notified != base+1 {
		t.Fatalf("the blind write started at %d committed at %d, want the one-phase %d", base, notified, base+1)
	}

	run := func() *Txn {
		tx, err := runs.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	first := run()
	if v, _, err := first.Get(ctx, []byte("row")); err != nil || string(v) != "v" {
		t.Fatalf("the first run reads %q, %v", v, err)
	}
	if ts, _ := first.StartTS(ctx); ts != notified {
		t.Fatalf("the first run started at %d, want the commit's %d", ts, notified)
	}
	ack := []byte("ack")
	if ok, err := first.Acknowledge(ctx, ack, notified); err != nil || !ok {
		t.Fatalf("the first run's acknowledgement: %v, %v", ok, err)
	}
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	second := run()
	if _, _, err := second.Get(ctx, []byte("row")); err != nil {
		t.Fatal(err)
	}
	if ok, err := second.Acknowledge(ctx, ack, notified); err != nil || ok {
		t.Fatalf("a second run of the change the first saw: %v, %v; want nothing to do", ok, err)
	}
}
