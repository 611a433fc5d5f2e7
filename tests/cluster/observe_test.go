package cluster

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv/kvrpc"
	"github.com/percdb/percdb/observe"
	"github.com/percdb/percdb/pd"
	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/tests/testproc"
	"github.com/percdb/percdb/txn"
)

// attachSQL opens a SQL node of c in the test's process (what `percdb
// sql` runs, over its own kv client and pd client), for code that runs
// inside a SQL node: observers.
func attachSQL(t *testing.T, c *cluster) *percsql.Server {
	t.Helper()
	pdc, err := pd.NewClient([]string{c.pd.addr}, pd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc := kvrpc.NewClient(pd.NewRegionCache(pdc), kvrpc.Options{})
	srv, err := percsql.Open(context.Background(), percsql.Config{
		Cluster: &percsql.ClusterBackend{KV: kc, Oracle: pdc},
		Addr:    "127.0.0.1:0", DataDir: t.TempDir(),
	})
	if err != nil {
		t.Fatalf("attach a SQL node: %v\n%s", err, c.logs())
	}
	t.Cleanup(func() {
		_ = srv.Close()
		_ = kc.Close()
		_ = pdc.Close()
	})
	return srv
}

// TestObserversInCluster: two SQL nodes attached to a cluster of three
// KV nodes run the same observer (Percolator's strong notifications)
// while the clients of the cluster's SQL node update the watched column. Every
// change is observed: each row's last acknowledgement (the start_ts of
// the observer's last committed run) is above the row's last commit; and
// no change is run twice in committed transactions: between any two
// committed runs of a row (consecutive acknowledgements, read back as
// the ack key's committed versions) lies a change of the row, since a
// run that found the ack newer than the change it was told of stops.
// How many runs each node committed, and how many attempts lost the ack
// conflict, are logged.
func TestObserversInCluster(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	db := openDB(t, c.sql.addr, "", true)
	ctx := context.Background()
	const keys = 8
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.src (id INT PRIMARY KEY, v INT NOT NULL)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, c.logs())
		}
	}
	for k := range keys {
		if _, err := db.ExecContext(ctx, "INSERT INTO d.src (id, v) VALUES (?, 0)", k); err != nil {
			t.Fatal(err)
		}
	}
	nodes := []*percsql.Server{attachSQL(t, c), attachSQL(t, c)}
	var calls atomic.Int64
	// tableID is d.src's, from the keys the observer is called with.
	var tableID atomic.Int64
	runners := make([]*observe.Runner, len(nodes))
	rctx, stopRunners := context.WithCancel(ctx)
	var running sync.WaitGroup
	for i, srv := range nodes {
		r := observe.New(srv.TxnStore(), observe.Options{Catalog: srv, Txns: srv.ObserverTxns()})
		if err := r.Register(ctx, observe.Observer{Name: "count", Table: "d.src", Columns: []string{"v"},
			Run: func(_ context.Context, _ *txn.Txn, rowKey []byte) error {
				calls.Add(1)
				id, _, err := tablecodec.DecodeRowKey(rowKey, false)
				tableID.Store(id)
				return err
			}}); err != nil {
			t.Fatal(err)
		}
		runners[i] = r
		running.Go(func() { _ = r.Run(rctx) })
	}
	defer func() {
		stopRunners()
		running.Wait()
	}()

	// Writers through the cluster's own SQL node.
	var wg sync.WaitGroup
	var updates atomic.Int64
	for w := range 3 {
		wg.Go(func() {
			for i := range 60 {
				if _, err := db.ExecContext(ctx, "UPDATE d.src SET v = v + 1 WHERE id = ?", (w*5+i)%keys); err == nil {
					updates.Add(1)
				}
				if i%10 == 0 {
					time.Sleep(20 * time.Millisecond) // let runs interleave with the writes
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, "every notification run", func() bool {
		n, err := runners[0].Pending(ctx)
		return err == nil && n == 0
	}, func() string {
		return fmt.Sprintf("stats %+v %+v\n%s", runners[0].Stats(), runners[1].Stats(), c.logs())
	})
	stopRunners()
	running.Wait()

	ackCommits := 0
	for _, h := range checkHistories(t, ctx, nodes[0].TxnStore(), tableID.Load(), keys, "count") {
		ackCommits += len(h.Runs)
	}
	s0, s1 := runners[0].Stats(), runners[1].Stats()
	if got := int(s0.Committed + s1.Committed); got != ackCommits {
		t.Errorf("the runners committed %d runs, the ack keys hold %d commits", got, ackCommits)
	}
	t.Logf("%d watched updates; committed runs: node 1 %d, node 2 %d (%d ack commits); calls %d; conflicts %d + %d; found acknowledged %d + %d; entries left to the other's scanners %d + %d, jumps %d + %d",
		updates.Load(), s0.Committed, s1.Committed, ackCommits, calls.Load(), s0.Conflicts, s1.Conflicts, s0.Acknowledged, s1.Acknowledged,
		s0.Skipped, s1.Skipped, s0.Jumps, s1.Jumps)
	c.stop()
}

// checkHistories reads back the changes and committed runs of observer
// on rows 0..keys-1 of table (integer keys) and fails t on a change not
// observed or run twice; it returns the histories by row.
func checkHistories(t *testing.T, ctx context.Context, store *txn.Store, table int64, keys int, observer string) []observe.History {
	t.Helper()
	now := freshTS(t, ctx, store)
	var out []observe.History
	for k := range keys {
		h, err := observe.ReadHistory(ctx, store, tablecodec.RowKey(nil, table, tablecodec.IntHandle(int64(k))), observer, now)
		if err != nil {
			t.Fatal(err)
		}
		if h.Unobserved() {
			t.Errorf("row %d: a change not observed (changes %v, committed runs started at %v)", k, h.Changes, h.Runs)
		}
		for _, pair := range h.RunTwice() {
			t.Errorf("row %d: committed runs started at %d and %d with no change between: a notification run twice (changes %v, runs %v)",
				k, pair[0], pair[1], h.Changes, h.Runs)
		}
		out = append(out, h)
	}
	return out
}

// freshTS returns a timestamp of the cluster's oracle.
func freshTS(t *testing.T, ctx context.Context, s *txn.Store) uint64 {
	t.Helper()
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	ts, err := tx.StartTS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestObserverActionsInCluster: a built-in action (ADMIN WATCH ... DO)
// made through the cluster's SQL node runs on every SQL node (that one
// and two attached in process) while clients update the watched column:
// the action's output converges to the source, it counts exactly the
// committed runs the ack versions show, and no change is run twice
// (observe.ReadHistory).
func TestObserverActionsInCluster(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	db := openDB(t, c.sql.addr, "", true)
	ctx := context.Background()
	const keys = 6
	for _, q := range []string{
		"CREATE DATABASE d",
		"CREATE TABLE d.src (id INT PRIMARY KEY, v INT NOT NULL)",
		"CREATE TABLE d.seen (id INT PRIMARY KEY, v INT NOT NULL, runs INT NOT NULL)",
		"ADMIN WATCH d.src (v) FOR OBSERVER mirror DO INSERT INTO seen (id, v, runs) VALUES (NEW.id, NEW.v, 1) ON DUPLICATE KEY UPDATE v = VALUES(v), runs = runs + 1",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v\n%s", q, err, c.logs())
		}
	}
	nodes := []*percsql.Server{attachSQL(t, c), attachSQL(t, c)}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := range 40 {
				id := (w*5 + i) % keys
				if _, err := db.ExecContext(ctx, "INSERT INTO d.src VALUES (?, 1) ON DUPLICATE KEY UPDATE v = v + 1", id); err != nil {
					t.Errorf("write %d: %v", id, err)
				}
				if i%10 == 0 {
					time.Sleep(20 * time.Millisecond) // let runs interleave with the writes
				}
			}
		})
	}
	wg.Wait()
	mirrored := func() bool {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.src JOIN d.seen ON src.id = seen.id AND src.v = seen.v").Scan(&n)
		return err == nil && n == keys
	}
	waitFor(t, "the action to mirror every row", mirrored, func() string { return c.logs() })
	var tableID int64
	if err := db.QueryRowContext(ctx, "SELECT TABLE_ID FROM information_schema.TIKV_REGION_STATUS WHERE DB_NAME = 'd' AND TABLE_NAME = 'src' AND IS_INDEX = 0 LIMIT 1").Scan(&tableID); err != nil {
		t.Fatal(err)
	}
	for k, h := range checkHistories(t, ctx, nodes[0].TxnStore(), tableID, keys, "mirror") {
		var runs int
		if err := db.QueryRowContext(ctx, "SELECT runs FROM d.seen WHERE id = ?", k).Scan(&runs); err != nil {
			t.Fatal(err)
		}
		if runs != len(h.Runs) {
			t.Errorf("row %d: the action counted %d runs, the ack %d", k, runs, len(h.Runs))
		}
	}
	var ran []string
	for i, n := range nodes {
		st := n.ObserverActionStats()["mirror"]
		ran = append(ran, fmt.Sprintf("node %d: %d committed, %d failed", i+1, st.Committed, st.Failed))
	}
	t.Logf("attached nodes' runs: %v", ran)
	c.stop()
}
