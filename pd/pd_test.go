package pd_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/pd"
	"github.com/percdb/percdb/pd/pdpb"
)

// freePort returns a port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// pdConfig is a single-member pd on free ports in dir, whose regions
// have one replica.
func pdConfig(t *testing.T, dir string) pd.Config {
	cfg := pd.Config{Replicas: 1, DataDir: dir}
	cfg.Addr, cfg.PeerURL, cfg.ClientURL = freeAddrs(t)
	return cfg
}

// freeAddrs is a pd's gRPC address and etcd peer and client URLs on
// ports that were free a moment ago.
func freeAddrs(t *testing.T) (addr, peerURL, clientURL string) {
	return fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("http://127.0.0.1:%d", freePort(t)),
		fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
}

// openPDClient opens a pd with cfg and a client of it, both closed when
// the test ends. cfg's addresses change when its ports were taken (see
// openPD).
func openPDClient(t *testing.T, cfg *pd.Config) *pd.Client {
	t.Helper()
	_, c := openPDWithClient(t, cfg)
	return c
}

// openPDWithClient is openPDClient, returning the pd too.
func openPDWithClient(t *testing.T, cfg *pd.Config) (*pd.Server, *pd.Client) {
	t.Helper()
	srv := openPD(t, cfg)
	t.Cleanup(func() { srv.Close() })
	c, err := pd.NewClient([]string{cfg.Addr}, pd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return srv, c
}

// openPD opens a pd with cfg. A port freePort found free can be taken by
// another process before etcd binds it (the test packages run at the same
// time, and every outgoing connection takes a port of the same ephemeral
// range): the first start on an empty data directory that fails with
// "address already in use" is retried on other ports, written to cfg. A
// restart on a directory etcd has written keeps its addresses, which
// etcd's membership records.
func openPD(t *testing.T, cfg *pd.Config) *pd.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	fresh := emptyDir(t, cfg.DataDir)
	for attempt := 1; ; attempt++ {
		s, err := pd.Open(ctx, *cfg)
		if err == nil {
			return s
		}
		if !fresh || attempt == 5 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("attempt %d: %v; again on other ports", attempt, err)
		if err := os.RemoveAll(cfg.DataDir); err != nil {
			t.Fatal(err)
		}
		cfg.Addr, cfg.PeerURL, cfg.ClientURL = freeAddrs(t)
	}
}

// emptyDir reports whether dir is missing or has no entries.
func emptyDir(t *testing.T, dir string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(entries) == 0
}

// TestDirectoryAndOracleSurviveRestart: the second store to register
// bootstraps the cluster (two replicas a region) with the whole key space
// on both, the first its leader until another reports leading it; ids are
// unique; the region
// directory, the store registry and the oracle's window are in etcd, so a
// restarted pd routes as before and issues timestamps above every one it
// issued.
func TestDirectoryAndOracleSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := pdConfig(t, dir)
	cfg.Replicas = 2
	srv := openPD(t, &cfg)
	c, err := pd.NewClient([]string{cfg.Addr}, pd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// Before any store registers there is no region: retryable, and past
	// the timeout a RouterUnavailableError.
	short, err := pd.NewClient([]string{cfg.Addr}, pd.ClientOptions{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close()
	var ru *kv.RouterUnavailableError
	if _, err := short.GetRegion(ctx, []byte("k")); !errors.As(err, &ru) {
		t.Fatalf("locate before bootstrap: %v, want *kv.RouterUnavailableError", err)
	}

	s1, err := c.PutStore(ctx, 0, "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := short.GetRegion(ctx, []byte("k")); !errors.As(err, &ru) {
		t.Fatalf("locate with one store of two: %v, want *kv.RouterUnavailableError", err)
	}
	s2, err := c.PutStore(ctx, 0, "127.0.0.1:2")
	if err != nil {
		t.Fatal(err)
	}
	if s1 == s2 || s1 == 0 || s2 == 0 {
		t.Fatalf("store ids %d and %d", s1, s2)
	}
	r, err := c.GetRegion(ctx, []byte("anything"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Addr != "127.0.0.1:1" || len(r.Start) != 0 || len(r.End) != 0 || r.Epoch != (kv.RegionEpoch{ConfVer: 1, Version: 1}) {
		t.Fatalf("bootstrap region: %+v", r)
	}
	hb, err := c.StoreHeartbeat(ctx, &pdpb.StoreHeartbeatRequest{StoreId: s1, Addr: "127.0.0.1:1"})
	if regs := hb.GetRegions(); err != nil || len(regs) != 1 || regs[0].Id != r.ID {
		t.Fatalf("heartbeat of store %d: %v %v", s1, regs, err)
	}
	hb, err = c.StoreHeartbeat(ctx, &pdpb.StoreHeartbeatRequest{StoreId: s2, Addr: "127.0.0.1:2", Leading: []uint64{r.ID}})
	if regs := hb.GetRegions(); err != nil || len(regs) != 1 || len(regs[0].Peers) != 2 {
		t.Fatalf("heartbeat of store %d: %v %v", s2, regs, err)
	}
	// Store 2 said it leads the region: clients go there now.
	if r, err = c.GetRegion(ctx, []byte("anything")); err != nil || r.Addr != "127.0.0.1:2" {
		t.Fatalf("region after store %d leads it: %+v %v", s2, r, err)
	}
	first, err := c.AllocID(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if first <= max(s1, s2, r.ID) {
		t.Fatalf("alloc id %d reuses an id (stores %d %d, region %d)", first, s1, s2, r.ID)
	}
	var lastTS uint64
	for range 100 {
		ts, err := c.GetTimestamps(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		if ts <= lastTS {
			t.Fatalf("timestamp %d after %d", ts, lastTS)
		}
		lastTS = ts
	}

	// Down: the client fails with the typed error past its timeout.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := short.GetTimestamps(ctx, 1); !errors.As(err, &ru) {
		t.Fatalf("timestamps with pd down: %v, want *kv.RouterUnavailableError", err)
	}

	// Restarted on the same directory and address.
	srv = openPD(t, &cfg)
	defer srv.Close()
	ts, err := c.GetTimestamps(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ts <= lastTS {
		t.Fatalf("timestamp %d after restart is not above %d", ts, lastTS)
	}
	r2, err := c.GetRegion(ctx, []byte("x"))
	if err != nil || r2.ID != r.ID || r2.Addr != r.Addr {
		t.Fatalf("region after restart: %+v %v", r2, err)
	}
	again, err := c.AllocID(ctx, 1)
	if err != nil || again < first+10 {
		t.Fatalf("alloc after restart: %d %v, want >= %d", again, err, first+10)
	}
	// A known store re-registering keeps its id.
	if id, err := c.PutStore(ctx, s2, "127.0.0.1:3"); err != nil || id != s2 {
		t.Fatalf("re-register: %d %v", id, err)
	}
}

// TestRegionCache: located regions are cached with their store address
// and dropped by InvalidateRegion.
func TestRegionCache(t *testing.T) {
	ctx := context.Background()
	cfg := pdConfig(t, t.TempDir())
	c := openPDClient(t, &cfg)
	if _, err := c.PutStore(ctx, 0, "127.0.0.1:9"); err != nil {
		t.Fatal(err)
	}
	rc := pd.NewRegionCache(c)
	r, err := rc.LocateKey(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if addr, ok := rc.RegionAddr(r.ID); !ok || addr != "127.0.0.1:9" {
		t.Fatalf("RegionAddr: %q %v", addr, ok)
	}
	rc.InvalidateRegion(r.ID)
	if _, ok := rc.RegionAddr(r.ID); ok {
		t.Fatal("invalidated region still routed")
	}
	if r2, err := rc.LocateKey(ctx, []byte("z")); err != nil || r2.ID != r.ID {
		t.Fatalf("relocate: %+v %v", r2, err)
	}
}

// openCluster starts n pd members that form one etcd cluster, on free
// ports. A port freePort found can be taken by another test process
// before etcd binds it, so a start that fails with "address already in
// use" is retried on other ports (its members closed first).
func openCluster(ctx context.Context, t *testing.T, n int) ([]pd.Config, []*pd.Server) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		var cfgs []pd.Config
		var initial []string
		for i := range n {
			cfg := pdConfig(t, t.TempDir())
			cfg.Name = fmt.Sprintf("pd%d", i)
			initial = append(initial, cfg.Name+"="+cfg.PeerURL)
			cfgs = append(cfgs, cfg)
		}
		servers := make([]*pd.Server, n)
		errs := make(chan error, n)
		for i := range cfgs {
			cfgs[i].InitialCluster = strings.Join(initial, ",")
			go func() {
				var err error
				servers[i], err = pd.Open(ctx, cfgs[i])
				errs <- err
			}()
		}
		var failed error
		for range cfgs {
			if err := <-errs; err != nil && failed == nil {
				failed = err
			}
		}
		if failed == nil {
			return cfgs, servers
		}
		for _, s := range servers {
			if s != nil {
				s.Close()
			}
		}
		if attempt == 5 || !strings.Contains(failed.Error(), "address already in use") {
			t.Fatal(failed)
		}
		t.Logf("attempt %d: %v; again on other ports", attempt, failed)
	}
}

// TestLeaderFailover: three pd members form one etcd cluster and elect
// one leader; when it goes, another takes over, and the client, given all
// three addresses, goes on: its timestamps keep increasing across the
// change and the directory is the same.
func TestLeaderFailover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfgs, servers := openCluster(ctx, t, 3)
	closed := make([]bool, 3)
	defer func() {
		for i, s := range servers {
			if !closed[i] {
				s.Close()
			}
		}
	}()
	c, err := pd.NewClient([]string{cfgs[0].Addr, cfgs[1].Addr, cfgs[2].Addr}, pd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	store, err := c.PutStore(ctx, 0, "127.0.0.1:7")
	if err != nil {
		t.Fatal(err)
	}
	last, err := c.GetTimestamps(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	leaders := 0
	leader := -1
	for i, s := range servers {
		if s.IsLeader() {
			leaders++
			leader = i
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders, want 1", leaders)
	}
	if err := servers[leader].Close(); err != nil {
		t.Fatal(err)
	}
	closed[leader] = true

	ts, err := c.GetTimestamps(ctx, 1)
	if err != nil {
		t.Fatalf("timestamps after the leader left: %v", err)
	}
	if ts <= last {
		t.Fatalf("timestamp %d after the failover is not above %d", ts, last)
	}
	r, err := c.GetRegion(ctx, []byte("k"))
	if err != nil || r.Addr != "127.0.0.1:7" {
		t.Fatalf("region after the failover: %+v %v", r, err)
	}
	if id, err := c.PutStore(ctx, store, "127.0.0.1:7"); err != nil || id != store {
		t.Fatalf("store after the failover: %d %v", id, err)
	}
}

// TestReplicaRepair: with four stores and three replicas a region, a
// store that stops heartbeating longer than MaxStoreDownTime gets its
// replica replaced: pd asks the region's leader, in its heartbeat's
// answer, to replace it by the live store without a replica; it goes on
// asking while the leader's reports show the new replica as a learner
// (the directory follows them, so the new store is told of the region);
// once the leader reports a configuration without the down store, pd asks
// nothing more, the down store is told of no region, and the new one is.
func TestReplicaRepair(t *testing.T) {
	ctx := context.Background()
	cfg := pdConfig(t, t.TempDir())
	cfg.Replicas, cfg.MaxStoreDownTime = 3, 300*time.Millisecond
	c := openPDClient(t, &cfg)
	var ids []uint64
	for i := range 4 {
		id, err := c.PutStore(ctx, 0, fmt.Sprintf("127.0.0.1:%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	r, err := c.GetRegion(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	leader, dead, spare := ids[0], ids[2], ids[3]
	beat := func(store uint64, rep *pdpb.RegionReport) *pdpb.StoreHeartbeatResponse {
		t.Helper()
		req := &pdpb.StoreHeartbeatRequest{StoreId: store}
		if rep != nil {
			req.Leading, req.Reports = []uint64{r.ID}, []*pdpb.RegionReport{rep}
		}
		resp, err := c.StoreHeartbeat(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	initial := &pdpb.RegionReport{RegionId: r.ID, ConfVer: 1, Voters: ids[:3]}
	if resp := beat(leader, initial); len(resp.GetChanges()) != 0 {
		t.Fatalf("changes asked with every store up: %v", resp.GetChanges())
	}
	// Every store but dead heartbeats until pd asks for the repair.
	var changes []*pdpb.ChangePeer
	deadline := time.Now().Add(time.Minute)
	for len(changes) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no repair asked for a store silent past the max store down time")
		}
		beat(ids[1], nil)
		beat(spare, nil)
		changes = beat(leader, initial).GetChanges()
		time.Sleep(50 * time.Millisecond)
	}
	want := &pdpb.ChangePeer{RegionId: r.ID, RemoveStore: dead, AddStore: spare}
	if len(changes) != 1 || !proto.Equal(changes[0], want) {
		t.Fatalf("changes %v, want %v", changes, want)
	}
	if regs := beat(spare, nil).GetRegions(); len(regs) != 0 {
		t.Fatalf("spare store told of regions %v before it was added", regs)
	}
	// The leader added the spare as a learner: the spare is told of the
	// region, and pd still asks for the repair.
	learner := &pdpb.RegionReport{RegionId: r.ID, ConfVer: 2, Voters: ids[:3], Learners: []uint64{spare}}
	if changes := beat(leader, learner).GetChanges(); len(changes) != 1 || !proto.Equal(changes[0], want) {
		t.Fatalf("changes with the learner added %v, want %v", changes, want)
	}
	if regs := beat(spare, nil).GetRegions(); len(regs) != 1 || regs[0].GetConfVer() != 2 || !slices.Equal(regs[0].GetLearners(), []uint64{spare}) {
		t.Fatalf("spare store's regions %v, want the region at conf_ver 2 with it a learner", regs)
	}
	// A stale report (an older configuration) changes nothing.
	beat(leader, initial)
	done := &pdpb.RegionReport{RegionId: r.ID, ConfVer: 4, Voters: []uint64{leader, ids[1], spare}}
	if changes := beat(leader, done).GetChanges(); len(changes) != 0 {
		t.Fatalf("changes after the repair: %v", changes)
	}
	if regs := beat(dead, nil).GetRegions(); len(regs) != 0 {
		t.Fatalf("the replaced store is told of regions %v", regs)
	}
	rec, err := c.RegionRecord(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if g := rec.GetRegion(); g.GetConfVer() != 4 || !slices.Equal(g.GetPeers(), []uint64{leader, ids[1], spare}) || len(g.GetLearners()) != 0 {
		t.Fatalf("region record after the repair: %v", g)
	}
	// The replaced store holds no replica: UnsafeDestroyRange skips it.
	stores, err := c.GetStores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stores {
		if want := uint32(1); st.GetId() == dead && st.GetReplicas() != 0 || st.GetId() != dead && st.GetReplicas() != want {
			t.Fatalf("store %d holds %d replicas after the repair (store %d replaced)", st.GetId(), st.GetReplicas(), dead)
		}
	}
}

// TestGCLeader: of the SQL nodes reporting their running transactions,
// the first is the GC leader and stays it while it reports; another is
// not, until the leader's reports stop and their lease ends.
func TestGCLeader(t *testing.T) {
	ctx := context.Background()
	cfg := pdConfig(t, t.TempDir())
	c := openPDClient(t, &cfg)
	report := func(node string) bool {
		t.Helper()
		leader, err := c.ReportMinStartTS(ctx, node, 0, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return leader
	}
	if !report("a") {
		t.Fatal("the first node to report is not the GC leader")
	}
	for range 3 {
		if report("b") || !report("a") {
			t.Fatal("the GC leadership moved while its holder reports")
		}
	}
	deadline := time.Now().Add(time.Minute)
	for !report("b") {
		if time.Now().After(deadline) {
			t.Fatal("the GC leadership never passed on after its holder stopped reporting")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if report("a") {
		t.Fatal("the former GC leader took the leadership back while the new one holds it")
	}
}
