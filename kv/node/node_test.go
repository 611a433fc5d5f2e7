package node_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc"
	"github.com/percdb/percdb/kv/node"
	"github.com/percdb/percdb/kv/raftstore"
	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/txn"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func freeURL(t *testing.T) string { return "http://" + freeAddr(t) }

// openPD starts a pd with replicas on free addresses. An address found
// free may be taken by another process (other test packages run at the
// same time) before pd binds it: pd is then started again on new ones.
func openPD(ctx context.Context, t *testing.T, replicas int) (pd.Config, *pd.Server, error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		cfg := pd.Config{DataDir: t.TempDir(), Addr: freeAddr(t), PeerURL: freeURL(t), ClientURL: freeURL(t), Replicas: replicas}
		s, err := pd.Open(ctx, cfg)
		if err == nil || attempt == 5 || !strings.Contains(err.Error(), "address already in use") {
			return cfg, s, err
		}
	}
}

// TestNodeServesItsRegions: a pd and two KV nodes in process; the first
// node to register serves the whole key space; transactions through pd's
// routing and oracle commit and read; the other node refuses the region
// (not found), a stale epoch is refused with the node's view; a restarted
// node serves its region again with its data.
func TestNodeServesItsRegions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pdCfg, pds, err := openPD(ctx, t, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pds.Close()
	open := func(dir, addr string) *node.Node {
		n, err := node.Open(ctx, node.Config{DataDir: dir, Addr: addr, PD: []string{pdCfg.Addr}, KV: kv.Options{SyncWrites: kv.SyncNone}})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	dir1, addr1 := t.TempDir(), freeAddr(t)
	n1 := open(dir1, addr1)
	n2 := open(t.TempDir(), freeAddr(t))
	defer n2.Close()

	pdc, err := pd.NewClient([]string{pdCfg.Addr}, pd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pdc.Close()
	kc := kvrpc.NewClient(pd.NewRegionCache(pdc), kvrpc.Options{})
	defer kc.Close()
	oracle := tso.NewBatchClient(pdc, tso.ClientOptions{})
	defer oracle.Close()
	s := txn.NewStore(kc, oracle, txn.Options{})
	defer s.Close()

	put := func(k, v string) {
		t.Helper()
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Set([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	get := func(k string) string {
		t.Helper()
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		v, _, err := tx.Get(ctx, []byte(k))
		if err != nil {
			t.Fatal(err)
		}
		return string(v)
	}
	for i := range 20 {
		put(fmt.Sprintf("k%02d", i), fmt.Sprint(i))
	}
	if got := get("k07"); got != "7" {
		t.Fatalf("k07 = %q", got)
	}
	// A multi-range read through the node (kv.ScanRequest.Ranges, the
	// last range unbounded: cut to the region), each range bounded.
	{
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		kr := func(a, b string) kv.KeyRange { return kv.KeyRange{Start: []byte(a), End: []byte(b)} }
		got, err := tx.ScanRanges(ctx, []kv.KeyRange{kr("k02", "k05"), kr("k07", "k07\x00"), kr("k1", "k10"), kr("k18", "")}, 2)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, ps := range got {
			b.WriteString("[")
			for _, p := range ps {
				fmt.Fprintf(&b, " %s=%s", p.Key, p.Value)
			}
			b.WriteString(" ]")
		}
		if want := "[ k02=2 k03=3 ][ k07=7 ][ ][ k18=18 k19=19 ]"; b.String() != want {
			t.Fatalf("ScanRanges through the node: %s, want %s", b.String(), want)
		}
		_ = tx.Rollback(ctx)
	}

	region, err := kc.LocateKey(ctx, []byte("k"))
	if err != nil {
		t.Fatal(err)
	}
	if region.Addr != addr1 {
		t.Fatalf("region on %s, want the first node %s", region.Addr, addr1)
	}
	// The other node does not serve it.
	other := kvrpc.NewClient(fixedRouter(n2.Addr().String()), kvrpc.Options{})
	defer other.Close()
	var re *kv.RegionError
	if _, err := other.Get(ctx, region.Ctx(), []byte("k01"), kv.MaxTS); !errors.As(err, &re) || re.Reason != kvrpc.ReasonNotFound {
		t.Fatalf("get from the other node: %v, want region not found", err)
	}
	// A stale epoch is refused with the node's view.
	stale := region.Ctx()
	stale.Epoch.Version++
	if _, err := kc.Get(ctx, stale, []byte("k01"), kv.MaxTS); !errors.As(err, &re) || re.Current == nil || re.Current.Epoch != region.Epoch {
		t.Fatalf("stale epoch: %v, want epoch not match with the current epoch", err)
	}

	// Restarted, the node serves its region and data again.
	if err := n1.Close(); err != nil {
		t.Fatal(err)
	}
	n1 = open(dir1, addr1)
	defer n1.Close()
	if got := get("k13"); got != "13" {
		t.Fatalf("after restart k13 = %q", got)
	}
	put("k13", "thirteen")
	if got := get("k13"); got != "thirteen" {
		t.Fatalf("k13 = %q", got)
	}
}

// fixedRouter routes every region to addr.
type fixedRouter string

func (r fixedRouter) LocateKey(context.Context, []byte) (kv.RegionInfo, error) {
	return kv.RegionInfo{}, errors.New("not routed")
}
func (r fixedRouter) InvalidateRegion(uint64)          {}
func (r fixedRouter) RegionAddr(uint64) (string, bool) { return string(r), true }

// testCluster is a pd and KV nodes in process, and a transactional client
// over them.
type testCluster struct {
	t      *testing.T
	ctx    context.Context
	pdAddr string
	dirs   []string
	addrs  []string
	nodes  []*node.Node
	pd     *pd.Client
	kc     *kvrpc.Client
	oracle *tso.BatchClient
	s      *txn.Store
	// splitSize is the nodes' Config.SplitSize (0: the default).
	splitSize int64
}

func (c *testCluster) open(i int) {
	c.t.Helper()
	n, err := node.Open(c.ctx, node.Config{DataDir: c.dirs[i], Addr: c.addrs[i], PD: []string{c.pdAddr},
		HeartbeatInterval: 200 * time.Millisecond, Raft: raftstore.Config{TickInterval: 20 * time.Millisecond}, SplitSize: c.splitSize})
	if err != nil {
		c.t.Fatal(err)
	}
	c.nodes[i] = n
}

func (c *testCluster) put(k, v string) {
	c.t.Helper()
	tx, err := c.s.Begin(c.ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := tx.Set([]byte(k), []byte(v)); err != nil {
		c.t.Fatal(err)
	}
	if err := tx.Commit(c.ctx); err != nil {
		c.t.Fatalf("commit %s=%s: %v", k, v, err)
	}
}

func (c *testCluster) get(k string) string {
	c.t.Helper()
	tx, err := c.s.Begin(c.ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	defer tx.Rollback(c.ctx)
	v, _, err := tx.Get(c.ctx, []byte(k))
	if err != nil {
		c.t.Fatalf("get %s: %v", k, err)
	}
	return string(v)
}

// startCluster starts a pd and three KV nodes in process, the region
// replicated on all three, and a transaction store over them; everything
// is closed when the test ends.
func startCluster(t *testing.T) *testCluster { return startClusterSplitting(t, 0) }

// startClusterSplitting is startCluster with nodes that split regions
// larger than splitSize (0: the default size).
func startClusterSplitting(t *testing.T, splitSize int64) *testCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pdCfg, pds, err := openPD(ctx, t, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pds.Close() })
	c := &testCluster{t: t, ctx: ctx, pdAddr: pdCfg.Addr, nodes: make([]*node.Node, 3), splitSize: splitSize}
	for range 3 {
		c.dirs, c.addrs = append(c.dirs, t.TempDir()), append(c.addrs, freeAddr(t))
	}
	// Opened together: the region is placed once all three registered.
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() { c.open(i) })
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, n := range c.nodes {
			if n != nil {
				_ = n.Close()
			}
		}
	})
	if c.pd, err = pd.NewClient([]string{pdCfg.Addr}, pd.ClientOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.pd.Close() })
	c.kc = kvrpc.NewClient(pd.NewRegionCache(c.pd), kvrpc.Options{})
	t.Cleanup(func() { c.kc.Close() })
	c.oracle = tso.NewBatchClient(c.pd, tso.ClientOptions{})
	t.Cleanup(func() { c.oracle.Close() })
	c.s = txn.NewStore(c.kc, c.oracle, txn.Options{})
	t.Cleanup(func() { c.s.Close() })
	return c
}

// leader returns the index of the node pd routes the region of key k
// to.
func (c *testCluster) leader(k string) int {
	c.t.Helper()
	c.kc.InvalidateRegion(0)
	for {
		r, err := c.kc.LocateKey(c.ctx, []byte(k))
		if err != nil {
			c.t.Fatal(err)
		}
		for i, a := range c.addrs {
			if a == r.Addr && c.nodes[i] != nil {
				return i
			}
		}
		c.kc.InvalidateRegion(r.ID)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReplicatedRegion: pd places the region on all three nodes; writes
// commit through raft; with the leader's node closed, the two others
// elect a leader and the client follows it with nothing committed lost;
// restarted, the node catches up from the log, and with another node
// closed the region needs its replica for a quorum, and every value is
// there.
func TestReplicatedRegion(t *testing.T) {
	c := startCluster(t)

	for i := range 20 {
		c.put(fmt.Sprintf("k%02d", i), fmt.Sprint(i))
	}
	first := c.leader("k")
	if err := c.nodes[first].Close(); err != nil {
		t.Fatal(err)
	}
	c.nodes[first] = nil
	for i := 20; i < 40; i++ {
		c.put(fmt.Sprintf("k%02d", i), fmt.Sprint(i))
	}
	second := c.leader("k")
	if second == first {
		t.Fatalf("node %d still leads after it was closed", first)
	}
	for i := range 40 {
		if got := c.get(fmt.Sprintf("k%02d", i)); got != fmt.Sprint(i) {
			t.Fatalf("after the leader's node closed: k%02d = %q", i, got)
		}
	}
	c.open(first)
	// Close the new leader's node too: the region's quorum is now the
	// restarted node and the third, so the restarted one must have
	// caught up for the reads below.
	if err := c.nodes[second].Close(); err != nil {
		t.Fatal(err)
	}
	c.nodes[second] = nil
	for i := range 40 {
		if got := c.get(fmt.Sprintf("k%02d", i)); got != fmt.Sprint(i) {
			t.Fatalf("with the first leader back and the second closed: k%02d = %q", i, got)
		}
	}
	c.put("k00", "zero")
	if got := c.get("k00"); got != "zero" {
		t.Fatalf("k00 = %q", got)
	}
}
