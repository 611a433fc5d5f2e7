package node_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/txn"
	"github.com/percdb/percdb/txn/gcworker"
)

// TestGCInCluster: three KV nodes, one key updated 20 times by SQL node
// A (a txn.Store), while SQL node B (another) holds a transaction open
// from after the 10th update and reports its start_ts to pd. A's garbage
// collector (gcworker over the kvrpc client, pd deciding the safe point)
// runs: pd keeps the safe point below B's transaction, which still reads
// the 10th value. B's transaction ends (its report goes); the next run
// passes it: every replica holds the same keys afterwards (the deletions
// went through raft), fewer than before, the newest value is read, and a
// read below the safe point is refused on every store (GCTooOldError,
// MySQL 9006), including the followers, which learned the safe point from
// pd's heartbeat.
func TestGCInCluster(t *testing.T) {
	c := startCluster(t)
	ctx := c.ctx
	for i := range 10 {
		c.put("k", fmt.Sprint(i))
	}
	b := txn.NewStore(c.kc, c.oracle, txn.Options{})
	defer b.Close()
	long, err := b.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	longTS, err := long.StartTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	report := func(store *txn.Store, node string) {
		t.Helper()
		ts := gcworker.OldestStartTS(store.ActiveTxns(), time.Now().Add(-time.Hour))
		if _, err := c.pd.ReportMinStartTS(ctx, node, ts, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	report(b, "b")
	for i := 10; i < 20; i++ {
		c.put("k", fmt.Sprint(i))
	}
	w, err := gcworker.New(gcworker.Config{Client: c.kc, Txns: c.s, Oracle: c.oracle, SafePoints: pd.GCSafePoints{Client: c.pd},
		Active: c.s, Settings: func() gcworker.Settings { return gcworker.Settings{LifeTime: time.Millisecond} }})
	if err != nil {
		t.Fatal(err)
	}
	before := c.exports()
	sp, err := w.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sp == 0 || sp >= longTS {
		t.Fatalf("safe point %d with B's transaction at %d running", sp, longTS)
	}
	if v, _, err := long.Get(ctx, []byte("k")); err != nil || string(v) != "9" {
		t.Fatalf("B's transaction reads %q, %v; want the 10th value", v, err)
	}
	_ = long.Rollback(ctx)
	report(b, "b")
	if sp, err = w.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if sp <= longTS {
		t.Fatalf("safe point %d after B's transaction at %d ended", sp, longTS)
	}
	if got := c.get("k"); got != "19" {
		t.Fatalf("k = %q after GC, want 19", got)
	}
	if st := w.Stats(); st.VersionsDeleted < 19 {
		t.Fatalf("GC deleted %d versions of 20, want at least 19", st.VersionsDeleted)
	}
	var after [][]byte
	waitUntil(t, "every replica holds the same keys", func() bool {
		after = c.exports()
		return bytes.Equal(after[0], after[1]) && bytes.Equal(after[1], after[2])
	})
	if len(after[0]) >= len(before[0]) {
		t.Fatalf("a replica's keys take %d bytes after GC, %d before", len(after[0]), len(before[0]))
	}
	waitUntil(t, "every store refuses reads below the safe point", func() bool {
		for _, n := range c.nodes {
			st := n.KVStore()
			rc, err := st.LocateKey(nil)
			if err != nil {
				t.Fatal(err)
			}
			var tooOld *kv.GCTooOldError
			if _, err := st.Get(ctx, rc.Ctx(), []byte("k"), longTS); !errors.As(err, &tooOld) {
				return false
			}
		}
		return true
	})
}

// exports returns each node's replica's keys (the region's snapshot:
// data, lock, notify and write spaces), concatenated.
func (c *testCluster) exports() [][]byte {
	c.t.Helper()
	out := make([][]byte, len(c.nodes))
	for i, n := range c.nodes {
		var b []byte
		if err := n.KVStore().ExportRange(c.ctx, nil, nil, 1<<20, func(chunk []byte) error {
			b = append(b, chunk...)
			return nil
		}); err != nil {
			c.t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// waitUntil polls cond until it holds, failing the test past a minute (a
// hang, not slowness).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
