package pd

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/pd/pdpb"
)

// BenchmarkStoreHeartbeat measures pd's handling of one store heartbeat
// (the gRPC service's method, called in process) in a cluster of n
// regions of three replicas each: on three stores, each holding every
// region, leading a third of them and reporting all of them, as KV
// nodes do; and on 30 stores, each holding a tenth of the regions (its
// heartbeat reports those: what it costs beyond them is what the
// cluster's size adds). Nothing changes, so the figure is what pd reads
// and decides per heartbeat: for full heartbeats (report=full, every
// region, as a node sends every FullReportInterval) and for partial ones
// (report=partial: no region changed, the node holds pd's list as of the
// revision pd last answered; what a KV node sends between full reports).
func BenchmarkStoreHeartbeat(b *testing.B) {
	for _, c := range []struct{ regions, stores int }{{1000, 3}, {10000, 3}, {10000, 30}} {
		for _, partial := range []bool{false, true} {
			name := fmt.Sprintf("regions=%d", c.regions)
			if c.stores != 3 {
				name += fmt.Sprintf("/stores=%d", c.stores)
			}
			name += map[bool]string{false: "/report=full", true: "/report=partial"}[partial]
			b.Run(name, func(b *testing.B) {
				benchmarkStoreHeartbeat(b, c.regions, c.stores, partial)
			})
		}
	}
}

func benchmarkStoreHeartbeat(b *testing.B, n, storeCount int, partial bool) {
	ctx := context.Background()
	cfg, s, svc, stores := openWithStores(b)
	for i := len(stores); i < storeCount; i++ {
		resp, err := svc.PutStore(ctx, &pdpb.PutStoreRequest{Store: &pdpb.Store{Addr: fmt.Sprintf("127.0.0.1:%d", i+1)}})
		if err != nil {
			b.Fatal(err)
		}
		stores = append(stores, resp.GetStoreId())
	}
	// The bootstrap region and n-1 more, written to etcd directly (as
	// splits would have left them), then pd restarted so that it starts
	// a term over them.
	t, err := s.leader()
	if err != nil {
		b.Fatal(err)
	}
	first, err := s.dir.regionOf(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	ids := []uint64{first.GetId()}
	next, err := s.dir.allocIDs(ctx, t.guard, uint32(n-1))
	if err != nil {
		b.Fatal(err)
	}
	for i := range n - 1 {
		ids = append(ids, next+uint64(i))
	}
	start := func(i int) []byte {
		if i == 0 {
			return nil
		}
		return fmt.Appendf(nil, "r%08d", i)
	}
	regions := make([]*pdpb.Region, n)
	var ops []clientv3.Op
	flush := func() {
		if _, err := s.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			b.Fatal(err)
		}
		ops = ops[:0]
	}
	for i, id := range ids {
		// Replica t of region i on store 3i+t (mod their count): each
		// store holds as many; led by replica i mod 3, so that each
		// store leads about as many (nothing to balance).
		peers := []uint64{stores[(3*i)%storeCount], stores[(3*i+1)%storeCount], stores[(3*i+2)%storeCount]}
		r := &pdpb.Region{Id: id, Start: start(i), End: start(i + 1), Version: 2, ConfVer: 1, StoreId: peers[i%3], Peers: slices.Sorted(slices.Values(peers))}
		if i == n-1 {
			r.End = nil
		}
		regions[i] = r
		rec, err := proto.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		ops = append(ops, clientv3.OpPut(regionKey(r.GetStart()), string(rec)), clientv3.OpPut(regionIDKey(id), string(r.GetStart())))
		if len(ops) >= 100 {
			flush()
		}
	}
	flush()
	s.Close()
	s = openLeader(b, cfg)
	defer s.Close()
	svc = &pdService{s: s}

	reqs := make([]*pdpb.StoreHeartbeatRequest, storeCount)
	held := make([]int, storeCount)
	for j, st := range stores {
		req := &pdpb.StoreHeartbeatRequest{StoreId: st, Addr: fmt.Sprintf("127.0.0.1:%d", j+1)}
		for _, r := range regions {
			if !hasPeer(r, st) {
				continue
			}
			held[j]++
			if r.GetStoreId() == st {
				req.Leading = append(req.Leading, r.GetId())
			}
			req.Reports = append(req.Reports, &pdpb.RegionReport{RegionId: r.GetId(), ConfVer: 1, Voters: r.GetPeers(),
				Start: r.GetStart(), End: r.GetEnd(), Version: 2})
		}
		reqs[j] = req
	}
	beat := func(req *pdpb.StoreHeartbeatRequest) *pdpb.StoreHeartbeatResponse {
		resp, err := svc.StoreHeartbeat(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	for j, req := range reqs {
		resp := beat(req)
		if partial {
			reqs[j] = &pdpb.StoreHeartbeatRequest{StoreId: req.GetStoreId(), Addr: req.GetAddr(), Partial: true, RegionsRevision: resp.GetRegionsRevision()}
			held[j] = 0 // the list is not answered again
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % storeCount
		resp := beat(reqs[j])
		if len(resp.GetRegions()) != held[j] || resp.GetRegionsUnchanged() != partial || len(resp.GetChanges()) != 0 || len(resp.GetTransfers()) != 0 {
			b.Fatalf("heartbeat answered %d regions, %d changes %v, %d transfers; want %d, 0, 0",
				len(resp.GetRegions()), len(resp.GetChanges()), resp.GetChanges(), len(resp.GetTransfers()), held[j])
		}
	}
}

// openWithStores opens a pd member (three replicas a region) in a
// directory of tb's, waits until it leads, and registers three stores,
// which bootstraps the first region.
func openWithStores(tb testing.TB) (Config, *Server, *pdService, []uint64) {
	tb.Helper()
	cfg, s := openFreshLeader(tb)
	svc := &pdService{s: s}
	var stores []uint64
	for i := range 3 {
		resp, err := svc.PutStore(context.Background(), &pdpb.PutStoreRequest{Store: &pdpb.Store{Addr: fmt.Sprintf("127.0.0.1:%d", i+1)}})
		if err != nil {
			s.Close()
			tb.Fatal(err)
		}
		stores = append(stores, resp.GetStoreId())
	}
	return cfg, s, svc, stores
}

// openFreshLeader opens a pd member (three replicas a region) in a new
// directory of tb's on free ports and waits until it leads. A port found
// free can be taken by another process before etcd binds it (test
// packages run at the same time): a start that fails with "address
// already in use" is retried in another directory on other ports.
func openFreshLeader(tb testing.TB) (Config, *Server) {
	tb.Helper()
	for attempt := 1; ; attempt++ {
		cfg := Config{DataDir: tb.TempDir(), Replicas: 3}
		cfg.Addr, cfg.PeerURL, cfg.ClientURL = testAddr(tb), "http://"+testAddr(tb), "http://"+testAddr(tb)
		s, err := openLeaderErr(tb, cfg)
		if err == nil {
			return cfg, s
		}
		if attempt == 5 || !strings.Contains(err.Error(), "address already in use") {
			tb.Fatal(err)
		}
		tb.Logf("attempt %d: %v; again on other ports", attempt, err)
	}
}

// openLeader opens a pd member with cfg and waits until it leads.
func openLeader(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	s, err := openLeaderErr(tb, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// openLeaderErr is openLeader, returning Open's error.
func openLeaderErr(tb testing.TB, cfg Config) (*Server, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for !s.IsLeader() {
		if ctx.Err() != nil {
			s.Close()
			tb.Fatal("pd did not become the leader within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s, nil
}

// testAddr returns a 127.0.0.1 address whose port was free a moment ago.
func testAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
