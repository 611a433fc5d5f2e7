package pd

import (
	"context"
	"maps"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/percdb/percdb/pd/pdpb"
)

// TestDirectoryCacheMirrorsEtcd: the leader's cache of the directory
// holds what etcd holds after registrations, splits (records created and
// shrunk), leader and configuration changes and a status change, all
// written through; a change of an older revision than the cache's does
// not take a key back; a cache that is wrong about a key heals on the
// first conditional write that fails on it; and a member that leads
// again loads anew.
func TestDirectoryCacheMirrorsEtcd(t *testing.T) {
	ctx := context.Background()
	cfg, s, svc, stores := openWithStores(t)
	first, err := s.dir.regionOf(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := svc.AllocID(ctx, &pdpb.AllocIDRequest{Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A split at "m", reported by its leader, then a conf change (a
	// learner) and a new leader of the right half.
	beat := func(store uint64, leading []uint64, reps ...*pdpb.RegionReport) {
		t.Helper()
		if _, err := svc.StoreHeartbeat(ctx, &pdpb.StoreHeartbeatRequest{StoreId: store, Leading: leading, Reports: reps}); err != nil {
			t.Fatal(err)
		}
	}
	left := &pdpb.RegionReport{RegionId: first.GetId(), ConfVer: 1, Voters: stores, End: []byte("m"), Version: 2, ApproximateSize: 5 << 20}
	right := &pdpb.RegionReport{RegionId: second.GetFirst(), ConfVer: 1, Voters: stores, Start: []byte("m"), Version: 2}
	beat(stores[0], []uint64{first.GetId(), second.GetFirst()}, left, right)
	// The GC safe point, raised through the cache, read from it.
	if _, err := svc.UpdateGCSafePoint(ctx, &pdpb.UpdateGCSafePointRequest{Candidate: 100}); err != nil {
		t.Fatal(err)
	}
	right = proto.Clone(right).(*pdpb.RegionReport)
	right.ConfVer, right.Learners = 2, []uint64{99}
	beat(stores[1], []uint64{second.GetFirst()}, right)
	if _, err := svc.PutStore(ctx, &pdpb.PutStoreRequest{Store: &pdpb.Store{Id: stores[2], Addr: "127.0.0.1:33"}}); err != nil {
		t.Fatal(err)
	}
	sameAsEtcd(t, s)
	if w := s.dir.cache.Load().weight(first.GetId()); w != 5<<20 {
		t.Fatalf("the left half, reported at 5 MiB, weighs %d", w)
	}
	r, err := s.dir.regionByID(ctx, second.GetFirst())
	if err != nil || r.GetStoreId() != stores[1] || r.GetConfVer() != 2 || string(r.GetStart()) != "m" {
		t.Fatalf("right half from the cache: %v, %v", r, err)
	}

	// A change older than the one the cache holds does not take the
	// store's record back; one older than the load is ignored.
	c := s.dir.cache.Load()
	c.mu.RLock()
	rev := c.stores[stores[2]].rev
	c.mu.RUnlock()
	stale, err := proto.Marshal(&pdpb.Store{Id: stores[2], Addr: "stale"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.apply(storeKey(stores[2]), stale, false, c.base, false); err != nil {
		t.Fatal(err)
	}
	if err := c.apply(storeKey(stores[2]), stale, false, rev-1, false); err != nil {
		t.Fatal(err)
	}
	sameAsEtcd(t, s)

	// A cache wrong about a key (as if a change had been lost) heals when
	// a conditional write on it fails: the leader's report of the right
	// half is then taken at the next heartbeat.
	wrong := proto.Clone(r).(*pdpb.Region)
	wrong.StoreId = stores[0]
	c.mu.Lock()
	c.tally(c.regions["m"].rec, -1, 1)
	c.tally(wrong, 1, 1)
	c.regions["m"].rec, c.regions["m"].rev = wrong, 1
	c.mu.Unlock()
	beat(stores[2], []uint64{second.GetFirst()}, right) // fails its condition: the cache reads the key again
	beat(stores[2], []uint64{second.GetFirst()}, right)
	sameAsEtcd(t, s)
	if r, err := s.dir.regionByID(ctx, second.GetFirst()); err != nil || r.GetStoreId() != stores[2] {
		t.Fatalf("right half after its new leader's reports: %v, %v", r, err)
	}

	// A cache wrong about the GC safe point heals on the raise that
	// fails its condition, and heartbeats answer the safe point from it.
	c.mu.Lock()
	c.safePoint, c.safePointRev = 7, 1
	c.mu.Unlock()
	if sp, err := svc.UpdateGCSafePoint(ctx, &pdpb.UpdateGCSafePointRequest{Candidate: 200}); err != nil || sp.GetSafePoint() != 200 {
		t.Fatalf("raise the GC safe point over a wrong cache: %v, %v", sp, err)
	}
	sameAsEtcd(t, s)
	if resp, err := svc.StoreHeartbeat(ctx, &pdpb.StoreHeartbeatRequest{StoreId: stores[0]}); err != nil || resp.GetGcSafePoint() != 200 {
		t.Fatalf("heartbeat's GC safe point: %v, %v", resp.GetGcSafePoint(), err)
	}

	// A write from outside (another leader while this member did not
	// lead) is in the cache of this member's next term.
	s.Close()
	other := openLeader(t, cfg)
	moved := proto.Clone(r).(*pdpb.Region)
	moved.StoreId = stores[0]
	rec, err := proto.Marshal(moved)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.cli.Put(ctx, regionKey([]byte("m")), string(rec)); err != nil {
		t.Fatal(err)
	}
	other.Close()
	again := openLeader(t, cfg)
	defer again.Close()
	sameAsEtcd(t, again)
	if r, err := again.dir.regionByID(ctx, second.GetFirst()); err != nil || r.GetStoreId() != stores[0] {
		t.Fatalf("right half in a new term: %v, %v", r, err)
	}
}

// sameAsEtcd fails the test unless s's cache lists the stores and regions
// etcd holds, and finds each region by id and by key as etcd does.
func sameAsEtcd(t *testing.T, s *Server) {
	t.Helper()
	ctx := context.Background()
	c := s.dir.cache.Load()
	if c == nil {
		t.Fatal("no cache while leading")
	}
	fromEtcd := directory{cli: s.cli}
	wantStores, err := fromEtcd.stores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantRegions, err := fromEtcd.regions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gotStores, gotRegions := c.storeList(), c.regionList()
	if !protoListsEqual(gotStores, wantStores) {
		t.Fatalf("cached stores %v, etcd holds %v", gotStores, wantStores)
	}
	if !protoListsEqual(gotRegions, wantRegions) {
		t.Fatalf("cached regions %v, etcd holds %v", gotRegions, wantRegions)
	}
	// The counts and weights kept as records and sizes change are the
	// counts and weights over etcd's records.
	wantReplicas, wantLeaders, wantWeights := map[uint64]int{}, map[uint64]int{}, map[uint64]int64{}
	for _, r := range wantRegions {
		wantLeaders[r.GetStoreId()]++
		for _, p := range r.GetPeers() {
			wantReplicas[p]++
			wantWeights[p] += c.weight(r.GetId())
		}
	}
	gotWeights := c.storeWeights()
	maps.DeleteFunc(gotWeights, func(_ uint64, w int64) bool { return w == 0 })
	if !maps.Equal(gotWeights, wantWeights) {
		t.Fatalf("cached weights %v, over etcd's regions %v", gotWeights, wantWeights)
	}
	// The size sums likewise, over the sizes the leaders reported.
	c.mu.RLock()
	wantSizes, wantLeaderSizes := map[uint64]int64{}, map[uint64]int64{}
	for _, r := range wantRegions {
		size := int64(c.sizes[r.GetId()])
		wantLeaderSizes[r.GetStoreId()] += size
		for _, p := range r.GetPeers() {
			wantSizes[p] += size
		}
	}
	c.mu.RUnlock()
	gotSizes, gotLeaderSizes := c.storeSizes()
	for _, m := range []map[uint64]int64{gotSizes, gotLeaderSizes, wantSizes, wantLeaderSizes} {
		maps.DeleteFunc(m, func(_ uint64, n int64) bool { return n == 0 })
	}
	if !maps.Equal(gotSizes, wantSizes) || !maps.Equal(gotLeaderSizes, wantLeaderSizes) {
		t.Fatalf("cached sizes: replicas %v, leaders %v; over etcd's regions: %v, %v", gotSizes, gotLeaderSizes, wantSizes, wantLeaderSizes)
	}
	gotReplicas, gotLeaders := c.counts()
	maps.DeleteFunc(gotReplicas, func(_ uint64, n int) bool { return n == 0 })
	maps.DeleteFunc(gotLeaders, func(_ uint64, n int) bool { return n == 0 })
	if !maps.Equal(gotReplicas, wantReplicas) || !maps.Equal(gotLeaders, wantLeaders) {
		t.Fatalf("cached counts: replicas %v, leaders %v; over etcd's regions: %v, %v", gotReplicas, gotLeaders, wantReplicas, wantLeaders)
	}
	// The indexes by store are etcd's records by store.
	for _, st := range wantStores {
		id := st.GetId()
		var held []*pdpb.Region
		var led []uint64
		for _, r := range wantRegions {
			if hasPeer(r, id) {
				held = append(held, r)
			}
			if r.GetStoreId() == id {
				led = append(led, r.GetId())
			}
		}
		slices.Sort(led)
		if got, _ := c.regionsOn(id); !protoListsEqual(got, held) {
			t.Fatalf("store %d's regions in the cache %v, etcd's %v", id, got, held)
		}
		if got := c.ledBy(id); !slices.Equal(got, led) {
			t.Fatalf("store %d leads %v by the cache's index, %v by etcd's records", id, got, led)
		}
	}
	wantSP, wantRev, err := fromEtcd.gcSafePoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sp, rev := c.gcSafePoint(); sp != wantSP || rev != wantRev {
		t.Fatalf("cached GC safe point %d at revision %d, etcd holds %d at %d", sp, rev, wantSP, wantRev)
	}
	for _, r := range wantRegions {
		want, err := fromEtcd.regionByID(ctx, r.GetId())
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.dir.regionByID(ctx, r.GetId())
		if err != nil || !proto.Equal(got, want) {
			t.Fatalf("region %d from the cache %v (%v), etcd holds %v", r.GetId(), got, err, want)
		}
		key := append(r.GetStart(), 'x')
		want, err = fromEtcd.regionOf(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if got, err = s.dir.regionOf(ctx, key); err != nil || !proto.Equal(got, want) {
			t.Fatalf("key %q located in the cache at %v (%v), etcd at %v", key, got, err, want)
		}
	}
}

func protoListsEqual[M proto.Message](a, b []M) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
