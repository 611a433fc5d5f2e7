package node_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/kv/kvrpc"
	"github.com/percdb/percdb/kv/node"
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

// TestNodeServesItsRegions: a pd and two KV nodes in process; the first
// node to register serves the whole key space; transactions through pd's
// routing and oracle commit and read; the other node refuses the region
// (not found), a stale epoch is refused with the node's view; a restarted
// node serves its region again with its data.
func TestNodeServesItsRegions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pdCfg := pd.Config{DataDir: t.TempDir(), Addr: freeAddr(t), PeerURL: freeURL(t), ClientURL: freeURL(t)}
	pds, err := pd.Open(ctx, pdCfg)
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
